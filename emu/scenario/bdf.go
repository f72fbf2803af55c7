package scenario

import (
	"fmt"
	"strconv"
	"strings"
)

// BDF is a PCI address: domain, bus, device, function.
type BDF struct {
	Domain   uint16
	Bus      uint8
	Device   uint8 // 0..31
	Function uint8 // 0..7
}

func (b BDF) String() string {
	return fmt.Sprintf("%04x:%02x:%02x.%x", b.Domain, b.Bus, b.Device, b.Function)
}

// ParseBDF reads "0000:03:00.0" or "03:00.0" (domain 0).
func ParseBDF(s string) (BDF, error) {
	t := strings.TrimSpace(s)
	parts := strings.Split(t, ":")
	var b BDF
	switch len(parts) {
	case 2:
	case 3:
		d, err := strconv.ParseUint(parts[0], 16, 16)
		if err != nil || len(parts[0]) > 4 {
			return BDF{}, fmt.Errorf("%q: domain %q is not 1..4 hex digits", s, parts[0])
		}
		b.Domain = uint16(d)
		parts = parts[1:]
	default:
		return BDF{}, fmt.Errorf("%q is not a PCI address; write it as 0000:03:00.0 or 03:00.0", s)
	}
	bus, err := strconv.ParseUint(parts[0], 16, 8)
	if err != nil || len(parts[0]) > 2 {
		return BDF{}, fmt.Errorf("%q: bus %q is not 1..2 hex digits", s, parts[0])
	}
	dev, fn, ok := strings.Cut(parts[1], ".")
	if !ok {
		return BDF{}, fmt.Errorf("%q: missing .function; write it as 0000:03:00.0", s)
	}
	d, err := strconv.ParseUint(dev, 16, 8)
	if err != nil || d > 0x1f || len(dev) > 2 {
		return BDF{}, fmt.Errorf("%q: device %q is not hex 00..1f", s, dev)
	}
	f, err := strconv.ParseUint(fn, 16, 8)
	if err != nil || f > 7 || len(fn) != 1 {
		return BDF{}, fmt.Errorf("%q: function %q is not 0..7", s, fn)
	}
	b.Bus, b.Device, b.Function = uint8(bus), uint8(d), uint8(f)
	return b, nil
}

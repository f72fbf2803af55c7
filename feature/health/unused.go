package health

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// UnusedPortsFile is the machine's list of ports left unused on purpose
// (docs/health.md); $CXRAY_UNUSED_PORTS (EnvUnusedPorts) names another
// file, or "off" for none.
const (
	UnusedPortsFile = "/etc/cxray/unused-ports"
	EnvUnusedPorts  = "CXRAY_UNUSED_PORTS"
)

// UnusedPorts are the ports declared unused, by device: a PCI address
// (0000:03:00.0) or "*" for every device, to local port numbers.
type UnusedPorts map[string][]int

// ParseUnusedPorts reads an unused-ports file: one line per device, the
// device (a PCI function's address, or * for every device) then its
// unused ports, separated by spaces or commas:
//
//	# port 2 of every adapter is not cabled
//	*             2
//	0000:81:00.0  1,2
//
// '#' starts a comment; blank lines, indentation and CRLF line ends are
// fine. A malformed line is an error that names it (line N: ...), so a
// typo never silently judges a port that was meant to be left alone.
func ParseUnusedPorts(b []byte) (UnusedPorts, error) {
	out := UnusedPorts{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '\r' })
		if len(f) == 0 {
			continue
		}
		dev := strings.ToLower(f[0])
		if len(dev) == 7 {
			dev = "0000:" + dev // 03:00.0, as lspci prints it
		}
		if dev != "*" && !isBDF(dev) {
			return nil, fmt.Errorf("line %d: %q is not a PCI address (0000:03:00.0) or *; write the device, then its unused port numbers", n, f[0])
		}
		if len(f) == 1 {
			return nil, fmt.Errorf("line %d: %s names no port; write the unused port numbers after it (%s 2)", n, f[0], f[0])
		}
		for _, p := range f[1:] {
			v, err := strconv.Atoi(p)
			if err != nil || v < 1 || v > 255 {
				return nil, fmt.Errorf("line %d: %q is not a port number (1..255)", n, p)
			}
			out[dev] = appendPort(out[dev], v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Merge adds o's ports to u.
func (u UnusedPorts) Merge(o UnusedPorts) {
	for d, ps := range o {
		for _, p := range ps {
			u[d] = appendPort(u[d], p)
		}
	}
}

// For lists the unused ports of the function at bdf: its own lines and
// the * lines.
func (u UnusedPorts) For(bdf string) []int {
	if len(bdf) == 7 {
		bdf = "0000:" + bdf
	}
	var out []int
	for _, d := range []string{"*", strings.ToLower(bdf)} {
		for _, p := range u[d] {
			out = appendPort(out, p)
		}
	}
	return out
}

func appendPort(ps []int, p int) []int {
	for _, q := range ps {
		if q == p {
			return ps
		}
	}
	return append(ps, p)
}

// isBDF is domain:bus:device.function in hex (0000:03:00.0).
func isBDF(s string) bool {
	if len(s) != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.' {
		return false
	}
	for i, c := range s {
		if i == 4 || i == 7 || i == 10 {
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return s[11] <= '7'
}

package pcie

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The kernel's sysfs attributes of a PCI device (Documentation/ABI/testing/
// sysfs-bus-pci and sysfs-bus-pci-devices-aer_stats): the link's speed and
// width, current and maximum, and the AER counters per severity.
const (
	AttrCurrentSpeed = "current_link_speed"
	AttrMaxSpeed     = "max_link_speed"
	AttrCurrentWidth = "current_link_width"
	AttrMaxWidth     = "max_link_width"
	AttrAERCor       = "aer_dev_correctable"
	AttrAERNonFatal  = "aer_dev_nonfatal"
	AttrAERFatal     = "aer_dev_fatal"
)

// LinkAttrs are the link attributes, AERAttrs the AER counter files.
var (
	LinkAttrs = []string{AttrCurrentSpeed, AttrMaxSpeed, AttrCurrentWidth, AttrMaxWidth}
	AERAttrs  = []string{AttrAERCor, AttrAERNonFatal, AttrAERFatal}
)

// AERCounts is one aer_dev_* file: a count per error name and the total
// the kernel keeps (TOTAL_ERR_COR, TOTAL_ERR_NONFATAL, TOTAL_ERR_FATAL).
type AERCounts struct {
	Counts map[string]uint64 `json:"counts"`
	Total  uint64            `json:"total"`
}

// Nonzero lists "Name N" for the counts above zero, by name.
func (c *AERCounts) Nonzero() []string {
	if c == nil {
		return nil
	}
	var out []string
	for n, v := range c.Counts {
		if v > 0 {
			out = append(out, fmt.Sprintf("%s %d", n, v))
		}
	}
	sort.Strings(out)
	return out
}

// ParseAERCounts reads an aer_dev_* file: one "<name> <count>" line per
// error (every named bit, zeros included; unnamed bits as "bitN" when
// non-zero), then the TOTAL_ERR_* line. Lines may be indented or end in
// CRLF (pasted text). A file without its total line is cut short: an
// error, so that a partial read is never taken for a count.
func ParseAERCounts(text string) (*AERCounts, error) {
	c := &AERCounts{Counts: map[string]uint64{}}
	total := false
	for i, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("AER counters line %d %q: want \"<name> <count>\"", i+1, strings.TrimSpace(line))
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("AER counters line %d %q: the count is not a number", i+1, strings.TrimSpace(line))
		}
		if strings.HasPrefix(f[0], "TOTAL_ERR_") {
			if total {
				return nil, fmt.Errorf("AER counters line %d: a second total line", i+1)
			}
			c.Total, total = v, true
			continue
		}
		if total {
			return nil, fmt.Errorf("AER counters line %d %q comes after the total line", i+1, strings.TrimSpace(line))
		}
		if _, dup := c.Counts[f[0]]; dup {
			return nil, fmt.Errorf("AER counters line %d: %s is listed twice", i+1, f[0])
		}
		c.Counts[f[0]] = v
	}
	if !total {
		return nil, fmt.Errorf("AER counters end without their TOTAL_ERR_* line: the file was cut short")
	}
	return c, nil
}

// FormatAERCounts writes counts as the kernel does: every named error of
// the table in bit order, unnamed bits only when non-zero, then the total
// (name is TOTAL_ERR_COR, TOTAL_ERR_NONFATAL or TOTAL_ERR_FATAL). The
// emulator serves its files through it.
func FormatAERCounts(byBit map[int]uint64, names map[int]string, totalName string) string {
	var b strings.Builder
	var total uint64
	for bit := 0; bit < 32; bit++ {
		v := byBit[bit]
		total += v
		n, ok := names[bit]
		if !ok {
			if v == 0 {
				continue
			}
			n = fmt.Sprintf("bit%d", bit)
		}
		fmt.Fprintf(&b, "%s %d\n", n, v)
	}
	fmt.Fprintf(&b, "%s %d\n", totalName, total)
	return b.String()
}

// HostView is a PCI device's link and errors as sysfs shows them.
type HostView struct {
	// BDF is the device read ("0000:c1:00.0").
	BDF string `json:"bdf"`
	// Current is the trained link, Max what the device can train.
	Current Link `json:"current"`
	Max     Link `json:"max"`
	// Correctable, NonFatal and Fatal are the AER counters; nil where the
	// kernel has none (no AER capability, or a kernel before 5.1).
	Correctable *AERCounts `json:"aer_correctable,omitempty"`
	NonFatal    *AERCounts `json:"aer_nonfatal,omitempty"`
	Fatal       *AERCounts `json:"aer_fatal,omitempty"`
	// Missing lists the attributes that were not there; Problems the
	// ones that did not read as their format says.
	Missing  []string `json:"missing,omitempty"`
	Problems []string `json:"problems,omitempty"`
}

// ParseHostView reads a device's attributes through get, which returns an
// attribute's text, or ok false when the file is not there.
func ParseHostView(bdf string, get func(name string) (text string, ok bool)) *HostView {
	v := &HostView{BDF: bdf}
	speed := func(name string, dst *Speed) {
		t, ok := get(name)
		if !ok {
			v.Missing = append(v.Missing, name)
			return
		}
		s, err := ParseSpeed(t)
		if err != nil {
			v.Problems = append(v.Problems, name+": "+err.Error())
		}
		*dst = s
	}
	width := func(name string, dst *int) {
		t, ok := get(name)
		if !ok {
			v.Missing = append(v.Missing, name)
			return
		}
		w, err := ParseWidth(t)
		if err != nil {
			v.Problems = append(v.Problems, name+": "+err.Error())
		}
		*dst = w
	}
	speed(AttrCurrentSpeed, &v.Current.Speed)
	speed(AttrMaxSpeed, &v.Max.Speed)
	width(AttrCurrentWidth, &v.Current.Width)
	width(AttrMaxWidth, &v.Max.Width)
	for _, a := range []struct {
		name string
		dst  **AERCounts
	}{{AttrAERCor, &v.Correctable}, {AttrAERNonFatal, &v.NonFatal}, {AttrAERFatal, &v.Fatal}} {
		t, ok := get(a.name)
		if !ok {
			v.Missing = append(v.Missing, a.name)
			continue
		}
		c, err := ParseAERCounts(t)
		if err != nil {
			v.Problems = append(v.Problems, a.name+": "+err.Error())
			continue
		}
		*a.dst = c
	}
	return v
}

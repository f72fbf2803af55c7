package fwimage

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// Version is a firmware version major.minor.sub_minor, printed as the
// tools print it (28.39.1010: the sub-minor in four digits).
type Version struct {
	Major, Minor, SubMinor uint16
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%04d", v.Major, v.Minor, v.SubMinor) }

// IsZero says the version is 0.0.0 (unknown).
func (v Version) IsZero() bool { return v == Version{} }

// Compare orders versions: -1 when v is older than o, 0 when equal, 1 when
// newer.
func (v Version) Compare(o Version) int {
	if c := cmp.Compare(v.Major, o.Major); c != 0 {
		return c
	}
	if c := cmp.Compare(v.Minor, o.Minor); c != 0 {
		return c
	}
	return cmp.Compare(v.SubMinor, o.SubMinor)
}

// ParseVersion reads "28.39.1010" (each part 0..65535).
func ParseVersion(s string) (Version, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) != 3 {
		return Version{}, fmt.Errorf("firmware version %q is not major.minor.sub_minor (for example 28.39.1010)", s)
	}
	var n [3]uint16
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return Version{}, fmt.Errorf("firmware version %q: part %q is not a number 0..65535", s, p)
		}
		n[i] = uint16(v)
	}
	return Version{n[0], n[1], n[2]}, nil
}

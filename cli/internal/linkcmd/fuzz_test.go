package linkcmd

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParseBytes: what --write accepts is a list of bytes that, printed
// back in either form mlxlink users type (0x hex, decimal), parses to the
// same bytes; what it refuses is refused with the item named.
func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"0x0f", "1,2,3", " 0x10 , 255", "256", "1,,2", "", "0b101", "-1", "0xff,0X0A"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := parseBytes(s)
		if err != nil {
			if !strings.Contains(err.Error(), "is not a byte") {
				t.Fatalf("%q: error %v does not name the item", s, err)
			}
			return
		}
		if len(b) != strings.Count(s, ",")+1 {
			t.Fatalf("%q: %d bytes from %d items", s, len(b), strings.Count(s, ",")+1)
		}
		var hx, dec []string
		for _, x := range b {
			hx = append(hx, fmt.Sprintf("0x%02x", x))
			dec = append(dec, fmt.Sprint(x))
		}
		for _, again := range []string{strings.Join(hx, ","), strings.Join(dec, ", ")} {
			b2, err := parseBytes(again)
			if err != nil || !cmp.Equal(b, b2) {
				t.Fatalf("%q -> %v -> %q -> %v, %v", s, b, again, b2, err)
			}
		}
	})
}

// FuzzParseLanes: a lane list either is refused or gives lanes 0..7 that,
// written back as "a,b,...", parse to the same list.
func FuzzParseLanes(f *testing.F) {
	for _, s := range []string{"0,2", "[1,3]", " 7 ", "", "8", "-1", "0,,1", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ls, err := parseLanes(s)
		if err != nil {
			return
		}
		var parts []string
		for _, l := range ls {
			if l < 0 || l > 7 {
				t.Fatalf("%q gave lane %d", s, l)
			}
			parts = append(parts, strconv.Itoa(l))
		}
		again, err := parseLanes(strings.Join(parts, ","))
		if err != nil || !slices.Equal(again, ls) {
			t.Fatalf("%q gave %v; written back it gives %v, %v", s, ls, again, err)
		}
	})
}

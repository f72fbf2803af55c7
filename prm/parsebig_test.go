package prm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseBig reads what users type for a field value: a sign, a 0x/0o/0b
// prefix and _ separators anywhere, while plain digits stay decimal even
// with a leading zero (base 0 alone would read "010" as octal).
func TestParseBig(t *testing.T) {
	type res struct {
		V  string
		OK bool
	}
	for in, want := range map[string]res{
		"010":                     {"10", true},
		"-0x10":                   {"-16", true},
		"+0X1f":                   {"31", true},
		"0b1_01":                  {"5", true},
		"0o17":                    {"15", true},
		"1_000":                   {"1000", true},
		" 42 ":                    {"42", true},
		"-7":                      {"-7", true},
		"0x1_0000_0000_0000_0000": {"18446744073709551616", true},
		"0x":                      {"", false},
		"--5":                     {"", false},
		"":                        {"", false},
		"12a":                     {"", false},
		"0b102":                   {"", false},
	} {
		v, ok := parseBig(in)
		got := res{OK: ok}
		if ok {
			got.V = v.String()
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("parseBig(%q) (-want +got):\n%s", in, d)
		}
	}
}

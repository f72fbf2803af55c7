package maccmd

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMacsFromQuery(t *testing.T) {
	got, err := macsFromQuery("Base MAC:   b83fd2a1b2c0   4\n")
	if d := cmp.Diff([]string{"b8:3f:d2:a1:b2:c0", "b8:3f:d2:a1:b2:c1", "b8:3f:d2:a1:b2:c2", "b8:3f:d2:a1:b2:c3"}, got); d != "" || err != nil {
		t.Errorf("%v (-want +got):\n%s", err, d)
	}
	for _, bad := range []string{"", "Base MAC: b83fd2a1b2c0 0", "Base MAC: b83fd2a1b2c0 999",
		// Past the last 48-bit address: no wrap to 00:00:00:00:00:00.
		"Base MAC: fffffffffffe 4", "Base MAC: ff:ff:ff:ff:ff:ff 2"} {
		if _, err := macsFromQuery(bad); err == nil {
			t.Errorf("%q was taken", bad)
		}
	}
}

// The edge: the last addresses are allowed, one past them is not.
func TestMacsFromQueryEdge(t *testing.T) {
	got, err := macsFromQuery("Base MAC: fffffffffffe 2")
	if d := cmp.Diff([]string{"ff:ff:ff:ff:ff:fe", "ff:ff:ff:ff:ff:ff"}, got); d != "" || err != nil {
		t.Errorf("%v (-want +got):\n%s", err, d)
	}
	if _, err := macsFromQuery("Base MAC: fffffffffffe 4"); err == nil || !strings.Contains(err.Error(), "runs past ff:ff:ff:ff:ff:ff") {
		t.Errorf("past the end: %v", err)
	}
}

// FuzzMacsFromQuery: any text (a pasted query output) gives an error or
// as many MACs as its count says, consecutive and rising: never a wrap.
func FuzzMacsFromQuery(f *testing.F) {
	f.Add("Base MAC:   b83fd2a1b2c0   4\n")
	f.Add("  Base MAC:  fffffffffffe  4\r\n")
	f.Add("FW Version: 28.39\nBase MAC: b8:3f:d2:a1:b2:c0 2\n")
	f.Fuzz(func(t *testing.T, text string) {
		macs, err := macsFromQuery(text)
		if err != nil {
			return
		}
		m := baseMAC.FindStringSubmatch(text)
		if n, _ := strconv.Atoi(m[2]); n != len(macs) {
			t.Fatalf("count %s, %d MACs", m[2], len(macs))
		}
		prev := int64(-1)
		for _, mac := range macs {
			v, err := strconv.ParseUint(strings.ReplaceAll(mac, ":", ""), 16, 64)
			if err != nil || len(mac) != 17 {
				t.Fatalf("%q is no MAC", mac)
			}
			if prev >= 0 && int64(v) != prev+1 {
				t.Fatalf("%v: not consecutive (wrapped?)", macs)
			}
			prev = int64(v)
		}
	})
}

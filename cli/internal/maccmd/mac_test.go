package maccmd

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
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

// A listing with none of the adapter's interfaces checks nothing: exit 1
// in both output modes, saying so and listing what the listing has,
// never a silent pass.
func TestMACNoInterfaceOfTheAdapter(t *testing.T) {
	listing := "lo               UNKNOWN        00:00:00:00:00:00 <LOOPBACK,UP,LOWER_UP>\neno1             UP             3c:ec:ef:01:02:03 <BROADCAST,MULTICAST,UP,LOWER_UP>\n"
	for _, mode := range []string{"table", "json"} {
		a := cmdutiltest.New(t, mode)
		a.Stdin = strings.NewReader(listing)
		err := (&app{a.App}).runMAC(&macOptions{listing: "-", permanent: []string{"b8:3f:d2:a1:b2:c0"}})
		if !errors.Is(err, cmdutil.ErrProblem) {
			t.Fatalf("%s: %v, want exit 1\n%s", mode, err, a.Out)
		}
		out := a.Out.String()
		if mode == "json" {
			var doc struct {
				Problem string `json:"problem"`
				Found   []Row  `json:"found"`
			}
			cmdutiltest.JSON(t, out, &doc)
			var names []string
			for _, r := range doc.Found {
				names = append(names, r.Interface+" "+r.MAC)
			}
			if d := cmp.Diff([]string{"lo 00:00:00:00:00:00", "eno1 3c:ec:ef:01:02:03"}, names); d != "" || !strings.Contains(doc.Problem, "no MAC could be checked") {
				t.Errorf("problem %q, found (-want +got):\n%s", doc.Problem, d)
			}
			continue
		}
		if !strings.Contains(out, "no MAC could be checked") || !strings.Contains(out, "eno1") || !strings.Contains(out, "3c:ec:ef:01:02:03") {
			t.Errorf("table:\n%s", out)
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

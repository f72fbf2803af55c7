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

// The permanent MACs from the query outputs people paste: flint's, indented,
// with a prompt and CRLF, ConnectX-3's per-port lines, a 16-digit MAC, and
// mlxup/mlxfwmanager listings of several devices without a count column.
func TestMacsFromQuery(t *testing.T) {
	four := []string{"b8:3f:d2:a1:b2:c0", "b8:3f:d2:a1:b2:c1", "b8:3f:d2:a1:b2:c2", "b8:3f:d2:a1:b2:c3"}
	for _, c := range []struct {
		name, text string
		want       []string
		note       string
	}{
		{"plain", "Base MAC:   b83fd2a1b2c0   4\n", four, ""},
		{"indented-crlf-prompt", "PS C:\\Program Files\\Mellanox\\WinMFT> flint -d mt4129_pciconf0 q\r\n   FW Version:            28.39.1002\r\n   Base MAC:              b83fd2a1b2c0            4\r\n   PSID:                  MT_0000000838\r\n", four, ""},
		{"16-digit", "FW Version: 16.35.2000\nBase MAC:  0000b83fd2a1b2c0  4\n", four, ""},
		{"per-port", "FW Version: 2.42.5000\nBase MAC1: b83fd2a1b2c0 1\nBase MAC2: b83fd2a1b2c1 1\n", four[:2], ""},
		{"mlxup-two-devices", "Device #1:\n----------\n  Device Type:      ConnectX6DX\n  Description:      ConnectX-6 Dx EN adapter card; 100GbE; Dual-port QSFP56\n  PCI Device Name:  0000:81:00.0\n  Base MAC:         b83fd2a1b2c0\n  Versions:         Current        Available\n     FW             22.36.1010     N/A\n\nDevice #2:\n----------\n  Device Type:      ConnectX7\n  Description:      ConnectX-7; Single-port OSFP\n  PCI Device Name:  0000:c1:00.0\n  Base MAC:         a088c2d0e1f0\n", append(four[:2:2], "a0:88:c2:d0:e1:f0"), "2 MAC(s) assumed"},
	} {
		got, notes, err := macsFromQuery(c.text)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
		if c.note != "" && !strings.Contains(strings.Join(notes, "\n"), c.note) {
			t.Errorf("%s: notes %q lack %q", c.name, notes, c.note)
		}
	}
	for _, bad := range []string{"", "Base MAC: b83fd2a1b2c0 0", "Base MAC: b83fd2a1b2c0 999", "FW Version: 1.2.3\nBase MAC: 1234b83fd2a1b2c0 4\n",
		// Past the last 48-bit address: no wrap to 00:00:00:00:00:00.
		"Base MAC: fffffffffffe 4", "Base MAC: ff:ff:ff:ff:ff:ff 2"} {
		if _, _, err := macsFromQuery(bad); err == nil {
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
		err := (&app{a.App}).runMAC(a.Ctx, &macOptions{listing: "-", permanent: []string{"b8:3f:d2:a1:b2:c0"}})
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
	got, _, err := macsFromQuery("Base MAC: fffffffffffe 2")
	if d := cmp.Diff([]string{"ff:ff:ff:ff:ff:fe", "ff:ff:ff:ff:ff:ff"}, got); d != "" || err != nil {
		t.Errorf("%v (-want +got):\n%s", err, d)
	}
	if _, _, err := macsFromQuery("Base MAC: fffffffffffe 4"); err == nil || !strings.Contains(err.Error(), "runs past ff:ff:ff:ff:ff:ff") {
		t.Errorf("past the end: %v", err)
	}
}

// FuzzMacsFromQuery: any text (a pasted query output) gives an error or
// at least one well-formed MAC, and a run never wraps from
// ff:ff:ff:ff:ff:ff to 00:00:00:00:00:00.
func FuzzMacsFromQuery(f *testing.F) {
	f.Add("Base MAC:   b83fd2a1b2c0   4\n")
	f.Add("  Base MAC:  fffffffffffe  4\r\n")
	f.Add("FW Version: 28.39\nBase MAC: b8:3f:d2:a1:b2:c0 2\n")
	f.Fuzz(func(t *testing.T, text string) {
		macs, _, err := macsFromQuery(text)
		if err != nil {
			return
		}
		if len(macs) == 0 {
			t.Fatal("no error and no MAC")
		}
		prev := int64(-1)
		for _, mac := range macs {
			v, err := strconv.ParseUint(strings.ReplaceAll(mac, ":", ""), 16, 64)
			if err != nil || len(mac) != 17 {
				t.Fatalf("%q is no MAC", mac)
			}
			if prev == 0xffffffffffff && v == 0 {
				t.Fatalf("%v: wrapped", macs)
			}
			prev = int64(v)
		}
	})
}

package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/maccmd"
)

// The MAC check on files: the permanent MACs from mstflint q (captured on
// the emulator: testdata/mstflint-q.txt), from -d, or given; the OS's from
// an ipconfig /all listing. The second ConnectX port uses a locally
// administered address: drift, exit 1; the Intel NIC is not looked at.
func TestMACCheckFromFiles(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	want := []maccmd.Row{
		{Interface: "Ethernet 2", Description: "Mellanox ConnectX-7 Adapter", MAC: "b8:3f:d2:d2:0a:20", Permanent: "b8:3f:d2:d2:0a:20", Why: "ok: the permanent MAC"},
		{Interface: "Ethernet 3", Description: "Mellanox ConnectX-7 Adapter #2", MAC: "02:11:22:33:44:55", Drift: true,
			Why: "drift: a locally administered address (set by software: a VM, teaming, a randomised or configured MAC)"},
	}
	for _, src := range [][]string{
		{"--from", "testdata/mstflint-q.txt"},
		{"-d", "emu"},
		{"--permanent", "b8:3f:d2:d2:0a:20,b8:3f:d2:d2:0a:21"},
	} {
		args := append([]string{"mac", "--os", "testdata/ipconfig-drift.txt", "-o", "json"}, src...)
		out, errs, code := cli(t, "", args...)
		var doc struct {
			Permanent  []string `json:"permanent_macs"`
			Interfaces []maccmd.Row
			Drift      bool `json:"mac_drift"`
		}
		mustJSON(t, out, &doc)
		if code != 1 || !doc.Drift {
			t.Errorf("%v: exit %d drift %v %s", src, code, doc.Drift, errs)
		}
		if d := cmp.Diff([]string{"b8:3f:d2:d2:0a:20", "b8:3f:d2:d2:0a:21"}, doc.Permanent); d != "" {
			t.Errorf("%v: permanent MACs (-want +got):\n%s", src, d)
		}
		if d := cmp.Diff(want, doc.Interfaces); d != "" {
			t.Errorf("%v: interfaces (-want +got):\n%s", src, d)
		}
	}
	table, _, code := cli(t, "", "mac", "--os", "testdata/ipconfig-drift.txt", "--from", "testdata/mstflint-q.txt")
	if code != 1 || !strings.Contains(table, "locally administered") || !strings.Contains(table, "ipconfig /all") {
		t.Errorf("table: exit %d\n%s", code, table)
	}
	// An ip link listing on standard input, no drift.
	ipLink := "2: ens1f0np0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP mode DEFAULT group default qlen 1000\n    link/ether b8:3f:d2:d2:0a:20 brd ff:ff:ff:ff:ff:ff\n"
	_, errs, code := cli(t, ipLink, "mac", "--os", "-", "--permanent", "b8:3f:d2:d2:0a:20")
	if code != 0 {
		t.Errorf("ip link, no drift: exit %d %s", code, errs)
	}
	for _, bad := range [][]string{
		{"mac", "--from", "testdata/mstflint-q.txt"},
		{"mac", "--os", "testdata/ipconfig-drift.txt"},
		{"mac", "--os", "testdata/ipconfig-drift.txt", "--from", "testdata/ipconfig-drift.txt"},
		{"mac", "--os", "testdata/mstflint-q.txt", "--permanent", "zz"},
	} {
		if _, errs, code := cli(t, "", bad...); code != 2 {
			t.Errorf("%v: exit %d %s", bad, code, errs)
		}
	}
}

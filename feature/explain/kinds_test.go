package explain

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/cmdb"
)

func findingsText(r *Report) string {
	out := summary(r)
	for _, p := range r.Parts {
		for _, f := range p.Findings {
			out = append(out, f.Category+": "+f.What)
		}
	}
	return strings.Join(out, "\n")
}

// hexdumpC prints b as hexdump -C does, from offset from.
func hexdumpC(b []byte, from int) string {
	var s strings.Builder
	for off := from; off < len(b); off += 16 {
		fmt.Fprintf(&s, "%08x ", off)
		for i, c := range b[off:min(off+16, len(b))] {
			if i == 8 {
				s.WriteString(" ")
			}
			fmt.Fprintf(&s, " %02x", c)
		}
		s.WriteString("  |................|\n")
	}
	fmt.Fprintf(&s, "%08x\n", len(b))
	return s.String()
}

// The kinds other commands read, through explain: a module dump (and a
// partial one: an input finding naming the bytes it covers), an ip link
// listing with a drifted MAC, rdma -j -r raw contexts decoded as cxray qp
// does, lspci without root, a snapshot and a monitor file.
func TestOtherKinds(t *testing.T) {
	d := dbs(t)
	// An SFF-8636 lower page with a temperature alarm flag is beyond what
	// this test needs: identifier 0x11 and vendor fields are enough for a
	// module, and a dump from 0xb0 lacks them.
	mod := make([]byte, 256)
	mod[0], mod[128] = 0x11, 0x11
	copy(mod[148:], "EXAMPLE OPTICS  ")
	copy(mod[168:], "EX-Q28-SR4      ")
	copy(mod[196:], "EXQ2800417      ")
	ip := "5: ens1f1np1: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN mode DEFAULT group default qlen 1000\n    link/ether 02:11:22:33:44:55 brd ff:ff:ff:ff:ff:ff permaddr b8:3f:d2:d2:0a:21\n"
	cdb, _ := cmdb.Load()
	p, _ := cdb.Plan("qpc")
	qpc := p.NewBuffer()
	if err := p.Encode(qpc, []prm.Assignment{{Path: "state", Value: "ERR"}, {Path: "st", Value: "RC"}}); err != nil {
		t.Fatal(err)
	}
	// rdma writes the raw context as a list of byte values.
	var nums []int
	for _, c := range qpc {
		nums = append(nums, int(c))
	}
	data, _ := json.Marshal([]map[string]any{{"ifindex": 2, "ifname": "mlx5_0", "port": 1, "lqpn": 77, "data": nums}})
	mon := fmt.Sprintf(`{"time":%q,"device":"0000:03:00.0","values":{"temp.asic_c":71},"alerts":["temp.asic_c > 70"]}`+"\n", time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).Format(time.RFC3339))
	for _, c := range []struct {
		name, text string
		kind       string
		says       string
	}{
		{"module hexdump", hexdumpC(mod, 0), KindModuleDump, "module-dump 1-17"},
		{"module from 0xb0", hexdumpC(mod, 0xb0), KindModuleDump, "covers bytes 0xb0–0xff only: identifier and vendor fields missing"},
		{"ip link drift", ip, KindOSListing, "ens1f1np1 uses 02:11:22:33:44:55, not its permanent MAC b8:3f:d2:d2:0a:21"},
		{"rdma -j -r", string(data), KindRdmaQP, "problem software use: mlx5_0/1 lqpn 77: the QP is in the error state"},
		{"lspci no root", "41:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n\tCapabilities: <access denied>\n", KindLspci, "input: 41:00.0: the capabilities read '<access denied>'"},
		{"monitor", mon, KindCxrayMonitor, "warning hardware: alert fired: temp.asic_c > 70"},
		{"aer newer kernel", "[   51.100001] pcieport 0000:00:01.1: AER: Correctable error message received from 0000:01:00.0\n" +
			"[   51.100002] mlx5_core 0000:01:00.0: PCIe Bus Error: severity=Correctable, type=Data Link Layer, (Transmitter ID)\n" +
			"[   51.100003] mlx5_core 0000:01:00.0:   device [15b3:101d] error status/mask=00001000/00002000\n" +
			"[   51.100004] mlx5_core 0000:01:00.0:    [12] Timeout               \n", KindKernelLog, "Data Link Layer): the link retried and recovered; a few are harmless, a steady stream means signal trouble; Timeout"},
		{"lspci gpu idle", "c1:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16\n\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16\n" +
			"41:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16\n\t\tLnkSta:\tSpeed 32GT/s, Width x16\n", KindLspci, "lspci 1-6"},
	} {
		r, err := Explain(c.text, d)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Parts) != 1 || r.Parts[0].Kind != c.kind || !strings.Contains(findingsText(r), c.says) || (c.name == "lspci gpu idle" && len(r.Parts[0].Findings) > 0) {
			t.Errorf("%s: want one %s part saying %q:\n%s", c.name, c.kind, c.says, findingsText(r))
		}
	}
}

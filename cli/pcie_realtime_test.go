package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gpuNode is a GPU node's NICs: five dual-function ConnectX-7 (ten
// functions), the third trained x8 in an x16 slot.
const gpuNode = `devices:
  - {name: nic0, profile: cx7-2p400g, bdf: 0000:03:00.0, functions: 2}
  - {name: nic1, profile: cx7-2p400g, bdf: 0000:04:00.0, functions: 2}
  - name: nic2
    profile: cx7-2p400g
    bdf: 0000:05:00.0
    functions: 2
    pcie: {slot_speed: gen5, slot_width: 16, width: 8}
  - {name: nic3, profile: cx7-2p400g, bdf: 0000:06:00.0, functions: 2}
  - {name: nic4, profile: cx7-2p400g, bdf: 0000:07:00.0, functions: 2}
`

// TestPCIeRealTimeGPUNode runs the PCIe link of a ten-function node in
// real time inside 'emu serve': status shows every function's link and
// names the degraded card; a correctable error rate switched on through
// the control socket while 'link --pcie' watches is counted as a rate,
// by the direct path (config space, MPCNT) and by the kernel backend
// (sysfs, the slot's port as the function's parent); health judges both.
func TestPCIeRealTimeGPUNode(t *testing.T) {
	requireNS(t)
	privateState(t)
	bin := cxrayBin(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "gpu-node.yaml")
	if err := os.WriteFile(file, []byte(gpuNode), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "ctl.sock")
	script := fmt.Sprintf(`
cx=%[1]s; out=%[2]s
$cx status -o json > $out/status.json; echo $? > $out/status.rc
$cx emu ctl --socket %[3]s --bdf 0000:05:00.1 fault pcie.correctable_per_sec=BadTLP:5 > /dev/null
$cx link --pcie -d 0000:05:00.1 --interval 3s -o json > $out/direct.json; echo $? > $out/direct.rc
$cx link --pcie -d kernel:mlx5_5 --interval 3s -o json > $out/kernel.json; echo $? > $out/kernel.rc
$cx emu ctl --socket %[3]s --bdf 0000:05:00.1 fault pcie.aer=MalfTLP > /dev/null
$cx health -d kernel:mlx5_5 --interval 1s -o json > $out/health.json; echo $? > $out/health.rc
$cx health -d 0000:05:00.1 --interval 1s -o json > $out/healthdirect.json; echo $? > $out/healthdirect.rc
$cx health -d 0000:03:00.0 --interval 1s -o json > $out/healthy.json; echo $? > $out/healthy.rc
`, bin, dir, sock)
	out, errs, code := cli(t, "", "emu", "serve", "--scenario", file, "--socket", sock, "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("emu serve: exit %d\n%s\n%s", code, out, errs)
	}
	read := func(name string, v any) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if v != nil {
			if err := json.Unmarshal(b, v); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, b)
			}
		}
		return strings.TrimSpace(string(b))
	}
	var st struct {
		Devices []struct {
			BDF  string `json:"bdf"`
			PCIe string `json:"pcie"`
		} `json:"devices"`
	}
	read("status.json", &st)
	links := map[string]string{}
	for _, d := range st.Devices {
		links[d.BDF] = d.PCIe
	}
	if len(links) != 10 {
		t.Errorf("status lists %d functions, want 10: %v", len(links), links)
	}
	for bdf, l := range links {
		want := "Gen5 x16"
		if strings.HasPrefix(bdf, "0000:05:") {
			want = "Gen5 x8 (capable Gen5 x16)"
		}
		if l != want {
			t.Errorf("status %s: pcie %q, want %q", bdf, l, want)
		}
	}
	type report struct {
		PCIe struct {
			Text  string             `json:"text"`
			Rates map[string]float64 `json:"rates_per_s"`
			Slot  struct {
				Width int `json:"width"`
			} `json:"slot"`
			Verdicts []struct {
				Code, Category string
			} `json:"verdicts"`
		} `json:"pcie"`
	}
	for _, c := range []struct{ file, rate string }{{"direct", "mpcnt_crc_error_tlp"}, {"kernel", "aer_correctable"}} {
		var r report
		read(c.file+".json", &r)
		if rc := read(c.file+".rc", nil); rc != "1" {
			t.Errorf("%s: exit %s, want 1 (problems found)", c.file, rc)
		}
		// 5 per second over 3 s of real time: generous bounds, the
		// machine may be loaded.
		if got := r.PCIe.Rates[c.rate]; got < 2 || got > 10 {
			t.Errorf("%s: %s %v per second, want about 5 (%+v)", c.file, c.rate, got, r.PCIe.Rates)
		}
		codes := map[string]string{}
		for _, v := range r.PCIe.Verdicts {
			codes[v.Code] = v.Category
		}
		if r.PCIe.Text != "Gen5 x8 (capable Gen5 x16)" || codes["pcie_width_degraded"] != "card or riser" || codes["pcie_correctable_errors"] == "" ||
			codes["pcie_bandwidth_short"] == "" || r.PCIe.Slot.Width != 16 {
			t.Errorf("%s: %+v", c.file, r.PCIe)
		}
	}
	type health struct {
		Devices []struct {
			Checks []struct{ Name, Status, Summary string } `json:"checks"`
		} `json:"devices"`
	}
	for _, c := range []struct {
		file string
		want map[string]string
	}{
		// The fatal MalfTLP injected: its AER status bit in config space
		// fails the direct path; the kernel backend has the count only
		// (counted since probed: a warning).
		{"healthdirect", map[string]string{"pcie": "fail", "bandwidth": "warn"}},
		{"health", map[string]string{"pcie": "warn", "bandwidth": "warn"}},
		{"healthy", map[string]string{"pcie": "ok", "bandwidth": "ok"}},
	} {
		var h health
		read(c.file+".json", &h)
		got := map[string]string{}
		for _, ch := range h.Devices[0].Checks {
			if _, ok := c.want[ch.Name]; ok {
				got[ch.Name] = ch.Status
			}
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: %s is %q, want %q (%+v)", c.file, k, got[k], v, h.Devices[0].Checks)
			}
		}
	}
}

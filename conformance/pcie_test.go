package conformance

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cxray/cxray/feature/pcielink"
	"github.com/cxray/cxray/pcie"
)

// pcieLinks are the functions of testdata/pcie.yaml.
var pcieLinks = []struct{ bdf, what string }{
	{"0000:03:00.0", "trained x8 in an x16 slot"},
	{"0000:04:00.0", "trained Gen4 in a Gen5 slot"},
}

// TestPCIeVsMstlink: `cxray link --pcie` and `mstlink --port_type PCIE -c`
// agree on the same emulated links (MPEIN's speed and width, active and
// enabled; MPCNT's receive and transmit errors and bad DLLPs and TLPs,
// after AER errors injected through the control socket), and both tools
// list one valid PCIe link (mstlink --show_links; cxray reads depth,
// pcie_index, node 0).
func TestPCIeVsMstlink(t *testing.T) {
	need(t, "mstlink")
	if !hasCommand(t, "link", "--pcie") {
		t.Fatal("cxray link has no --pcie")
	}
	var script strings.Builder
	for i, l := range pcieLinks {
		fmt.Fprintf(&script, "cxray emu ctl --socket \"$SOCK\" --bdf %s fault pcie.aer=BadTLP:%d,BadDLLP:2,RxErr:1,Timeout:3 >/dev/null\n", l.bdf, 5+i)
		fmt.Fprintf(&script, "run mst%d mstlink -d %s --port_type PCIE -c --json\n", i, l.bdf)
		fmt.Fprintf(&script, "run links%d mstlink -d %s --port_type PCIE --show_links --json\n", i, l.bdf)
		fmt.Fprintf(&script, "run cx%d cxray link --pcie -d %s --interval 1ms -o json\n", i, l.bdf)
		fmt.Fprintf(&script, "run text%d cxray link --pcie -d %s --interval 1ms\n", i, l.bdf)
	}
	s := emuServe(t, "pcie.yaml", script.String(), 4*time.Minute)
	for i, l := range pcieLinks {
		t.Run(l.what, func(t *testing.T) {
			out := mstlinkOut(t, s.ok(t, fmt.Sprintf("mst%d", i)))
			st := s.step(t, fmt.Sprintf("cx%d", i))
			var doc struct {
				PCIe struct {
					Errors struct {
						MPCNT map[string]uint64 `json:"mpcnt"`
					} `json:"errors"`
					Readings struct {
						MPEIN *struct {
							Enabled pcie.Link `json:"enabled"`
							Active  pcie.Link `json:"active"`
						} `json:"mpein"`
					} `json:"readings"`
					Verdicts []struct{ Code string } `json:"verdicts"`
				} `json:"pcie"`
			}
			if err := json.Unmarshal([]byte(st.stdout), &doc); err != nil {
				t.Fatalf("cxray link --pcie -o json: %v\n%s", err, st)
			}
			if text := s.step(t, fmt.Sprintf("text%d", i)); text.rc != st.rc || st.rc != 1 {
				t.Errorf("exit %d as a table, %d as JSON; want 1 (degraded) in both", text.rc, st.rc)
			}
			m := doc.PCIe.Readings.MPEIN
			if m == nil {
				t.Fatalf("cxray read no MPEIN:\n%s", st)
			}
			info := "PCIe Operational (Enabled) Info"
			cmpLabel(t, out, info, "Depth, pcie index, node", "0, 0, 0")
			cmpLabel(t, out, info, "Link Speed Active (Enabled)",
				pcielink.MlxlinkSpeed(m.Active.Speed)+" ("+pcielink.MlxlinkSpeed(m.Enabled.Speed)+")")
			cmpLabel(t, out, info, "Link Width Active (Enabled)", fmt.Sprintf("%dX (%dX)", m.Active.Width, m.Enabled.Width))
			cnt := "Management PCIe Performance Counters Info"
			for label, name := range map[string]string{"RX Errors": "rx_errors", "TX Errors": "tx_errors", "CRC Error dllp": "crc_error_dllp", "CRC Error tlp": "crc_error_tlp"} {
				v, ok := doc.PCIe.Errors.MPCNT[name]
				if !ok {
					t.Errorf("cxray read no MPCNT %s", name)
					continue
				}
				cmpLabel(t, out, cnt, label, strconv.FormatUint(v, 10))
			}
			// The injected errors are there to compare, not zeros.
			if doc.PCIe.Errors.MPCNT["crc_error_tlp"] != uint64(5+i) || doc.PCIe.Errors.MPCNT["tx_errors"] != 3 {
				t.Errorf("MPCNT %v after the injected errors", doc.PCIe.Errors.MPCNT)
			}
			// mstlink's JSON writes "0,0,0, 0" (its table "0, 0, 0, 0"):
			// depth, pcie_index, node, local port.
			links := mstlinkOut(t, s.ok(t, fmt.Sprintf("links%d", i)))
			l1 := links["Valid PCIe Links"]["Link 1"]
			if v := l1.Text + strings.Join(l1.Values, ","); strings.ReplaceAll(v, " ", "") != "0,0,0,0" {
				t.Errorf("mstlink --show_links: link 1 is %q, want depth, pcie_index, node and port 0", v)
			}
			if _, more := links["Valid PCIe Links"]["Link 2"]; more {
				t.Error("mstlink lists a second PCIe link")
			}
			if t.Failed() {
				t.Logf("mstlink:\n%s\ncxray:\n%s", s.ok(t, fmt.Sprintf("mst%d", i)).stdout, s.step(t, fmt.Sprintf("text%d", i)).stdout)
			}
		})
	}
}

package conformance

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cxray/cxray/dev"
)

// The scenarios in testdata: their functions, and what their files set
// (mstflint q's label -> value), so that both tools are also held to the
// scenario and not only to each other.
var scenarios = []struct {
	file    string
	bdfs    []string
	anchors map[string]string
}{
	{"cx7.yaml", []string{"0000:03:00.0", "0000:03:00.1"}, map[string]string{
		"FW Version": "28.41.2000", "PSID": "MT_0000000999", "Base MAC": "b83fd2a1b2c0", "FW Release Date": "14.3.2024"}},
	{"cx6dx.yaml", []string{"0000:81:00.0"}, nil},
}

type statusDevice struct {
	BDF          string `json:"bdf"`
	PSID         string `json:"psid"`
	Firmware     string `json:"firmware"`
	PermanentMAC string `json:"permanent_mac"`
	NodeGUID     string `json:"node_guid"`
	SysImageGUID string `json:"sys_image_guid"`
	Error        string `json:"error"`
}

// TestFlintQueryVsStatus: `mstflint -d BDF q` and `cxray status` agree on
// the firmware version, the PSID and the adapter's MAC; the release date
// mstflint prints (from MCQI) is the date cxray decodes from MGIR.
//
// mstflint takes the version and PSID from MCQI (component VERSIONS) and
// MGIR, "Orig Base MAC" from MGIR's manufacturing base MAC; cxray takes all
// of them from MGIR, and reports the permanent MAC of each function: the
// base plus the PCI function number.
func TestFlintQueryVsStatus(t *testing.T) {
	need(t, "mstflint")
	for _, sc := range scenarios {
		t.Run(strings.TrimSuffix(sc.file, ".yaml"), func(t *testing.T) {
			var script strings.Builder
			for i, bdf := range sc.bdfs {
				fmt.Fprintf(&script, "run q%d mstflint -d %s q\n", i, bdf)
				fmt.Fprintf(&script, "run mgir%d cxray reg get MGIR -d %s -o json --raw\n", i, bdf)
			}
			script.WriteString("run status cxray status -o json\n")
			s := emuRun(t, sc.file, script.String(), 2*time.Minute)

			var st struct {
				Devices []statusDevice `json:"devices"`
			}
			cxrayJSON(t, s.ok(t, "status"), &st)
			byBDF := map[string]statusDevice{}
			for _, d := range st.Devices {
				byBDF[d.BDF] = d
			}
			for i, bdf := range sc.bdfs {
				q := s.ok(t, fmt.Sprintf("q%d", i))
				fq, err := ParseFlintQuery(q.stdout)
				if err != nil {
					t.Fatal(err)
				}
				d, ok := byBDF[bdf]
				if !ok || d.Error != "" {
					t.Fatalf("cxray status has no reading of %s: %+v", bdf, d)
				}
				var mgir map[string]any
				cxrayJSON(t, s.ok(t, fmt.Sprintf("mgir%d", i)), &mgir)
				fields, _ := jget(mgir, "fields")

				for label, want := range sc.anchors {
					if fq[label] != want {
						t.Errorf("%s %s: mstflint q says %q; the scenario sets %q", bdf, label, fq[label], want)
					}
				}
				cmp := func(t *testing.T, what, peer, ours string) {
					t.Helper()
					if peer != ours || peer == "" {
						t.Errorf("%s %s: mstflint q says %q, cxray %q\nmstflint q:\n%s\ncxray status: %+v", bdf, what, peer, ours, q.stdout, d)
					} else {
						t.Logf("%s %s: both %q", bdf, what, peer)
					}
				}
				cmp(t, "FW Version", fq["FW Version"], d.Firmware)
				cmp(t, "PSID", fq["PSID"], d.PSID)

				perm, err := strconv.ParseUint(NormalizeHexID(d.PermanentMAC), 16, 64)
				if err != nil {
					t.Fatalf("%s: cxray's permanent MAC %q: %v", bdf, d.PermanentMAC, err)
				}
				fn := uint64(dev.PCIFunction(bdf))
				// mstflint prints "Orig Base MAC" (from MGIR) only while the NV
				// base MAC is unset; once it is set it prints "Base MAC" below.
				if orig, ok := fq["Orig Base MAC"]; ok {
					cmp(t, "Orig Base MAC (cxray: permanent MAC - PCI function)", NormalizeHexID(orig), fmt.Sprintf("%012x", perm-fn))
				}

				// MGIR's date is BCD: 0x2024, 0x03, 0x14 is 14.3.2024.
				date := fmt.Sprintf("%x.%x.%x", juint(t, fields, "fw_info.day"), juint(t, fields, "fw_info.month"), juint(t, fields, "fw_info.year"))
				cmp(t, "FW Release Date (mstflint: MCQI; cxray: MGIR)", fq["FW Release Date"], date)

				t.Run(strings.ReplaceAll(bdf, ":", "_")+"/base_guid_mac", func(t *testing.T) {
					// mstflint reads Base GUID and Base MAC from the NV
					// configuration (MNVDA, global TLVs nv_base_mac_guid 0x2
					// and nv_base_mac_guid_cap 0x3) and prints N/A while
					// they read zero.
					if fq["Base GUID"] == "N/A" && fq["Base MAC"] == "N/A" {
						t.Fatal("mstflint prints Base GUID/MAC N/A: it reads them from the NV TLVs nv_base_mac_guid and " +
							"nv_base_mac_guid_cap (MNVDA global 0x2/0x3), which the emulated NV store answers with zeros")
					}
					cmp(t, "Base MAC (cxray: permanent MAC - PCI function)", NormalizeHexID(fq["Base MAC"]), fmt.Sprintf("%012x", perm-fn))
					// The base GUID is the adapter's, its system image
					// GUID; each PF's node GUID follows it, as its MAC
					// follows the base MAC.
					cmp(t, "Base GUID (cxray: system image GUID)", NormalizeHexID(fq["Base GUID"]), NormalizeHexID(d.SysImageGUID))
					if base, err := strconv.ParseUint(NormalizeHexID(fq["Base GUID"]), 16, 64); err == nil {
						cmp(t, "Base GUID + PF (cxray: node GUID)", fmt.Sprintf("%016x", base+fn), NormalizeHexID(d.NodeGUID))
					}
				})
			}
		})
	}
}

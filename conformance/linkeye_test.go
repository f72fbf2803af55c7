package conformance

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// cxrayEye is what the eye comparison reads of `cxray link --show_eye -o json`.
type cxrayEye struct {
	Eye struct {
		Lanes []struct {
			Lane     int               `json:"lane"`
			Measured bool              `json:"measured"`
			Fields   map[string]uint64 `json:"fields"`
			Upper    *uint64           `json:"upper_eye"`
			Mid      *uint64           `json:"mid_eye"`
			Lower    *uint64           `json:"lower_eye"`
		} `json:"lanes"`
		Verdicts []struct {
			Code    string `json:"code"`
			Summary string `json:"summary"`
		} `json:"verdicts"`
	} `json:"eye"`
}

// eyeRows are mstlink -e's per-lane rows and the cxray values they show.
var eyeRows = []string{"Lane", "Initial FOM", "Last FOM", "Upper Grades", "Mid Grades", "Lower Grades"}

// TestEyeVsMstlink reads each lane's eye with 'mstlink -e --json' and
// 'cxray link --show_eye -o json' on Ethernet (a healthy and a degraded
// 400G link) and InfiniBand ports (healthy NDR, trained to 2x, a degraded
// lane, a link down): the same lanes carry the same figures of merit and
// grades, cxray names the degraded lane (exit 1) and nothing else (exit
// 0). mstlink's margin scan (--margin) refuses every device but 16 nm ones
// ("Device not supported!": its eye opener checks SLRG version 3), and the
// emulated adapters are 7 nm: there is no mstlink margin to compare with,
// which this test also pins.
func TestEyeVsMstlink(t *testing.T) {
	need(t, "mstlink")
	for _, c := range []struct {
		scenario string
		bdfs     []string
		degraded map[string]string
	}{
		{"link.yaml", []string{"03:00.0", "03:00.1"}, map[string]string{"03:00.1": "lane 2"}},
		{"ib.yaml", []string{"18:00.0", "5e:00.0", "dc:00.0", "ce:00.0"}, map[string]string{"dc:00.0": "lane 2"}},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			var script strings.Builder
			for i, b := range c.bdfs {
				fmt.Fprintf(&script, "run m%[1]d mstlink -d %[2]s -e --json\nrun c%[1]d cxray link -d 0000:%[2]s --show_eye -o json\n", i, b)
			}
			fmt.Fprintf(&script, "echo y | run margin mstlink -d %s --margin --measure_time 10 --lane 0\n", c.bdfs[0])
			s := emuServe(t, c.scenario, script.String(), 4*time.Minute)
			for i, b := range c.bdfs {
				x := s.step(t, fmt.Sprintf("c%d", i))
				var doc cxrayEye
				if err := json.Unmarshal([]byte(x.stdout), &doc); err != nil {
					t.Fatalf("%s: %v\n%s", b, err, x.stdout)
				}
				want := 0
				if c.degraded[b] != "" {
					want = 1
				}
				if x.rc != want {
					t.Errorf("%s: cxray exit %d; want %d\n%s", b, x.rc, want, x.stderr)
				}
				got := map[string][]string{}
				for _, l := range doc.Eye.Lanes {
					if !l.Measured {
						continue
					}
					got["Lane"] = append(got["Lane"], strconv.Itoa(l.Lane))
					for row, v := range map[string]*uint64{"Upper Grades": l.Upper, "Mid Grades": l.Mid, "Lower Grades": l.Lower} {
						got[row] = append(got[row], ptrString(v))
					}
					for row, f := range map[string]string{"Initial FOM": "initial_fom", "Last FOM": "last_fom"} {
						got[row] = append(got[row], strconv.FormatUint(l.Fields[f], 10))
					}
				}
				m := s.step(t, fmt.Sprintf("m%d", i))
				if len(got) == 0 {
					// A link down: cxray measured nothing; mstlink shows no lane either.
					if out, err := ParseMstlinkJSON([]byte(m.stdout)); err == nil && len(out["EYE Opening Info"]["Lane"].Values) > 0 {
						t.Errorf("%s: cxray measured no lane, mstlink shows %v", b, out["EYE Opening Info"]["Lane"].Values)
					}
					continue
				}
				out := mstlinkOut(t, m)
				wantRows := map[string][]string{}
				for _, r := range eyeRows {
					wantRows[r] = out["EYE Opening Info"][r].Values
				}
				if d := cmp.Diff(wantRows, got); d != "" {
					t.Errorf("%s: mstlink -e (-) vs cxray --show_eye (+):\n%s", b, d)
				}
				var named []string
				for _, v := range doc.Eye.Verdicts {
					named = append(named, v.Code+": "+v.Summary)
				}
				if w := c.degraded[b]; w != "" && (len(named) != 1 || !strings.Contains(named[0], "eye_degraded_lane: the receive eye of "+w+" ")) || w == "" && len(named) != 0 {
					t.Errorf("%s: verdicts %q; want %q named", b, named, w)
				}
			}
			mg := s.step(t, "margin")
			if !strings.Contains(stripANSI(mg.stdout+mg.stderr), "Device not supported!") {
				t.Errorf("mstlink --margin on a 7 nm device: exit %d\n%s\n%s\nwant its 16 nm-only refusal (then compare its margins with cxray's)", mg.rc, mg.stdout, mg.stderr)
			}
		})
	}
}

package link_test

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/prm"
)

// Every port of every function of every example and test scenario, decoded
// with the built-in database and with each PRM revision of the history, at
// power-on and ten minutes later: the verdicts are the ones the emulated
// adapter's own state calls for (its ports, link specs and faults), and
// the JSON of every report is valid.

func TestScenarios(t *testing.T) {
	checkScenarios(t, devtest.DB(t))
}

func TestScenariosAcrossRevisions(t *testing.T) {
	devtest.EachRevision(t, checkScenarios)
}

func checkScenarios(t *testing.T, db *prm.DB) {
	ports := 0
	emutest.EachScenario(t, db, func(t *testing.T, em *scenario.Emulation, ads []*adapter.Adapter) {
		clk := em.Manual
		ctx := context.Background()
		for _, after := range []time.Duration{0, 10 * time.Minute} {
			clk.Advance(after)
			for i, f := range em.Functions() {
				reps, err := link.Read(ctx, ads[i], link.Options{})
				dfl := f.Device.Faults()
				if dfl.GatewaySemaphoreHeld || dfl.ICMDSemaphoreHeld || dfl.ICMDStuckBusy || dfl.Removed {
					if err == nil {
						t.Errorf("%s: a device that does not answer read without error", f.BDF)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", f.BDF, err)
				}
				if _, err := json.Marshal(reps); err != nil {
					t.Errorf("%s: JSON: %v", f.BDF, err)
				}
				own := f.View.Ports()
				if len(reps) != len(own) {
					t.Fatalf("%s: %d reports for ports %v", f.BDF, len(reps), own)
				}
				for _, r := range reps {
					ports++
					want := expected(t, f.Adapter, own[r.Port-1], after > 0)
					var got []string
					for _, v := range r.Verdicts {
						got = append(got, v.Code)
					}
					sort.Strings(got)
					if d := cmp.Diff(want, got); d != "" {
						t.Errorf("%s port %d after %v: verdicts (-want +got):\n%s\n%s", f.BDF, r.Port, after, d, text(r))
					}
					checkConsistent(t, f, r, after > 0)
				}
			}
		}
	})
	if ports < 40 {
		t.Errorf("only %d ports checked", ports)
	}
}

func text(r *link.Report) string {
	var b strings.Builder
	link.WriteText(&b, r, true)
	return b.String()
}

// expected are the verdict codes the emulated port's state calls for.
func expected(t *testing.T, a *scenario.Adapter, port int, counted bool) []string {
	st := a.Firmware.Ports()[port-1]
	spec := a.Spec.Spec
	ls, err := a.Firmware.Link(port)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	switch {
	case !st.AdminUp:
		return []string{"link_admin_down"}
	case !st.OperUp:
		switch {
		case strings.Contains(st.DownReason, "FEC"):
			return []string{"fec_mismatch"}
		case strings.Contains(st.DownReason, "both this port and its link partner"):
			return []string{"speed_mismatch"}
		}
		return []string{"link_down"}
	}
	// Up: slower than the port and its module could go together?
	ps := spec.Ports[port-1]
	lanes := ps.Lanes
	switch {
	case st.LinkType == fw.LinkInfiniBand:
		// An InfiniBand link: a width narrower than the port, the link
		// downs and error recoveries its counters hold.
		if st.Width < ps.Lanes {
			want = append(want, "width_degraded")
			lanes = st.Width
		}
		c, err := a.Firmware.IBCounters(port)
		if err != nil {
			t.Fatal(err)
		}
		if c["link_downed"] > 0 {
			want = append(want, "link_downed")
		}
		if c["link_error_recovery"] > 0 {
			want = append(want, "link_error_recovery")
		}
		if best, _ := emutest.BestIB(a, port); st.Protocol != best {
			want = append(want, "speed_mismatch") // the switch enables less
		}
	case st.SpeedGbps < emutest.BestGbps(a, port):
		want = append(want, "speed_mismatch")
	}
	bad, worst := 0, 0.0
	for l := 0; l < lanes; l++ {
		b := ls.RawBER
		if l < len(ls.LaneBER) && ls.LaneBER[l] > 0 {
			b = ls.LaneBER[l]
		}
		if b >= 1e-5 {
			bad++
		}
		worst = max(worst, b)
	}
	switch {
	case !counted && (bad > 0 || ls.EffectiveBER > 0):
		want = append(want, "firmware_troubleshooting")
	case counted && bad > 0 && bad < lanes:
		want = append(want, "lane_degraded")
	case counted && bad == lanes && worst > 1e-5:
		want = append(want, "raw_ber_high")
	}
	if counted && ls.EffectiveBER > 1e-12 {
		want = append(want, "effective_ber_high")
	}
	sort.Strings(want)
	return want
}

// checkConsistent: the counters agree with the emulator's own, and ratios
// are n/a exactly when they must be.
func checkConsistent(t *testing.T, f *scenario.Function, r *link.Report, counted bool) {
	t.Helper()
	// The cable summary: plugged exactly when the cage holds a module.
	ms, err := f.Adapter.Firmware.ModuleStatus(r.Module)
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Cable; c == nil || c.Present == nil || *c.Present != ms.Plugged || (ms.Plugged && ms.Error == "" && c.PartNumber == "") {
		t.Errorf("%s port %d: cable %+v, the cage holds plugged=%v error=%q", f.BDF, r.Port, c, ms.Plugged, ms.Error)
	}
	c := r.Counters
	if _, held := f.Adapter.Spec.RegisterStatus["PPCNT"]; held {
		// PPCNT answers a status: no counters, and a note saying so.
		noted := slices.ContainsFunc(r.Unavailable, func(u link.Unavailable) bool { return strings.Contains(u.Why, "PPCNT") })
		if c != nil || !noted {
			t.Errorf("%s port %d: PPCNT answers a status, yet counters %v, notes %v", f.BDF, r.Port, c != nil, r.Unavailable)
		}
		return
	}
	if c == nil || c.TimeSinceClearMS == nil {
		t.Errorf("%s port %d: no counters", f.BDF, r.Port)
		return
	}
	up := r.Operational.OperUp != nil && *r.Operational.OperUp
	if (*c.TimeSinceClearMS == 0 || !up) != (c.RawBER.Value == nil) {
		t.Errorf("%s port %d: time since clear %d ms, up %v, raw BER %+v", f.BDF, r.Port, *c.TimeSinceClearMS, up, c.RawBER)
	}
	if !counted || !up || c.ReceivedBits == nil || *c.ReceivedBits == 0 {
		return
	}
	// The per-lane errors add up to the port's, and the firmware's ratio
	// agrees with the counts within its one significant digit.
	var sum uint64
	for _, l := range c.Lanes {
		sum += *l.RawErrors
	}
	if sum != *c.RawErrors {
		t.Errorf("%s port %d: lanes add up to %d raw errors, the port says %d", f.BDF, r.Port, sum, *c.RawErrors)
	}
	// The total and the lanes are computed the same way (errors over
	// bits): lanes that count the same errors read the total's ratio, and
	// the firmware's one-digit figure is beside it, never instead.
	if *c.RawErrors > 0 {
		ratio := float64(*c.RawErrors) / float64(*c.ReceivedBits)
		if c.RawBER.Value == nil || *c.RawBER.Value != ratio || c.RawBER.Source != "counters" || c.RawBER.Firmware == "" {
			t.Errorf("%s port %d: raw BER %+v, counts give %g with the firmware's figure beside", f.BDF, r.Port, c.RawBER, ratio)
		}
		for _, l := range c.Lanes {
			if *l.RawErrors == *c.RawErrors/uint64(len(c.Lanes)) && *c.RawErrors%uint64(len(c.Lanes)) == 0 && l.RawBER.Text != c.RawBER.Text {
				t.Errorf("%s port %d lane %d: raw BER %s, the total's %s, from the same share of errors", f.BDF, r.Port, l.Lane, l.RawBER.Text, c.RawBER.Text)
			}
		}
	}
}

// Rates over an interval on the manual clock are the model's rates
// exactly; a clear between the reads is said, and counts from the clear.
func TestRates(t *testing.T) {
	ads, clk := emutest.OpenFile(t, "../../examples/link-trouble.yaml", "0000:03:00.1")
	clk.Advance(time.Minute)
	reps, err := link.Read(context.Background(), ads[0], link.Options{Interval: 10 * time.Second, Brief: true})
	if err != nil {
		t.Fatal(err)
	}
	r := reps[0].Rates
	// 1e11 bits/s per lane: 2e-10 gives 20 errors/s, lane 2's 4e-5 4e6.
	if d := cmp.Diff([]float64{20, 20, 4e6, 20}, r.LaneRawErrorsPerS); d != "" || r.IntervalS != 10 || r.Cleared {
		t.Errorf("lane rates (-want +got):\n%s interval %v cleared %v", d, r.IntervalS, r.Cleared)
	}
	if got := *r.RawErrorsPerS; got != 4e6+60 {
		t.Errorf("raw errors %v/s, want 4000060", got)
	}
	if v := r.RawBER.Value; v == nil || *v != (4e6+60)/4e11 {
		t.Errorf("raw BER over the interval %+v, want %v", r.RawBER, (4e6+60)/4e11)
	}
	if reps[0].Counters.TimeSinceClearMS == nil || *reps[0].Counters.TimeSinceClearMS != 70000 {
		t.Errorf("time since clear %v ms, want 70000", reps[0].Counters.TimeSinceClearMS)
	}
}

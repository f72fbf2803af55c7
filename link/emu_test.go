package link_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/internal/emuadapter"
	"github.com/cxray/cxray/internal/prmhistory"
	"github.com/cxray/cxray/link"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/adb"
	"github.com/cxray/cxray/prm/builtin"
)

// Every port of every function of every example and test scenario, decoded
// with the built-in database and with each PRM revision of the history, at
// power-on and ten minutes later: the verdicts are the ones the emulated
// adapter's own state calls for (its ports, link specs and faults), and
// the JSON of every report is valid.

func TestScenarios(t *testing.T) {
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	checkScenarios(t, db)
}

func TestScenariosAcrossRevisions(t *testing.T) {
	for _, f := range prmhistory.Files(t) {
		db, err := adb.LoadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(db.Revision, func(t *testing.T) { checkScenarios(t, db) })
	}
}

func checkScenarios(t *testing.T, db *prm.DB) {
	files, _ := filepath.Glob("../examples/*.yaml")
	more, _ := filepath.Glob("../emu/scenario/testdata/*.yaml")
	files = append(files, more...)
	if len(files) < 6 {
		t.Fatalf("found only %v", files)
	}
	emuDB, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	ports := 0
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			sc, err := scenario.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			start := sc.Clock.Start
			if start.IsZero() {
				start = scenario.DefaultStart
			}
			clk := clock.NewManual(start)
			em, err := scenario.Build(sc, scenario.Options{DB: emuDB, Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			e := &emuadapter.Emulator{Stack: dev.StackOptions{Clock: clk, SemaphoreTimeout: 50 * time.Millisecond}}
			ctx := context.Background()
			ads, err := e.Open(ctx, em, em.Functions(), "emu:"+file, true, nil, adapter.Options{DB: db})
			if err != nil {
				t.Fatal(err)
			}
			defer adapter.CloseAll(ads)
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
	}
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
	mod := spec.Modules[ps.Module].Protocols
	best := 0
	for _, n := range ps.Protocols {
		p, _ := fw.LookupEthProtocol(n)
		if len(mod) == 0 || slices.ContainsFunc(mod, func(m string) bool { q, _ := fw.LookupEthProtocol(m); return q.Name == p.Name }) {
			best = max(best, p.Gbps)
		}
	}
	if st.SpeedGbps < best {
		want = append(want, "speed_mismatch")
	}
	bad, worst := 0, 0.0
	for l := 0; l < ps.Lanes; l++ {
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
	case counted && bad > 0 && bad < ps.Lanes:
		want = append(want, "lane_degraded")
	case counted && bad == ps.Lanes && worst > 1e-5:
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
	if c.RawBER.Value != nil && *c.RawErrors > 0 {
		ratio := float64(*c.RawErrors) / float64(*c.ReceivedBits)
		if v := *c.RawBER.Value; v > ratio*1.0001 || v < ratio/10 {
			t.Errorf("%s port %d: firmware raw BER %g, counts give %g", f.BDF, r.Port, v, ratio)
		}
	}
}

package linkeye_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/linkeye"
	"github.com/cxray/cxray/prm"
)

// lanesOf is what a test compares: per lane, measured or not.
type laneSum struct {
	Lane     int
	Measured bool
}

func summary(r *linkeye.Report) []laneSum {
	var out []laneSum
	for _, l := range r.Lanes {
		out = append(out, laneSum{l.Lane, l.Measured})
	}
	return out
}

func codes(r *linkeye.Report) []string {
	out := []string{}
	for _, v := range r.Verdicts {
		out = append(out, v.Code+": "+v.Summary)
	}
	return out
}

// The eyes of a healthy 400G link, of one whose lane 2 is degraded, and of
// a link that is down, decoded with the built-in database and every
// revision of the history: the degraded lane and only it is named; a down
// link has no lane measured and no verdict. Rev 0.51's SLRG has no 7 nm
// page, which the emulated ConnectX-7 answers with: a database finding,
// and the lanes read with the built-in layout, which each lane says.
func TestEyeVerdicts(t *testing.T) {
	check := func(t *testing.T, db *prm.DB) {
		em := emutest.BuildFile(t, "../../examples/link-trouble.yaml")
		ads := emutest.Open(t, em, "emu", db, "0000:03:00.0", "0000:03:00.1", "0000:04:00.0")
		ctx := context.Background()
		noPage := db.Revision == "Rev 0.51"
		all := []laneSum{{0, true}, {1, true}, {2, true}, {3, true}}
		for i, want := range []struct {
			lanes    []laneSum
			verdicts []string
		}{
			{all, []string{}},
			{all, []string{"eye_degraded_lane: the receive eye of lane 2 is much smaller than the other lanes' of port 1"}},
			{[]laneSum{{0, false}, {1, false}, {2, false}, {3, false}}, []string{}},
		} {
			r, err := linkeye.Read(ctx, ads[i], 1, linkeye.Options{})
			if err != nil {
				t.Fatalf("%s: %v", ads[i].Name(), err)
			}
			if noPage && i < 2 {
				if d := cmp.Diff([]string{"database finding: Rev 0.51 SLRG has no page for version 4; give a newer database (--adb); read with the built-in database's (Rev 0.57) layout"}, r.DatabaseFindings); d != "" {
					t.Errorf("%s: database findings %q; want Rev 0.51's missing 7 nm page", ads[i].Name(), r.DatabaseFindings)
				}
			} else if len(r.DatabaseFindings) != 0 {
				t.Errorf("%s: database findings %q; want none", ads[i].Name(), r.DatabaseFindings)
			}
			if d := cmp.Diff(want.lanes, summary(r)); d != "" {
				t.Errorf("%s lanes (-want +got):\n%s", ads[i].Name(), d)
			}
			if d := cmp.Diff(want.verdicts, codes(r)); d != "" {
				t.Errorf("%s verdicts (-want +got):\n%s", ads[i].Name(), d)
			}
			for _, l := range r.Lanes {
				if l.Measured && (l.Page != "slrg_7nm_ext" || l.FigureName != "last_fom" || l.Mid == nil || l.Upper == nil || l.Lower == nil) {
					t.Errorf("%s lane %d: %+v; want the 7 nm page's figure and three eyes", ads[i].Name(), l.Lane, l)
				}
				wantSel := map[bool]string{true: "database", false: "version"}[db.Revision >= "Rev 0.59"]
				if noPage {
					wantSel = "version, with the built-in Rev 0.57 layout"
				}
				if l.Measured && l.Selection != wantSel {
					t.Errorf("%s lane %d: page chosen by %q under %s", ads[i].Name(), l.Lane, l.Selection, db.Revision)
				}
			}
		}
		// One lane only: the degraded one alone has no lane to be smaller than.
		r, err := linkeye.Read(ctx, ads[1], 1, linkeye.Options{Lanes: []int{2}})
		if err != nil || len(r.Lanes) != 1 || r.Lanes[0].Lane != 2 {
			t.Fatalf("lane 2 alone: %+v, %v", r, err)
		}
		_, err = linkeye.Read(ctx, ads[1], 1, linkeye.Options{Lanes: []int{4}})
		if !errors.Is(err, linkeye.ErrLane) || !errors.Is(err, prm.ErrInput) {
			t.Errorf("lane 4 of a 4-lane port: %v; want ErrLane, an input error", err)
		}
	}
	t.Run("builtin", func(t *testing.T) { check(t, devtest.DB(t)) })
	devtest.EachRevision(t, check)
}

// An InfiniBand NDR port that trained at 2x and a degraded lane through
// the fault the link model already has (link.lane_ber): the lanes the link
// did not train are not measured, and the degraded lane among the trained
// ones is named.
func TestEyeInfiniBand(t *testing.T) {
	sc, err := scenario.Parse([]byte(`devices:
  - profile: cx7-1p-ndr
    bdf: 0000:18:00.0
    ports:
      - port: 1
        ib: {width: 2x}
        link: {raw_ber: 1e-12, lane_ber: [0, 1e-5, 0, 0]}
`), "ib.yaml")
	if err != nil {
		t.Fatal(err)
	}
	em := emutest.Build(t, sc)
	ad := emutest.Open(t, em, "emu", nil)[0]
	r, err := linkeye.Read(context.Background(), ad, 1, linkeye.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Protocol != adapter.LinkInfiniBand {
		t.Errorf("protocol %q; want InfiniBand", r.Protocol)
	}
	if d := cmp.Diff([]laneSum{{0, true}, {1, true}, {2, false}, {3, false}}, summary(r)); d != "" {
		t.Errorf("lanes (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"eye_degraded_lane: the receive eye of lane 1 is much smaller than the other lanes' of port 1"}, codes(r)); d != "" {
		t.Errorf("verdicts (-want +got):\n%s", d)
	}
	// At run time, as emu ctl's link.lane_ber sets it (Firmware.SetLink):
	// the degradation moves to lane 0 and the verdict follows it.
	fn, err := em.Function("0000:18:00.0")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := fn.Adapter.Firmware.Link(fn.Port)
	if err != nil {
		t.Fatal(err)
	}
	spec.LaneBER = []float64{1e-5, 0, 0, 0}
	if err := fn.Adapter.Firmware.SetLink(fn.Port, spec); err != nil {
		t.Fatal(err)
	}
	if r, err = linkeye.Read(context.Background(), ad, 1, linkeye.Options{}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"eye_degraded_lane: the receive eye of lane 0 is much smaller than the other lanes' of port 1"}, codes(r)); d != "" {
		t.Errorf("after the fault moved (-want +got):\n%s", d)
	}
}

// Every function of every example scenario: the eye reads without error,
// a lane measured has a figure, and a lane not measured says why.
func TestEyeEveryScenario(t *testing.T) {
	measured := 0
	emutest.EachScenario(t, nil, func(t *testing.T, em *scenario.Emulation, ads []*adapter.Adapter) {
		for _, ad := range ads {
			if !ad.HasRegisters() {
				continue
			}
			r, err := linkeye.Read(context.Background(), ad, 1, linkeye.Options{})
			if err != nil {
				// The one scenario whose gateway semaphore another tool holds.
				if !strings.Contains(ad.Name(), "semaphore-held") {
					t.Errorf("%s: %v", ad.Name(), err)
				}
				continue
			}
			// The margin scan of lane 0 (instant on the manual clock): a
			// link down is refused as input; otherwise each scan ends
			// with the firmware's status, a margin only when completed.
			if p, err := linkeye.PlanMargin(context.Background(), ad, 1, linkeye.MarginOptions{MeasureTime: 10, Lanes: []int{0}, Eye: "MID"}); err == nil {
				m, err := linkeye.Scan(context.Background(), ad, p, nil)
				if err != nil {
					t.Errorf("%s margin: %v", ad.Name(), err)
				}
				for _, x := range m.Results {
					if (x.Margin != nil) != (x.Status == "eye scan completed") {
						t.Errorf("%s margin lane %d: %+v", ad.Name(), x.Lane, x)
					}
				}
			} else if !errors.Is(err, prm.ErrInput) {
				t.Errorf("%s margin plan: %v", ad.Name(), err)
			}
			for _, l := range r.Lanes {
				if l.Measured {
					measured++
				}
				if l.Measured == (l.Figure == nil) || l.Measured == (l.NotMeasured != "") {
					t.Errorf("%s lane %d: measured %v, figure %v, not measured %q", ad.Name(), l.Lane, l.Measured, l.Figure, l.NotMeasured)
				}
			}
		}
	})
	if measured < 40 {
		t.Errorf("%d lanes measured over every scenario; want the up links' (at least 40)", measured)
	}
}

// The register database's side of the eye, in the built-in database and
// every revision of the history: SLRG and its page_data union exist; the
// union's members are conditional (the database selects the page) from
// Rev 0.59 on and plain before; the 16 nm page is in every revision and
// the 7 nm page from Rev 0.56 (Rev 0.51 lacks it: a database finding on a
// 7 nm adapter); SLRED, the margin scan's register, is there from Rev 0.56.
func TestDatabasePages(t *testing.T) {
	check := func(t *testing.T, db *prm.DB) {
		reg, err := db.Register("SLRG")
		if err != nil {
			t.Fatal(err)
		}
		pd := db.Nodes[reg.Node].Field("page_data")
		if pd == nil || db.Nodes[pd.Subnode] == nil || !db.Nodes[pd.Subnode].Union {
			t.Fatalf("%s SLRG page_data: %+v; want a union", db.Revision, pd)
		}
		un := db.Nodes[pd.Subnode]
		old := db.Revision < "Rev 0.56"
		got := struct{ Conditional, Has16, Has7, SLRED bool }{un.Conditional, un.Field("slrg_16nm_ext") != nil, un.Field("slrg_7nm_ext") != nil, false}
		if _, err := db.Register("SLRED"); err == nil {
			got.SLRED = true
		}
		want := struct{ Conditional, Has16, Has7, SLRED bool }{db.Revision >= "Rev 0.59", true, !old, !old}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", db.Revision, d)
		}
	}
	t.Run("builtin", func(t *testing.T) { check(t, devtest.DB(t)) })
	devtest.EachRevision(t, check)
}

package linkeye_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/linkeye"
	"github.com/cxray/cxray/prm"
)

const marginScenario = `devices:
  - profile: cx6dx-2p100g
    bdf: 0000:04:00.0
    functions: 2
    ports:
      - port: 1
        link: {raw_ber: 1e-12}
      - port: 2
        link: {raw_ber: 1e-12, lane_ber: [0, 2e-5, 0, 0]}
  - profile: cx7-2p400g
    bdf: 0000:05:00.0
  - profile: cx7-1p-ndr
    bdf: 0000:06:00.0
    ports:
      - port: 1
        ib: {partner_speeds: [HDR]}
        link: {raw_ber: 1e-12, lane_ber: [0, 0, 0, 3e-5]}
`

type res struct {
	Lane   int
	Eye    string
	Status string
	Margin bool
}

func results(r *linkeye.MarginReport) []res {
	var out []res
	for _, x := range r.Results {
		out = append(out, res{x.Lane, x.Eye, x.Status, x.Margin != nil})
	}
	return out
}

// The margin scan on the emulator's clock: a 100G port's NRZ lanes scan
// one eye each and the degraded lane 1 is named; a clean port names none;
// an InfiniBand port at HDR (PAM4, 50 Gb/s lanes) scans three eyes per
// lane and names lane 3; a ConnectX-7 at 400G over four lanes runs 100
// Gb/s lanes, which SLRED's lane speeds do not name: unsupported, no
// margin and no verdict. Each scan waits its measure time on the device's
// clock. With every revision of the history: Rev 0.51 has no SLRED (a
// database finding, an input error).
func TestMarginScan(t *testing.T) {
	check := func(t *testing.T, db *prm.DB) {
		sc, err := scenario.Parse([]byte(marginScenario), "m.yaml")
		if err != nil {
			t.Fatal(err)
		}
		em := emutest.Build(t, sc)
		ads := emutest.Open(t, em, "emu", db, "0000:04:00.0", "0000:04:00.1", "0000:05:00.0", "0000:06:00.0")
		ctx := context.Background()
		if db.Revision == "Rev 0.51" {
			_, err := linkeye.PlanMargin(ctx, ads[0], 1, linkeye.MarginOptions{MeasureTime: 10})
			if !errors.Is(err, prm.ErrInput) || !strings.Contains(err.Error(), "database finding: Rev 0.51 has no SLRED") {
				t.Errorf("Rev 0.51: %v; want a database finding", err)
			}
			return
		}
		done := "eye scan completed"
		for i, c := range []struct {
			eye      string
			want     []res
			verdicts []string
		}{
			{"", []res{{0, "", done, true}, {1, "", done, true}, {2, "", done, true}, {3, "", done, true}}, nil},
			{"", []res{{0, "", done, true}, {1, "", done, true}, {2, "", done, true}, {3, "", done, true}}, []string{"margin_degraded_lane: the eye margin of lane 1 is much smaller than the other lanes' of port 1"}},
			{"MID", []res{{0, "MID", "unsupported scan for the current speed", false}, {1, "MID", "unsupported scan for the current speed", false}, {2, "MID", "unsupported scan for the current speed", false}, {3, "MID", "unsupported scan for the current speed", false}}, nil},
		} {
			p, err := linkeye.PlanMargin(ctx, ads[i], 1, linkeye.MarginOptions{MeasureTime: 30, Eye: c.eye})
			if err != nil {
				t.Fatalf("%s: %v", ads[i].Name(), err)
			}
			start := em.Manual.Now()
			r, err := linkeye.Scan(ctx, ads[i], p, nil)
			if err != nil {
				t.Fatalf("%s: %v", ads[i].Name(), err)
			}
			if d := cmp.Diff(c.want, results(r)); d != "" {
				t.Errorf("%s results (-want +got):\n%s", ads[i].Name(), d)
			}
			var vs []string
			for _, v := range r.Verdicts {
				vs = append(vs, v.Code+": "+v.Summary)
			}
			if d := cmp.Diff(c.verdicts, vs); d != "" {
				t.Errorf("%s verdicts (-want +got):\n%s", ads[i].Name(), d)
			}
			if took, least := em.Manual.Now().Sub(start), time.Duration(len(c.want))*30*time.Second; c.want[0].Margin && took < least {
				t.Errorf("%s: the scans took %v on the device clock; want at least %v (30 s each)", ads[i].Name(), took, least)
			}
		}
		// InfiniBand at HDR: three eyes per lane, lane 3 named.
		p, err := linkeye.PlanMargin(ctx, ads[3], 1, linkeye.MarginOptions{MeasureTime: 10, Lanes: []int{0, 3}})
		if err != nil {
			t.Fatal(err)
		}
		if !p.PAM4 || p.Steps() != 6 || p.LaneGbps != 50 {
			t.Errorf("HDR plan: %+v; want PAM4 50 Gb/s lanes, 2 lanes x 3 eyes", p)
		}
		r, err := linkeye.Scan(ctx, ads[3], p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Results) != 6 || r.Final == nil || len(r.Verdicts) != 1 || !strings.Contains(r.Verdicts[0].Summary, "lane 3 ") {
			t.Errorf("HDR scan: %+v", r)
		}
		// The link retrains while a lane is scanned (the cable pulled and
		// back, as emu ctl's link_down fault does): the scan ends in the
		// firmware's error, with no margin and no verdict.
		fn, err := em.Function("0000:04:00.0")
		if err != nil {
			t.Fatal(err)
		}
		fwm := fn.Adapter.Firmware
		p, err = linkeye.PlanMargin(ctx, ads[0], 1, linkeye.MarginOptions{MeasureTime: 10, Lanes: []int{0}})
		if err != nil {
			t.Fatal(err)
		}
		r, err = linkeye.Scan(ctx, ads[0], p, func(int, string, time.Duration) {
			fl := fwm.Faults()
			fl.LinkDown = []int{fn.Port}
			if err := fwm.SetFaults(fl); err != nil {
				t.Fatal(err)
			}
			fl.LinkDown = nil
			if err := fwm.SetFaults(fl); err != nil {
				t.Fatal(err)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]res{{0, "", "error, eye scan not completed", false}}, results(r)); d != "" || r.Final != nil || len(r.Verdicts) != 0 {
			t.Errorf("a retrain during the scan (-want +got):\n%s\nfinal %v, verdicts %v", d, r.Final, r.Verdicts)
		}
		// Stopped while a lane is scanned: Scan returns the context's
		// error and aborts the lane's scan (SLRED abort), so the firmware
		// is not left scanning.
		cctx, cancel := context.WithCancel(ctx)
		_, err = linkeye.Scan(cctx, ads[0], p, func(int, string, time.Duration) { cancel() })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("stopped scan: %v; want context.Canceled", err)
		}
		x, err := ads[0].ReadRegister(ctx, "SLRED", adapter.LocalPort(1).With("lane", 0).With("page_data_sel", 0))
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := adapter.FieldOf(x.Decoded, "SLRED", "status"); st != 0 {
			t.Errorf("after a stopped scan SLRED status %d; want 0 (aborted: not performed)", st)
		}
		// Invalid: an eye on NRZ lanes, a measure time SLRED has no code for, a lane the port lacks.
		for _, o := range []linkeye.MarginOptions{{MeasureTime: 10, Eye: "UP"}, {MeasureTime: 11}, {MeasureTime: 10, Lanes: []int{4}}, {MeasureTime: 10, Eye: "SIDE"}} {
			if _, err := linkeye.PlanMargin(ctx, ads[0], 1, o); !errors.Is(err, prm.ErrInput) {
				t.Errorf("%+v: %v; want an input error", o, err)
			}
		}
	}
	t.Run("builtin", func(t *testing.T) { check(t, devtest.DB(t)) })
	devtest.EachRevision(t, check)
}

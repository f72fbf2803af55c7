package linkctl_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/feature/linkctl"
	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/adb"
	"github.com/cxray/cxray/prm/regpath"
)

const prbsScenario = `clock: {mode: manual}
devices:
  - profile: cx7-2p400g
    functions: 2
    ports:
      - port: 1
        link: {raw_ber: 2e-10}
      - port: 2
        link: {raw_ber: 2e-10, lane_ber: [0, 0, 4e-5, 0]}
  - profile: cx7-1p-ndr
    bdf: 0000:05:00.0
    ports:
      - port: 1
        link: {raw_ber: 2e-10, lane_ber: [0, 3e-5, 0, 0]}
`

func startPRBS(t *testing.T, ad *adapter.Adapter, tx, rx string) {
	t.Helper()
	ctx := context.Background()
	c, err := linkctl.TestMode(ctx, ad, 1, "EN", linkctl.PRBSSettings{TxPRBS: tx, RxPRBS: rx})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := linkctl.Apply(ctx, ad, c, linkctl.Options{}, nil); err != nil {
		t.Fatal(err)
	}
}

func verdicts(r *linkctl.PRBSReport) []string {
	var out []string
	for _, l := range r.Lanes {
		out = append(out, l.Verdict)
	}
	return out
}

// A PRBS run names the degraded lane (Ethernet, lane 2 of the second
// function's port; InfiniBand NDR, lane 1), passes the clean one, and
// finds no lock when the checker waits for another pattern than the
// generator sends. Each verdict follows the lane's injected BER: the BER
// measured is within a factor of two of it.
func TestPRBSVerdicts(t *testing.T) {
	ads, clk := emutest.OpenYAML(t, prbsScenario)
	ctx := context.Background()
	cases := []struct {
		ad      *adapter.Adapter
		tx, rx  string
		want    []string
		badLane int
		ber     float64
	}{
		{ads[0], "", "", []string{"ok", "ok", "ok", "ok"}, -1, 0},
		{ads[1], "PRBS15", "", []string{"ok", "ok", "degraded", "ok"}, 2, 4e-5},
		{ads[2], "PRBS13", "", []string{"ok", "degraded", "ok", "ok"}, 1, 3e-5},
	}
	for i, c := range cases {
		startPRBS(t, c.ad, c.tx, c.rx)
		clk.OnSleep(1, func() {})
		r, err := linkctl.MeasureTestMode(ctx, c.ad, 1, 10*time.Second, nil)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if d := cmp.Diff(c.want, verdicts(r)); d != "" {
			t.Errorf("case %d (%s): verdicts (-want +got):\n%s", i, c.ad.Name(), d)
		}
		if c.badLane >= 0 {
			got := r.Lanes[c.badLane].BER
			if got < c.ber/2 || got > c.ber*2 {
				t.Errorf("case %d: lane %d BER %.2e, want about %.0e", i, c.badLane, got, c.ber)
			}
			if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "lane "+string(rune('0'+c.badLane))) {
				t.Errorf("case %d: problems %q, want one naming lane %d", i, r.Problems, c.badLane)
			}
		} else if len(r.Problems) != 0 {
			t.Errorf("case %d: problems %q on a clean port", i, r.Problems)
		}
	}
	// The checker waits for PRBS7 while the generator sends PRBS31: no lane locks.
	startPRBS(t, ads[0], "PRBS31", "PRBS7")
	r, err := linkctl.MeasureTestMode(ctx, ads[0], 1, 2*time.Second, []int{0, 3})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"no_lock", "no_lock"}, verdicts(r)); d != "" {
		t.Errorf("mismatched patterns (-want +got):\n%s", d)
	}
}

// Stopping the test (DS), or the undo of EN, leaves both sides off; a
// measurement then says the port is not in test mode (input, exit 2).
func TestPRBSStopAndUndo(t *testing.T) {
	ads, _ := emutest.OpenYAML(t, prbsScenario)
	ad, ctx := ads[0], context.Background()
	c, err := linkctl.TestMode(ctx, ad, 1, "EN", linkctl.PRBSSettings{TxPRBS: "PRBS9"})
	if err != nil {
		t.Fatal(err)
	}
	if c.UndoFlags != "--test_mode DS" {
		t.Errorf("undo flags %q, want --test_mode DS", c.UndoFlags)
	}
	if _, err := linkctl.Apply(ctx, ad, c, linkctl.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	u, err := linkctl.Undo(ctx, ad, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := linkctl.Apply(ctx, ad, u, linkctl.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := linkctl.MeasureTestMode(ctx, ad, 1, time.Second, nil); !errors.Is(err, prm.ErrInput) {
		t.Errorf("measure after undo: %v, want an input error (not in test mode)", err)
	}
	startPRBS(t, ad, "", "")
	ds, err := linkctl.TestMode(ctx, ad, 1, "DS", linkctl.PRBSSettings{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.UndoFlags != "--test_mode EN --tx_prbs PRBS31 --rx_prbs PRBS31" {
		t.Errorf("DS undo flags %q", ds.UndoFlags)
	}
	if _, err := linkctl.Apply(ctx, ad, ds, linkctl.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := linkctl.MeasureTestMode(ctx, ad, 1, time.Second, nil); !errors.Is(err, prm.ErrInput) {
		t.Errorf("measure after DS: %v, want an input error", err)
	}
}

// Invalid input is refused before anything is written.
func TestPRBSInvalid(t *testing.T) {
	ads, _ := emutest.OpenYAML(t, prbsScenario)
	ad, ctx := ads[0], context.Background()
	for _, c := range []struct {
		mode string
		set  linkctl.PRBSSettings
		want string
	}{
		{"GO", linkctl.PRBSSettings{}, "--test_mode"},
		{"EN", linkctl.PRBSSettings{TxPRBS: "PRBS99"}, "not a PRBS pattern"},
		{"EN", linkctl.PRBSSettings{TxPRBS: "PRBS28"}, "does not support"}, // not in the emulated port's prbs_modes_cap
		{"EN", linkctl.PRBSSettings{TxPRBS: "PRBS31", RxPRBS: "SQUARE_WAVE8"}, "does not support"},
		{"DS", linkctl.PRBSSettings{TxPRBS: "PRBS31"}, "go with --test_mode EN"},
		{"DS", linkctl.PRBSSettings{RxRate: "HDR"}, "go with --test_mode EN"},
		{"EN", linkctl.PRBSSettings{TxRate: "fast"}, "not a lane rate name"},
		{"EN", linkctl.PRBSSettings{TxRate: "1G"}, "cannot test at that rate"}, // 1GE is not in the emulated lane_rate_cap
		{"EN", linkctl.PRBSSettings{TxRate: "HDR", RxRate: "2.5G"}, "cannot test at that rate"},
	} {
		_, err := linkctl.TestMode(ctx, ad, 1, c.mode, c.set)
		if !errors.Is(err, prm.ErrInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: %v, want an input error with %q", c.mode, c.set, err, c.want)
		}
	}
	startPRBS(t, ad, "", "")
	for _, lanes := range [][]int{{4}, {-1}} {
		if _, err := linkctl.MeasureTestMode(ctx, ad, 1, time.Second, lanes); !errors.Is(err, prm.ErrInput) {
			t.Errorf("lanes %v: %v, want an input error", lanes, err)
		}
	}
	if _, err := linkctl.MeasureTestMode(ctx, ad, 1, 0, nil); !errors.Is(err, prm.ErrInput) {
		t.Errorf("duration 0: %v, want an input error", err)
	}
}

// The run, its lane rate and its verdicts under every PRM revision of the
// history: PPTT and PPRT are in all of them (their lane rates numbered
// alike); Rev 0.51 lacks prbs_lock_status_ext, which a 4-lane port does
// not need.
func TestPRBSEveryRevision(t *testing.T) {
	for _, f := range prmhistorytest.Files(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			db, err := adb.LoadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := scenario.Parse([]byte(prbsScenario), "t.yaml")
			if err != nil {
				t.Fatal(err)
			}
			ads := emutest.Open(t, emutest.Build(t, sc), "emu", db, "0000:03:00.1")
			c, err := linkctl.TestMode(context.Background(), ads[0], 1, "EN", linkctl.PRBSSettings{TxPRBS: "PRBS31", TxRate: "HDR"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := linkctl.Apply(context.Background(), ads[0], c, linkctl.Options{}, nil); err != nil {
				t.Fatal(err)
			}
			if tx, rx := prbsRates(t, ads[0]); tx != 6 || rx != 6 {
				t.Errorf("lane rates %d/%d, want 6/6 (HDR)", tx, rx)
			}
			_, err = linkctl.TestMode(context.Background(), ads[0], 1, "EN", linkctl.PRBSSettings{InvertTx: true})
			if db.Revision == "Rev 0.51" {
				if !errors.Is(err, prm.ErrInput) || !strings.Contains(err.Error(), "database finding") {
					t.Errorf("--invert_tx_polarity with Rev 0.51 (no p): %v, want a database finding", err)
				}
			} else if err != nil {
				t.Errorf("--invert_tx_polarity: %v", err)
			}
			r, err := linkctl.MeasureTestMode(context.Background(), ads[0], 1, 10*time.Second, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]string{"ok", "ok", "degraded", "ok"}, verdicts(r)); d != "" {
				t.Errorf("verdicts (-want +got):\n%s", d)
			}
			if len(r.DatabaseFindings) != 0 {
				t.Errorf("findings on a 4-lane port: %q", r.DatabaseFindings)
			}
		})
	}
}

// prbsRates reads the lane rates the generator and the checker are set to.
func prbsRates(t *testing.T, ad *adapter.Adapter) (tx, rx uint64) {
	t.Helper()
	ctx := context.Background()
	lp := adapter.LocalPort(1)
	x, err := ad.ReadRegister(ctx, "PPTT", lp.With(regpath.PPTTLane, 0).Join(link.OptionalIndex(ad.DB(), "PPTT", lp)))
	if err != nil {
		t.Fatal(err)
	}
	y, err := ad.ReadRegister(ctx, "PPRT", lp.With(regpath.PPRTLane, 0).Join(link.OptionalIndex(ad.DB(), "PPRT", lp)))
	if err != nil {
		t.Fatal(err)
	}
	tx, _ = adapter.FieldOf(x.Decoded, "PPTT", regpath.PPTTLaneRateAdmin)
	rx, _ = adapter.FieldOf(y.Decoded, "PPRT", regpath.PPRTLaneRateOper)
	// The modulation follows the rate, as mlxlink sets it: PAM4 encoding
	// (1) from HDR's 53 Gb/s lanes up, NRZ (0) below.
	txMod, _ := adapter.FieldOf(x.Decoded, "PPTT", regpath.PPTTModulation)
	rxMod, _ := adapter.FieldOf(y.Decoded, "PPRT", regpath.PPRTModulation)
	for _, c := range []struct{ rate, mod uint64 }{{tx, txMod}, {rx, rxMod}} {
		if c.rate >= 6 && c.rate <= 8 && c.mod != 1 || c.rate < 6 && c.mod != 0 {
			t.Errorf("lane rate %d runs modulation %d", c.rate, c.mod)
		}
	}
	return tx, rx
}

// --tx_rate/--rx_rate set PPTT's lane_rate_admin and PPRT's
// lane_rate_oper (the checker takes the generator's rate unless told),
// the undo command names the rates the port had, and the undo restores
// them.
func TestPRBSRates(t *testing.T) {
	ads, _ := emutest.OpenYAML(t, prbsScenario)
	ad, ctx := ads[0], context.Background()
	apply := func(c *linkctl.Change) {
		t.Helper()
		if _, err := linkctl.Apply(ctx, ad, c, linkctl.Options{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	c, err := linkctl.TestMode(ctx, ad, 1, "EN", linkctl.PRBSSettings{TxRate: "25G"})
	if err != nil {
		t.Fatal(err)
	}
	apply(c)
	if tx, rx := prbsRates(t, ad); tx != 5 || rx != 5 {
		t.Fatalf("after --tx_rate 25G: lane rates %d/%d, want 5/5 (EDR)", tx, rx)
	}
	c, err = linkctl.TestMode(ctx, ad, 1, "EN", linkctl.PRBSSettings{TxPRBS: "PRBS9", TxRate: "HDR", RxRate: "ndr"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "--test_mode EN --tx_prbs PRBS31 --tx_rate EDR --rx_prbs PRBS31 --rx_rate EDR"; c.UndoFlags != want {
		t.Errorf("undo flags %q, want %q", c.UndoFlags, want)
	}
	apply(c)
	if tx, rx := prbsRates(t, ad); tx != 6 || rx != 7 {
		t.Fatalf("after --tx_rate HDR --rx_rate ndr: lane rates %d/%d, want 6/7", tx, rx)
	}
	u, err := linkctl.Undo(ctx, ad, c)
	if err != nil {
		t.Fatal(err)
	}
	apply(u)
	if tx, rx := prbsRates(t, ad); tx != 5 || rx != 5 {
		t.Errorf("after the undo: lane rates %d/%d, want 5/5 again", tx, rx)
	}
	// Without a rate the port keeps its own.
	c, err = linkctl.TestMode(ctx, ad, 1, "EN", linkctl.PRBSSettings{TxPRBS: "PRBS7"})
	if err != nil {
		t.Fatal(err)
	}
	apply(c)
	if tx, rx := prbsRates(t, ad); tx != 5 || rx != 5 {
		t.Errorf("EN without a rate: lane rates %d/%d, want the 5/5 it had", tx, rx)
	}
}

// --invert_tx_polarity / --invert_rx_polarity write PPTT/PPRT p: a checker
// whose polarity differs from the generator's finds no lock on any lane;
// both inverted lock again; the report says which side is inverted; the
// undo command names the inversion the port had; EN without the flags
// sets normal polarity.
func TestPRBSPolarity(t *testing.T) {
	ads, _ := emutest.OpenYAML(t, prbsScenario)
	ad, ctx := ads[0], context.Background()
	start := func(set linkctl.PRBSSettings) *linkctl.Change {
		t.Helper()
		c, err := linkctl.TestMode(ctx, ad, 1, "EN", set)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := linkctl.Apply(ctx, ad, c, linkctl.Options{}, nil); err != nil {
			t.Fatal(err)
		}
		return c
	}
	measure := func() *linkctl.PRBSReport {
		t.Helper()
		r, err := linkctl.MeasureTestMode(ctx, ad, 1, 2*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	start(linkctl.PRBSSettings{InvertTx: true})
	r := measure()
	if d := cmp.Diff([]string{"no_lock", "no_lock", "no_lock", "no_lock"}, verdicts(r)); d != "" || !r.TxInverted || r.RxInverted {
		t.Errorf("Tx inverted only: inverted %v/%v, verdicts (-want +got):\n%s", r.TxInverted, r.RxInverted, d)
	}
	c := start(linkctl.PRBSSettings{InvertTx: true, InvertRx: true})
	if want := "--test_mode EN --tx_prbs PRBS31 --invert_tx_polarity --rx_prbs PRBS31"; c.UndoFlags != want {
		t.Errorf("undo flags %q, want %q", c.UndoFlags, want)
	}
	r = measure()
	if d := cmp.Diff([]string{"ok", "ok", "ok", "ok"}, verdicts(r)); d != "" || !r.TxInverted || !r.RxInverted {
		t.Errorf("both inverted: inverted %v/%v, verdicts (-want +got):\n%s", r.TxInverted, r.RxInverted, d)
	}
	start(linkctl.PRBSSettings{})
	if r := measure(); r.TxInverted || r.RxInverted || verdicts(r)[0] != "ok" {
		t.Errorf("EN without the flags: inverted %v/%v, verdicts %v", r.TxInverted, r.RxInverted, verdicts(r))
	}
	if _, err := linkctl.TestMode(ctx, ad, 1, "DS", linkctl.PRBSSettings{InvertRx: true}); !errors.Is(err, prm.ErrInput) {
		t.Errorf("DS with a polarity flag: %v, want an input error", err)
	}
}

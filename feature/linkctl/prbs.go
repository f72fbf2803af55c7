package linkctl

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/regpath"
)

// prbsPatterns are mlxlink's --tx_prbs/--rx_prbs names and their
// prbs_mode_admin numbers (bit k of prbs_modes_cap), from the PRM's PPTT
// and PPRT tables.
var prbsPatterns = []struct {
	name string
	mode uint64
}{
	{"PRBS31", 0x0}, {"PRBS23A", 0x1}, {"PRBS23B", 0x2}, {"PRBS23C", 0x3}, {"PRBS23D", 0x4},
	{"PRBS7", 0x5}, {"PRBS11", 0x6}, {"PRBS11A", 0x7}, {"PRBS11B", 0x8}, {"PRBS11C", 0x9},
	{"PRBS11D", 0xA}, {"PRBS9", 0xB}, {"IDLE", 0xC}, {"SQUARE_WAVE8", 0xD}, {"SQUARE_WAVE4", 0xE},
	{"SQUARE_WAVE2", 0xF}, {"SQUARE_WAVE1", 0x10}, {"PRBS13A", 0x11}, {"PRBS13B", 0x12},
	{"PRBS13C", 0x13}, {"PRBS13D", 0x14}, {"SSPR", 0x15}, {"SSPRQ", 0x16}, {"LT_FRAMES", 0x17},
	{"PRBS15", 0x18}, {"PRBS28", 0x19}, {"SQUARE_WAVE3", 0x1A}, {"SQUARE_WAVE13", 0x1B},
	{"SQUARE_WAVE30", 0x1C},
}

func prbsMode(name string) (uint64, bool) {
	n := strings.ToUpper(strings.TrimSpace(name))
	if n == "PRBS13" {
		n = "PRBS13A" // mlxlink's PRBS13 is the PRM's PRBS13A (IEEE 802.3 clause 94)
	}
	for _, p := range prbsPatterns {
		if p.name == n {
			return p.mode, true
		}
	}
	return 0, false
}

func prbsName(mode uint64) string {
	for _, p := range prbsPatterns {
		if p.mode == mode {
			return p.name
		}
	}
	return fmt.Sprintf("0x%x", mode)
}

func prbsNamesOf(capMask uint64) []string {
	var out []string
	for _, p := range prbsPatterns {
		if capMask&(1<<p.mode) != 0 {
			out = append(out, p.name)
		}
	}
	return out
}

// TestMode plans mlxlink's --test_mode EN (start the PRBS generator with
// pattern tx and the checker with rx; rx "" takes tx) or DS (stop both).
// The port's lanes all run the one pattern (PPTT/PPRT le 0).
func TestMode(ctx context.Context, ad *adapter.Adapter, local int, mode, tx, rx string) (*Change, error) {
	m := strings.ToUpper(strings.TrimSpace(mode))
	if m != "EN" && m != "DS" {
		return nil, inputErr("--test_mode %q: give EN (start a PRBS test), DS (stop it) or MEAS (measure it)", mode)
	}
	if m == "DS" && (tx != "" || rx != "") {
		return nil, inputErr("--tx_prbs and --rx_prbs go with --test_mode EN")
	}
	if tx == "" {
		tx = "PRBS31"
	}
	if rx == "" {
		rx = tx
	}
	pt, err := openPort(ctx, ad, local)
	if err != nil {
		return nil, err
	}
	c := pt.change("test_mode " + m)
	var ws, undo []Write
	var undoFlags []string
	// PPTT and PPRT name their fields alike; each register's own paths
	// are used all the same.
	for _, s := range []struct{ reg, flag, pattern, lane, e, le, mode, caps string }{
		{"PPTT", "--tx_prbs", tx, regpath.PPTTLane, regpath.PPTTE, regpath.PPTTLe, regpath.PPTTPrbsModeAdmin, regpath.PPTTPrbsModesCap},
		{"PPRT", "--rx_prbs", rx, regpath.PPRTLane, regpath.PPRTE, regpath.PPRTLe, regpath.PPRTPrbsModeAdmin, regpath.PPRTPrbsModesCap},
	} {
		if _, err := ad.DB().Register(s.reg); err != nil {
			return nil, fmt.Errorf("database finding: %s has no %s, so no PRBS test can be run with it; give another database (--adb): %w", ad.DB().Revision, s.reg, prm.ErrInput)
		}
		idx := pt.index(s.reg, Field{s.lane, "0"})
		cur, err := pt.read(ctx, s.reg, idx)
		if err != nil {
			return nil, err
		}
		capMask, _ := adapter.FieldOf(cur, s.reg, s.caps)
		prevOn, _ := adapter.FieldOf(cur, s.reg, s.e)
		prevMode, _ := adapter.FieldOf(cur, s.reg, s.mode)
		fields := []Field{{s.le, "0"}, {s.e, "0"}}
		if m == "EN" {
			v, ok := prbsMode(s.pattern)
			if !ok {
				return nil, inputErr("%s %q: not a PRBS pattern name; give one of %s", s.flag, s.pattern, strings.Join(prbsNamesOf(math.MaxUint32), ", "))
			}
			if capMask&(1<<v) == 0 {
				return nil, inputErr("%s %s: port %d does not support it (%s prbs_modes_cap 0x%x: %s)", s.flag, prbsName(v), local, s.reg, capMask, strings.Join(prbsNamesOf(capMask), ", "))
			}
			fields = []Field{{s.le, "0"}, {s.e, "1"}, {s.mode, strconv.FormatUint(v, 10)}}
		}
		ws = append(ws, Write{Register: s.reg, Index: idx, Fields: fields})
		undo = append(undo, Write{Register: s.reg, Index: idx, Fields: []Field{{s.le, "0"}, {s.e, strconv.FormatUint(prevOn, 10)}, {s.mode, strconv.FormatUint(prevMode, 10)}}})
		if prevOn == 1 {
			undoFlags = append(undoFlags, s.flag+" "+prbsName(prevMode))
		}
	}
	if m == "EN" {
		c.Effects = []string{"the port leaves normal operation: it sends and checks the test pattern, and carries no traffic until --test_mode DS (or --undo)"}
	} else {
		c.Effects = []string{"the port returns to normal operation and retrains its link (a few seconds)"}
	}
	if err := pt.plan(ctx, c, ws); err != nil {
		return nil, err
	}
	c.Undo = undo
	if len(undoFlags) > 0 {
		c.UndoFlags = "--test_mode EN " + strings.Join(undoFlags, " ")
	} else {
		c.UndoFlags = "--test_mode DS"
	}
	return c, nil
}

// PRBSLane is one lane's PRBS measurement.
type PRBSLane struct {
	Lane   int  `json:"lane"`
	Locked bool `json:"locked"`
	// Errors are the lane's bit errors over the run (PPCNT's raw errors
	// of the lane), Bits the bits it received.
	Errors uint64 `json:"errors"`
	Bits   uint64 `json:"bits"`
	// BER is Errors/Bits; with no error, BERBelow is the bound the run
	// supports (1/Bits) and BER is 0.
	BER      float64 `json:"ber"`
	BERBelow float64 `json:"ber_below,omitempty"`
	Verdict  string  `json:"verdict"`
}

// PRBSReport is a measured PRBS run on one port.
type PRBSReport struct {
	Device   string     `json:"device"`
	Port     int        `json:"port"`
	TxPRBS   string     `json:"tx_prbs"`
	RxPRBS   string     `json:"rx_prbs"`
	TxOn     bool       `json:"tx_enabled"`
	RxOn     bool       `json:"rx_enabled"`
	Duration string     `json:"duration"`
	Lanes    []PRBSLane `json:"lanes"`
	// Problems name each failing lane.
	Problems []string `json:"problems"`
	// DatabaseFindings say what the database could not tell (never a
	// hardware verdict).
	DatabaseFindings []string `json:"database_findings,omitempty"`
}

// PRBSLimit is the lane BER a PRBS run must stay under: a pre-FEC BER
// that leaves RS-FEC (544,514) a wide margin (it corrects up to about
// 2.4e-4). Our choice for a pass/fail line, not a figure of the PRM's.
const PRBSLimit = 1e-6

// MeasureTestMode is cxray's --test_mode MEAS (mlxlink's --test_mode has
// EN, DS and TU; MEAS is ours): for dur (on the device's
// clock) it counts each lane's bit errors while the checker runs, and
// judges each lane: no_lock, degraded (BER over PRBSLimit) or ok. lanes
// chooses lanes (nil: every lane of the port).
func MeasureTestMode(ctx context.Context, ad *adapter.Adapter, local int, dur time.Duration, lanes []int) (*PRBSReport, error) {
	if dur <= 0 || dur > 10*time.Minute {
		return nil, inputErr("--duration %v: give a duration between 1s and 10m", dur)
	}
	pt, err := openPort(ctx, ad, local)
	if err != nil {
		return nil, err
	}
	width := 0
	if pt.lnk.Operational.WidthLanes != nil {
		width = *pt.lnk.Operational.WidthLanes
	}
	if width == 0 {
		width = max(pt.p.Lanes, 1)
	}
	if lanes == nil {
		for l := 0; l < width; l++ {
			lanes = append(lanes, l)
		}
	}
	for _, l := range lanes {
		if l < 0 || l >= width || l > 7 {
			return nil, inputErr("--lanes %d: port %d has lanes 0..%d", l, local, width-1)
		}
	}
	r := &PRBSReport{Device: ad.Name(), Port: local, Duration: dur.String(), Lanes: []PRBSLane{}, Problems: []string{}}
	tx, err := pt.read(ctx, "PPTT", pt.index("PPTT", Field{regpath.PPTTLane, "0"}))
	if err != nil {
		return nil, err
	}
	txOn, _ := adapter.FieldOf(tx, "PPTT", regpath.PPTTE)
	txMode, _ := adapter.FieldOf(tx, "PPTT", regpath.PPTTPrbsModeAdmin)
	r.TxOn, r.TxPRBS = txOn == 1, prbsName(txMode)
	extKnown := true // prbs_lock_status_ext: lanes 4-7 (Rev 0.51 has no such field)
	readRx := func() (on bool, lock uint64, err error) {
		rx, err := pt.read(ctx, "PPRT", pt.index("PPRT", Field{regpath.PPRTLane, "0"}))
		if err != nil {
			return false, 0, err
		}
		e, _ := adapter.FieldOf(rx, "PPRT", regpath.PPRTE)
		mode, _ := adapter.FieldOf(rx, "PPRT", regpath.PPRTPrbsModeAdmin)
		r.RxPRBS = prbsName(mode)
		lo, _ := adapter.FieldOf(rx, "PPRT", regpath.PPRTPrbsLockStatus)
		hi, ok := adapter.FieldOf(rx, "PPRT", regpath.PPRTPrbsLockStatusExt)
		extKnown = ok
		return e == 1, lo&0xF | (hi&0xF)<<4, nil
	}
	on, _, err := readRx()
	if err != nil {
		return nil, err
	}
	r.RxOn = on
	if !r.TxOn || !r.RxOn {
		return nil, inputErr("port %d is not in PRBS test mode (PPTT e %d, PPRT e %d): start it with --test_mode EN", local, txOn, b2u(on))
	}
	counts := func() ([]uint64, uint64, error) {
		st, err := ad.ReadRegister(ctx, "PPCNT", adapter.LocalPort(local).Group(0x16))
		if err != nil {
			return nil, 0, err
		}
		bits, _ := adapter.FieldOf(st.Decoded, "PPCNT", regpath.PPCNTPhysStatReceivedBits)
		out := make([]uint64, len(regpath.PPCNTPhysStatRawErrorsLane))
		for l, path := range regpath.PPCNTPhysStatRawErrorsLane {
			out[l], _ = adapter.FieldOf(st.Decoded, "PPCNT", path)
		}
		return out, bits, nil
	}
	e0, b0, err := counts()
	if err != nil {
		return nil, err
	}
	if err := ad.Sleep(ctx, dur); err != nil {
		return nil, err
	}
	e1, b1, err := counts()
	if err != nil {
		return nil, err
	}
	_, lock, err := readRx()
	if err != nil {
		return nil, err
	}
	bits := uint64(0)
	if b1 > b0 {
		bits = (b1 - b0) / uint64(width)
	}
	for _, l := range lanes {
		ln := PRBSLane{Lane: l, Locked: lock&(1<<l) != 0, Bits: bits}
		if e1[l] >= e0[l] {
			ln.Errors = e1[l] - e0[l]
		}
		switch {
		case l >= 4 && !extKnown:
			ln.Verdict = "not_measured"
			if f := fmt.Sprintf("database finding: %s's PPRT has no prbs_lock_status_ext, so the lock of lanes 4-7 is not known; give another database (--adb)", ad.DB().Revision); !slices.Contains(r.DatabaseFindings, f) {
				r.DatabaseFindings = append(r.DatabaseFindings, f)
			}
		case !ln.Locked:
			ln.Verdict = "no_lock"
			r.Problems = append(r.Problems, fmt.Sprintf("lane %d: the checker did not lock on %s: the lane carries no usable signal (cable, module or the far end's generator)", l, r.RxPRBS))
		case bits == 0:
			ln.Verdict = "not_measured"
		default:
			ln.BER = float64(ln.Errors) / float64(bits)
			if ln.Errors == 0 {
				ln.BERBelow = 1 / float64(bits)
			}
			ln.Verdict = "ok"
			if ln.BER > PRBSLimit {
				ln.Verdict = "degraded"
				r.Problems = append(r.Problems, fmt.Sprintf("lane %d: BER %.2e over %s, above %.0e: this lane's path (host serdes, cable or module lane) is degraded", l, ln.BER, dur, PRBSLimit))
			}
		}
		r.Lanes = append(r.Lanes, ln)
	}
	return r, nil
}

func b2u(b bool) int {
	if b {
		return 1
	}
	return 0
}

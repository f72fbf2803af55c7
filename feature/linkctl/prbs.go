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

// prbsRates are mlxlink's --tx_rate/--rx_rate names with the
// lane_rate_admin number each sets (PPTT's
// lane_rate_admin, PPRT's lane_rate_oper: 0 SDR, 1 DDR, 2 QDR, 3 FDR10
// and 10GE/40GE lanes, 4 FDR, 5 EDR and 25G lanes, 6 HDR and 50G PAM4
// lanes, 7 NDR and 100G lanes, 10 1GE, 11 XAUI/2.5GE, 12 50GE-KR4; the
// same numbers in every revision of the history). The first name of a
// number is how cxray prints it.
var prbsRates = []struct {
	name string
	rate uint64
}{
	{"SDR", 0}, {"DDR", 1}, {"5G", 1}, {"QDR", 2}, {"FDR10", 3}, {"10G", 3}, {"40G", 3},
	{"FDR", 4}, {"14G", 4}, {"EDR", 5}, {"25G", 5}, {"50G", 5}, {"50G_2X", 5}, {"100G", 5}, {"100G_4X", 5},
	{"HDR", 6}, {"50G_1X", 6}, {"100G_2X", 6}, {"200G_4X", 6}, {"400G_8X", 6},
	{"NDR", 7}, {"100G_1X", 7}, {"200G_2X", 7}, {"400G_4X", 7}, {"800G_8X", 7},
	{"1G", 10}, {"2.5G", 11}, {"XAUI", 11}, {"50GE-KR4", 12}, {"12.89G", 12},
}

// prbsRateBit is the bit of lane_rate_cap that offers each rate (PRM
// PPTT/PPRT lane_rate_cap: bit 0 1GE, 1 SDR, 2 XAUI, 3 DDR, 4 QDR, 5
// FDR10, 6 FDR, 7 EDR, 8 50GE-KR4, 9 HDR, 10 NDR).
var prbsRateBit = map[uint64]uint{0: 1, 1: 3, 2: 4, 3: 5, 4: 6, 5: 7, 6: 9, 7: 10, 10: 0, 11: 2, 12: 8}

// prbsModulation is the modulation a lane rate runs (PPTT/PPRT
// modulation, as mlxlink sets it with a rate): PAM4 encoding (1) for the
// 53 Gb/s lanes and faster (HDR 6, NDR 7, XDR 8), NRZ (0) below.
func prbsModulation(rate uint64) uint64 {
	if rate >= 6 && rate <= 8 {
		return 1
	}
	return 0
}

func prbsRate(name string) (uint64, bool) {
	n := strings.ToUpper(strings.TrimSpace(name))
	for _, r := range prbsRates {
		if r.name == n {
			return r.rate, true
		}
	}
	return 0, false
}

func prbsRateName(rate uint64) string {
	for _, r := range prbsRates {
		if r.rate == rate {
			return r.name
		}
	}
	return fmt.Sprintf("%d", rate)
}

// prbsRateNames lists the names of the rates capMask offers (one name per
// rate), or every name when capMask is 0.
func prbsRateNames(capMask uint64) []string {
	var out []string
	seen := map[uint64]bool{}
	for _, r := range prbsRates {
		if seen[r.rate] || capMask != 0 && capMask&(1<<prbsRateBit[r.rate]) == 0 {
			continue
		}
		seen[r.rate] = true
		out = append(out, r.name)
	}
	return out
}

// PRBSSettings are EN's choices: the patterns sent and checked (TxPRBS
// PRBS31 when ""; RxPRBS TxPRBS when "") and the lane rates (a name of
// prbsRates; RxRate TxRate when ""; both "" keep the port's current
// rates, where mlxlink would set 25G).
type PRBSSettings struct {
	TxPRBS, RxPRBS string
	TxRate, RxRate string
	// InvertTx and InvertRx invert the pattern's polarity (PPTT/PPRT p,
	// mlxlink's --invert_tx_polarity and --invert_rx_polarity); where the
	// port can invert (p_c), EN without them sets normal polarity.
	InvertTx, InvertRx bool
}

// TestMode plans mlxlink's --test_mode EN (start the PRBS generator and
// checker with set's patterns and rates) or DS (stop both). The port's
// lanes all run the one pattern at the one rate (PPTT/PPRT le 0).
func TestMode(ctx context.Context, ad *adapter.Adapter, local int, mode string, set PRBSSettings) (*Change, error) {
	m := strings.ToUpper(strings.TrimSpace(mode))
	if m != "EN" && m != "DS" {
		return nil, inputErr("--test_mode %q: give EN (start a PRBS test), DS (stop it) or MEAS (measure it)", mode)
	}
	if m == "DS" && (set.TxPRBS != "" || set.RxPRBS != "" || set.TxRate != "" || set.RxRate != "" || set.InvertTx || set.InvertRx) {
		return nil, inputErr("--tx_prbs, --rx_prbs, --tx_rate, --rx_rate and the polarity flags go with --test_mode EN")
	}
	tx, rx := set.TxPRBS, set.RxPRBS
	if tx == "" {
		tx = "PRBS31"
	}
	if rx == "" {
		rx = tx
	}
	txRate, rxRate := set.TxRate, set.RxRate
	if rxRate == "" {
		rxRate = txRate // like the pattern: the checker expects what is sent
	}
	pt, err := openPort(ctx, ad, local)
	if err != nil {
		return nil, err
	}
	c := pt.change("test_mode " + m)
	var ws, undo []Write
	var undoFlags []string
	// PPTT and PPRT name their fields alike; each register's own paths
	// are used all the same (PPRT's writable rate is lane_rate_oper).
	for _, s := range []struct {
		reg, flag, pattern, rateFlag, rateName, invFlag        string
		invert                                                 bool
		lane, e, le, mode, caps, rate, rateCap, mod, pol, polC string
	}{
		{"PPTT", "--tx_prbs", tx, "--tx_rate", txRate, "--invert_tx_polarity", set.InvertTx,
			regpath.PPTTLane, regpath.PPTTE, regpath.PPTTLe, regpath.PPTTPrbsModeAdmin, regpath.PPTTPrbsModesCap, regpath.PPTTLaneRateAdmin, regpath.PPTTLaneRateCap, regpath.PPTTModulation, regpath.PPTTP, regpath.PPTTPC},
		{"PPRT", "--rx_prbs", rx, "--rx_rate", rxRate, "--invert_rx_polarity", set.InvertRx,
			regpath.PPRTLane, regpath.PPRTE, regpath.PPRTLe, regpath.PPRTPrbsModeAdmin, regpath.PPRTPrbsModesCap, regpath.PPRTLaneRateOper, regpath.PPRTLaneRateCap, regpath.PPRTModulation, regpath.PPRTP, regpath.PPRTPC},
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
		undoFields := []Field{{s.le, "0"}, {s.e, strconv.FormatUint(prevOn, 10)}, {s.mode, strconv.FormatUint(prevMode, 10)}}
		if s.rateName != "" {
			rate, ok := prbsRate(s.rateName)
			if !ok {
				return nil, inputErr("%s %q: not a lane rate name; give one of %s", s.rateFlag, s.rateName, strings.Join(prbsRateNames(0), ", "))
			}
			rateCap, _ := adapter.FieldOf(cur, s.reg, s.rateCap)
			if rateCap != 0 && rateCap&(1<<prbsRateBit[rate]) == 0 {
				return nil, inputErr("%s %s: port %d cannot test at that rate (%s lane_rate_cap 0x%x: %s)", s.rateFlag, prbsRateName(rate), local, s.reg, rateCap, strings.Join(prbsRateNames(rateCap), ", "))
			}
			prevRate, _ := adapter.FieldOf(cur, s.reg, s.rate)
			prevMod, _ := adapter.FieldOf(cur, s.reg, s.mod)
			fields = append(fields, Field{s.rate, strconv.FormatUint(rate, 10)}, Field{s.mod, strconv.FormatUint(prbsModulation(rate), 10)})
			undoFields = append(undoFields, Field{s.rate, strconv.FormatUint(prevRate, 10)}, Field{s.mod, strconv.FormatUint(prevMod, 10)})
			if prevOn == 1 {
				undoFlags = append(undoFlags, s.flag+" "+prbsName(prevMode), s.rateFlag+" "+prbsRateName(prevRate))
			}
		} else if prevOn == 1 {
			undoFlags = append(undoFlags, s.flag+" "+prbsName(prevMode))
		}
		// Polarity: p where the port can invert (p_c; Rev 0.51 has neither
		// field).
		polC, _ := adapter.FieldOf(cur, s.reg, s.polC)
		hasPol := inDB(ad.DB(), s.reg, s.pol) && inDB(ad.DB(), s.reg, s.polC)
		switch {
		case s.invert && !hasPol:
			return nil, inputErr("%s: database finding: %s's %s has no polarity field (p); give another database (--adb)", s.invFlag, ad.DB().Revision, s.reg)
		case s.invert && polC == 0:
			return nil, inputErr("%s: port %d cannot invert the PRBS polarity (%s p_c 0)", s.invFlag, local, s.reg)
		case m == "EN" && hasPol && polC != 0:
			prevPol, _ := adapter.FieldOf(cur, s.reg, s.pol)
			fields = append(fields, Field{s.pol, strconv.Itoa(b2u(s.invert))})
			undoFields = append(undoFields, Field{s.pol, strconv.FormatUint(prevPol, 10)})
			if prevOn == 1 && prevPol == 1 {
				undoFlags = append(undoFlags, s.invFlag)
			}
		}
		ws = append(ws, Write{Register: s.reg, Index: idx, Fields: fields})
		undo = append(undo, Write{Register: s.reg, Index: idx, Fields: undoFields})
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
	Device string `json:"device"`
	Port   int    `json:"port"`
	TxPRBS string `json:"tx_prbs"`
	RxPRBS string `json:"rx_prbs"`
	// TxRate and RxRate are the lane rates set (prbsRates' first name of
	// each number: SDR ... NDR, 1G, 2.5G, 50GE-KR4).
	TxRate string `json:"tx_rate"`
	RxRate string `json:"rx_rate"`
	// TxInverted and RxInverted: the pattern's polarity is inverted (p).
	TxInverted bool       `json:"tx_inverted"`
	RxInverted bool       `json:"rx_inverted"`
	TxOn       bool       `json:"tx_enabled"`
	RxOn       bool       `json:"rx_enabled"`
	Duration   string     `json:"duration"`
	Lanes      []PRBSLane `json:"lanes"`
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
	txRate, _ := adapter.FieldOf(tx, "PPTT", regpath.PPTTLaneRateAdmin)
	txPol, _ := adapter.FieldOf(tx, "PPTT", regpath.PPTTP)
	r.TxOn, r.TxPRBS, r.TxRate = txOn == 1, prbsName(txMode), prbsRateName(txRate)
	r.TxInverted = txPol == 1 && inDB(ad.DB(), "PPTT", regpath.PPTTP)
	extKnown := true // prbs_lock_status_ext: lanes 4-7 (Rev 0.51 has no such field)
	readRx := func() (on bool, lock uint64, err error) {
		rx, err := pt.read(ctx, "PPRT", pt.index("PPRT", Field{regpath.PPRTLane, "0"}))
		if err != nil {
			return false, 0, err
		}
		e, _ := adapter.FieldOf(rx, "PPRT", regpath.PPRTE)
		mode, _ := adapter.FieldOf(rx, "PPRT", regpath.PPRTPrbsModeAdmin)
		rate, _ := adapter.FieldOf(rx, "PPRT", regpath.PPRTLaneRateOper)
		pol, _ := adapter.FieldOf(rx, "PPRT", regpath.PPRTP)
		r.RxPRBS, r.RxRate = prbsName(mode), prbsRateName(rate)
		r.RxInverted = pol == 1 && inDB(ad.DB(), "PPRT", regpath.PPRTP)
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

// inDB says the database lays out path in reg. A write names only fields
// the database knows; adapter.FieldOf reads one it lacks at the built-in
// layout's bits, which says nothing of whether it can be written.
func inDB(db *prm.DB, reg, path string) bool {
	r, err := db.Register(reg)
	if err != nil {
		return false
	}
	p, err := db.RegisterPlan(r)
	if err != nil {
		return false
	}
	_, err = p.Resolve(path, p.NewBuffer())
	return err == nil
}

func b2u(b bool) int {
	if b {
		return 1
	}
	return 0
}

package linkeye

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/regpath"
)

// The margin scan is mlxlink's --margin: per lane (and, on a PAM4 lane,
// per eye) SLRED is written with en=1 and a measure time, the firmware
// scans the eye for that long, and SLRED's info page then gives the
// margin. The values below are SLRED's field codes as the PRM's field
// descriptions give them (the database has them as text only).

// MeasureTimes are SLRED measure_time's codes 0..8, in seconds.
var MeasureTimes = []int{10, 30, 60, 90, 120, 240, 480, 600, 900}

// Eyes are SLRED eye_sel's PAM4 eyes, in scan order.
var Eyes = []string{"UP", "MID", "DOWN"}

// scanStatus is SLRED status by value.
var scanStatus = []string{"eye scan not performed", "unsupported scan for the current speed", "system busy", "performing eye scan", "eye scan completed", "error, eye scan not completed"}

const (
	statusPerforming = 3
	statusCompleted  = 4
)

// scanSlack is what the firmware gets past the measure time to finish
// (mlxlink waits a few seconds more too), and pollEvery how often the
// status is read meanwhile.
const (
	scanSlack = 10 * time.Second
	pollEvery = time.Second
)

// MarginOptions choose what to scan.
type MarginOptions struct {
	Lanes []int // nil: every lane of the port
	// MeasureTime is one of MeasureTimes, in seconds.
	MeasureTime int
	// Eye is UP, MID, DOWN or ALL ("" is ALL); a PAM4 lane only.
	Eye string
}

// MarginPlan is a validated scan: the writes it makes and how long it
// takes.
type MarginPlan struct {
	Port     int
	Protocol string
	// LaneGbps is the lane rate the link runs; PAM4 lanes (50 Gb/s and
	// faster) have three eyes.
	LaneGbps float64
	PAM4     bool
	Lanes    []int
	Eyes     []string // nil on an NRZ lane: one eye
	Seconds  int
	code     uint64
}

// Steps is the number of scans (lanes times eyes).
func (p *MarginPlan) Steps() int { return len(p.Lanes) * max(len(p.Eyes), 1) }

// Estimate is the longest the scan takes.
func (p *MarginPlan) Estimate() time.Duration {
	return time.Duration(p.Steps()) * (time.Duration(p.Seconds)*time.Second + scanSlack)
}

// Writes are the SLRED writes, one per scan, in order.
func (p *MarginPlan) Writes() []string {
	var out []string
	for _, l := range p.Lanes {
		for i, e := range p.eyes() {
			w := fmt.Sprintf("SLRED local_port=%d lane=%d measure_time=%d destructive_ctrl=0", p.Port, l, p.code)
			if e != "" {
				w += fmt.Sprintf(" eye_sel=%d", slices.Index(Eyes, e))
			}
			w += fmt.Sprintf(" last_scan=%d en=1", b2i(i == len(p.eyes())-1))
			out = append(out, w)
		}
	}
	return out
}

func (p *MarginPlan) eyes() []string {
	if len(p.Eyes) == 0 {
		return []string{""}
	}
	return p.Eyes
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// PlanMargin checks the options against the port and the database and
// plans the scan; nothing is written.
func PlanMargin(ctx context.Context, ad *adapter.Adapter, local int, o MarginOptions) (*MarginPlan, error) {
	if !ad.HasRegisters() {
		return nil, fmt.Errorf("the margin scan runs through SLRED, a register the kernel backend does not reach; use -d with a PCI address: %w", prm.ErrInput)
	}
	code := slices.Index(MeasureTimes, o.MeasureTime)
	if code < 0 {
		return nil, fmt.Errorf("measure time %d s: give one of %v (SLRED measure_time): %w", o.MeasureTime, MeasureTimes, prm.ErrInput)
	}
	eye := strings.ToUpper(o.Eye)
	if eye != "" && eye != "ALL" && !slices.Contains(Eyes, eye) {
		return nil, fmt.Errorf("eye %q: give UP, MID, DOWN or ALL: %w", o.Eye, prm.ErrInput)
	}
	if _, err := ad.DB().Register("SLRED"); err != nil {
		return nil, fmt.Errorf("database finding: %s has no SLRED (the margin scan's register; Rev 0.56 and later have it), so no margin scan can run with it; give a newer database (--adb): %w", ad.DB().Revision, prm.ErrInput)
	}
	p, err := ad.Port(ctx, local)
	if err != nil {
		return nil, err
	}
	lanes := max(min(p.Lanes, 8), 1)
	mp := &MarginPlan{Port: local, Protocol: p.LinkLayer, Seconds: o.MeasureTime, code: uint64(code), Lanes: o.Lanes}
	if mp.Lanes == nil {
		for l := 0; l < lanes; l++ {
			mp.Lanes = append(mp.Lanes, l)
		}
	}
	for _, l := range mp.Lanes {
		if l < 0 || l >= lanes {
			return nil, fmt.Errorf("lane %d: port %d has lanes 0..%d: %w: %w", l, local, lanes-1, ErrLane, prm.ErrInput)
		}
	}
	links, err := ad.Links(ctx)
	if err != nil && !adapter.IsPartial(err) {
		return nil, err
	}
	for _, l := range links {
		if l.Port != local || l.SpeedGbps == nil {
			continue
		}
		w := lanes
		if l.Width > 0 {
			w = l.Width
		}
		mp.LaneGbps = *l.SpeedGbps / float64(w)
	}
	if mp.LaneGbps == 0 {
		return nil, fmt.Errorf("port %d: the link is down; a margin scan measures a running link: bring it up first (cxray link --port_state UP): %w", local, prm.ErrInput)
	}
	mp.PAM4 = mp.LaneGbps >= 50
	switch {
	case mp.PAM4 && (eye == "" || eye == "ALL"):
		mp.Eyes = slices.Clone(Eyes)
	case mp.PAM4:
		mp.Eyes = []string{eye}
	case eye != "":
		return nil, fmt.Errorf("eye %s: the link's lanes run NRZ (%.4g Gb/s), which has one eye; leave --eye_select out: %w", eye, mp.LaneGbps, prm.ErrInput)
	}
	return mp, nil
}

// MarginResult is one lane's (and eye's) scan.
type MarginResult struct {
	Lane int    `json:"lane"`
	Eye  string `json:"eye,omitempty"`
	// Status is SLRED's when the scan ended; Margin is set only when it
	// completed with a margin (margin_version 0 and all ones are none).
	Status   string  `json:"status"`
	StatusID uint64  `json:"status_id"`
	Margin   *uint64 `json:"margin,omitempty"`
}

// MarginReport is a port's scan.
type MarginReport struct {
	Port         int            `json:"port"`
	Protocol     string         `json:"protocol,omitempty"`
	LaneGbps     float64        `json:"lane_gbps"`
	PAM4         bool           `json:"pam4"`
	MeasureTimeS int            `json:"measure_time_s"`
	Results      []MarginResult `json:"results"`
	// Final is the smallest margin measured (mlxlink's "Final margin"),
	// nil when none was.
	Final    *uint64        `json:"final_margin,omitempty"`
	Verdicts []link.Verdict `json:"verdicts"`
}

// MarginDocument is `cxray link --margin -o json`.
type MarginDocument struct {
	Device string        `json:"device"`
	Margin *MarginReport `json:"margin"`
}

// Scan runs the plan: each scan is started through dev's guarded writer
// (the RW fields read back), waited for on the device's clock (real time
// on hardware and `emu run`), and read. progress, when set, hears of each
// scan as it starts. ctx bounds the whole scan; on its end the running
// scan is aborted.
func Scan(ctx context.Context, ad *adapter.Adapter, p *MarginPlan, progress func(lane int, eye string, wait time.Duration)) (*MarginReport, error) {
	if _, err := ad.Registers(ctx); err != nil {
		return nil, err
	}
	r := &MarginReport{Port: p.Port, Protocol: p.Protocol, LaneGbps: p.LaneGbps, PAM4: p.PAM4, MeasureTimeS: p.Seconds, Results: []MarginResult{}}
	for _, l := range p.Lanes {
		eyes := p.eyes()
		for i, e := range eyes {
			res, err := scanOne(ctx, ad, p, l, e, i == len(eyes)-1, progress)
			if err != nil {
				if ctx.Err() != nil {
					abort(ad, p.Port, l)
				}
				return nil, err
			}
			r.Results = append(r.Results, res)
		}
	}
	for _, x := range r.Results {
		if x.Margin != nil && (r.Final == nil || *x.Margin < *r.Final) {
			v := *x.Margin
			r.Final = &v
		}
	}
	r.Verdicts = judgeMargins(r)
	return r, nil
}

func (p *MarginPlan) index(lane int) adapter.Index { return slredIndex(p.Port, lane) }

// slredIndex is SLRED's instance of one lane of a port, its page 0.
func slredIndex(port, lane int) adapter.Index {
	return adapter.LocalPort(port).With("lane", uint64(lane)).With("page_data_sel", 0)
}

// scanOne scans one lane's eye. It asks for the register path each time:
// the adapter reopens one that a failed access dropped.
func scanOne(ctx context.Context, ad *adapter.Adapter, p *MarginPlan, lane int, eye string, last bool, progress func(int, string, time.Duration)) (MarginResult, error) {
	res := MarginResult{Lane: lane, Eye: eye}
	d, err := ad.Registers(ctx)
	if err != nil {
		return res, err
	}
	set := []prm.Assignment{{Path: "measure_time", Value: strconv.FormatUint(p.code, 10)}, {Path: "destructive_ctrl", Value: "0"}, {Path: "last_scan", Value: strconv.Itoa(b2i(last))}, {Path: "en", Value: "1"}}
	if eye != "" {
		set = append(set, prm.Assignment{Path: "eye_sel", Value: strconv.Itoa(slices.Index(Eyes, eye))})
	}
	idx := p.index(lane).Assignments()
	wp, err := d.PrepareSetWith(ctx, "SLRED", idx, set, dev.SetOptions{})
	if err != nil {
		return res, err
	}
	if _, err := d.ApplySet(ctx, wp, idx); err != nil {
		return res, err
	}
	wait := time.Duration(p.Seconds) * time.Second
	if progress != nil {
		progress(lane, eye, wait)
	}
	st, x, err := status(ctx, ad, p, lane)
	if err != nil {
		return res, err
	}
	if st == statusPerforming {
		if err := ad.Sleep(ctx, wait); err != nil {
			return res, err
		}
		// Poll a bounded number of times past the measure time.
		for i := 0; i <= int(scanSlack/pollEvery); i++ {
			if st, x, err = status(ctx, ad, p, lane); err != nil || st != statusPerforming {
				break
			}
			if err = ad.Sleep(ctx, pollEvery); err != nil {
				break
			}
		}
		if err != nil {
			return res, err
		}
	}
	res.StatusID = st
	res.Status = "status " + strconv.FormatUint(st, 10)
	if st < uint64(len(scanStatus)) {
		res.Status = scanStatus[st]
	}
	if st == statusPerforming {
		res.Status = fmt.Sprintf("still performing %s after the measure time and %s more: not measured", scanStatus[st], scanSlack)
	}
	if st != statusCompleted {
		return res, nil
	}
	ver, _ := adapter.FieldOf(x.Decoded, "SLRED", regpath.SLREDMarginVersion)
	m, ok := adapter.FieldOf(x.Decoded, "SLRED", regpath.SLREDMargin)
	switch {
	case !ok:
		res.Status = "completed, but the database's SLRED has no info page margin"
	case ver == 0:
		res.Status = "completed with no margin available (margin_version 0)"
	case m == 1<<24-1:
		res.Status = "completed with the all-ones margin (no reading)"
	default:
		res.Margin = &m
	}
	return res, nil
}

// status reads SLRED's info page of a lane.
func status(ctx context.Context, ad *adapter.Adapter, p *MarginPlan, lane int) (uint64, *dev.Reading, error) {
	x, err := ad.ReadRegister(ctx, "SLRED", p.index(lane))
	if err != nil {
		return 0, nil, fmt.Errorf("port %d lane %d SLRED: %w", p.Port, lane, err)
	}
	st, _ := adapter.FieldOf(x.Decoded, "SLRED", regpath.SLREDStatus)
	return st, x, nil
}

// abort stops a lane's running scan (SLRED abort) when the command is
// stopped, within a short time of its own. The register path is asked for
// again: a stopped command's interrupted access drops the one it had.
func abort(ad *adapter.Adapter, port, lane int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	d, err := ad.Registers(ctx)
	if err != nil {
		return
	}
	idx := slredIndex(port, lane).Assignments()
	if wp, err := d.PrepareSetWith(ctx, "SLRED", idx, []prm.Assignment{{Path: "abort", Value: "1"}}, dev.SetOptions{}); err == nil {
		_, _ = d.ApplySet(ctx, wp, idx)
	}
}

// judgeMargins names the lanes whose margin is well below the best of the
// same eye on the port (as the eyes are, Degraded).
func judgeMargins(r *MarginReport) []link.Verdict {
	best := map[string]uint64{}
	for _, x := range r.Results {
		if x.Margin != nil && *x.Margin > best[x.Eye] {
			best[x.Eye] = *x.Margin
		}
	}
	var lanes, ev []string
	for _, x := range r.Results {
		if x.Margin == nil {
			continue
		}
		b := best[x.Eye]
		if Below(*x.Margin, b) {
			if s := strconv.Itoa(x.Lane); !slices.Contains(lanes, s) {
				lanes = append(lanes, s)
			}
			e := ""
			if x.Eye != "" {
				e = " " + x.Eye + " eye"
			}
			ev = append(ev, fmt.Sprintf("lane %d%s margin %d, the best lane's %d (below %.0f%%)", x.Lane, e, *x.Margin, b, Degraded*100))
		}
	}
	if len(lanes) == 0 {
		return []link.Verdict{}
	}
	return []link.Verdict{{
		Code: "margin_degraded_lane", Category: link.CategorySignal,
		Summary:  fmt.Sprintf("the eye margin of lane %s is much smaller than the other lanes' of port %d", strings.Join(lanes, ", "), r.Port),
		Evidence: ev,
		NextStep: "reseat or swap the cable or module to see whether the lane follows it; clean the connector; run a PRBS test on the lane and compare its raw errors (cxray link --counters)",
	}}
}

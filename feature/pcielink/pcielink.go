// Package pcielink is the PCIe report of a function (`cxray link --pcie`):
// its link to the host merged from config space, sysfs and MPEIN, the
// slot's port where it is known, the errors the link logs (AER status and
// counters, MPCNT), and verdicts: a link narrower or slower than the card
// can train, and whether the slot or the card is the limit; a link that
// cannot feed the port; correctable errors as a rate; fatal errors. Every
// verdict names its category, its evidence and the next step, as the link
// and modules reports do.
package pcielink

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/pcie"
)

// Categories say where a verdict points.
const (
	CategorySlot   = "slot"           // the slot's port limits the link
	CategoryCard   = "card or riser"  // the slot could do more: the card, its seating, a riser
	CategoryLink   = "link training"  // trained below both ends, cause unknown
	CategoryConfig = "configuration"  // a target speed set lower
	CategoryBW     = "bandwidth"      // the link cannot feed the port
	CategoryErrors = "link errors"    // AER, MPCNT
	CategoryPower  = "slot power"     // MPEIN: insufficient power reported
	CategoryInput  = "missing source" // nothing to judge with
)

// Verdict is one finding.
type Verdict struct {
	Code     string   `json:"code"`
	Category string   `json:"category"`
	Severity string   `json:"severity"` // warn or fail
	Summary  string   `json:"summary"`
	Evidence []string `json:"evidence,omitempty"`
	NextStep string   `json:"next_step"`
}

// Unavailable is a source that could not be read, and why.
type Unavailable struct {
	What string `json:"what"`
	Why  string `json:"why"`
}

// Errors are what the link logged, from each source.
type Errors struct {
	// DeviceStatus names the Device Status bits set (CorrErr, FatalErr,
	// ...), from config space, else MPEIN.
	DeviceStatus []string `json:"device_status"`
	// Correctable, NonFatal and Fatal name the AER status bits set.
	Correctable []string `json:"aer_correctable_status,omitempty"`
	NonFatal    []string `json:"aer_nonfatal_status,omitempty"`
	Fatal       []string `json:"aer_fatal_status,omitempty"`
	// Counts are the kernel's AER totals (aer_dev_*), nil where not
	// read; CountsBy the non-zero counts by name.
	Counts   map[string]uint64 `json:"aer_counts,omitempty"`
	CountsBy []string          `json:"aer_counts_by_name,omitempty"`
	// MPCNT are the firmware's PCIe counters.
	MPCNT map[string]uint64 `json:"mpcnt,omitempty"`
}

// Report is the PCIe report of one function.
type Report struct {
	Device  string `json:"device"`
	BDF     string `json:"bdf"`
	Backend string `json:"backend"`
	// Current is the trained link, Capable what the card can train,
	// Target the speed the card is set to train at, Slot what the slot's
	// port can train (fields unknown are zero); each with its source.
	Current     pcie.Link          `json:"current"`
	Capable     pcie.Link          `json:"capable"`
	Target      pcie.Speed         `json:"target_speed,omitempty"`
	Slot        pcie.Link          `json:"slot"`
	Sources     map[string]string  `json:"sources"`
	Text        string             `json:"text"`
	CurrentGbps float64            `json:"current_gbps"`
	CapableGbps float64            `json:"capable_gbps"`
	PortGbps    float64            `json:"port_gbps,omitempty"`
	PowerStatus string             `json:"power_status,omitempty"`
	Errors      Errors             `json:"errors"`
	IntervalS   float64            `json:"interval_s,omitempty"`
	Rates       map[string]float64 `json:"rates_per_s,omitempty"`
	Unavailable []Unavailable      `json:"unavailable,omitempty"`
	Verdicts    []Verdict          `json:"verdicts"`
	// Readings are the sources as read (the second read with an interval).
	Readings *adapter.PCIe `json:"readings"`
}

// Document is `cxray link --pcie -o json`. Its keys are in alphabetical
// order, as the map it replaced wrote them (scripts compare the bytes).
type Document struct {
	Backend        string     `json:"backend"`
	Device         string     `json:"device"`
	PCIe           *Report    `json:"pcie"`
	SourceRevision string     `json:"source_revision"`
	Thresholds     Thresholds `json:"thresholds"`
	Verdicts       int        `json:"verdicts"`
}

// Thresholds judge the error rates.
type Thresholds struct {
	// CorrectablePerSec: a correctable error rate above it warns (default
	// 0: any correctable error while watched).
	CorrectablePerSec float64 `json:"correctable_per_s"`
}

// Options tune Read.
type Options struct {
	// Interval, when positive, reads twice this far apart (on the
	// adapter's clock) and gives the error counters as rates.
	Interval   time.Duration
	Thresholds Thresholds
}

// Read reads and judges a function's PCIe link. Only a dead context, or
// an adapter that answers nothing, fails it.
func Read(ctx context.Context, a *adapter.Adapter, o Options) (*Report, error) {
	first, err := a.PCIe(ctx)
	if err != nil {
		return nil, err
	}
	var second *adapter.PCIe
	if o.Interval > 0 {
		if err := a.Sleep(ctx, o.Interval); err != nil {
			return nil, err
		}
		if second, err = a.PCIe(ctx); err != nil {
			return nil, err
		}
	}
	return Build(Info{Device: a.Name(), BDF: a.BDF(), Backend: string(a.Backend()), PortGbps: PortGbps(ctx, a)},
		first, second, o.Interval, o.Thresholds), nil
}

// PortGbps is what the link must carry for one port at line rate: the
// fastest of the function's ports, at the speed it runs when up, else the
// fastest it can (0 when unknown). Ports together may need more than the
// host interface carries by the card's design (two 400G ports on a Gen5
// x16 card); a link that cannot feed one port is the problem users see.
func PortGbps(ctx context.Context, a *adapter.Adapter) float64 {
	ls, _ := a.Links(ctx)
	return NeedOf(ls)
}

// NeedOf is PortGbps of links read.
func NeedOf(ls []adapter.Link) float64 {
	var need float64
	for _, l := range ls {
		switch {
		case l.OperUp != nil && *l.OperUp && l.SpeedGbps != nil && *l.SpeedGbps > 0:
			need = max(need, *l.SpeedGbps)
		case l.MaxSpeedGbps != nil:
			need = max(need, *l.MaxSpeedGbps)
		}
	}
	return need
}

// Info names the function a report is of.
type Info struct {
	Device, BDF, Backend string
	// PortGbps is what one port needs (PortGbps); 0 unknown.
	PortGbps float64
}

// Build makes the report of one reading, or of two interval apart (rates
// from the second's growth over the first): health samples around its
// own interval and calls it directly.
func Build(info Info, first, second *adapter.PCIe, interval time.Duration, th Thresholds) *Report {
	last := first
	if second != nil {
		last = second
	}
	r := &Report{Device: info.Device, BDF: info.BDF, Backend: info.Backend, PortGbps: info.PortGbps,
		Sources: map[string]string{}, Readings: last, Verdicts: []Verdict{}}
	r.merge(last)
	r.errors(last)
	if second != nil && interval > 0 {
		r.IntervalS = interval.Seconds()
		r.Rates = rates(first, second, interval)
	}
	r.Text = Text(r.Current, r.Capable)
	r.CurrentGbps, r.CapableGbps = r.Current.Gbps(), r.Capable.Gbps()
	r.Verdicts = judge(r, th)
	return r
}

// Text is the link as status shows it: "Gen5 x16" when it runs as the
// card can, "Gen4 x8 (capable Gen5 x16)" when it does not, "" unknown.
func Text(cur, capable pcie.Link) string {
	switch {
	case !cur.Known():
		return ""
	case capable.Known() && (cur.Speed < capable.Speed || cur.Width < capable.Width):
		return fmt.Sprintf("%v (capable %v)", cur, capable)
	}
	return cur.String()
}

// merge takes each fact from the best source that has it: config space
// (what the hardware registers say now), then sysfs (the kernel reads the
// same registers), then MPEIN (the firmware's view).
func (r *Report) merge(p *adapter.PCIe) {
	var cfg *pcie.Express
	if p.Config != nil {
		cfg = p.Config.Express
	}
	pickLink := func(dst *pcie.Link, name string, cands ...struct {
		src string
		l   *pcie.Link
	}) {
		for _, c := range cands {
			if c.l != nil && c.l.Known() {
				*dst = *c.l
				r.Sources[name] = c.src
				return
			}
		}
	}
	type cand = struct {
		src string
		l   *pcie.Link
	}
	var cfgCur, cfgCap, hostCur, hostMax, fwAct, fwEn, brMax *pcie.Link
	if cfg != nil {
		cfgCur, cfgCap = &cfg.Current, &cfg.Capable
	}
	if p.Host != nil {
		hostCur, hostMax = &p.Host.Current, &p.Host.Max
	}
	if p.Firmware != nil {
		fwAct, fwEn = &p.Firmware.Active, &p.Firmware.Enabled
	}
	if p.Bridge != nil {
		brMax = &p.Bridge.Max
	}
	pickLink(&r.Current, "current", cand{"config space (Link Status)", cfgCur}, cand{"sysfs current_link_*", hostCur}, cand{"MPEIN link_*_active", fwAct})
	pickLink(&r.Capable, "capable", cand{"config space (Link Capabilities)", cfgCap}, cand{"sysfs max_link_*", hostMax}, cand{"MPEIN link_*_enabled", fwEn})
	pickLink(&r.Slot, "slot", cand{"sysfs max_link_* of the slot's port " + bridgeBDF(p), brMax})
	if !r.Slot.Known() && p.Firmware != nil && p.Firmware.PeerMax.Known() {
		r.Slot = pcie.Link{Speed: p.Firmware.PeerMax}
		r.Sources["slot"] = "MPEIN link_peer_max_speed (speed only)"
	}
	if cfg != nil && cfg.Target.Known() {
		r.Target = cfg.Target
		r.Sources["target_speed"] = "config space (Link Control 2)"
	}
	if p.Firmware != nil {
		r.PowerStatus = p.Firmware.PowerStatus
	}
	for _, u := range []struct {
		what string
		err  error
	}{{"config space", p.ConfigErr}, {"sysfs", p.HostErr}, {"MPEIN", p.FirmwareErr}, {"MPCNT", p.CountersErr}} {
		if u.err != nil {
			r.Unavailable = append(r.Unavailable, Unavailable{What: u.what, Why: u.err.Error()})
		}
	}
	if p.Config != nil && len(p.Config.Problems) > 0 {
		for _, pr := range p.Config.Problems {
			r.Unavailable = append(r.Unavailable, Unavailable{What: "config space", Why: pr})
		}
	}
	if p.Host != nil {
		for _, pr := range p.Host.Problems {
			r.Unavailable = append(r.Unavailable, Unavailable{What: "sysfs", Why: pr})
		}
	}
}

func bridgeBDF(p *adapter.PCIe) string {
	if p.Bridge == nil {
		return ""
	}
	return p.Bridge.BDF
}

func (r *Report) errors(p *adapter.PCIe) {
	e := &r.Errors
	e.DeviceStatus = []string{}
	switch {
	case p.Config != nil && p.Config.Express != nil:
		e.DeviceStatus = append(e.DeviceStatus, pcie.DeviceStatusNames(p.Config.Express.DeviceStatus)...)
	case p.Firmware != nil:
		e.DeviceStatus = append(e.DeviceStatus, pcie.DeviceStatusNames(p.Firmware.DeviceStatus)...)
	}
	if p.Config != nil && p.Config.AER != nil {
		e.Correctable, e.NonFatal, e.Fatal = p.Config.AER.Correctable(), p.Config.AER.NonFatal(), p.Config.AER.Fatal()
	}
	if h := p.Host; h != nil {
		for name, c := range map[string]*pcie.AERCounts{"correctable": h.Correctable, "nonfatal": h.NonFatal, "fatal": h.Fatal} {
			if c == nil {
				continue
			}
			if e.Counts == nil {
				e.Counts = map[string]uint64{}
			}
			e.Counts[name] = c.Total
			for _, n := range c.Nonzero() {
				e.CountsBy = append(e.CountsBy, name+" "+n)
			}
		}
		sort.Strings(e.CountsBy)
	}
	e.MPCNT = p.Counters
}

// rates are the counters' growth per second; a counter that went back
// (cleared, or a 32-bit counter that wrapped) is left out.
func rates(a, b *adapter.PCIe, interval time.Duration) map[string]float64 {
	out := map[string]float64{}
	secs := interval.Seconds()
	add := func(name string, x, y uint64) {
		if y >= x {
			out[name] = float64(y-x) / secs
		}
	}
	if a.Host != nil && b.Host != nil {
		for _, c := range []struct {
			name string
			x, y *pcie.AERCounts
		}{{"aer_correctable", a.Host.Correctable, b.Host.Correctable}, {"aer_nonfatal", a.Host.NonFatal, b.Host.NonFatal},
			{"aer_fatal", a.Host.Fatal, b.Host.Fatal}} {
			if c.x != nil && c.y != nil {
				add(c.name, c.x.Total, c.y.Total)
			}
		}
	}
	for n, y := range b.Counters {
		if x, ok := a.Counters[n]; ok && !isPercent(n) {
			add("mpcnt_"+n, x, y)
		}
	}
	return out
}

// isPercent: MPCNT's outbound_stalled_reads/writes are the percentage of
// the last second, not counts.
func isPercent(n string) bool { return n == "outbound_stalled_reads" || n == "outbound_stalled_writes" }

// Problems counts the verdicts.
func Problems(r *Report) int {
	if r == nil {
		return 0
	}
	return len(r.Verdicts)
}

// ErrUnjudged is a report with nothing to judge: no source gave the link.
var ErrUnjudged = errors.New("pcielink: no source gave the link")

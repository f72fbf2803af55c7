package snapshot

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/feature/driverhealth"
	"github.com/cxray/cxray/feature/pcielink"
)

// PCIeView is the function's PCIe link: the link trained, what the card
// and the slot can train (static: a card that trains narrower after a
// reboot or a move is what a baseline exists to catch) and the kernel's
// AER totals (counters).
type PCIeView struct {
	Error   string            `json:"error,omitempty"`
	Current string            `json:"current,omitempty"` // Gen5 x16
	Capable string            `json:"capable,omitempty"`
	Slot    string            `json:"slot,omitempty"`
	AER     map[string]uint64 `json:"aer,omitempty"`
}

// DriverView is what the kernel driver says of the function's health:
// each devlink health reporter's state (static) and its error and
// recovery counts, and the watched driver statistics (counters). Note
// says why it is not there (no kernel driver: the emulator).
type DriverView struct {
	Note      string            `json:"note,omitempty"`
	Error     string            `json:"error,omitempty"`
	Reporters []ReporterState   `json:"reporters,omitempty"`
	Stats     map[string]uint64 `json:"stats,omitempty"`
}

// ReporterState is one devlink health reporter.
type ReporterState struct {
	Name       string `json:"name"` // fw, tx (port 65535)
	State      string `json:"state"`
	Errors     uint64 `json:"errors"`
	Recoveries uint64 `json:"recoveries"`
}

func recordPCIe(ctx context.Context, a *adapter.Adapter) *PCIeView {
	p, err := a.PCIe(ctx)
	if err != nil {
		return &PCIeView{Error: err.Error()}
	}
	r := pcielink.Build(pcielink.Info{}, p, nil, 0, pcielink.Thresholds{})
	if !r.Current.Known() {
		return &PCIeView{Error: "the link could not be read"}
	}
	out := &PCIeView{Current: r.Current.String(), AER: r.Errors.Counts}
	if r.Capable.Known() {
		out.Capable = r.Capable.String()
	}
	if r.Slot.Speed.Known() || r.Slot.Width > 0 {
		out.Slot = r.Slot.String()
	}
	return out
}

func recordDriver(ctx context.Context, a *adapter.Adapter) *DriverView {
	d, err := a.Driver(ctx, false)
	if err != nil {
		if errors.Is(err, adapter.ErrUnsupported) {
			return &DriverView{Note: err.Error()}
		}
		return &DriverView{Error: err.Error()}
	}
	r := driverhealth.Build(d, nil, 0)
	out := &DriverView{Stats: r.Stats}
	for _, rep := range r.Reporters {
		name := rep.Name
		if rep.Port != nil {
			name = fmt.Sprintf("%s (port %d)", rep.Name, *rep.Port)
		}
		out.Reporters = append(out.Reporters, ReporterState{Name: name, State: rep.State, Errors: rep.Errors, Recoveries: rep.Recoveries})
	}
	if d.ReportersErr != nil && d.StatsErr != nil {
		out.Error = d.ReportersErr.Error() + "; " + d.StatsErr.Error()
	}
	return out
}

func counterChange(dk, reg, path string, old, new uint64) Change {
	d := float64(new) - float64(old)
	return Change{Device: dk, Register: reg, Path: path, Class: Counter, Old: old, New: new,
		OldText: fmt.Sprint(old), NewText: fmt.Sprint(new), Delta: &d}
}

func (r *Report) diffPCIe(dk string, b, n *PCIeView) {
	if r.missing(dk, "PCIe link", b != nil, n != nil) || !r.sectionErrors(dk, "PCIe", b.Error, n.Error) {
		return
	}
	for _, f := range []struct{ path, old, new string }{{"current", b.Current, n.Current}, {"capable", b.Capable, n.Capable}, {"slot", b.Slot, n.Slot}} {
		if f.old != f.new {
			r.Static = append(r.Static, textChange(dk, "PCIe", f.path, orNone(f.old), orNone(f.new)))
		}
	}
	r.diffCounts(dk, "PCIe[aer]", b.AER, n.AER)
}

func (r *Report) diffDriver(dk string, b, n *DriverView) {
	if r.missing(dk, "driver health", b != nil, n != nil) {
		return
	}
	if b.Note != "" || n.Note != "" {
		return // no kernel driver in one of them: nothing to compare
	}
	if !r.sectionErrors(dk, "driver", b.Error, n.Error) {
		return
	}
	now := map[string]ReporterState{}
	for _, x := range n.Reporters {
		now[x.Name] = x
	}
	for _, o := range b.Reporters {
		x, ok := now[o.Name]
		key := "devlink_health[" + o.Name + "]"
		if !ok {
			r.Vanished = append(r.Vanished, Change{Device: dk, Register: key, Note: "the reporter is in the baseline, not in the new snapshot"})
			continue
		}
		if o.State != x.State {
			r.Static = append(r.Static, textChange(dk, key, "state", o.State, x.State))
		}
		if o.Errors != x.Errors {
			r.Counters = append(r.Counters, counterChange(dk, key, "errors", o.Errors, x.Errors))
		}
		if o.Recoveries != x.Recoveries {
			r.Counters = append(r.Counters, counterChange(dk, key, "recoveries", o.Recoveries, x.Recoveries))
		}
	}
	r.diffCounts(dk, "driver_stats", b.Stats, n.Stats)
}

func (r *Report) diffCounts(dk, reg string, b, n map[string]uint64) {
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if o, ok := b[k]; ok && o != n[k] {
			r.Counters = append(r.Counters, counterChange(dk, reg, k, o, n[k]))
		}
	}
}

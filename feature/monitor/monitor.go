// Package monitor samples adapters on an interval: temperatures, counters,
// module readings and any register, converted to units, checked against
// alert expressions and for frozen readings, and written as JSON lines, CSV
// or a live table.
package monitor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/optics"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/units"
)

// Sample is one reading of one device.
type Sample struct {
	Time   time.Time          `json:"time"`
	Device string             `json:"device"`
	Values map[string]float64 `json:"values"`
	// Alerts that fired on this sample, frozen values first seen now, and
	// what could not be read.
	Alerts []string `json:"alerts,omitempty"`
	Frozen []string `json:"frozen,omitempty"`
	Errors []string `json:"errors,omitempty"`
}

// Collector reads one group of values from an adapter.
type Collector interface {
	Name() string
	Collect(ctx context.Context, a *adapter.Adapter, out map[string]float64) []string
	// Moves says whether a key is expected to change on a working device,
	// so that a reading stuck for many samples is reported as frozen.
	Moves(key string) bool
}

// Groups are the --what names that are not registers.
var Groups = []string{"temp", "counters", "module", "rdma", "nvmf", "link", "pcie", "driver"}

// Collectors builds the collectors for a --what list: the groups, or
// register names (optionally REG[k=v,...]). Register names and their
// fields are checked against db (nil: not checked), so a typo is an error
// at start, not a reading that never comes.
func Collectors(what []string, db *prm.DB) ([]Collector, error) {
	var out []Collector
	for _, w := range what {
		w = strings.TrimSpace(w)
		switch {
		case w == "":
		case w == "temp":
			out = append(out, tempCollector{})
		case w == "counters":
			out = append(out, counterCollector{})
		case w == "module":
			out = append(out, moduleCollector{})
		case w == "rdma":
			out = append(out, rdmaCollector{})
		case w == "nvmf":
			out = append(out, nvmfCollector{})
		case w == "link":
			out = append(out, linkCollector{})
		case w == "pcie":
			out = append(out, pcieCollector{})
		case w == "driver":
			out = append(out, driverCollector{})
		default:
			rc, err := ParseRegister(w)
			if err != nil {
				return nil, err
			}
			if db != nil {
				if err := rc.check(db); err != nil {
					return nil, err
				}
			}
			out = append(out, rc)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("nothing to monitor; --what takes %s, or register names", strings.Join(Groups, ", "))
	}
	return out, nil
}

// tempCollector reads every sensor the adapter has: the ASIC's and its
// ports' modules'.
type tempCollector struct{}

func (tempCollector) Name() string { return "temp" }

func (tempCollector) Moves(key string) bool {
	return strings.HasPrefix(key, "temp.") && strings.HasSuffix(key, "_c") && !strings.Contains(key, "threshold")
}

// TempKey is the value key of a sensor: temp.asic_c for the main ASIC
// sensor, temp.module<N>_c for a module, temp.sensor<I>_c for the others.
func TempKey(t adapter.Temperature) string {
	switch {
	case t.Kind == "module" && t.Module >= 0:
		return fmt.Sprintf("temp.module%d_c", t.Module)
	case t.Kind == "asic" && t.Index <= 0:
		return "temp.asic_c"
	case t.Index >= 0:
		return fmt.Sprintf("temp.sensor%d_c", t.Index)
	}
	return "temp." + strings.ToLower(strings.ReplaceAll(t.Sensor, " ", "_")) + "_c"
}

func (tempCollector) Collect(ctx context.Context, a *adapter.Adapter, out map[string]float64) []string {
	ts, err := a.Temperatures(ctx)
	var errs []string
	if err != nil {
		errs = append(errs, "temp: "+err.Error())
	}
	for _, t := range ts {
		key := TempKey(t)
		if t.Celsius == nil {
			// A sentinel is not a reading: leave it out, say why.
			errs = append(errs, fmt.Sprintf("%s: no reading (%s)", key, t.Invalid))
			continue
		}
		out[key] = *t.Celsius
		if t.High != nil {
			out[strings.TrimSuffix(key, "_c")+"_threshold_hi_c"] = *t.High
		}
	}
	return errs
}

// counterCollector reads every port's counters: PPCNT's IEEE 802.3, RFC
// 2863 and physical-layer groups (registers), the IB PMA counters
// (kernel).
type counterCollector struct{}

func (counterCollector) Name() string { return "counters" }

func (counterCollector) Moves(string) bool { return false }

func (counterCollector) Collect(ctx context.Context, a *adapter.Adapter, out map[string]float64) []string {
	sets, err := a.PortCounters(ctx)
	var errs []string
	if err != nil {
		errs = append(errs, "counters: "+err.Error())
	}
	for _, cs := range sets {
		for name, v := range cs.Values {
			out[fmt.Sprintf("port%d.%s.%s", cs.Port, cs.Kind, name)] = float64(v)
		}
	}
	return errs
}

// rdmaCollector reads the RDMA hw_counters of every port.
type rdmaCollector struct{}

func (rdmaCollector) Name() string { return "rdma" }

func (rdmaCollector) Moves(string) bool { return false }

func (rdmaCollector) Collect(ctx context.Context, a *adapter.Adapter, out map[string]float64) []string {
	sets, err := a.RDMACounters(ctx)
	var errs []string
	if err != nil {
		errs = append(errs, "rdma: "+err.Error())
	}
	for _, cs := range sets {
		for name, v := range cs.Values {
			out[fmt.Sprintf("port%d.rdma.%s", cs.Port, name)] = float64(v)
		}
	}
	return errs
}

// moduleCollector reads every port's module through the same reader as
// `cxray module`: temperature, voltage, per-lane bias and powers, and the
// module's own thresholds.
type moduleCollector struct{}

func (moduleCollector) Name() string { return "module" }

func (moduleCollector) Moves(key string) bool {
	if !strings.Contains(key, ".module.") || strings.Contains(key, "threshold") {
		return false
	}
	return strings.HasSuffix(key, "temperature_c") || strings.HasSuffix(key, "voltage_v") || strings.HasSuffix(key, "tx_bias_ma") ||
		strings.HasSuffix(key, "_power_mw")
}

func (moduleCollector) Collect(ctx context.Context, a *adapter.Adapter, out map[string]float64) []string {
	ms, err := a.Modules(ctx, adapter.ModuleOptions{})
	var errs []string
	if err != nil {
		errs = append(errs, "module: "+err.Error())
	}
	for _, m := range ms {
		pfx := fmt.Sprintf("port%d.module.", m.Port)
		best := m.Best()
		if best == nil {
			why := "no module"
			if m.EEPROMErr != nil {
				why = m.EEPROMErr.Error()
			}
			if m.Present == nil || *m.Present {
				errs = append(errs, fmt.Sprintf("port%d module: %s", m.Port, why))
			}
			continue
		}
		errs = append(errs, ModuleValues(pfx, best, out)...)
	}
	return errs
}

// ModuleValues adds a module's readings under pfx: temperature_c,
// voltage_v, lane<N>.tx_bias_ma / tx_power_mw / rx_power_mw, and the
// thresholds as threshold.<quantity>.<limit>.
//
// A reading that is its field's no-reading pattern (0xFFFF) is left out,
// so it never feeds an alert, a rate or a frozen-reading check; it is
// listed in the returned strings instead.
func ModuleValues(pfx string, m *optics.Module, out map[string]float64) (noReading []string) {
	nr := func(key, pattern string) {
		noReading = append(noReading, fmt.Sprintf("%s: no reading (%s)", key, pattern))
	}
	if t := m.Temperature; t.Valid() {
		out[pfx+"temperature_c"] = t.C
	} else if t != nil {
		nr(pfx+"temperature_c", t.NA)
	}
	if v := m.Voltage; v.Valid() {
		out[pfx+"voltage_v"] = v.V
	} else if v != nil {
		nr(pfx+"voltage_v", v.NA)
	}
	for _, l := range m.Lanes {
		lp := fmt.Sprintf("%slane%d.", pfx, l.Lane)
		if l.TxBias.Valid() {
			out[lp+"tx_bias_ma"] = l.TxBias.MA
		} else if l.TxBias != nil {
			nr(lp+"tx_bias_ma", l.TxBias.NA)
		}
		if l.TxPower.Valid() {
			out[lp+"tx_power_mw"] = l.TxPower.MW
		} else if l.TxPower != nil {
			nr(lp+"tx_power_mw", l.TxPower.NA)
		}
		if l.RxPower.Valid() {
			out[lp+"rx_power_mw"] = l.RxPower.MW
		} else if l.RxPower != nil {
			nr(lp+"rx_power_mw", l.RxPower.NA)
		}
	}
	th := m.Thresholds
	if th == nil {
		return
	}
	lim := func(q string, hi, hw, lw, lo *float64) {
		for _, x := range []struct {
			n string
			v *float64
		}{{"high_alarm", hi}, {"high_warning", hw}, {"low_warning", lw}, {"low_alarm", lo}} {
			if x.v != nil {
				out[pfx+"threshold."+q+"."+x.n] = *x.v
			}
		}
	}
	if l := th.Temperature; l != nil {
		lim("temperature_c", tempC(l.HighAlarm), tempC(l.HighWarning), tempC(l.LowWarning), tempC(l.LowAlarm))
	}
	if l := th.Voltage; l != nil {
		lim("voltage_v", volt(l.HighAlarm), volt(l.HighWarning), volt(l.LowWarning), volt(l.LowAlarm))
	}
	if l := th.TxBias; l != nil {
		lim("tx_bias_ma", cur(l.HighAlarm), cur(l.HighWarning), cur(l.LowWarning), cur(l.LowAlarm))
	}
	if l := th.TxPower; l != nil {
		lim("tx_power_mw", pow(l.HighAlarm), pow(l.HighWarning), pow(l.LowWarning), pow(l.LowAlarm))
	}
	if l := th.RxPower; l != nil {
		lim("rx_power_mw", pow(l.HighAlarm), pow(l.HighWarning), pow(l.LowWarning), pow(l.LowAlarm))
	}
	return noReading
}

func tempC(t *optics.Temperature) *float64 {
	if !t.Valid() {
		return nil
	}
	return &t.C
}

func volt(v *optics.Voltage) *float64 {
	if !v.Valid() {
		return nil
	}
	return &v.V
}

func cur(c *optics.Current) *float64 {
	if !c.Valid() {
		return nil
	}
	return &c.MA
}

func pow(p *optics.Power) *float64 {
	if !p.Valid() {
		return nil
	}
	return &p.MW
}

// RegCollector reads one register instance: every number field, in units
// where they are known. "PDDR[page_select=0,local_port=1]".
type RegCollector struct {
	Register string
	Index    []prm.Assignment
	key      string
}

// ParseRegister reads a --what register: REG or REG[field=value,...].
func ParseRegister(w string) (RegCollector, error) {
	name, rest, hasIdx := strings.Cut(strings.TrimSpace(w), "[")
	name = strings.TrimSpace(name)
	rc := RegCollector{Register: strings.ToUpper(name), key: strings.ToLower(name)}
	// Register names are ASCII (the PRM's); Unicode case folding would
	// turn "ſ" into a register "S" the user never typed.
	if name == "" || strings.ContainsAny(name, "]=,. ") || strings.IndexFunc(name, func(r rune) bool { return r > unicode.MaxASCII }) >= 0 {
		return rc, fmt.Errorf("--what %q: not a group (%s) or a register name; write REG or REG[field=value,...]", w, strings.Join(Groups, ", "))
	}
	if hasIdx {
		if !strings.HasSuffix(rest, "]") || strings.Contains(strings.TrimSuffix(rest, "]"), "]") {
			return rc, fmt.Errorf("--what %s: write REG[field=value,...]", w)
		}
		as, err := prm.ParseAssignments(strings.Split(strings.TrimSuffix(rest, "]"), ","))
		if err != nil {
			return rc, fmt.Errorf("--what %s: %v", w, err)
		}
		rc.Index = as
		for _, a := range as {
			rc.key += "." + a.Path + "_" + a.Value
		}
	}
	return rc, nil
}

// Key is the prefix of the collector's value keys.
func (c RegCollector) Key() string { return c.key }

// check refuses an unknown register or field and a missing index, the
// way a read would, but at start.
func (c RegCollector) check(db *prm.DB) error {
	d := adapterlessDevice(db)
	if err := d.CheckRequest(c.Register, c.Index, nil); err != nil {
		var nf *prm.NotFoundError
		if errors.As(err, &nf) {
			return fmt.Errorf("--what %s: not a group (%s) and %v", c.Register, strings.Join(Groups, ", "), err)
		}
		return fmt.Errorf("--what %s: %v", c.Register, err)
	}
	return nil
}

func (c RegCollector) Name() string { return c.Register }

func (c RegCollector) Moves(string) bool { return false }

func (c RegCollector) Collect(ctx context.Context, a *adapter.Adapter, out map[string]float64) []string {
	if err := c.read(ctx, a, out); err != nil {
		return []string{fmt.Sprintf("%s: %v", c.Register, err)}
	}
	return nil
}

// Text is the collector as --what writes it: REG or REG[field=value,...].
func (c RegCollector) Text() string {
	if len(c.Index) == 0 {
		return c.Register
	}
	parts := make([]string, len(c.Index))
	for i, a := range c.Index {
		parts[i] = a.Path + "=" + a.Value
	}
	return c.Register + "[" + strings.Join(parts, ",") + "]"
}

// read is Collect with the error kept whole, so that Sample can tell the
// firmware's refusal (a status) from a device that does not answer.
func (c RegCollector) read(ctx context.Context, a *adapter.Adapter, out map[string]float64) error {
	d, err := a.Registers(ctx)
	if err != nil {
		return err
	}
	r, err := d.Get(ctx, c.Register, c.Index, nil, 0)
	if err != nil {
		return err
	}
	for _, row := range r.Decoded.Rows() {
		k := row.Value.Kind()
		if k != prm.KindUint && !(k == prm.KindJoined && !row.Value.IsText()) {
			continue
		}
		v := float64(row.Value.Uint())
		if u, ok := units.Lookup(c.Register, row.Path); ok {
			v = u.Apply(row.Value.Uint(), row.Value.Step().Width).Value
		}
		out[c.key+"."+row.Path] = v
	}
	return nil
}

// RefusedError is a --what register the firmware answered with a status
// (bad parameter, not supported ...): the device works, and this read
// will not succeed as given. On the first sample it is a mistake in the
// command line, reported at start.
type RefusedError struct {
	Device   string
	Register RegCollector
	Status   dev.Status
	Err      error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("--what %s: %s answers the read with firmware status 0x%x (%v); check the register's index fields and their ranges (cxray prm show %s), or leave it out of --what",
		e.Register.Text(), e.Device, e.Status, e.Err, e.Register.Register)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// Target is one device being monitored.
type Target struct {
	Name    string
	Adapter *adapter.Adapter
	// Gone is set once the device stopped answering; it is retried each
	// interval and reported back when it answers again.
	Gone bool
}

// Monitor samples targets and evaluates alerts and frozen readings.
type Monitor struct {
	Collectors []Collector
	Alerts     []*Alert
	// A moving value is reported frozen once it has been equal in
	// FrozenAfter samples (0: 5) spanning FrozenFor (0: DefaultFrozenFor):
	// both, so that a short interval does not turn a steady reading into
	// a frozen one.
	FrozenAfter int
	FrozenFor   time.Duration
	Now         func() time.Time

	last   map[string]map[string]float64 // device -> key -> value
	lastT  map[string]time.Time
	same   map[string]map[string]int
	since  map[string]map[string]time.Time // when the value took its current value
	frozen map[string]map[string]bool
	// sinceUp is the device's uptime when the value took its current
	// value (absent when the device has none to read).
	sinceUp map[string]map[string]time.Duration

	refused []*RefusedError
}

// Refused lists the --what registers the firmware answered with a status
// in the last Sample call.
func (m *Monitor) Refused() []*RefusedError { return m.refused }

// DefaultFrozenFor is how long a moving value must stay the same before
// it is reported frozen. A healthy sensor reads in steps (0.125 °C for
// the ASIC's and the modules'), so a steady one can sit on one step for
// minutes: sampled every 10 s for 55 emulated hours, an idle cx7-2p400g's
// modules held one step for up to 310 s. A stuck sensor holds it for good.
const DefaultFrozenFor = 10 * time.Minute

// Sample reads every target once.
func (m *Monitor) Sample(ctx context.Context, targets []*Target) []Sample {
	if m.Now == nil {
		m.Now = time.Now
	}
	if m.last == nil {
		m.last, m.lastT = map[string]map[string]float64{}, map[string]time.Time{}
		m.same, m.frozen = map[string]map[string]int{}, map[string]map[string]bool{}
		m.since, m.sinceUp = map[string]map[string]time.Time{}, map[string]map[string]time.Duration{}
	}
	out := make([]Sample, 0, len(targets))
	m.refused = nil
	for _, t := range targets {
		s := Sample{Time: m.Now().UTC(), Device: t.Name, Values: map[string]float64{}}
		// failed: a read failed other than by the firmware's answer (a
		// group's errors are taken as such); only that can mean the
		// device stopped answering.
		failed := false
		for _, c := range m.Collectors {
			rc, ok := c.(RegCollector)
			if !ok {
				errs := c.Collect(ctx, t.Adapter, s.Values)
				failed = failed || len(errs) > 0
				s.Errors = append(s.Errors, errs...)
				continue
			}
			err := rc.read(ctx, t.Adapter, s.Values)
			if err == nil {
				continue
			}
			s.Errors = append(s.Errors, fmt.Sprintf("%s: %v", rc.Register, err))
			// A status is an answer: the device works. Only a bad
			// parameter or an unknown register says the command line is
			// wrong; busy, internal error and the rest are the device's
			// state, recorded and read again next sample.
			st, ok := dev.StatusOf(err)
			switch {
			case !ok:
				failed = true
			case st == dev.StatusBadParameter || st == dev.StatusRegisterNotSupported:
				m.refused = append(m.refused, &RefusedError{Device: t.Name, Register: rc, Status: st, Err: err})
			}
		}
		switch {
		case len(s.Values) == 0 && failed:
			if !t.Gone {
				s.Errors = append([]string{"device stopped answering; still trying"}, s.Errors...)
			}
			t.Gone = true
		case t.Gone:
			s.Errors = append(s.Errors, "device answers again")
			t.Gone = false
		}
		// The device's own clock, for the frozen check: an emulator on a
		// stopped clock (emu serve) keeps its readings because its time
		// does not move, not because they froze.
		up, upErr := time.Duration(0), error(nil)
		if len(s.Values) > 0 && t.Adapter != nil {
			up, upErr = t.Adapter.Uptime(ctx)
		}
		m.check(t.Name, &s, up, upErr == nil && len(s.Values) > 0 && t.Adapter != nil)
		out = append(out, s)
	}
	return out
}

// check evaluates alerts and frozen readings; up is the device's uptime
// at the sample when hasUp.
func (m *Monitor) check(dev string, s *Sample, up time.Duration, hasUp bool) {
	prev, prevT := m.last[dev], m.lastT[dev]
	dt := s.Time.Sub(prevT).Seconds()
	for _, a := range m.Alerts {
		s.Alerts = append(s.Alerts, a.Eval(s.Values, prev, dt)...)
		if !a.MatchesAny(s.Values) {
			// A valid key with no reading now (an empty cage, a module
			// that does not answer): say so, the alert cannot judge.
			s.Errors = append(s.Errors, fmt.Sprintf("alert %q: no value this sample (%s is not read)", a.Text, a.Key))
		}
	}
	limit, span := m.FrozenAfter, m.FrozenFor
	if limit <= 0 {
		limit = 5
	}
	if span <= 0 {
		span = DefaultFrozenFor
	}
	if m.same[dev] == nil {
		m.same[dev], m.frozen[dev], m.since[dev] = map[string]int{}, map[string]bool{}, map[string]time.Time{}
		m.sinceUp[dev] = map[string]time.Duration{}
	}
	keys := make([]string, 0, len(s.Values))
	for k := range s.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !m.moves(k) {
			continue
		}
		if p, ok := prev[k]; ok && p == s.Values[k] {
			m.same[dev][k]++
		} else {
			m.same[dev][k] = 0
			m.since[dev][k] = s.Time
			m.frozen[dev][k] = false
			delete(m.sinceUp[dev], k)
			if hasUp {
				m.sinceUp[dev][k] = up
			}
		}
		n, d := m.same[dev][k]+1, s.Time.Sub(m.since[dev][k])
		if u0, ok := m.sinceUp[dev][k]; ok && hasUp {
			// Measured on the device's clock: time that did not pass
			// there froze nothing.
			d = min(d, up-u0)
		}
		if n >= limit && d >= span && !m.frozen[dev][k] {
			m.frozen[dev][k] = true
			s.Frozen = append(s.Frozen, fmt.Sprintf("%s has not changed for %d samples over %s (%g): the reading may be frozen", k, n, d, s.Values[k]))
		}
	}
	if len(s.Values) > 0 {
		m.last[dev], m.lastT[dev] = s.Values, s.Time
	}
}

func (m *Monitor) moves(key string) bool {
	for _, c := range m.Collectors {
		if c.Moves(key) {
			return true
		}
	}
	return false
}

// adapterlessDevice is a device with no backend, for checking requests.
func adapterlessDevice(db *prm.DB) *dev.Device { return dev.New("", "", "", db, nil, nil) }

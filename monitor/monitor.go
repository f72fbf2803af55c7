// Package monitor samples adapters on an interval: temperatures, counters,
// module readings and any register, converted to units, checked against
// alert expressions and for frozen readings, and written as JSON lines, CSV
// or a live table.
package monitor

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cxray/cxray/dev"
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

// Collector reads one group of values from a device.
type Collector interface {
	Name() string
	Collect(ctx context.Context, d *dev.Device, ports int, out map[string]float64) []string
	// Moves says whether a key is expected to change on a working device,
	// so that a reading stuck for many samples is reported as frozen.
	Moves(key string) bool
}

// Collectors builds the collectors for a --what list: temp, counters,
// module, or register names (optionally REG[k=v,...]).
func Collectors(what []string, extra map[string]Collector) ([]Collector, error) {
	var out []Collector
	for _, w := range what {
		w = strings.TrimSpace(w)
		switch {
		case w == "":
		case w == "temp":
			out = append(out, tempCollector{})
		case w == "counters":
			out = append(out, counterCollector{})
		case extra[w] != nil:
			out = append(out, extra[w])
		default:
			rc, err := parseRegCollector(w)
			if err != nil {
				return nil, err
			}
			out = append(out, rc)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("nothing to monitor; --what takes temp, counters, module or register names")
	}
	return out, nil
}

// tempCollector reads MTMP: the ASIC (sensor 0) and the modules (64+).
type tempCollector struct{}

func (tempCollector) Name() string { return "temp" }

func (tempCollector) Moves(key string) bool {
	return strings.HasSuffix(key, "_c") && !strings.Contains(key, "threshold")
}

func (tempCollector) Collect(ctx context.Context, d *dev.Device, ports int, out map[string]float64) []string {
	var errs []string
	read := func(sensor int, key string) {
		r, err := d.Get(ctx, "MTMP", []prm.Assignment{{Path: "sensor_index", Value: strconv.Itoa(sensor)}}, nil, 0)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", key, err))
			return
		}
		u, _ := units.Lookup("MTMP", "temperature")
		if v, err := r.Decoded.Get("temperature"); err == nil {
			out[key] = u.Apply(v.Uint(), v.Step().Width).Value
		}
		if v, err := r.Decoded.Get("temperature_threshold_hi"); err == nil && v.Uint() != 0 {
			out[strings.TrimSuffix(key, "_c")+"_threshold_hi_c"] = u.Apply(v.Uint(), v.Step().Width).Value
		}
	}
	read(0, "temp.asic_c")
	for m := 0; m < ports; m++ {
		read(64+m, fmt.Sprintf("temp.module%d_c", m))
	}
	return errs
}

// counterCollector reads PPCNT per port: IEEE 802.3, RFC 2863 and the
// physical-layer group, every joined 64-bit counter.
type counterCollector struct{}

func (counterCollector) Name() string { return "counters" }

func (counterCollector) Moves(string) bool { return false }

var counterGroups = []string{"0", "1", "18"}

func (counterCollector) Collect(ctx context.Context, d *dev.Device, ports int, out map[string]float64) []string {
	var errs []string
	for p := 1; p <= ports; p++ {
		for _, g := range counterGroups {
			r, err := d.Get(ctx, "PPCNT", []prm.Assignment{{Path: "local_port", Value: strconv.Itoa(p)}, {Path: "grp", Value: g}}, nil, 0)
			if err != nil {
				errs = append(errs, fmt.Sprintf("port%d PPCNT group %s: %v", p, g, err))
				continue
			}
			for _, row := range r.Decoded.Rows() {
				if row.Value.Kind() != prm.KindJoined {
					continue
				}
				out[fmt.Sprintf("port%d.ppcnt.%s", p, lastName(row.Path))] = float64(row.Value.Uint())
			}
		}
	}
	return errs
}

func lastName(path string) string { return path[strings.LastIndexByte(path, '.')+1:] }

// regCollector reads one register instance: every number field, in units
// where they are known. "PDDR[page_select=0,local_port=1]".
type regCollector struct {
	reg   string
	index []prm.Assignment
	key   string
}

func parseRegCollector(w string) (regCollector, error) {
	name, rest, hasIdx := strings.Cut(w, "[")
	rc := regCollector{reg: strings.ToUpper(name), key: strings.ToLower(name)}
	if hasIdx {
		if !strings.HasSuffix(rest, "]") {
			return rc, fmt.Errorf("--what %s: write REG[field=value,...]", w)
		}
		as, err := prm.ParseAssignments(strings.Split(strings.TrimSuffix(rest, "]"), ","))
		if err != nil {
			return rc, fmt.Errorf("--what %s: %v", w, err)
		}
		rc.index = as
		for _, a := range as {
			rc.key += "." + a.Path + "_" + a.Value
		}
	}
	return rc, nil
}

func (c regCollector) Name() string { return c.reg }

func (c regCollector) Moves(string) bool { return false }

func (c regCollector) Collect(ctx context.Context, d *dev.Device, _ int, out map[string]float64) []string {
	r, err := d.Get(ctx, c.reg, c.index, nil, 0)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", c.reg, err)}
	}
	for _, row := range r.Decoded.Rows() {
		k := row.Value.Kind()
		if k != prm.KindUint && !(k == prm.KindJoined && !row.Value.IsText()) {
			continue
		}
		v := float64(row.Value.Uint())
		if u, ok := units.Lookup(c.reg, row.Path); ok {
			v = u.Apply(row.Value.Uint(), row.Value.Step().Width).Value
		}
		out[c.key+"."+row.Path] = v
	}
	return nil
}

// Target is one device being monitored.
type Target struct {
	Name   string
	Device *dev.Device
	Ports  int
	// Gone is set once the device stopped answering; it is retried each
	// interval and reported back when it answers again.
	Gone bool
}

// Monitor samples targets and evaluates alerts and frozen readings.
type Monitor struct {
	Collectors  []Collector
	Alerts      []*Alert
	FrozenAfter int // samples a moving value may stay equal (0: 5)
	Now         func() time.Time

	last   map[string]map[string]float64 // device -> key -> value
	lastT  map[string]time.Time
	same   map[string]map[string]int
	frozen map[string]map[string]bool
}

// Sample reads every target once.
func (m *Monitor) Sample(ctx context.Context, targets []*Target) []Sample {
	if m.Now == nil {
		m.Now = time.Now
	}
	if m.last == nil {
		m.last, m.lastT = map[string]map[string]float64{}, map[string]time.Time{}
		m.same, m.frozen = map[string]map[string]int{}, map[string]map[string]bool{}
	}
	out := make([]Sample, 0, len(targets))
	for _, t := range targets {
		s := Sample{Time: m.Now().UTC(), Device: t.Name, Values: map[string]float64{}}
		for _, c := range m.Collectors {
			s.Errors = append(s.Errors, c.Collect(ctx, t.Device, t.Ports, s.Values)...)
		}
		switch {
		case len(s.Values) == 0 && len(s.Errors) > 0:
			if !t.Gone {
				s.Errors = append([]string{"device stopped answering; still trying"}, s.Errors...)
			}
			t.Gone = true
		case t.Gone:
			s.Errors = append(s.Errors, "device answers again")
			t.Gone = false
		}
		m.check(t.Name, &s)
		out = append(out, s)
	}
	return out
}

func (m *Monitor) check(dev string, s *Sample) {
	prev, prevT := m.last[dev], m.lastT[dev]
	dt := s.Time.Sub(prevT).Seconds()
	for _, a := range m.Alerts {
		s.Alerts = append(s.Alerts, a.Eval(s.Values, prev, dt)...)
	}
	limit := m.FrozenAfter
	if limit <= 0 {
		limit = 5
	}
	if m.same[dev] == nil {
		m.same[dev], m.frozen[dev] = map[string]int{}, map[string]bool{}
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
			m.frozen[dev][k] = false
		}
		if m.same[dev][k] >= limit-1 && !m.frozen[dev][k] {
			m.frozen[dev][k] = true
			s.Frozen = append(s.Frozen, fmt.Sprintf("%s has not changed for %d samples (%g): the reading may be frozen", k, limit, s.Values[k]))
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

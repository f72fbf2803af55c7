package monitor

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/cxray/cxray/internal/lazyre"
	"github.com/cxray/cxray/prm/units"
)

// Series is one line of a chart.
type Series struct {
	Name   string // "DEVICE KEY"
	Device string
	Key    string
	T      []time.Time
	V      []float64
	// Counter marks a cumulative counter (PPCNT): charts draw its rate.
	Counter bool
}

// Selection is what a --what list picked.
type Selection struct {
	Series []Series
	// Left lists keys a word pattern matched only through a negation
	// ("rs_fec_no_errors_blocks" for *errors*): left out, name them
	// exactly to draw them.
	Left []string
}

// groups are monitor's own --what group names and the keys they make.
var groups = map[string]func(k string) bool{
	"temp":     func(k string) bool { return strings.HasPrefix(k, "temp.") },
	"counters": func(k string) bool { return strings.Contains(k, ".ppcnt.") || strings.Contains(k, ".ib.") },
	"module":   func(k string) bool { return strings.HasPrefix(k, "module.") || strings.Contains(k, ".module.") },
	"rdma":     func(k string) bool { return strings.Contains(k, ".rdma.") },
	"nvmf":     func(k string) bool { return strings.Contains(k, ".nvmf.") }, // the counters, not the nvmf.offload flag
	"link":     func(k string) bool { return strings.Contains(k, ".link.") },
	"pcie":     func(k string) bool { return strings.HasPrefix(k, "pcie.") },
	"driver":   func(k string) bool { return strings.HasPrefix(k, "driver.") },
}

// matcher is one --what pattern.
type matcher struct {
	text  string
	exact bool
	group func(string) bool
	re    *regexp.Regexp
	glob  string
	words []string // the pattern's words, for the negation rule
}

func newMatcher(p string) (*matcher, error) {
	m := &matcher{text: p}
	switch {
	case len(p) >= 2 && strings.HasPrefix(p, "/") && strings.HasSuffix(p, "/"):
		// /regexp/: matches the whole key.
		re, err := regexp.Compile("^(?:" + p[1:len(p)-1] + ")$")
		if err != nil {
			return nil, fmt.Errorf("--what %s: not a regular expression: %v", p, err)
		}
		m.re = re
	case groups[strings.ToLower(p)] != nil:
		m.group = groups[strings.ToLower(p)]
	default:
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("--what %s: bad wildcard", p)
		}
		m.glob = p
		m.exact = !strings.ContainsAny(p, "*?[")
		for _, w := range strings.FieldsFunc(strings.ToLower(p), func(r rune) bool { return r == '*' || r == '.' || r == '_' || r == '?' }) {
			m.words = append(m.words, w)
		}
	}
	return m, nil
}

// negated says every occurrence of a word of the pattern in k is negated
// ("no_errors"): the key counts the absence of what was asked for.
func (m *matcher) negated(k string) bool {
	k = strings.ToLower(k)
	for _, w := range m.words {
		found, plain := false, false
		for i := 0; ; {
			j := strings.Index(k[i:], w)
			if j < 0 {
				break
			}
			found = true
			at := i + j
			neg := false
			for _, n := range []string{"no_", "non_", "not_", "without_"} {
				if at >= len(n) && k[at-len(n):at] == n {
					neg = true
				}
			}
			if !neg {
				plain = true
			}
			i = at + len(w)
		}
		if found && !plain {
			return true
		}
	}
	return false
}

// match says whether k is selected; left is set for a key matched only
// through a negation.
func (m *matcher) match(k string) (ok, left bool) {
	switch {
	case m.re != nil:
		return m.re.MatchString(k), false
	case m.group != nil:
		return m.group(k), false
	case m.exact:
		// The key itself, or its suffix after a dot (asic_c), or a group
		// of keys under it (temp.module1 ...), never a part of a word.
		return k == m.glob || strings.HasSuffix(k, "."+m.glob) || strings.HasPrefix(k, m.glob+"."), false
	}
	a := Alert{Key: m.glob}
	if !a.matches(k) {
		return false, false
	}
	if m.negated(k) {
		return false, true
	}
	return true, false
}

// SelectSeries picks the values whose keys match the patterns (none: all).
// A pattern is monitor's group name (temp, counters, module, rdma, link), an exact key
// or its suffix after a dot (asic_c), a wildcard pattern (* and ?, as
// alerts take them: port1.ppcnt.*errors*), or /regexp/ matching the whole
// key. A wildcard word does not pick keys that only have it negated
// (*errors* leaves rs_fec_no_errors_blocks out: Selection.Left).
func SelectSeries(samples []Sample, patterns []string) (*Selection, error) {
	var ms []*matcher
	for _, p := range patterns {
		m, err := newMatcher(p)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	sel := &Selection{}
	byName := map[string]*Series{}
	left := map[string]bool{}
	for _, s := range samples {
		keys := make([]string, 0, len(s.Values))
		for k := range s.Values {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ok := len(ms) == 0
			for _, m := range ms {
				hit, l := m.match(k)
				if l {
					left[k] = true
				}
				ok = ok || hit
			}
			if !ok {
				continue
			}
			delete(left, k)
			name := s.Device + " " + k
			se := byName[name]
			if se == nil {
				se = &Series{Name: name, Device: s.Device, Key: k, Counter: isCounter(k)}
				byName[name] = se
			}
			se.T = append(se.T, s.Time)
			se.V = append(se.V, s.Values[k])
		}
	}
	for _, s := range byName {
		sel.Series = append(sel.Series, *s)
	}
	sort.Slice(sel.Series, func(i, j int) bool { return sel.Series[i].Name < sel.Series[j].Name })
	for k := range left {
		sel.Left = append(sel.Left, k)
	}
	sort.Strings(sel.Left)
	return sel, nil
}

// isCounter: cumulative counters (monitor's counter and RDMA keys), and
// *_total keys.
func isCounter(k string) bool {
	return isCounterKey(k) || strings.HasSuffix(k, "_total")
}

// AutoThresholds finds the threshold values recorded for the plotted
// series themselves: a module's threshold.Q.LIMIT for its Q (on any lane),
// a sensor's X_threshold_hi_c for X_c. A threshold of another quantity
// (a bias limit on an Rx-power chart, module limits on a frame-rate chart)
// never is: its line would squash the data and fill the legend.
func AutoThresholds(samples []Sample, series []Series) []Threshold {
	devices := map[string]bool{}
	for _, s := range series {
		devices[s.Device] = true
	}
	type key struct{ dev, k string }
	last := map[key]float64{}
	for _, smp := range samples {
		if !devices[smp.Device] {
			continue
		}
		for k, v := range smp.Values {
			if !strings.Contains(k, "threshold") {
				continue
			}
			for _, s := range series {
				if s.Device == smp.Device && thresholdOf(k, s.Key) {
					last[key{smp.Device, k}] = v
					break
				}
			}
		}
	}
	var out []Threshold
	for k, v := range last {
		name := k.k
		if len(devices) > 1 {
			name = k.dev + " " + k.k
		}
		out = append(out, Threshold{Name: name, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// thresholdKey is a sensor threshold's part of a key (temp.asic_threshold_hi_c).
var thresholdKey = lazyre.New(`_threshold_[a-z]+`)

// thresholdOf says threshold key th limits the value of key (monitor's
// keys: feature/monitor/keys.go).
func thresholdOf(th, key string) bool {
	if pfx, rest, ok := strings.Cut(th, ".threshold."); ok {
		// PFX.threshold.Q.LIMIT: PFX.Q, or PFX.laneN.Q.
		q, _, _ := strings.Cut(rest, ".")
		if key == pfx+"."+q {
			return true
		}
		mid, ok := strings.CutPrefix(key, pfx+".")
		if !ok {
			return false
		}
		lane, tail, ok := strings.Cut(mid, ".")
		return ok && tail == q && strings.HasPrefix(lane, "lane")
	}
	if base := thresholdKey.ReplaceAllString(th, ""); base != th {
		return key == base
	}
	return false
}

// Threshold is a horizontal line on a chart ("alarm 70").
type Threshold struct {
	Name  string
	Value float64
}

// Quantity is what a key measures and its unit.
type Quantity struct {
	Name string // "temperature"
	Unit string // "°C"; "" for plain numbers and counts
}

// unitSuffixes are the unit suffixes of monitor's keys (temp.asic_c).
var unitSuffixes = []struct {
	suffix string
	q      Quantity
}{
	{"_c", Quantity{"temperature", "°C"}},
	{"_mv", Quantity{"voltage", "mV"}},
	{"_v", Quantity{"voltage", "V"}},
	{"_ma", Quantity{"current", "mA"}},
	{"_dbm", Quantity{"optical power", "dBm"}},
	{"_mw", Quantity{"optical power", "mW"}},
	{"_uw", Quantity{"optical power", "µW"}},
	{"_gbps", Quantity{"rate", "Gb/s"}},
	{"_bytes", Quantity{"size", "bytes"}},
	{"_s", Quantity{"time", "s"}},
	{"_pct", Quantity{"share", "%"}},
}

// QuantityOf says what a key measures: from its unit suffix, from the PRM
// units of a register key (mtmp.temperature is MTMP's temperature, in °C),
// counts for counters.
func QuantityOf(key string) Quantity {
	low := strings.ToLower(key)
	for _, u := range unitSuffixes {
		if strings.HasSuffix(low, u.suffix) {
			return u.q
		}
	}
	if isCounter(key) {
		return Quantity{"count", ""}
	}
	// A register collector's key: REG[.index_value...].field.path.
	if reg, rest, ok := strings.Cut(key, "."); ok {
		segs := strings.Split(rest, ".")
		for i := range segs {
			if u, ok := units.Lookup(reg, strings.Join(segs[i:], ".")); ok {
				return Quantity{lastWord(key), u.Symbol}
			}
		}
	}
	return Quantity{"value", ""}
}

func lastWord(k string) string {
	return strings.ReplaceAll(k[strings.LastIndexByte(k, '.')+1:], "_", " ")
}

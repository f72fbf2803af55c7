package monitor

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Alert is one --alert expression: KEY OP NUMBER, where KEY may be wrapped
// in rate() (change per second) or delta() (change since the last sample),
// may use * wildcards, and matches a value key exactly or as its suffix
// after a dot ("ppcnt.symbol_errors" matches "port1.ppcnt.symbol_errors").
type Alert struct {
	Text  string
	Fn    string // "", "rate" or "delta"
	Key   string
	Op    string
	Limit float64
}

var ops = []string{">=", "<=", "==", "!=", ">", "<"}

// ParseAlert parses an expression such as "temp.asic_c > 70" or
// "rate(ppcnt.symbol_errors) > 0".
func ParseAlert(s string) (*Alert, error) {
	bad := func(why string) error {
		return fmt.Errorf("alert %q: %s; write KEY OP NUMBER, e.g. 'temp.asic_c > 70' or 'rate(ppcnt.symbol_errors) > 0'", s, why)
	}
	var a Alert
	a.Text = strings.TrimSpace(s)
	i, op := -1, ""
	for _, o := range ops {
		if j := strings.Index(a.Text, o); j > 0 && (i < 0 || j < i) {
			i, op = j, o
		}
	}
	if i < 0 {
		return nil, bad("no comparison (>, >=, <, <=, ==, !=)")
	}
	lhs, rhs := strings.TrimSpace(a.Text[:i]), strings.TrimSpace(a.Text[i+len(op):])
	a.Op = op
	v, err := strconv.ParseFloat(rhs, 64)
	if err != nil {
		return nil, bad(fmt.Sprintf("%q is not a number", rhs))
	}
	a.Limit = v
	for _, fn := range []string{"rate", "delta"} {
		if strings.HasPrefix(lhs, fn+"(") && strings.HasSuffix(lhs, ")") {
			a.Fn, lhs = fn, strings.TrimSpace(lhs[len(fn)+1:len(lhs)-1])
		}
	}
	if lhs == "" || strings.ContainsAny(lhs, "() ") {
		return nil, bad(fmt.Sprintf("%q is not a value key", lhs))
	}
	if _, err := path.Match(lhs, ""); err != nil {
		return nil, bad("bad wildcard")
	}
	a.Key = lhs
	return &a, nil
}

// matches says whether the alert's key names value key k.
func (a *Alert) matches(k string) bool {
	if ok, _ := path.Match(a.Key, k); ok {
		return true
	}
	for i := 0; i < len(k); i++ {
		if k[i] == '.' {
			if ok, _ := path.Match(a.Key, k[i+1:]); ok {
				return true
			}
		}
	}
	return false
}

// Eval checks the alert against a sample (and the previous one, dt seconds
// earlier) and returns a message per key that crosses.
func (a *Alert) Eval(cur, prev map[string]float64, dt float64) []string {
	keys := make([]string, 0, len(cur))
	for k := range cur {
		if a.matches(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		v := cur[k]
		what := k
		if a.Fn != "" {
			p, ok := prev[k]
			if !ok || (a.Fn == "rate" && dt <= 0) {
				continue // needs two samples
			}
			v -= p
			if a.Fn == "rate" {
				v /= dt
			}
			what = a.Fn + "(" + k + ")"
		}
		if compare(v, a.Op, a.Limit) {
			out = append(out, fmt.Sprintf("%s = %g %s %g", what, v, a.Op, a.Limit))
		}
	}
	return out
}

func compare(v float64, op string, limit float64) bool {
	switch op {
	case ">":
		return v > limit
	case ">=":
		return v >= limit
	case "<":
		return v < limit
	case "<=":
		return v <= limit
	case "==":
		return v == limit
	case "!=":
		return v != limit
	}
	return false
}

// MatchesAny says whether the alert's key matches one of keys: an alert
// that matches nothing a monitor reads is a mistake to report at start,
// not an alert that never fires.
func (a *Alert) MatchesAny(keys map[string]float64) bool { return matchesAny(a, keys) }

// matchesAny is MatchesAny over the keys of any map (CheckAlerts matches
// a set of key names).
func matchesAny[V any](a *Alert, keys map[string]V) bool {
	for k := range keys {
		if a.matches(k) {
			return true
		}
	}
	return false
}

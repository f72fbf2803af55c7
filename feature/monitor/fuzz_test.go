package monitor

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Whatever the text, ParseAlert does not panic; an alert it accepts
// prints back (KEY OP NUMBER, in its function) into the same alert, and
// evaluates against any values without panicking.
func FuzzAlert(f *testing.F) {
	for _, s := range []string{"temp.asic_c > 70", "rate(ppcnt.symbol_errors) > 0", "delta(port*.x)!=1e3", "a<=-2", "x == NaN", "rate( a ) >= 0x10"} {
		f.Add(s, 3.5)
	}
	f.Fuzz(func(t *testing.T, s string, v float64) {
		a, err := ParseAlert(s)
		if err != nil {
			return
		}
		lhs := a.Key
		if a.Fn != "" {
			lhs = a.Fn + "(" + a.Key + ")"
		}
		text := lhs + " " + a.Op + " " + strconv.FormatFloat(a.Limit, 'g', -1, 64)
		b, err := ParseAlert(text)
		if err != nil {
			t.Fatalf("%q parsed, but %q does not: %v", s, text, err)
		}
		if a.Fn != b.Fn || a.Key != b.Key || a.Op != b.Op || !(a.Limit == b.Limit || math.IsNaN(a.Limit) && math.IsNaN(b.Limit)) {
			t.Fatalf("%q -> %+v, %q -> %+v", s, a, text, b)
		}
		cur := map[string]float64{a.Key: v, "x." + a.Key: v}
		for _, m := range a.Eval(cur, map[string]float64{a.Key: 0}, 1) {
			if !strings.Contains(m, a.Op) {
				t.Fatalf("message %q", m)
			}
		}
	})
}

// Whatever the text, ParseRegister does not panic; a register entry it
// accepts prints back as REG[field=value,...] into the same entry.
func FuzzWhat(f *testing.F) {
	for _, s := range []string{"PDDR[page_select=3,local_port=1]", "mtmp", "PPCNT[grp=0x12]", "X[a=]", "Y[=1]", "Z["} {
		f.Add(s)
	}
	f.Add("ſ")
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseRegister(s)
		if err != nil {
			return
		}
		text := w.Register
		if len(w.Index) > 0 {
			var parts []string
			for _, a := range w.Index {
				parts = append(parts, a.Path+"="+a.Value)
			}
			text += "[" + strings.Join(parts, ",") + "]"
		}
		w2, err := ParseRegister(text)
		if err != nil {
			t.Fatalf("%q parsed, but %q does not: %v", s, text, err)
		}
		if w2.Register != w.Register || w2.Key() != w.Key() || !cmp.Equal(w.Index, w2.Index, cmpopts.EquateEmpty()) {
			t.Fatalf("%q -> %+v; %q -> %+v", s, w, text, w2)
		}
	})
}

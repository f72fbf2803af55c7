package chart

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cxray/cxray/feature/monitor"
)

var t0 = time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)

func samples(n int, step time.Duration, f func(i int) map[string]float64) []monitor.Sample {
	var out []monitor.Sample
	for i := 0; i < n; i++ {
		out = append(out, monitor.Sample{Time: t0.Add(time.Duration(i) * step), Device: "0000:03:00.0", Values: f(i)})
	}
	return out
}

func chart(t *testing.T, file string, ss []monitor.Sample, what []string, opt Options) (*Chart, string) {
	t.Helper()
	sel, err := monitor.SelectSeries(ss, what)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	ch, err := Plot(&buf, file, sel.Series, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	return ch, buf.String()
}

// The SVG says what the axes show; counters are drawn as rates; a multi-
// day chart shows dates; the legend is beside the data, not on it.
func TestPlotAxes(t *testing.T) {
	temps := samples(12, 5*time.Minute, func(i int) map[string]float64 { return map[string]float64{"temp.asic_c": 50 + float64(i%3)} })
	ch, svg := chart(t, "t.svg", temps, []string{"temp"}, Options{})
	for _, want := range []string{"temperature (°C)", "time (UTC), 2024-05-01", ">08:10<", "temp.asic_c"} {
		if !strings.Contains(svg, want) {
			t.Errorf("temperature SVG lacks %q", want)
		}
	}
	if ch.Data.Max.X > ch.Legend.Min.X && ch.Data.Min.X < ch.Legend.Max.X && ch.Data.Max.Y > ch.Legend.Min.Y && ch.Data.Min.Y < ch.Legend.Max.Y {
		t.Errorf("the legend %v overlaps the data %v", ch.Legend, ch.Data)
	}
	// A counter going up by 10 every 10 s is drawn as 1 per second; a
	// clear breaks the line.
	cnt := samples(20, 10*time.Second, func(i int) map[string]float64 {
		v := float64(10 * i)
		if i >= 10 {
			v = float64(10 * (i - 10))
		}
		return map[string]float64{"port1.ppcnt.symbol_errors": v}
	})
	ch, svg = chart(t, "c.svg", cnt, []string{"counters"}, Options{})
	if ch.YLabel != "rate (per second)" || !strings.Contains(svg, "rate (per second)") || !strings.Contains(svg, "symbol_errors (per s)") {
		t.Errorf("rate chart: %q", ch.YLabel)
	}
	if len(ch.Notes) < 2 || !strings.Contains(strings.Join(ch.Notes, "\n"), "went down at 2024-05-01T08:01:40Z") {
		t.Errorf("notes: %v", ch.Notes)
	}
	ch, _ = chart(t, "c.svg", cnt, []string{"counters"}, Options{Mode: "value"})
	if ch.YLabel != "count" {
		t.Errorf("value mode: %q", ch.YLabel)
	}
	// Three days: dates on the axis.
	days := samples(72, time.Hour, func(i int) map[string]float64 { return map[string]float64{"temp.asic_c": 50} })
	ch, svg = chart(t, "d.svg", days, []string{"temp"}, Options{})
	if ch.XLabel != "time (UTC)" || !strings.Contains(svg, ">May 02 00:00<") {
		t.Errorf("multi-day axis: %q", ch.XLabel)
	}
	// With the legend beside the data the axis is narrower; a span of
	// three days and a bit still shows a date a day, not one lone tick.
	threshold := []monitor.Threshold{{Name: "temp.module0_threshold_hi_c", Value: 75}, {Name: "temp.module1_threshold_hi_c", Value: 75}}
	long := samples(40, 2*time.Hour, func(i int) map[string]float64 {
		return map[string]float64{"temp.asic_c": 50, "temp.module0_c": 40, "temp.module1_c": 41}
	})
	sel, err := monitor.SelectSeries(long, []string{"temp"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := Plot(&buf, "l.svg", sel.Series, threshold, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">May 02 00:00<", ">May 03 00:00<", ">May 04 00:00<"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("three-day axis beside a legend lacks the tick %q", want)
		}
	}
	// Mixed quantities say so.
	mixed := samples(3, time.Minute, func(i int) map[string]float64 { return map[string]float64{"temp.asic_c": 50, "volt.vcc_mv": 3300} })
	ch, _ = chart(t, "m.svg", mixed, nil, Options{})
	if ch.YLabel != "value: temperature, voltage (mV, °C)" || len(ch.Notes) == 0 {
		t.Errorf("mixed: %q %v", ch.YLabel, ch.Notes)
	}
}

// Any finite values are drawn — a 64-bit counter that stopped at 1e16, a
// range of ±1e308 — and NaN or Inf are refused with the reason.
func TestPlotExtremeValues(t *testing.T) {
	cases := map[string]func(i int) float64{
		"constant 1e16":  func(int) float64 { return 1e16 },
		"constant 2^63":  func(int) float64 { return 9.223372036854776e18 },
		"±1e308":         func(i int) float64 { return math.Copysign(1e308, float64(i%2)-0.5) },
		"max float":      func(int) float64 { return math.MaxFloat64 },
		"tiny":           func(i int) float64 { return 1e-300 * float64(i) },
		"constant zero":  func(int) float64 { return 0 },
		"negative const": func(int) float64 { return -42 },
	}
	for name, f := range cases {
		for _, mode := range []string{"value", "rate"} {
			ss := samples(10, time.Second, func(i int) map[string]float64 { return map[string]float64{"x.v": f(i)} })
			sel, _ := monitor.SelectSeries(ss, nil)
			var buf bytes.Buffer
			if _, err := Plot(&buf, "x.png", sel.Series, nil, Options{Mode: mode}); err != nil {
				t.Errorf("%s (%s): %v", name, mode, err)
			}
		}
	}
	ss := samples(3, time.Second, func(i int) map[string]float64 { return map[string]float64{"x.v": []float64{1, math.NaN(), 2}[i]} })
	sel, _ := monitor.SelectSeries(ss, nil)
	_, err := Plot(&bytes.Buffer{}, "x.svg", sel.Series, nil, Options{})
	var fe *FiniteError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "x.v at 2024-05-01T08:00:01Z is NaN") {
		t.Errorf("NaN: %v", err)
	}
	_, err = Plot(&bytes.Buffer{}, "x.svg", []monitor.Series{{Name: "a", Key: "a", T: []time.Time{t0}, V: []float64{1}}}, []monitor.Threshold{{Name: "hi", Value: math.Inf(1)}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "finite") {
		t.Errorf("Inf threshold: %v", err)
	}
}

// Whatever the values, Plot returns (a chart, or a FiniteError for NaN and
// Inf) and never panics or spins.
func FuzzPlotValues(f *testing.F) {
	f.Add(1e16, 1e16, 1e16, uint8(0))
	f.Add(-1e308, 1e308, 0.0, uint8(1))
	f.Add(math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, uint8(2))
	f.Fuzz(func(t *testing.T, a, b, c float64, mode uint8) {
		vals := []float64{a, b, c}
		ss := samples(3, time.Second, func(i int) map[string]float64 { return map[string]float64{"x.v": vals[i]} })
		sel, _ := monitor.SelectSeries(ss, nil)
		_, err := Plot(&bytes.Buffer{}, "x.svg", sel.Series, []monitor.Threshold{{Name: "t", Value: b}}, Options{Mode: []string{"value", "rate", "auto"}[mode%3]})
		finite := true
		for _, v := range vals {
			finite = finite && !math.IsNaN(v) && !math.IsInf(v, 0)
		}
		if finite && err != nil {
			t.Fatalf("%v: %v", vals, err)
		}
		if !finite && err == nil {
			t.Fatalf("%v drawn", vals)
		}
	})
}

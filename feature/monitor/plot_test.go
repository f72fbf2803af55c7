package monitor

import (
	"bytes"
	"encoding/json"
	"errors"

	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var t0 = time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)

func samples(n int, step time.Duration, f func(i int) map[string]float64) []Sample {
	var out []Sample
	for i := 0; i < n; i++ {
		out = append(out, Sample{Time: t0.Add(time.Duration(i) * step), Device: "0000:03:00.0", Values: f(i)})
	}
	return out
}

func keys(sel *Selection) []string {
	out := []string{}
	for _, s := range sel.Series {
		out = append(out, s.Key)
	}
	return out
}

// --what takes monitor's group names, exact keys and their ends, wildcard
// patterns that do not pick keys counting the absence of the word, and
// whole-key regular expressions.
func TestSelectSeries(t *testing.T) {
	ss := samples(2, time.Minute, func(int) map[string]float64 {
		return map[string]float64{
			"temp.asic_c": 50, "temp.module0_c": 40, "temp.asic_threshold_hi_c": 105,
			"port1.ppcnt.symbol_errors": 1, "port1.ppcnt.rs_fec_no_errors_blocks": 1e9, "port1.ppcnt.if_in_errors": 2,
			"port2.ppcnt.symbol_errors": 0, "mtmp.temperature": 50, "pddr.page_data.pddr_module_info_ext.temperature": 39,
		}
	})
	for _, c := range []struct {
		what []string
		want []string
		left []string
	}{
		{[]string{"temp"}, []string{"temp.asic_c", "temp.asic_threshold_hi_c", "temp.module0_c"}, nil},
		{[]string{"counters"}, []string{"port1.ppcnt.if_in_errors", "port1.ppcnt.rs_fec_no_errors_blocks", "port1.ppcnt.symbol_errors", "port2.ppcnt.symbol_errors"}, nil},
		{[]string{"port1.ppcnt.*errors*"}, []string{"port1.ppcnt.if_in_errors", "port1.ppcnt.symbol_errors"}, []string{"port1.ppcnt.rs_fec_no_errors_blocks"}},
		{[]string{"port1.ppcnt.rs_fec_no_errors_blocks"}, []string{"port1.ppcnt.rs_fec_no_errors_blocks"}, nil},
		{[]string{"asic_c"}, []string{"temp.asic_c"}, nil},
		{[]string{"symbol_errors"}, []string{"port1.ppcnt.symbol_errors", "port2.ppcnt.symbol_errors"}, nil},
		{[]string{"errors"}, []string{}, nil}, // not part of a word
		{[]string{`/port[12]\.ppcnt\.symbol_errors/`}, []string{"port1.ppcnt.symbol_errors", "port2.ppcnt.symbol_errors"}, nil},
		{[]string{`/symbol/`}, []string{}, nil}, // whole keys only
		{[]string{"mtmp"}, []string{"mtmp.temperature"}, nil},
	} {
		sel, err := SelectSeries(ss, c.what)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, keys(sel)); diff != "" {
			t.Errorf("%v (-want +got):\n%s", c.what, diff)
		}
		if diff := cmp.Diff(c.left, sel.Left, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%v left out (-want +got):\n%s", c.what, diff)
		}
	}
	if _, err := SelectSeries(ss, []string{"/(/"}); err == nil || !strings.Contains(err.Error(), "not a regular expression") {
		t.Errorf("bad regexp: %v", err)
	}
}

func TestQuantityOf(t *testing.T) {
	for k, want := range map[string]Quantity{
		"temp.asic_c":                                 {"temperature", "°C"},
		"port1.ppcnt.symbol_errors":                   {"count", ""},
		"mtmp.temperature":                            {"temperature", "°C"},
		"mtmp.sensor_index_64.temperature":            {"temperature", "°C"},
		"pddr.page_data.pddr_module_info_ext.voltage": {"voltage", "mV"},
		"foo.bar": {"value", ""},
	} {
		if got := QuantityOf(k); got != want {
			t.Errorf("%s: %+v, want %+v", k, got, want)
		}
	}
}

func chart(t *testing.T, file string, ss []Sample, what []string, opt Options) (*Chart, string) {
	t.Helper()
	sel, err := SelectSeries(ss, what)
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
	threshold := []Threshold{{Name: "temp.module0_threshold_hi_c", Value: 75}, {Name: "temp.module1_threshold_hi_c", Value: 75}}
	long := samples(40, 2*time.Hour, func(i int) map[string]float64 {
		return map[string]float64{"temp.asic_c": 50, "temp.module0_c": 40, "temp.module1_c": 41}
	})
	sel, err := SelectSeries(long, []string{"temp"})
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
			sel, _ := SelectSeries(ss, nil)
			var buf bytes.Buffer
			if _, err := Plot(&buf, "x.png", sel.Series, nil, Options{Mode: mode}); err != nil {
				t.Errorf("%s (%s): %v", name, mode, err)
			}
		}
	}
	ss := samples(3, time.Second, func(i int) map[string]float64 { return map[string]float64{"x.v": []float64{1, math.NaN(), 2}[i]} })
	sel, _ := SelectSeries(ss, nil)
	_, err := Plot(&bytes.Buffer{}, "x.svg", sel.Series, nil, Options{})
	var fe *FiniteError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "x.v at 2024-05-01T08:00:01Z is NaN") {
		t.Errorf("NaN: %v", err)
	}
	_, err = Plot(&bytes.Buffer{}, "x.svg", []Series{{Name: "a", Key: "a", T: []time.Time{t0}, V: []float64{1}}}, []Threshold{{Name: "hi", Value: math.Inf(1)}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "finite") {
		t.Errorf("Inf threshold: %v", err)
	}
}

func writeFile(t *testing.T, text string) string {
	p := filepath.Join(t.TempDir(), "m")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readText(text string) (*Recording, error) { return ReadRecording(strings.NewReader(text)) }

func TestReadRecording(t *testing.T) {
	line := func(i int) string {
		b, _ := json.Marshal(Sample{Time: t0.Add(time.Duration(i) * time.Minute), Device: "d", Values: map[string]float64{"temp.asic_c": float64(40 + i)}})
		return string(b) + "\n"
	}
	whole := line(0) + line(1) + line(2)
	rec, err := readText(whole)
	if err != nil || len(rec.Samples) != 3 || rec.TornLine || rec.Format != "jsonl" {
		t.Fatalf("whole: %+v %v", rec, err)
	}
	// Cut anywhere inside the last line: the first two samples, torn.
	last := line(2)
	for n := 1; n < len(last)-1; n++ {
		rec, err := readText(line(0) + line(1) + last[:n])
		if err != nil || len(rec.Samples) != 2 || !rec.TornLine {
			t.Fatalf("cut at %d of the last line: %+v %v", n, rec, err)
		}
	}
	// Damage in the middle is refused.
	if _, err := readText(line(0) + "{oops\n" + line(1)); err == nil || !strings.Contains(err.Error(), "line 2: not a monitor sample") {
		t.Errorf("damaged middle: %v", err)
	}
	// A table written by mistake is refused with the reason.
	table := "2024-05-01T08:00:00Z  0000:03:00.0\n  temp.asic_c      50.5\n"
	if _, err := readText(table); err == nil || !strings.Contains(err.Error(), "table output (--format table)") {
		t.Errorf("table: %v", err)
	}
	if _, err := readText("hello\n"); err == nil || !strings.Contains(err.Error(), "not a monitor file") {
		t.Errorf("other: %v", err)
	}
	// CSV, with a header repeated after a restart, and a torn last row.
	csv := "time,device,alerts,frozen,errors,temp.asic_c\n2024-05-01T08:00:00Z,d,,,,40\ntime,device,alerts,frozen,errors,temp.asic_c\n2024-05-01T08:01:00Z,d,,,,41\n2024-05-01T08:02:0"
	rec, err = readText(csv)
	if err != nil || rec.Format != "csv" || len(rec.Samples) != 2 || !rec.TornLine || rec.Samples[1].Values["temp.asic_c"] != 41 {
		t.Errorf("csv: %+v %v", rec, err)
	}
	// Bytes that are not UTF-8 are damage (cxray writes none): refused in
	// a header or a row, and a torn last line cut inside a character is
	// left out like any torn line. (Read as names, they would change:
	// FuzzReadRecording's crasher.)
	for _, bad := range []string{
		"time,device,alerts,frozen,errors,\xa9\n2024-05-01T08:00:00Z,d,,,,1\n",
		"time,device,alerts,frozen,errors,a\n2024-05-01T08:00:00Z,d\xff,,,,1\n",
		line(0) + `{"time":"2024-05-01T08:00:00Z","device":"d","values":{"` + "\xa9" + `":1}}` + "\n",
	} {
		if _, err := readText(bad); err == nil || !strings.Contains(err.Error(), "not UTF-8") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	rec, err = readText(line(0) + line(1) + "{\"time\":\"2024-05-01T08:00:00Z\",\"device\":\"\xc3")
	if err != nil || len(rec.Samples) != 2 || !rec.TornLine {
		t.Errorf("torn inside a character: %+v %v", rec, err)
	}
}

// Appending CSV reuses the existing header instead of writing another.
func TestCSVHeader(t *testing.T) {
	if h, err := CSVHeader(filepath.Join(t.TempDir(), "none.csv")); h != nil || err != nil {
		t.Errorf("no file: %v %v", h, err)
	}
	p := writeFile(t, "time,device,alerts,frozen,errors,temp.asic_c,temp.module0_c\n2024-05-01T08:00:00Z,d,,,,40,30\n")
	h, err := CSVHeader(p)
	if err != nil || strings.Join(h, ",") != "time,device,alerts,frozen,errors,temp.asic_c,temp.module0_c" {
		t.Fatalf("header: %v %v", h, err)
	}
	// Passed to the writer, the rows follow the header and no second
	// header is written.
	var lines []string
	w, err := NewWriter(WriterOptions{Format: "csv", Header: h, Sink: func(l []byte) error { lines = append(lines, string(l)); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if err := w([]Sample{{Time: t0, Device: "d", Values: map[string]float64{"temp.asic_c": 41}}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"2024-05-01T08:00:00Z,d,,,,41,"}, lines); diff != "" {
		t.Errorf("appended rows (-want +got):\n%s", diff)
	}
	// A value the header has no column for is refused, not dropped.
	w, _ = NewWriter(WriterOptions{Format: "csv", Header: h, HeaderFile: p, Sink: func(l []byte) error { lines = append(lines, string(l)); return nil }})
	var ae *AppendError
	if err := w([]Sample{{Time: t0, Device: "d", Values: map[string]float64{"temp.asic_c": 41, "temp.module1_c": 3}}}); !errors.As(err, &ae) || !strings.Contains(err.Error(), "temp.module1_c") || len(lines) != 1 {
		t.Errorf("a column the header lacks: %v; lines %q", err, lines)
	}
	if _, err := CSVHeader(writeFile(t, `{"time":"2024-05-01T08:00:00Z"}`+"\n")); err == nil || !strings.Contains(err.Error(), "not a monitor CSV file") {
		t.Errorf("a JSON file: %v", err)
	}
	if h, err := CSVHeader(writeFile(t, "")); h != nil || err != nil {
		t.Errorf("empty file: %v %v", h, err)
	}
}

// Whatever the bytes, ReadRecording does not panic; what it reads writes
// back as JSON lines that read as the same samples, and a torn line added
// at the end changes nothing but TornLine.
func FuzzReadRecording(f *testing.F) {
	f.Add([]byte(`{"time":"2024-05-01T08:00:00Z","device":"d","values":{"a":1}}` + "\n"))
	f.Add([]byte("time,device,alerts,frozen,errors,a\n2024-05-01T08:00:00Z,d,,,,1\n"))
	f.Add([]byte("2024-05-01T08:00:00Z  d\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := ReadRecording(bytes.NewReader(b))
		if err != nil {
			return
		}
		var out bytes.Buffer
		for _, s := range rec.Samples {
			for _, v := range s.Values {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return // CSV can carry them; JSON cannot (plot refuses them)
				}
			}
			line, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			out.Write(append(line, '\n'))
		}
		again, err := ReadRecording(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("samples do not read back: %v\n%s", err, out.Bytes())
		}
		if diff := cmp.Diff(rec.Samples, again.Samples, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip:\n%s", diff)
		}
		torn, err := ReadRecording(bytes.NewReader(append(out.Bytes(), `{"time":"2024`...)))
		if err != nil || !torn.TornLine || len(torn.Samples) != len(rec.Samples) {
			t.Fatalf("a torn line added: %+v %v", torn, err)
		}
	})
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
		sel, _ := SelectSeries(ss, nil)
		_, err := Plot(&bytes.Buffer{}, "x.svg", sel.Series, []Threshold{{Name: "t", Value: b}}, Options{Mode: []string{"value", "rate", "auto"}[mode%3]})
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

// CheckAppend lets a run append only to a file of its own format.
func TestCheckAppend(t *testing.T) {
	jsonl := writeFile(t, `{"time":"2024-05-01T08:00:00Z","device":"d","values":{"a":1}}`+"\n")
	csvf := writeFile(t, "\ntime,device,alerts,frozen,errors,a\n2024-05-01T08:00:00Z,d,,,,1\n")
	table := writeFile(t, "2024-05-01T08:00:00Z  d\n  a  1\n")
	other := writeFile(t, "hello\n")
	for _, c := range []struct {
		path, format string
		hdr          string
		err          string
	}{
		{filepath.Join(t.TempDir(), "new"), "csv", "", ""},
		{writeFile(t, "\n\n"), "jsonl", "", ""},
		{jsonl, "jsonl", "", ""},
		{csvf, "csv", "time,device,alerts,frozen,errors,a", ""},
		{table, "table", "", ""},
		{jsonl, "csv", "", "the file holds JSON lines (--format jsonl) and this run writes CSV (--format csv)"},
		{csvf, "jsonl", "", "the file holds CSV (--format csv) and this run writes JSON lines"},
		{table, "jsonl", "", "holds monitor's table"},
		{other, "table", "", "not a monitor table file"},
		{other, "csv", "", "not a monitor CSV file"},
	} {
		h, err := CheckAppend(c.path, c.format)
		var ae *AppendError
		switch {
		case c.err == "" && err != nil, c.err != "" && (!errors.As(err, &ae) || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "remove "+c.path)):
			t.Errorf("%s as %s: error %v, want %q", c.path, c.format, err, c.err)
		case strings.Join(h, ",") != c.hdr:
			t.Errorf("%s as %s: header %q, want %q", c.path, c.format, h, c.hdr)
		}
	}
}

// A threshold key limits its own quantity only.
func TestThresholdOf(t *testing.T) {
	for _, c := range []struct {
		th, key string
		want    bool
	}{
		{"port1.module.threshold.rx_power_mw.low_alarm", "port1.module.lane3.rx_power_mw", true},
		{"port1.module.threshold.rx_power_mw.low_alarm", "port1.module.lane3.tx_power_mw", false},
		{"port1.module.threshold.tx_bias_ma.high_alarm", "port1.module.lane1.rx_power_mw", false},
		{"port1.module.threshold.temperature_c.high_alarm", "port1.module.temperature_c", true},
		{"port1.module.threshold.temperature_c.high_alarm", "port2.module.temperature_c", false},
		{"port1.module.threshold.voltage_v.high_alarm", "port1.ppcnt.a_frames_received_ok", false},
		{"temp.asic_threshold_hi_c", "temp.asic_c", true},
		{"temp.asic_threshold_hi_c", "temp.module0_c", false},
		{"temp.module0_threshold_hi_c", "temp.module0_c", true},
	} {
		if got := thresholdOf(c.th, c.key); got != c.want {
			t.Errorf("thresholdOf(%s, %s) = %v, want %v", c.th, c.key, got, c.want)
		}
	}
}

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

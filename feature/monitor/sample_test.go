package monitor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/feature/monitor"
)

func alerts(t *testing.T, exprs ...string) []*monitor.Alert {
	t.Helper()
	var out []*monitor.Alert
	for _, e := range exprs {
		a, err := monitor.ParseAlert(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// Alerts fire on the sample that crosses; rate() and delta() need the
// previous sample and use the time between the two on the monitor's clock.
func TestSampleAlerts(t *testing.T) {
	a, f, r, clk := function(t)
	m := &monitor.Monitor{Collectors: collectors(t, "temp", "counters", "rdma"), Now: clk.Now,
		Alerts: alerts(t, "temp.asic_c >= 60", "rate(ppcnt.symbol_errors) > 1", "delta(rdma.out_of_sequence) != 0", "temp.*_c < 0")}
	ts := []*monitor.Target{{Name: "t", Adapter: a}}
	ctx := context.Background()
	s := m.Sample(ctx, ts)
	if len(s) != 1 || len(s[0].Alerts) != 0 || s[0].Device != "t" || !s[0].Time.Equal(start) {
		t.Fatalf("first sample: %+v", s)
	}
	clk.Advance(10 * time.Second)
	f.Put("MTMP", "sensor_index=0", "temperature=488", "temperature_threshold_hi=840") // 61 °C
	f.Put("PPCNT", "local_port=1", "grp=18", "counter_set.phys_layer_cntrs_ext.symbol_errors=35")
	r.values["out_of_sequence"] = 12
	s = m.Sample(ctx, ts)
	want := []string{"temp.asic_c = 61 >= 60", "rate(port1.ppcnt.symbol_errors) = 3 > 1", "delta(port1.rdma.out_of_sequence) = 3 != 0"}
	if d := cmp.Diff(want, s[0].Alerts); d != "" {
		t.Errorf("alerts (-want +got):\n%s", d)
	}
	// Nothing moved: only the level alert stays.
	clk.Advance(10 * time.Second)
	s = m.Sample(ctx, ts)
	if d := cmp.Diff([]string{"temp.asic_c = 61 >= 60"}, s[0].Alerts); d != "" {
		t.Errorf("alerts (-want +got):\n%s", d)
	}
}

func TestCompareOperators(t *testing.T) {
	cur := map[string]float64{"x.v": 5}
	for expr, fires := range map[string]bool{
		"v > 5": false, "v >= 5": true, "v < 5": false, "v <= 5": true, "v == 5": true, "v != 5": false,
		"v > 4.5": true, "v < 6": true, "x.v == 5": true, "y.v == 5": false, "*.v == 5": true,
	} {
		got := alerts(t, expr)[0].Eval(cur, nil, 0)
		if (len(got) > 0) != fires {
			t.Errorf("%s: %v", expr, got)
		}
	}
	// rate() with no time between samples does not divide by zero.
	if got := alerts(t, "rate(v) > 0")[0].Eval(cur, map[string]float64{"x.v": 1}, 0); len(got) != 0 {
		t.Errorf("rate over no time: %v", got)
	}
	if _, err := monitor.ParseAlert("v[ > 1"); err == nil {
		t.Error("a bad wildcard is accepted")
	}
}

// A reading that should move and stays the same for FrozenAfter samples
// spanning FrozenFor is reported once; when it moves again it can be
// reported again.
func TestFrozenReadings(t *testing.T) {
	a, f, _, clk := function(t)
	m := &monitor.Monitor{Collectors: collectors(t, "temp", "counters"), FrozenAfter: 3, FrozenFor: 2 * time.Minute, Now: clk.Now}
	ts := []*monitor.Target{{Name: "t", Adapter: a}}
	var frozen [][]string
	temp := 400
	for i := 0; i < 8; i++ {
		if i == 5 {
			temp++ // the ASIC moves once
			f.Put("MTMP", "sensor_index=0", fmt.Sprintf("temperature=%d", temp), "temperature_threshold_hi=840")
		}
		frozen = append(frozen, m.Sample(context.Background(), ts)[0].Frozen)
		advance(clk, f, time.Minute)
	}
	want := [][]string{nil, nil, {
		"temp.asic_c has not changed for 3 samples over 2m0s (50): the reading may be frozen",
		"temp.module0_c has not changed for 3 samples over 2m0s (40): the reading may be frozen",
	}, nil, nil, nil, nil, {"temp.asic_c has not changed for 3 samples over 2m0s (50.125): the reading may be frozen"}}
	// Counters never count as frozen: an idle link does not move them.
	if d := cmp.Diff(want, frozen); d != "" {
		t.Errorf("frozen by sample (-want +got):\n%s", d)
	}
}

// A device whose every read fails is reported once as gone, and back
// when it answers.
func TestGoneDevice(t *testing.T) {
	a, f, _, clk := function(t)
	m := &monitor.Monitor{Collectors: collectors(t, "temp"), Now: clk.Now}
	ts := []*monitor.Target{{Name: "t", Adapter: a}}
	m.Sample(context.Background(), ts)
	gone := errors.New("config space reads all ones")
	f.Hook = func(dev.Method, string) error { return gone }
	var first [][]string
	for i := 0; i < 2; i++ {
		s := m.Sample(context.Background(), ts)[0]
		if len(s.Values) != 0 || !ts[0].Gone {
			t.Fatalf("gone: %+v", s)
		}
		first = append(first, s.Errors[:1])
	}
	if first[0][0] != "device stopped answering; still trying" || first[1][0] == first[0][0] {
		t.Errorf("gone reported %q", first)
	}
	f.Hook = nil
	s := m.Sample(context.Background(), ts)[0]
	if ts[0].Gone || s.Values["temp.asic_c"] != 50 || s.Errors[len(s.Errors)-1] != "device answers again" {
		t.Errorf("back: %+v", s)
	}
}

func samples() []monitor.Sample {
	t0 := start
	return []monitor.Sample{
		{Time: t0, Device: "a", Values: map[string]float64{"temp.asic_c": 50, "port1.ppcnt.symbol_errors": 10, "temp.asic_threshold_hi_c": 105}},
		{Time: t0.Add(10 * time.Second), Device: "a", Values: map[string]float64{"temp.asic_c": 51, "port1.ppcnt.symbol_errors": 30, "temp.asic_threshold_hi_c": 105},
			Alerts: []string{"temp.asic_c = 51 > 50"}, Frozen: []string{"x frozen"}, Errors: []string{"module: no"}},
		{Time: t0.Add(10 * time.Second), Device: "b", Values: map[string]float64{"temp.asic_c": 40, "new.key": 1}},
	}
}

func TestWriters(t *testing.T) {
	ss := samples()
	t.Run("jsonl", func(t *testing.T) {
		var b bytes.Buffer
		w, err := monitor.NewWriter(monitor.WriterOptions{Format: "jsonl", Stdout: &b})
		if err != nil {
			t.Fatal(err)
		}
		if err := w(ss); err != nil {
			t.Fatal(err)
		}
		// A torn last line (the write was cut) is left out and said so.
		rec, err := monitor.ReadRecording(strings.NewReader(b.String() + "{\"torn\":"))
		if err != nil || rec.Format != "jsonl" || !rec.TornLine {
			t.Fatalf("%+v %v", rec, err)
		}
		// Times come back in UTC; compare values.
		if d := cmp.Diff(ss, rec.Samples, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); d != "" {
			t.Errorf("round trip (-wrote +read):\n%s", d)
		}
	})
	t.Run("csv", func(t *testing.T) {
		var lines []string
		w, _ := monitor.NewWriter(monitor.WriterOptions{Format: "csv", Sink: func(l []byte) error { lines = append(lines, string(l)); return nil }})
		if err := w(ss); err != nil {
			t.Fatal(err)
		}
		want := []string{
			"time,device,alerts,frozen,errors,port1.ppcnt.symbol_errors,temp.asic_c,temp.asic_threshold_hi_c",
			"2025-01-01T00:00:00Z,a,,,,10,50,105",
			"2025-01-01T00:00:10Z,a,temp.asic_c = 51 > 50,x frozen,module: no,30,51,105",
			// The columns are the first sample's: b's new key has none.
			"2025-01-01T00:00:10Z,b,,,,,40,",
		}
		if d := cmp.Diff(want, lines); d != "" {
			t.Errorf("csv (-want +got):\n%s", d)
		}
		// Appending to a file with a header: its columns, no second
		// header; a column it lacks is refused before anything is written.
		lines = nil
		hdr := []string{"time", "device", "alerts", "frozen", "errors", "temp.asic_c", "temp.module0_c"}
		w, _ = monitor.NewWriter(monitor.WriterOptions{Format: "csv", Header: hdr, HeaderFile: "m.csv",
			Sink: func(l []byte) error { lines = append(lines, string(l)); return nil }})
		var ae *monitor.AppendError
		if err := w(ss[:1]); !errors.As(err, &ae) || ae.Path != "m.csv" || !strings.Contains(err.Error(), "port1.ppcnt.symbol_errors, temp.asic_threshold_hi_c") || len(lines) != 0 {
			t.Errorf("csv append of columns the header lacks: %v; wrote %q", err, lines)
		}
		w, _ = monitor.NewWriter(monitor.WriterOptions{Format: "csv", Header: hdr, HeaderFile: "m.csv",
			Sink: func(l []byte) error { lines = append(lines, string(l)); return nil }})
		if err := w(ss[2:3:3]); err == nil {
			t.Errorf("new.key has no column, yet appended: %q", lines)
		}
		lines = nil
		fit := []monitor.Sample{{Time: start, Device: "a", Values: map[string]float64{"temp.asic_c": 50}}}
		w, _ = monitor.NewWriter(monitor.WriterOptions{Format: "csv", Header: hdr, HeaderFile: "m.csv",
			Sink: func(l []byte) error { lines = append(lines, string(l)); return nil }})
		if err := w(fit); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"2025-01-01T00:00:00Z,a,,,,50,"}, lines); d != "" {
			t.Errorf("csv append (-want +got):\n%s", d)
		}
	})
	t.Run("table", func(t *testing.T) {
		var b bytes.Buffer
		w, _ := monitor.NewWriter(monitor.WriterOptions{Format: "table", Stdout: &b, Live: true})
		if err := w(ss[:1]); err != nil {
			t.Fatal(err)
		}
		if err := w(ss[1:2]); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.HasPrefix(out, "\033[H\033[2J2025-01-01T00:00:00Z  a\n") || strings.Count(out, "\033[H\033[2J") != 2 {
			t.Errorf("live redraw: %q", out)
		}
		// A counter's rate against the device's previous sample; levels
		// have none.
		if !strings.Contains(out, fmt.Sprintf("  %-60s %16s  %12.4g/s\n", "port1.ppcnt.symbol_errors", "30", 2.0)) {
			t.Errorf("no counter rate:\n%s", out)
		}
		if strings.Contains(out, "temp.asic_c"+strings.Repeat(" ", 49)+"               51  ") {
			t.Errorf("a rate for a level:\n%s", out)
		}
		for _, want := range []string{"  ALERT temp.asic_c = 51 > 50\n", "  FROZEN x frozen\n", "  error: module: no\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("lacks %q:\n%s", want, out)
			}
		}
		var lines []string
		w, _ = monitor.NewWriter(monitor.WriterOptions{Format: "table", Sink: func(l []byte) error { lines = append(lines, string(l)); return nil }})
		w(ss[:1])
		if len(lines) != 1 || strings.HasSuffix(lines[0], "\n") || !strings.HasPrefix(lines[0], "2025-01-01T00:00:00Z  a\n") {
			t.Errorf("table to a sink: %q", lines)
		}
	})
	if _, err := monitor.NewWriter(monitor.WriterOptions{Format: "xml", Stdout: &bytes.Buffer{}}); err == nil || !strings.Contains(err.Error(), "use table, jsonl or csv") {
		t.Errorf("bad format: %v", err)
	}
	if _, err := monitor.NewWriter(monitor.WriterOptions{Format: "jsonl"}); err == nil {
		t.Error("no output accepted")
	}
	// A failing sink stops the batch with its error.
	full := errors.New("disk full")
	for _, format := range []string{"jsonl", "csv", "table"} {
		w, _ := monitor.NewWriter(monitor.WriterOptions{Format: format, Sink: func([]byte) error { return full }})
		if err := w(ss); !errors.Is(err, full) {
			t.Errorf("%s: %v", format, err)
		}
	}
}

func TestLogFileSync(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.jsonl")
	l, err := monitor.OpenLog(p, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(samples()[0])
	if err := l.WriteLine(b); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != string(b)+"\n" {
		t.Errorf("%q", got)
	}
	l.Close()
	// A directory is not a log file.
	if _, err := monitor.OpenLog(t.TempDir(), 0, 0); err == nil {
		t.Error("a directory opened as a log")
	}
}

// A --what register the firmware answers with a status is its refusal,
// reported by Refused, not a device that stopped answering; a transport
// failure is.
func TestRefusedRegisterIsNotGone(t *testing.T) {
	a, f, _, clk := function(t)
	m := &monitor.Monitor{Collectors: collectors(t, "MTMP[sensor_index=200]"), Now: clk.Now}
	ts := []*monitor.Target{{Name: "t", Adapter: a}}
	for i := 0; i < 2; i++ {
		s := m.Sample(context.Background(), ts)[0]
		if ts[0].Gone || len(s.Errors) != 1 || strings.Contains(s.Errors[0], "stopped answering") || !strings.Contains(s.Errors[0], "status 0x7") {
			t.Fatalf("sample %d: gone %v, errors %q", i, ts[0].Gone, s.Errors)
		}
		r := m.Refused()
		if len(r) != 1 || r[0].Status != dev.StatusBadParameter || r[0].Device != "t" || !strings.Contains(r[0].Error(), "--what MTMP[sensor_index=200]: t answers the read with firmware status 0x7") {
			t.Fatalf("sample %d: refused %v", i, r)
		}
		clk.Advance(time.Minute)
	}
	// The same register on an instance that exists reads, and nothing is
	// refused.
	m = &monitor.Monitor{Collectors: collectors(t, "MTMP[sensor_index=0]"), Now: clk.Now}
	if s := m.Sample(context.Background(), ts)[0]; s.Values["mtmp.sensor_index_0.temperature"] == 0 || len(m.Refused()) != 0 {
		t.Fatalf("a sensor that exists: %+v refused %v", s, m.Refused())
	}
	// A status that is the device's state, not the command line's (busy,
	// internal error), is neither refused nor a device that stopped
	// answering: it is recorded.
	for _, st := range []uint8{dev.StatusBusy, dev.StatusInternalError} {
		f.Fail("MTMP", st, "sensor_index=0")
		s := m.Sample(context.Background(), ts)[0]
		if len(m.Refused()) != 0 || ts[0].Gone || len(s.Errors) != 1 || strings.Contains(s.Errors[0], "stopped answering") {
			t.Errorf("status 0x%x: refused %v, gone %v, errors %q", st, m.Refused(), ts[0].Gone, s.Errors)
		}
	}
	f.Hook = func(dev.Method, string) error { return errors.New("config space reads all ones") }
	s := m.Sample(context.Background(), ts)[0]
	if !ts[0].Gone || len(m.Refused()) != 0 || s.Errors[0] != "device stopped answering; still trying" {
		t.Errorf("transport failure: gone %v refused %v errors %q", ts[0].Gone, m.Refused(), s.Errors)
	}
}

// An alert is refused at start only when its key can never match: not
// read, and not a key a collector can write for the function's ports,
// modules and lanes. A valid key without a value now is accepted, and
// each sample says the value is missing.
func TestCheckAlertsValidKeyWithoutValue(t *testing.T) {
	a, _, _, clk := function(t) // one port (1), module 0, 4 lanes
	ts := []*monitor.Target{{Name: "t", Adapter: a}}
	first := []monitor.Sample{{Device: "t", Values: map[string]float64{"temp.asic_c": 50}}}
	for _, c := range []struct {
		what, alert string
		ok          bool
	}{
		{"temp", "temp.module0_c > 70", true},
		{"temp", "temp.module1_c > 70", false}, // no port of this function has module 1
		{"temp", "temp.asic_c > 70", true},
		{"module", "port1.module.lane1.rx_power_mw < 0.5", true},
		{"module", "port1.module.lane4.tx_bias_ma > 10", true},
		{"module", "port1.module.threshold.rx_power_mw.low_alarm > 0", true},
		{"module", "port1.module.lane5.rx_power_mw < 0.5", false}, // the port has 4 lanes
		{"module", "port2.module.lane1.rx_power_mw < 0.5", false}, // not this function's port
		{"module", "port1.module.lane1.rx_powr_mw < 0.5", false},  // no such field
		{"module", "module.lane*.rx_power_mw < 0.5", true},
		{"temp", "port1.module.temperature_c > 1", false}, // the module group is not monitored
	} {
		al, err := monitor.ParseAlert(c.alert)
		if err != nil {
			t.Fatal(err)
		}
		m := &monitor.Monitor{Collectors: collectors(t, c.what), Alerts: []*monitor.Alert{al}, Now: clk.Now}
		err = m.CheckAlerts(context.Background(), ts, first)
		if (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), "matches none of the values this monitor reads or could read")) {
			t.Errorf("--what %s --alert %q: %v (want accepted: %v)", c.what, c.alert, err, c.ok)
		}
	}
	al, _ := monitor.ParseAlert("temp.module7_c > 70")
	m := &monitor.Monitor{Collectors: collectors(t, "temp"), Alerts: []*monitor.Alert{al}, Now: clk.Now}
	s := m.Sample(context.Background(), ts)[0]
	if want := `alert "temp.module7_c > 70": no value this sample (temp.module7_c is not read)`; len(s.Errors) != 1 || s.Errors[0] != want || len(s.Alerts) != 0 {
		t.Errorf("missing value: errors %q alerts %q", s.Errors, s.Alerts)
	}
}

// The frozen rule counts time, not only samples: at a short interval a
// steady reading is not frozen until it has held for FrozenFor; at a
// long one, not before FrozenAfter samples.
func TestFrozenNeedsTimeAndSamples(t *testing.T) {
	for _, c := range []struct {
		interval time.Duration
		after    int
		at       int // the sample (0-based) reported frozen, -1 none
	}{
		{time.Second, 0, 600},        // 10m: the default span
		{10 * time.Second, 0, 60},    // 10m at the default interval
		{time.Minute, 0, 10},         // 10m
		{5 * time.Minute, 0, 4},      // 5 samples (20m) outlast the span
		{time.Second, 3, 600},        // fewer samples, the same span
		{time.Hour, 3, 2},            // 3 samples
		{time.Second * 2, 1000, 999}, // 1000 samples (33m)
	} {
		a, f, _, clk := function(t)
		m := &monitor.Monitor{Collectors: collectors(t, "temp"), FrozenAfter: c.after, Now: clk.Now}
		ts := []*monitor.Target{{Name: "t", Adapter: a}}
		got := -1
		for i := 0; i < 1100 && got < 0; i++ {
			s := m.Sample(context.Background(), ts)[0]
			for _, f := range s.Frozen {
				if strings.HasPrefix(f, "temp.asic_c has not changed for ") {
					got = i
				}
			}
			advance(clk, f, c.interval)
		}
		if got != c.at {
			t.Errorf("-i %s, FrozenAfter %d: frozen at sample %d, want %d", c.interval, c.after, got, c.at)
		}
	}
}

// A device whose own clock stands still (its MGIR uptime does not move:
// an emulator on a manual clock, read through its config space while the
// monitor waits on the wall clock) keeps its readings because no time
// passed there: nothing is frozen. The same readings over a device clock
// that moves are frozen.
func TestFrozenCountsTheDeviceClock(t *testing.T) {
	for _, moving := range []bool{false, true} {
		a, f, _, clk := function(t)
		f.Put("MGIR", "hw_info.num_ports=1", "hw_info.uptime=1000")
		m := &monitor.Monitor{Collectors: collectors(t, "temp"), FrozenAfter: 3, FrozenFor: time.Minute, Now: clk.Now}
		ts := []*monitor.Target{{Name: "t", Adapter: a}}
		var frozen []string
		for i := 0; i < 20; i++ {
			frozen = append(frozen, m.Sample(context.Background(), ts)[0].Frozen...)
			clk.Advance(30 * time.Second)
			if moving {
				f.Put("MGIR", "hw_info.num_ports=1", fmt.Sprintf("hw_info.uptime=%d", 1000+30*(i+1)))
			}
		}
		if got := len(frozen) > 0; got != moving {
			t.Errorf("device clock moving %v: frozen %q", moving, frozen)
		}
	}
}

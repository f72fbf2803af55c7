package monitorcmd

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
	"github.com/cxray/cxray/cli/internal/plotcmd"
	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/emuadapter"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/monitor"
)

func mon(a *cmdutiltest.App, args ...string) error {
	a.Reset()
	return a.Run(New(a.App), args...)
}

func plot(a *cmdutiltest.App, args ...string) error {
	a.Reset()
	return a.Run(plotcmd.New(a.App), args...)
}

// lines decodes JSON lines.
func lines(t *testing.T, s string) []monitor.Sample {
	t.Helper()
	var out []monitor.Sample
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m monitor.Sample
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// Usage errors are exit 2 and say what to give; none samples anything.
func TestMonitorUsage(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, "")
	dir := t.TempDir()
	notCSV := filepath.Join(dir, "notes.csv")
	os.WriteFile(notCSV, []byte("hello, world\n"), 0o644)
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"-d", dev, "--count", "1", "--format", "xml"}, "--format xml: use table, jsonl or csv"},
		{[]string{"-d", dev, "--count", "1", "--out", filepath.Join(dir, "run.bin")}, "give --format jsonl, csv or table"},
		{[]string{"-d", dev, "--count", "1", "-i", "0s"}, "-i 0s: give a positive interval"},
		{[]string{"-d", dev, "--count", "1", "-i", "-5s"}, "give a positive interval"},
		{[]string{"-d", dev, "--count", "1", "--what", "nosuchthing"}, "--what NOSUCHTHING: not a group"},
		{[]string{"-d", dev, "--count", "1", "--alert", "temp.asic_c >"}, "temp.asic_c >"},
		{[]string{"--count", "1"}, "add -d DEV, or --all"},
		{[]string{"-d", dev}, "the scenario's clock is manual, so samples are instant: give --count N"},
		{[]string{"-d", dev, "--count", "1", "--alert", "no.such.key > 1"}, "--alert \"no.such.key > 1\" matches none of the values this monitor reads or could read"},
		{[]string{"-d", dev, "--count", "1", "--out", notCSV}, "notes.csv"},
	} {
		err := mon(a, c.args...)
		if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%v: exit %d %v; want exit 2 saying %q", c.args, code, err, c.words)
		}
		if a.Out.Len() != 0 {
			t.Errorf("%v: a usage error printed %.200q", c.args, a.Out)
		}
	}
	if b, _ := os.ReadFile(notCSV); string(b) != "hello, world\n" {
		t.Errorf("a refused --out changed the file: %q", b)
	}
}

// -o json writes one JSON line per sample, the emulated clock advancing by
// -i between them; a healthy adapter fires no alert and freezes nothing.
func TestMonitorJSONLines(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	dev := cmdutiltest.Manual(t, "")
	if err := mon(a, "-d", dev, "--count", "3", "-i", "10s", "--alert", "temp.asic_c > 1000"); err != nil {
		t.Fatalf("healthy: %v\n%s", err, a.Out)
	}
	ss := lines(t, a.Out.String())
	if len(ss) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(ss), a.Out)
	}
	var steps []time.Duration
	for i, s := range ss {
		if _, ok := s.Values["temp.asic_c"]; !ok {
			t.Errorf("sample %d has no temp.asic_c: %v", i, s.Values)
		}
		if len(s.Alerts)+len(s.Frozen)+len(s.Errors) != 0 {
			t.Errorf("sample %d: alerts %v frozen %v errors %v", i, s.Alerts, s.Frozen, s.Errors)
		}
		if i > 0 {
			steps = append(steps, s.Time.Sub(ss[i-1].Time))
		}
	}
	if diff := cmp.Diff([]time.Duration{10 * time.Second, 10 * time.Second}, steps); diff != "" {
		t.Errorf("emulated time between samples (-want +got):\n%s", diff)
	}
}

// An alert that fires is exit 1 and is recorded in the stream; so is a
// reading that froze.
func TestMonitorProblems(t *testing.T) {
	for _, c := range []struct {
		name, extra string
		args        []string
		got         func(monitor.Sample) []string
	}{
		{"alert", "", []string{"--alert", "temp.asic_c > 0"}, func(s monitor.Sample) []string { return s.Alerts }},
		{"frozen", "    faults: {freeze_temperatures: true}\n", []string{"--frozen-after", "2", "--frozen-for", "20s"}, func(s monitor.Sample) []string { return s.Frozen }},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := cmdutiltest.New(t, "json")
			err := mon(a, append([]string{"-d", cmdutiltest.Manual(t, c.extra), "--count", "4", "-i", "10s", "--what", "temp"}, c.args...)...)
			if !errors.Is(err, cmdutil.ErrProblem) {
				t.Fatalf("%v, want exit 1\n%s", err, a.Out)
			}
			n := 0
			for _, s := range lines(t, a.Out.String()) {
				n += len(c.got(s))
			}
			if n == 0 {
				t.Errorf("no sample records the %s:\n%s", c.name, a.Out)
			}
		})
	}
}

// A device that does not answer is reported in the sample, and a run in
// which no sample read anything is a device error (exit 3), not a pass;
// when the first sample read nothing, no interval is waited for a second.
func TestMonitorRemoved(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	err := mon(a, "-d", cmdutiltest.Manual(t, "    faults: {removed: true}\n"), "--count", "2", "-i", "1s", "--what", "temp")
	ss := lines(t, a.Out.String())
	if len(ss) != 1 {
		t.Fatalf("%v: %d lines, want 1 (the run ends after a first sample that read nothing):\n%s", err, len(ss), a.Out)
	}
	for i, s := range ss {
		if len(s.Errors) == 0 || len(s.Values) != 0 {
			t.Errorf("sample %d of a removed adapter: values %v errors %v", i, s.Values, s.Errors)
		}
	}
	if cmdutiltest.Code(err) != cmdutil.ExitDevice || !strings.Contains(err.Error(), "none of the 1 samples read a value") {
		t.Errorf("a run that never read a value: %v, want exit 3 saying so", err)
	}
}

// A device that vanishes for some samples and comes back: every sample
// is written, the ones it missed say so, and the run exits 3 at its end
// naming the device and how many samples it missed (not 0: a device that
// could not be read is a device error).
func TestMonitorDeviceVanishesForSomeSamples(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	a.Emulator = &emuadapter.Emulator{Loaded: func(em *scenario.Emulation) {
		d := em.Functions()[0].Device
		// Gone during the first wait between samples, back during the
		// next wait: the second sample misses it.
		em.Manual.OnSleep(1, func() {
			d.SetFaults(emu.Faults{Removed: true})
			em.Manual.OnSleep(1, func() { d.SetFaults(emu.Faults{}) })
		})
	}}
	err := mon(a, "-d", cmdutiltest.Manual(t, ""), "--count", "4", "-i", "10s", "--what", "temp")
	ss := lines(t, a.Out.String())
	if len(ss) != 4 {
		t.Fatalf("%v: %d samples, want 4:\n%s", err, len(ss), a.Out)
	}
	var missed []int
	for i, s := range ss {
		if len(s.Values) == 0 {
			missed = append(missed, i)
		}
	}
	if d := cmp.Diff([]int{1}, missed); d != "" {
		t.Errorf("samples without values (-want +got):\n%s", d)
	}
	var re *cmdutil.ReportedError
	if cmdutiltest.Code(err) != cmdutil.ExitDevice || !errors.As(err, &re) || !strings.Contains(err.Error(), "0000:03:00.0 in 1 of 4") {
		t.Errorf("a run in which the device missed a sample: %v, want exit 3 naming it", err)
	}
}

// --out file.csv appends: a second run keeps the one header, and the file
// plots.
func TestMonitorCSVAppendAndPlot(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, "")
	dir := t.TempDir()
	csv := filepath.Join(dir, "run.csv")
	for range 2 {
		if err := mon(a, "-d", dev, "--count", "2", "-i", "10s", "--what", "temp", "--out", csv); err != nil {
			t.Fatal(err)
		}
		if a.Out.Len() != 0 {
			t.Errorf("--out also wrote to standard output: %q", a.Out)
		}
	}
	b, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(rows) != 5 || strings.Count(string(b), rows[0]+"\n") != 1 || !strings.Contains(rows[0], "temp.asic_c") {
		t.Fatalf("want one header and 4 rows:\n%s", b)
	}

	svg := filepath.Join(dir, "t.svg")
	a.Output = "json"
	if err := plot(a, csv, "--out", svg, "--what", "asic_c"); err != nil {
		t.Fatalf("plot: %v", err)
	}
	var res struct {
		File    string   `json:"file"`
		Series  []string `json:"series"`
		Samples int      `json:"samples"`
	}
	if err := json.Unmarshal(a.Out.Bytes(), &res); err != nil {
		t.Fatalf("%v\n%s", err, a.Out)
	}
	if res.File != svg || res.Samples != 4 || len(res.Series) != 1 {
		t.Errorf("plot %+v, want one series of 4 samples in %s", res, svg)
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("chart: %v", err)
	}
}

// plot's usage errors are exit 2 and write no chart.
func TestPlotUsage(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dir := t.TempDir()
	rec := filepath.Join(dir, "r.jsonl")
	os.WriteFile(rec, []byte(`{"time":"2024-05-01T08:00:00Z","device":"x","values":{"temp.asic_c":50}}`+"\n"+`{"time":"2024-05-01T08:00:10Z","device":"x","values":{"temp.asic_c":51}}`+"\n"), 0o644)
	junk := filepath.Join(dir, "junk.jsonl")
	os.WriteFile(junk, []byte("not a sample\nnor this\n"), 0o644)
	svg := filepath.Join(dir, "c.svg")
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{rec}, "give the chart file with --out"},
		{[]string{filepath.Join(dir, "missing.jsonl"), "--out", svg}, "missing.jsonl"},
		{[]string{junk, "--out", svg}, "junk.jsonl"},
		{[]string{rec, "--out", svg, "--threshold", "alarm"}, "--threshold \"alarm\": write NAME=VALUE"},
		{[]string{rec, "--out", svg, "--threshold", "alarm=NaN"}, "with a finite number"},
		{[]string{rec, "--out", svg, "--what", "no_such_key"}, "nothing to plot: no values match"},
	} {
		err := plot(a, c.args...)
		if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%v: exit %d %v; want exit 2 saying %q", c.args, code, err, c.words)
		}
	}
	if _, err := os.Stat(svg); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused plot wrote a chart: %v", err)
	}
	if err := plot(a, rec, "--out", svg, "--threshold", "alarm=70"); err != nil {
		t.Fatal(err)
	}
	if want := "wrote " + svg + ": 1 series, 1 threshold lines, 2 samples; y axis: "; !strings.HasPrefix(a.Out.String(), want) {
		t.Errorf("table:\n%s\nwant it to start %q", a.Out, want)
	}
}

// --what link samples the link group: its keys carry ".link.".
func TestMonitorLinkGroup(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	if err := mon(a, "-d", cmdutiltest.Manual(t, ""), "--count", "2", "-i", "10s", "--what", "link"); err != nil {
		t.Fatal(err)
	}
	ss := lines(t, a.Out.String())
	if len(ss) != 2 {
		t.Fatalf("%d lines, want 2", len(ss))
	}
	n := 0
	for k := range ss[1].Values {
		if !strings.Contains(k, ".link.") {
			t.Errorf("--what link read %s", k)
		}
		n++
	}
	if n == 0 {
		t.Errorf("--what link read nothing: %+v", ss[1])
	}
}

// Every group of monitor.Groups is named in the help of monitor and plot
// (link was left out of both).
func TestMonitorHelpNamesEveryGroup(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	for _, c := range []*cobra.Command{New(a.App), plotcmd.New(a.App)} {
		help := c.Long + " " + c.Flags().Lookup("what").Usage
		for _, g := range monitor.Groups {
			if !strings.Contains(help, g) {
				t.Errorf("%s: the help does not name the %q group", c.Name(), g)
			}
		}
	}
}

// --what pcie in real time on a card trained x8: the link's keys, the
// degraded flag, and an alert on the correctable error rate that fires
// when the scenario's steady errors come.
func TestMonitorPCIeGroup(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	dev := cmdutiltest.Manual(t, "    pcie: {width: 8, correctable_per_sec: {BadTLP: 1}}\n")
	err := mon(a, "-d", dev, "--count", "3", "-i", "10s", "--what", "pcie", "--alert", "rate(pcie.aer_correctable) > 0")
	if !errors.Is(err, cmdutil.ErrProblem) {
		t.Fatalf("the alert did not fire: %v\n%s", err, a.Out.String())
	}
	ss := lines(t, a.Out.String())
	if len(ss) != 3 {
		t.Fatalf("%d lines, want 3", len(ss))
	}
	v := ss[2].Values
	for k, want := range map[string]float64{"pcie.width": 8, "pcie.max_width": 16, "pcie.speed_gts": 32, "pcie.degraded": 1} {
		if v[k] != want {
			t.Errorf("%s = %v, want %v (%v)", k, v[k], want, v)
		}
	}
	if v["pcie.aer_correctable"] < 20 || len(ss[2].Alerts) == 0 {
		t.Errorf("aer_correctable %v after 20 s at 1/s, alerts %v", v["pcie.aer_correctable"], ss[2].Alerts)
	}
	for k := range v {
		if !strings.HasPrefix(k, "pcie.") {
			t.Errorf("--what pcie read %s", k)
		}
	}
}

// The flags reach MonitorOptions as given (runF stands in for runMonitor).
func TestMonitorOptions(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	var got *MonitorOptions
	c := (&app{a.App}).newMonitorCmd(func(o *MonitorOptions, _ []string) error { got = o; return nil })
	if err := a.Run(c, "-d", "emu", "--all", "-i", "2s", "--what", "temp,PDDR[page_select=0,local_port=1]", "--alert", "temp.asic_c > 70",
		"--format", "csv", "--out", "x.csv", "--count", "4", "--frozen-after", "3", "--frozen-for", "1m", "--max-size", "10"); err != nil {
		t.Fatal(err)
	}
	want := &MonitorOptions{All: true, Interval: 2 * time.Second, FrozenFor: time.Minute, What: []string{"temp,PDDR[page_select=0,local_port=1]"},
		Alerts: []string{"temp.asic_c > 70"}, Format: "csv", FormatGiven: true, Out: "x.csv", Count: 4, FrozenAfter: 3, MaxSize: 10}
	want.Device = cmdutil.DeviceFlags{Name: "emu", Timeout: 10 * time.Second, Via: "auto"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
}

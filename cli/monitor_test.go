package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMonitorJSONAndAlerts(t *testing.T) {
	sc := scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", "")
	out, errs, code := cli(t, "", "--adb", "builtin", "monitor", "-d", "emu:"+sc, "-i", "1m", "--count", "3", "--what", "temp,counters", "--alert", "temp.asic_c > 1", "--alert", "rate(a_frames_transmitted_ok) > 0", "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d (want 1: alerts fired): %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	var last struct {
		Time   time.Time          `json:"time"`
		Values map[string]float64 `json:"values"`
		Alerts []string           `json:"alerts"`
	}
	mustJSON(t, lines[2], &last)
	if last.Time != time.Date(2024, 5, 1, 8, 2, 0, 0, time.UTC) {
		t.Errorf("samples should be 1m apart on the emulated clock: %v", last.Time)
	}
	if last.Values["temp.asic_c"] < 20 || last.Values["port1.ppcnt.a_frames_transmitted_ok"] == 0 {
		t.Errorf("values %v", last.Values)
	}
	joined := strings.Join(last.Alerts, "\n")
	if !strings.Contains(joined, "temp.asic_c") || !strings.Contains(joined, "rate(port1.ppcnt.a_frames_transmitted_ok)") {
		t.Errorf("alerts %v", last.Alerts)
	}
	_, errs, code = cli(t, "", "monitor", "-d", "emu:"+sc, "--what", "temp")
	if code != 2 || !strings.Contains(errs, "--count") {
		t.Errorf("manual clock without --count: %d %s", code, errs)
	}
	_, errs, code = cli(t, "", "monitor", "-d", "emu", "--alert", "temp >> 3", "--count", "1")
	if code != 2 || !strings.Contains(errs, "KEY OP NUMBER") {
		t.Errorf("bad alert: %d %s", code, errs)
	}
}

// A monitor killed mid-run leaves a file of whole JSON lines, and a new
// monitor appends to it.
func TestMonitorKilled(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "cxray")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/cxray").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	file := filepath.Join(t.TempDir(), "m.jsonl")
	for round := 0; round < 2; round++ {
		cmd := exec.Command(bin, "--adb", "builtin", "monitor", "-d", "emu", "-i", "5ms", "--what", "temp,counters", "--format", "jsonl", "--out", file)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			if st, err := os.Stat(file); err == nil && st.Size() > int64(20000*(round+1)) {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatal("the monitor wrote too little")
			}
			time.Sleep(20 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n := 0
	for sc.Scan() {
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("line %d is not whole JSON: %v: %.80q", n+1, err, sc.Text())
		}
		n++
	}
	if n < 4 {
		t.Errorf("only %d lines", n)
	}
}

// monitor --what nvmf: the NVMe-oF namespace counters, in JSON with an
// alert on their rate, in the table with rates, and drawn by plot's nvmf
// group as rates per second.
func TestMonitorNVMF(t *testing.T) {
	privateState(t)
	sc := scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", "")
	out, errs, code := cli(t, "", "--adb", "builtin", "monitor", "-d", "emu:"+sc, "-i", "1m", "--count", "3", "--what", "nvmf",
		"--alert", "rate(xrq1.ns2.nvmf.errors) > 0", "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d (want 1: the error-rate alert fired): %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var first, last struct {
		Values map[string]float64 `json:"values"`
		Alerts []string           `json:"alerts"`
		Errors []string           `json:"errors"`
	}
	mustJSON(t, lines[0], &first)
	mustJSON(t, lines[len(lines)-1], &last)
	if last.Values["nvmf.offload"] != 1 || len(last.Errors) != 0 {
		t.Fatalf("values %v errors %v", last.Values, last.Errors)
	}
	for _, k := range []string{"xrq1.ns1.nvmf.read_cmds", "xrq1.ns1.nvmf.write_blocks", "xrq1.ns2.nvmf.errors"} {
		if last.Values[k] <= first.Values[k] {
			t.Errorf("%s did not move over two minutes: %v → %v", k, first.Values[k], last.Values[k])
		}
	}
	if !strings.Contains(strings.Join(last.Alerts, "\n"), "rate(xrq1.ns2.nvmf.errors)") {
		t.Errorf("alerts %v", last.Alerts)
	}
	table, _, _ := cli(t, "", "--adb", "builtin", "monitor", "-d", "emu:"+sc, "-i", "1m", "--count", "2", "--what", "nvmf")
	if !strings.Contains(table, "xrq1.ns1.nvmf.read_cmds") || !strings.Contains(table, "/s") {
		t.Errorf("table lacks the counters' rates:\n%s", table)
	}
	rec := filepath.Join(t.TempDir(), "nv.jsonl")
	if _, errs, code := cli(t, "", "--adb", "builtin", "monitor", "-d", "emu:"+sc, "-i", "10m", "--count", "4", "--what", "nvmf", "--format", "jsonl", "--out", rec); code != 0 {
		t.Fatalf("monitor --out: exit %d %s", code, errs)
	}
	svg := filepath.Join(t.TempDir(), "nv.svg")
	out, errs, code = cli(t, "", "plot", rec, "--what", "nvmf", "--out", svg, "-o", "json")
	if code != 0 {
		t.Fatalf("plot: exit %d %s", code, errs)
	}
	var p struct {
		Series []string `json:"series"`
		YLabel string   `json:"y_label"`
	}
	mustJSON(t, out, &p)
	b, _ := os.ReadFile(svg)
	if p.YLabel != "rate (per second)" || len(p.Series) != 16 || !strings.Contains(string(b), "rate (per second)") || !strings.Contains(string(b), "xrq1.ns2.nvmf.errors (per s)") {
		t.Errorf("plot --what nvmf: y %q, %d series %v", p.YLabel, len(p.Series), p.Series)
	}
}

// A CSV file that monitor appends to keeps one header, across restarts;
// a file that is not a monitor CSV is refused before anything is written.
func TestMonitorCSVAppendKeepsOneHeader(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	out := filepath.Join(t.TempDir(), "m.csv")
	for i := 0; i < 3; i++ {
		if _, errs, code := cli(t, "", "monitor", "-d", "emu", "--what", "temp", "--count", "2", "-i", "1ms", "--format", "csv", "--out", out); code != 0 {
			t.Fatalf("run %d: exit %d %s", i, code, errs)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	headers := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "time,device,") {
			headers++
		}
	}
	if headers != 1 || len(lines) != 7 {
		t.Errorf("%d headers in %d lines:\n%s", headers, len(lines), b)
	}
	other := filepath.Join(t.TempDir(), "notes.csv")
	os.WriteFile(other, []byte("hello\n"), 0o644)
	_, errs, code := cli(t, "", "monitor", "-d", "emu", "--what", "temp", "--count", "1", "--format", "csv", "--out", other)
	if b, _ := os.ReadFile(other); code != 2 || string(b) != "hello\n" || !strings.Contains(errs, "not a monitor CSV") {
		t.Errorf("append to a foreign file: exit %d %s; file now %q", code, errs, b)
	}
}

// The help's register example: the comma inside REG[...] does not split
// --what, in the table and in JSON, next to a group in the same value.
func TestMonitorWhatRegisterIndex(t *testing.T) {
	privateState(t)
	sc := scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", "")
	out, errs, code := cli(t, "", "--adb", "builtin", "monitor", "-d", "emu:"+sc, "--what", "temp,PDDR[page_select=0,local_port=1]", "--count", "1", "-o", "json")
	if code != 0 {
		t.Fatalf("-o json: exit %d %s", code, errs)
	}
	var s struct {
		Values map[string]float64 `json:"values"`
		Errors []string           `json:"errors"`
	}
	mustJSON(t, out, &s)
	if s.Values["pddr.page_select_0.local_port_1.local_port"] != 1 || s.Values["temp.asic_c"] == 0 || len(s.Errors) != 0 {
		t.Errorf("values %v errors %v", s.Values, s.Errors)
	}
	table, errs, code := cli(t, "", "--adb", "builtin", "monitor", "-d", "emu:"+sc, "--what", "PDDR[page_select=0,local_port=1]", "--count", "1")
	if code != 0 || !strings.Contains(table, "pddr.page_select_0.local_port_1.local_port ") || strings.Contains(table, "temp.asic_c") {
		t.Errorf("table: exit %d %s\n%s", code, errs, table)
	}
	// A bracket left open is still refused whole, in both modes.
	for _, mode := range [][]string{nil, {"-o", "json"}} {
		_, errs, code := cli(t, "", append([]string{"--adb", "builtin", "monitor", "-d", "emu:" + sc, "--what", "PDDR[page_select=0,local_port=1", "--count", "1"}, mode...)...)
		if code != 2 {
			t.Errorf("%v unclosed bracket: exit %d %s", mode, code, errs)
		}
	}
}

// Bad flag values are usage errors (exit 2) that say what is allowed, the
// same in the table and with -o json (which sets the format itself).
func TestMonitorBadFlagValues(t *testing.T) {
	privateState(t)
	sc := scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "yaml"}, "use table, jsonl or csv"},
		{[]string{"--count", "-1"}, "--count -1: give the number of samples"},
		{[]string{"--max-size", "-5"}, "--max-size -5"},
	} {
		for _, mode := range [][]string{nil, {"-o", "json"}} {
			args := append(append([]string{"--adb", "builtin", "monitor", "-d", "emu:" + sc, "--what", "temp", "--count", "1"}, c.args...), mode...)
			out, errs, code := cli(t, "", args...)
			if code != 2 || !strings.Contains(out+errs, c.want) {
				t.Errorf("%v %v: exit %d (want 2 and %q)\n%s%s", c.args, mode, code, c.want, out, errs)
			}
			if mode != nil {
				var e struct {
					Error    string `json:"error"`
					ExitCode int    `json:"exit_code"`
				}
				mustJSON(t, out, &e)
				if e.ExitCode != 2 {
					t.Errorf("%v -o json: exit_code %d", c.args, e.ExitCode)
				}
			}
		}
	}
}

// Appending to an existing --out file: only the same format, and for CSV
// only values the header has columns for; anything else is refused at
// start (exit 2, in both modes) with the file unchanged, and plot still
// reads the file.
func TestMonitorAppendRefusesMismatch(t *testing.T) {
	privateState(t)
	sc := scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", "")
	dir := t.TempDir()
	mon := func(extra ...string) (string, string, int) {
		return cli(t, "", append([]string{"--adb", "builtin", "monitor", "-d", "emu:" + sc, "-i", "1m", "--count", "2"}, extra...)...)
	}
	csvFile, jsonFile := filepath.Join(dir, "y.csv"), filepath.Join(dir, "y.jsonl")
	if _, errs, code := mon("--what", "temp", "--out", csvFile); code != 0 {
		t.Fatalf("first CSV run: exit %d %s", code, errs)
	}
	if _, errs, code := mon("--what", "temp", "--out", jsonFile); code != 0 {
		t.Fatalf("first JSON-lines run: exit %d %s", code, errs)
	}
	before := map[string]string{}
	for _, f := range []string{csvFile, jsonFile} {
		b, _ := os.ReadFile(f)
		before[f] = string(b)
	}
	for _, c := range []struct {
		file string
		args []string
		want []string
	}{
		{csvFile, []string{"--what", "temp,counters"}, []string{"no column", "port1.ppcnt.", "another --out", "remove " + csvFile}},
		{csvFile, []string{"--what", "temp", "--format", "jsonl"}, []string{"holds CSV", "writes JSON lines", "remove " + csvFile}},
		{csvFile, []string{"--what", "temp", "--format", "table"}, []string{"holds CSV", "writes monitor's table"}},
		{jsonFile, []string{"--what", "temp", "--format", "csv"}, []string{"holds JSON lines", "writes CSV", "remove " + jsonFile}},
	} {
		for _, mode := range [][]string{nil, {"-o", "json"}} {
			out, errs, code := mon(append(append(c.args, "--out", c.file), mode...)...)
			for _, w := range c.want {
				if !strings.Contains(out+errs, w) {
					t.Errorf("%v %v: the message lacks %q: %s%s", c.args, mode, w, out, errs)
				}
			}
			if code != 2 {
				t.Errorf("%v %v: exit %d, want 2", c.args, mode, code)
			}
			if b, _ := os.ReadFile(c.file); string(b) != before[c.file] {
				t.Errorf("%v %v: the refused run changed %s:\n%s", c.args, mode, c.file, b)
			}
		}
	}
	// Fewer values than the header has fit: the missing columns are blank.
	if _, errs, code := mon("--what", "temp", "--out", csvFile, "-o", "json"); code != 0 {
		t.Fatalf("same columns again: exit %d %s", code, errs)
	}
	wide := filepath.Join(dir, "wide.csv")
	if _, errs, code := mon("--what", "temp,counters", "--out", wide); code != 0 {
		t.Fatalf("wide: exit %d %s", code, errs)
	}
	if _, errs, code := mon("--what", "temp", "--out", wide); code != 0 {
		t.Fatalf("a subset of the columns: exit %d %s", code, errs)
	}
	b, _ := os.ReadFile(wide)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 5 || strings.Count(lines[0], ",") != strings.Count(lines[4], ",") || !strings.Contains(lines[4], ",,") {
		t.Errorf("appended subset rows:\n%s", b)
	}
	for _, f := range []string{csvFile, jsonFile, wide} {
		if _, errs, code := cli(t, "", "plot", f, "--out", filepath.Join(dir, "p.svg")); code != 0 {
			t.Errorf("plot %s: exit %d %s", f, code, errs)
		}
	}
}

// A --what register the firmware refuses (bad parameter) is a usage error
// at start, naming the register, its index and the status; a run in which
// no sample read anything is a device error, not exit 0. Both modes.
func TestMonitorRefusedRegisterAndDeadDevice(t *testing.T) {
	privateState(t)
	sc := scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", "")
	dead := scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", "    faults: {removed: true}\n")
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	for _, mode := range [][]string{nil, {"-o", "json"}} {
		out, errs, code := cli(t, "", append([]string{"--adb", "builtin", "monitor", "-d", "emu:" + sc, "--what", "temp,MTMP[sensor_index=200]", "--count", "2", "--out", rec}, mode...)...)
		for _, w := range []string{"MTMP[sensor_index=200]", "status 0x7", "bad parameter"} {
			if !strings.Contains(out+errs, w) {
				t.Errorf("%v refused register: the message lacks %q: %s%s", mode, w, out, errs)
			}
		}
		if code != 2 || strings.Contains(out+errs, "stopped answering") {
			t.Errorf("%v refused register: exit %d (want 2) %s%s", mode, code, out, errs)
		}
		if _, err := os.Stat(rec); !os.IsNotExist(err) {
			t.Errorf("%v: the refused run left %s behind (%v)", mode, rec, err)
		}
		out, errs, code = cli(t, "", append([]string{"--adb", "builtin", "monitor", "-d", "emu:" + dead, "--what", "temp", "--count", "2"}, mode...)...)
		// The first sample read nothing: the run ends there, at
		// --timeout, without waiting an interval for the second.
		if code != 3 || !strings.Contains(out+errs, "none of the 1 samples read a value") {
			t.Errorf("%v removed device: exit %d (want 3) %s%s", mode, code, out, errs)
		}
	}
}

// An alert on a module value of an empty cage or of a module whose I2C
// hangs is valid (the port and the lane exist): the monitor runs and each
// sample says the value is missing. A key that can never match is still
// exit 2. Both modes.
func TestMonitorAlertOnMissingModuleValue(t *testing.T) {
	privateState(t)
	const alert = "port1.module.lane1.rx_power_mw < 0.5"
	for name, extra := range map[string]string{
		"empty cage": "    modules: [{module: 0, type: empty}]\n",
		"i2c hang":   "    modules: [{module: 0, faults: [i2c_hang]}]\n",
	} {
		sc := scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", extra)
		base := []string{"--adb", "builtin", "monitor", "-d", "emu:" + sc, "--what", "module", "--count", "2", "-i", "1m"}
		out, errs, code := cli(t, "", append(base, "--alert", alert, "-o", "json")...)
		if code != 0 {
			t.Fatalf("%s -o json: exit %d %s%s", name, code, out, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 {
			t.Fatalf("%s: %d samples", name, len(lines))
		}
		for _, l := range lines {
			var s struct {
				Values map[string]float64 `json:"values"`
				Errors []string           `json:"errors"`
			}
			mustJSON(t, l, &s)
			if _, ok := s.Values["port1.module.lane1.rx_power_mw"]; ok || s.Values["port2.module.lane1.rx_power_mw"] == 0 {
				t.Errorf("%s: values %v", name, s.Values)
			}
			if !strings.Contains(strings.Join(s.Errors, "\n"), `alert "`+alert+`": no value this sample`) {
				t.Errorf("%s: the missing value is not reported: %q", name, s.Errors)
			}
		}
		table, errs, code := cli(t, "", append(base, "--alert", alert)...)
		if code != 0 || strings.Count(table, "error: alert \""+alert+"\": no value this sample") != 2 {
			t.Errorf("%s table: exit %d %s\n%s", name, code, errs, table)
		}
		for _, bad := range []string{"port3.module.lane1.rx_power_mw < 0.5", "port1.module.lane1.rx_powr_mw < 0.5", "port1.module.lane9.rx_power_mw < 0.5", "nosuch.key > 1"} {
			for _, mode := range [][]string{nil, {"-o", "json"}} {
				out, errs, code := cli(t, "", append(append(base, "--alert", bad), mode...)...)
				if code != 2 || !strings.Contains(out+errs, "matches none of the values") {
					t.Errorf("%s %v --alert %q: exit %d (want 2) %s%s", name, mode, bad, code, out, errs)
				}
			}
		}
	}
}

// A healthy device sampled every second is not reported frozen after a
// few samples (the rule needs --frozen-for as well as --frozen-after); a
// stuck sensor still is, once both hold. Both modes.
func TestMonitorFrozenIsTimeBased(t *testing.T) {
	privateState(t)
	healthy := scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", "")
	stuck := scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", "    faults: {freeze_temperatures: true}\n")
	for _, mode := range [][]string{nil, {"-o", "json"}} {
		out, errs, code := cli(t, "", append([]string{"--adb", "builtin", "monitor", "-d", "emu:" + healthy, "--what", "temp", "-i", "1s", "--count", "6"}, mode...)...)
		if code != 0 || strings.Contains(out, "FROZEN") || strings.Contains(out, "may be frozen") {
			t.Errorf("%v healthy at -i 1s: exit %d %s\n%s", mode, code, errs, out)
		}
		out, errs, code = cli(t, "", append([]string{"--adb", "builtin", "monitor", "-d", "emu:" + stuck, "--what", "temp", "-i", "1m", "--count", "12"}, mode...)...)
		if code != 1 || strings.Count(out, "temp.asic_c has not changed for 11 samples over 10m0s") != 1 {
			t.Errorf("%v stuck sensor: exit %d (want 1) %s\n%s", mode, code, errs, out)
		}
		out, errs, code = cli(t, "", append([]string{"--adb", "builtin", "monitor", "-d", "emu:" + stuck, "--what", "temp", "-i", "1m", "--count", "12", "--frozen-for", "2m", "--frozen-after", "3"}, mode...)...)
		if code != 1 || !strings.Contains(out, "temp.asic_c has not changed for 3 samples over 2m0s") {
			t.Errorf("%v --frozen-for 2m: exit %d %s\n%s", mode, code, errs, out)
		}
		for _, bad := range [][]string{{"--frozen-after", "1"}, {"--frozen-after", "-2"}, {"--frozen-for", "-1s"}} {
			out, errs, code := cli(t, "", append(append([]string{"--adb", "builtin", "monitor", "-d", "emu:" + healthy, "--what", "temp", "--count", "1"}, bad...), mode...)...)
			if code != 2 || !strings.Contains(out+errs, bad[0]) {
				t.Errorf("%v %v: exit %d (want 2) %s%s", mode, bad, code, out, errs)
			}
		}
	}
}

// With --out the samples go to the file, and the alerts that fire are
// still said on the terminal (standard error), one line each; exit 1.
func TestMonitorOutTellsAlerts(t *testing.T) {
	sc := scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", "")
	file := filepath.Join(t.TempDir(), "m.jsonl")
	out, errs, code := cli(t, "", "--adb", "builtin", "monitor", "-d", "emu:"+sc, "-i", "5m", "--count", "3", "--what", "temp",
		"--alert", "temp.asic_c > 10", "--out", file)
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if code != 1 || out != "" || len(lines) != 3 {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errs)
	}
	for i, l := range lines {
		if !regexp.MustCompile(`^2024-05-01T08:\d\d:00Z 0000:03:00\.0 ALERT temp\.asic_c = [0-9.]+ > 10$`).MatchString(l) {
			t.Errorf("stderr line %d: %q", i, l)
		}
	}
	b, _ := os.ReadFile(file)
	if n := strings.Count(string(b), `"alerts"`); n != 3 {
		t.Errorf("the file has %d samples with alerts, want 3", n)
	}
}

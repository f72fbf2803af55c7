package scaletest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu/nsrun"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/exporter/exportertest"
	"github.com/cxray/cxray/prm/builtin"
)

// mustEnd bounds a real-time run generously: these tests check that a
// command ends and reports every function, not how fast (that is
// docs/performance.md's benchmark). A 2-CPU machine under load reads the
// 29 functions of fleet-16 over FUSE in one to three minutes.
const mustEnd = 10 * time.Minute

// slowReads is the --timeout the runs under emu run give each function:
// every config-space cycle is a FUSE request there, so a function's reads
// cost CPU time that a loaded machine hands out slowly.
const slowReads = "4m"

func requireNS(t *testing.T) {
	t.Helper()
	if err := nsrun.Check(); err != nil {
		t.Skipf("*** SKIPPING: cxray emu run needs root and /dev/fuse: %v", err)
	}
}

var bin string

// TestMain builds the command once; every test runs it as its own
// process, with a private emulator state and the built-in NV database.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cxray-scaletest")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "cxray")
	// cxray exporter runs cxray-exporter from beside cxray, emu run
	// cxray-emu.
	for _, cmd := range []string{"cxray", "cxray-exporter", "cxray-emu"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, cmd), "../../cmd/"+cmd).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", cmd, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs cxray with args in a private state and returns its output,
// exit code and how long it took.
func run(t *testing.T, args ...string) (string, string, int, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mustEnd)
	defer cancel()
	c := exec.CommandContext(ctx, bin, args...)
	c.Env = env(t)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	t0 := time.Now()
	err := c.Run()
	took := time.Since(t0)
	if ctx.Err() != nil {
		t.Fatalf("%v did not end within %v\n%s%s", args, mustEnd, out.String(), errb.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out.String(), errb.String(), code, took
}

func env(t *testing.T) []string {
	t.Helper()
	state := t.TempDir()
	var e []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "XDG_STATE_HOME=") && !strings.HasPrefix(kv, "CXRAY_EMU_STATE=") && !strings.HasPrefix(kv, "CXRAY_NVDB=") {
			e = append(e, kv)
		}
	}
	return append(e, "XDG_STATE_HOME="+state, "CXRAY_NVDB=builtin")
}

// functions lists a scenario's PCI functions, as the emulator builds it.
func functions(t *testing.T, path string) []string {
	t.Helper()
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := scenario.Build(sc, scenario.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range e.Functions() {
		out = append(out, f.BDF)
	}
	sort.Strings(out)
	return out
}

// scenarios are the machines the --all commands must handle in real time.
var scenarios = []string{"../../examples/gpu-node.yaml", "../../examples/fleet-16.yaml"}

type report struct {
	Device string `json:"device"`
	BDF    string `json:"bdf"`
	Status string `json:"status"`
	Error  string `json:"error"`
	Checks []struct {
		Name    string `json:"name"`
		Status  string `json:"status"`
		Summary string `json:"summary"`
	} `json:"checks"`
}

type statusEntry struct {
	BDF      string `json:"bdf"`
	Firmware string `json:"firmware"`
	Error    string `json:"error"`
}

// check returns a report's check by name.
func (r report) check(name string) (string, string) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c.Status, c.Summary
		}
	}
	return "", ""
}

func bdfs[T any](xs []T, bdf func(T) string) []string {
	var out []string
	for _, x := range xs {
		out = append(out, bdf(x))
	}
	sort.Strings(out)
	return out
}

// Every command that takes --all, through `cxray emu run` (the direct
// path) in real time: it ends, and reports every function of the machine
// with a reading, none of them lost to another's wait.
func TestAllInRealTime(t *testing.T) {
	requireNS(t)
	for _, sc := range scenarios {
		name := strings.TrimSuffix(filepath.Base(sc), ".yaml")
		want := functions(t, sc)
		inNS := func(args ...string) []string {
			return append([]string{"emu", "run", "--scenario", sc, "--", bin}, args...)
		}
		t.Run(name+"/health", func(t *testing.T) {
			out, errs, code, took := run(t, inNS("health", "--all", "--interval", "2s", "--timeout", slowReads, "-o", "json")...)
			var doc struct{ Devices []report }
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("exit %d: not JSON: %v\n%s%s", code, err, out, errs)
			}
			if d := cmp.Diff(want, bdfs(doc.Devices, func(r report) string { return r.BDF })); d != "" {
				t.Errorf("functions reported (-want +got):\n%s", d)
			}
			for _, r := range doc.Devices {
				if st, sum := r.check("identity"); r.Error != "" || st == "fail" {
					t.Errorf("%s: not read: %s %s", r.BDF, r.Error, sum)
				}
			}
			if code != 0 && code != 1 {
				t.Errorf("exit %d, want 0 or 1 (every function read)\n%s", code, errs)
			}
			t.Logf("health --all --interval 2s: %d functions in %v", len(doc.Devices), took.Round(time.Millisecond))
		})
		t.Run(name+"/status", func(t *testing.T) {
			out, errs, code, _ := run(t, inNS("status", "--timeout", slowReads, "-o", "json")...)
			var doc struct{ Devices []statusEntry }
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("exit %d: not JSON: %v\n%s%s", code, err, out, errs)
			}
			if d := cmp.Diff(want, bdfs(doc.Devices, func(e statusEntry) string { return e.BDF })); d != "" {
				t.Errorf("functions listed (-want +got):\n%s", d)
			}
			for _, e := range doc.Devices {
				if e.Firmware == "" || e.Error != "" {
					t.Errorf("%s: firmware %q error %q", e.BDF, e.Firmware, e.Error)
				}
			}
			if code > 1 {
				t.Errorf("exit %d\n%s", code, errs)
			}
		})
		t.Run(name+"/monitor", func(t *testing.T) {
			out, errs, code, _ := run(t, inNS("monitor", "--all", "--count", "2", "-i", "1s", "--what", "temp", "--timeout", slowReads, "-o", "json")...)
			seen := map[string]int{}
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				var s struct {
					Device string             `json:"device"`
					Values map[string]float64 `json:"values"`
				}
				if err := json.Unmarshal([]byte(l), &s); err != nil {
					t.Fatalf("exit %d: line %q: %v\n%s", code, l, err, errs)
				}
				if _, ok := s.Values["temp.asic_c"]; ok {
					seen[s.Device]++
				}
			}
			var got []string
			for d, n := range seen {
				if n == 2 {
					got = append(got, d)
				}
			}
			sort.Strings(got)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("functions with an ASIC temperature in both samples (-want +got):\n%s", d)
			}
			if code > 1 {
				t.Errorf("exit %d\n%s", code, errs)
			}
		})
		t.Run(name+"/snapshot", func(t *testing.T) {
			out, errs, code, _ := run(t, inNS("snapshot", "--all", "--profile", "minimal", "--timeout", slowReads)...)
			var doc struct {
				Devices []struct {
					BDF       string            `json:"bdf"`
					Error     string            `json:"error"`
					Registers []json.RawMessage `json:"registers"`
				}
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
				t.Fatalf("exit %d: %v\n%.2000s%s", code, err, out, errs)
			}
			var got []string
			for _, d := range doc.Devices {
				if d.Error == "" && len(d.Registers) > 0 {
					got = append(got, d.BDF)
				}
			}
			sort.Strings(got)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("functions recorded with registers (-want +got):\n%s", d)
			}
		})
		t.Run(name+"/exporter", func(t *testing.T) {
			s := scrapeExporter(t, sc)
			var got []string
			for _, f := range want {
				if v, ok := s.Value("cxray_device_up", "device", f); ok && v == 1 {
					got = append(got, f)
				}
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("functions up in one scrape (-want +got):\n%s", d)
			}
		})
	}
}

// scrapeExporter serves the scenario's functions with `exporter --all`
// under emu run, scrapes it once and stops it.
func scrapeExporter(t *testing.T, sc string) *exportertest.Scrape {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), mustEnd)
	defer cancel()
	c := exec.CommandContext(ctx, bin, "emu", "run", "--scenario", sc, "--", bin, "exporter", "--all", "--listen", addr, "--scrape-timeout", slowReads, "--log.level", "warn")
	c.Env = env(t)
	var errb bytes.Buffer
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	defer func() {
		c.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(time.Minute):
			c.Process.Kill()
			<-done
			t.Errorf("the exporter under emu run did not stop on SIGTERM within a minute")
		}
	}()
	client := &http.Client{Timeout: mustEnd}
	for {
		resp, err := client.Get("http://" + addr + "/metrics")
		if err == nil {
			var b bytes.Buffer
			b.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("scrape: %s\n%s", resp.Status, b.String())
			}
			s, err := exportertest.Parse(b.String())
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		if ctx.Err() != nil {
			t.Fatalf("the exporter never answered: %v\n%s", err, errb.String())
		}
		select {
		case werr := <-done:
			done <- werr // for the deferred stop
			t.Fatalf("the exporter under emu run ended before it answered: %v\n%s", werr, errb.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// heldSemaphore is three dual-port adapters, one function each port; the
// middle one's gateway semaphore is held by another tool for good.
const heldSemaphore = `devices:
  - {name: nic0, profile: cx7-2p400g, functions: 2}
  - {name: nic1, profile: cx7-2p400g, functions: 2, faults: {gateway_semaphore_held: true}}
  - {name: nic2, profile: cx6dx-2p100g, functions: 2}
`

// On the direct path (emu run: the config space opened as this machine's
// PCI function, not the in-process emulator's own opener), a function
// whose gateway semaphore is held among healthy ones: every healthy
// function is reported as read, the held ones say what holds them, and
// the command exits 3 after the report (a device error), within its
// deadline.
func TestHeldSemaphoreAmongHealthy(t *testing.T) {
	requireNS(t)
	sc := filepath.Join(t.TempDir(), "held.yaml")
	if err := os.WriteFile(sc, []byte(heldSemaphore), 0o644); err != nil {
		t.Fatal(err)
	}
	all := functions(t, sc)
	held := map[string]bool{all[2]: true, all[3]: true}
	inNS := func(args ...string) []string {
		return append([]string{"emu", "run", "--scenario", sc, "--", bin}, args...)
	}
	t.Run("health", func(t *testing.T) {
		out, errs, code, _ := run(t, inNS("health", "--all", "--interval", "1s", "--timeout", "20s", "-o", "json")...)
		var doc struct{ Devices []report }
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("exit %d: not JSON: %v\n%s%s", code, err, out, errs)
		}
		if d := cmp.Diff(all, bdfs(doc.Devices, func(r report) string { return r.BDF })); d != "" {
			t.Errorf("functions reported (-want +got):\n%s", d)
		}
		for _, r := range doc.Devices {
			acc, _ := r.check("access")
			switch {
			case held[r.BDF] && (r.Error == "" || !strings.Contains(r.Error, "semaphore") || acc != "fail"):
				t.Errorf("%s (held): error %q, access %s", r.BDF, r.Error, acc)
			case !held[r.BDF] && (r.Error != "" || acc != "ok" || len(r.Checks) < 5):
				t.Errorf("%s (healthy): error %q, access %s, %d checks", r.BDF, r.Error, acc, len(r.Checks))
			}
		}
		if code != 3 || !strings.Contains(errs, "2 of 6 function(s) could not be read") {
			t.Errorf("exit %d, want 3 naming the two held functions:\n%s", code, errs)
		}
	})
	t.Run("status", func(t *testing.T) {
		out, errs, code, _ := run(t, inNS("status", "--timeout", "20s", "-o", "json")...)
		var doc struct{ Devices []statusEntry }
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("exit %d: not JSON: %v\n%s%s", code, err, out, errs)
		}
		for _, e := range doc.Devices {
			if got := e.Firmware != ""; got == held[e.BDF] {
				t.Errorf("%s: firmware %q (held: %v) error %q", e.BDF, e.Firmware, held[e.BDF], e.Error)
			}
		}
		if len(doc.Devices) != len(all) || code != 3 {
			t.Errorf("%d of %d functions listed, exit %d (want 3)\n%s", len(doc.Devices), len(all), code, errs)
		}
	})
	t.Run("snapshot", func(t *testing.T) {
		out, errs, code, _ := run(t, inNS("snapshot", "--all", "--profile", "minimal", "--timeout", "20s")...)
		var doc struct {
			Devices []statusEntry
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("exit %d: not JSON: %v\n%s", code, err, errs)
		}
		for _, d := range doc.Devices {
			if got := d.Error != ""; got != held[d.BDF] {
				t.Errorf("%s: error %q (held: %v)", d.BDF, d.Error, held[d.BDF])
			}
		}
		if len(doc.Devices) != len(all) || code != 3 {
			t.Errorf("%d of %d functions recorded, exit %d (want 3)\n%s", len(doc.Devices), len(all), code, errs)
		}
	})
	t.Run("monitor", func(t *testing.T) {
		out, errs, code, _ := run(t, inNS("monitor", "--all", "--count", "2", "-i", "1s", "--what", "temp", "--timeout", "20s", "-o", "json")...)
		read := map[string]int{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var s struct {
				Device string             `json:"device"`
				Values map[string]float64 `json:"values"`
			}
			if err := json.Unmarshal([]byte(l), &s); err != nil {
				t.Fatalf("exit %d: line %q: %v\n%s", code, l, err, errs)
			}
			if len(s.Values) > 0 {
				read[s.Device]++
			}
		}
		for _, f := range all {
			if want := map[bool]int{false: 2, true: 0}[held[f]]; read[f] != want {
				t.Errorf("%s: read in %d samples, want %d", f, read[f], want)
			}
		}
		if code != 3 {
			t.Errorf("exit %d, want 3 (two functions never answered)\n%s", code, errs)
		}
	})
}

// --timeout bounds the whole command on a device that does not answer:
// the first read ends at --timeout and no --interval is waited after it
// (before, health waited --timeout + 2 x --interval, module --verify and
// roce status one interval more, monitor a --timeout per sample). The
// interval here is a minute, so a command that still waited one would
// take over a minute; the bound only says it ended well before that.
func TestTimeoutBoundsAWedgedDevice(t *testing.T) {
	dev := "emu:../../examples/semaphore-held.yaml" // the wall clock: real waits
	for _, args := range [][]string{
		{"health", "-d", dev, "--interval", "1m"},
		{"module", "-d", dev, "--verify", "--interval", "1m"},
		{"roce", "status", "-d", dev, "--interval", "1m"},
		{"monitor", "-d", dev, "--count", "2", "-i", "1m", "--what", "temp"},
	} {
		t.Run(args[0], func(t *testing.T) {
			out, errs, code, took := run(t, append(args, "--timeout", "2s")...)
			if code != 3 {
				t.Errorf("exit %d, want 3 (the device could not be read)\n%s%s", code, out, errs)
			}
			if took > 45*time.Second {
				t.Errorf("took %v with --timeout 2s: an interval was waited after a read that never answered", took)
			}
			if strings.Contains(out, "ok   access") {
				t.Errorf("health says access is ok on a device it could not read:\n%s", out)
			}
		})
	}
}

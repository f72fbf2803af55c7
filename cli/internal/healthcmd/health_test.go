package healthcmd

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
	"github.com/cxray/cxray/feature/health"
)

// opts are the flags' defaults with -d name (the manual clock makes the
// interval instant).
func opts(name string) *healthOptions {
	return &healthOptions{df: cmdutil.DeviceFlags{Name: name, Timeout: 10 * time.Second, Via: "auto"}, interval: 2 * time.Second}
}

type doc struct {
	SourceRevision string          `json:"source_revision"`
	Devices        []health.Report `json:"devices"`
}

func decode(t *testing.T, s string) doc {
	t.Helper()
	var d doc
	cmdutiltest.JSON(t, s, &d)
	return d
}

// statuses is every check's name and status, in order.
func statuses(r health.Report) [][2]string {
	var out [][2]string
	for _, c := range r.Checks {
		out = append(out, [2]string{c.Name, string(c.Status)})
	}
	return out
}

var allChecks = []string{"identity", "access", "ports", "modules", "temperatures", "configuration", "counters", "link", "pcie", "driver", "bandwidth", "mac"}

// okChecks is a healthy emulated device's checks: every one ok, but the
// driver's, skipped (the emulator has no kernel driver).
func okChecks() [][2]string {
	var out [][2]string
	for _, n := range allChecks {
		st := health.OK
		if n == "driver" {
			st = health.Skip
		}
		out = append(out, [2]string{n, string(st)})
	}
	return out
}

// Usage errors are exit 2 before any device is opened, and say what to
// give instead.
func TestHealthUsage(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(*healthOptions, *cmdutiltest.App)
		words string
	}{
		{"no device", func(o *healthOptions, _ *cmdutiltest.App) { o.df.Name = "" }, "add -d DEV, or --all"},
		{"zero interval", func(o *healthOptions, _ *cmdutiltest.App) { o.interval = 0 }, "--interval 0s: give a duration between 1ms and 10m"},
		{"negative interval", func(o *healthOptions, _ *cmdutiltest.App) { o.interval = -time.Second }, "--interval -1s"},
		{"interval too long", func(o *healthOptions, _ *cmdutiltest.App) { o.interval = 11 * time.Minute }, "between 1ms and 10m"},
		{"missing nvdb", func(o *healthOptions, _ *cmdutiltest.App) { o.nvdb = "/nonexistent/nv.db" }, "--nvdb"},
		{"missing adb", func(_ *healthOptions, a *cmdutiltest.App) { a.ADBPath = "/nonexistent/x.adb" }, "x.adb"},
		{"unknown device", func(o *healthOptions, _ *cmdutiltest.App) { o.df.Name = "emu:no-such-profile" }, "no-such-profile"},
		{"@ with --all", func(o *healthOptions, _ *cmdutiltest.App) { o.df.Name, o.all = "emu:cx7-2p400g@0000:03:00.1", true }, "leave out --all"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := cmdutiltest.New(t, "table")
			o := opts("emu")
			c.edit(o, a)
			err := (&app{a.App}).runHealth(a.Ctx, o)
			if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
				t.Fatalf("exit %d %v; want exit 2 saying %q", code, err, c.words)
			}
			if a.Out.Len() != 0 {
				t.Errorf("a usage error printed a report: %q", a.Out)
			}
		})
	}
}

// A healthy emulated adapter passes every check, in the same order in both
// output modes; the table shows each with "ok" and no details.
func TestHealthHealthy(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	name := cmdutiltest.Manual(t, "")
	if err := (&app{a.App}).runHealth(a.Ctx, opts(name)); err != nil {
		t.Fatalf("healthy adapter: %v\n%s", err, a.Out)
	}
	d := decode(t, a.Out.String())
	if d.SourceRevision == "" || len(d.Devices) != 1 {
		t.Fatalf("want a source revision and one device: %s", a.Out)
	}
	r := d.Devices[0]
	if diff := cmp.Diff(okChecks(), statuses(r)); diff != "" || r.Status != health.OK || r.Device != name {
		t.Errorf("device %q status %s; checks (-want +got):\n%s", r.Device, r.Status, diff)
	}

	a.Reset()
	a.Output = "table"
	o := opts(name)
	if err := (&app{a.App}).runHealth(a.Ctx, o); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(a.Out.String(), "\n"), "\n")
	if want := name + " (" + r.BDF + "): OK"; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	var got [][2]string
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] == "-" || f[0] == "next:" {
			t.Errorf("a passing check shows details without -v: %q", l)
			continue
		}
		mark := f[0]
		if mark == "--" { // the table's mark of a skipped check
			mark = string(health.Skip)
		}
		got = append(got, [2]string{f[1], mark})
	}
	if diff := cmp.Diff(okChecks(), got); diff != "" {
		t.Errorf("table checks (-want +got):\n%s", diff)
	}

	// -v shows the passing checks' details too.
	a.Reset()
	o.verbose = true
	if err := (&app{a.App}).runHealth(a.Ctx, o); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(a.Out.String(), "\n                       - "); n == 0 {
		t.Errorf("-v printed no details:\n%s", a.Out)
	}
}

// A failing module is exit 1 in both modes, the JSON names the failing
// check, and the table prints its details and next step under FAIL.
func TestHealthFault(t *testing.T) {
	for _, mode := range []string{"json", "table"} {
		t.Run(mode, func(t *testing.T) {
			a := cmdutiltest.New(t, mode)
			err := (&app{a.App}).runHealth(a.Ctx, opts(cmdutiltest.Manual(t, "    modules:\n      - {module: 1, faults: [frozen_monitors]}\n")))
			if !errors.Is(err, cmdutil.ErrProblem) {
				t.Fatalf("frozen monitors: %v, want exit 1 (ErrProblem)\n%s", err, a.Out)
			}
			want := okChecks()
			want[3][1] = string(health.Fail)
			if mode == "json" {
				r := decode(t, a.Out.String()).Devices[0]
				if diff := cmp.Diff(want, statuses(r)); diff != "" || r.Status != health.Fail {
					t.Errorf("status %s; checks (-want +got):\n%s", r.Status, diff)
				}
				return
			}
			out := a.Out.String()
			if !strings.Contains(strings.SplitN(out, "\n", 2)[0], ": FAIL") {
				t.Errorf("the first line does not say FAIL:\n%s", out)
			}
			i := strings.Index(out, "  FAIL modules")
			if i < 0 {
				t.Fatalf("no FAIL modules line:\n%s", out)
			}
			rest := out[i:]
			if !strings.Contains(rest, "frozen") || !strings.Contains(rest, "\n                       next: ") {
				t.Errorf("the failing check has no details or next step:\n%s", rest)
			}
		})
	}
}

// A device that cannot be read at all (removed, MGIR not supported, a
// firmware that always answers busy) fails its identity check, and health
// stops there: the remaining checks are not run on a device that does not
// answer, and the command exits 3, a device error, after the report, with
// the device and why on standard error, in both output modes (issue 26.9:
// it exited 1, a finding). Access fails only when nothing answered (the
// removed device's all-ones reads); a firmware that refused or stayed busy
// did answer.
func TestHealthUnreadable(t *testing.T) {
	for _, tc := range []struct{ fault, access, why string }{
		{"removed: true", "fail", "0xFFFFFFFF"},
		{"register_status: {MGIR: 4}", "ok", "MGIR"},
		{"register_status: {MGIR: busy}", "ok", "MGIR"},
	} {
		for _, mode := range []string{"json", "table"} {
			a := cmdutiltest.New(t, mode)
			err := (&app{a.App}).runHealth(a.Ctx, opts(cmdutiltest.Manual(t, "    faults: {"+tc.fault+"}\n")))
			var re *cmdutil.ReportedError
			if cmdutiltest.Code(err) != cmdutil.ExitDevice || !errors.As(err, &re) || !strings.Contains(err.Error(), "1 of 1 function(s) could not be read") {
				t.Fatalf("%s -o %s: %v, want exit 3 after the report\n%s", tc.fault, mode, err, a.Out)
			}
			if !strings.Contains(a.Err.String(), "could not be read") {
				t.Errorf("%s -o %s: standard error %q", tc.fault, mode, a.Err.String())
			}
			if mode != "json" {
				continue
			}
			r := decode(t, a.Out.String()).Devices[0]
			if diff := cmp.Diff([][2]string{{"identity", "fail"}, {"access", tc.access}}, statuses(r)); diff != "" {
				t.Errorf("%s: checks (-want +got):\n%s", tc.fault, diff)
			}
			if !strings.Contains(r.Error, tc.why) {
				t.Errorf("%s: the report's error does not say why (%s): %q", tc.fault, tc.why, r.Error)
			}
		}
	}
}

// --all reports every function of the scenario, the table one block per
// function, and one bad function makes the whole run exit 1.
func TestHealthAll(t *testing.T) {
	two := cmdutiltest.Scenario(t, "clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n  - profile: cx6dx-2p100g\n    faults: {asic_temperature_offset: 70}\n")
	a := cmdutiltest.New(t, "json")
	o := opts(two)
	o.all = true
	if err := (&app{a.App}).runHealth(a.Ctx, o); !errors.Is(err, cmdutil.ErrProblem) {
		t.Fatalf("--all with one hot adapter: %v, want exit 1", err)
	}
	d := decode(t, a.Out.String())
	var got []string
	for _, r := range d.Devices {
		got = append(got, string(r.Status))
	}
	if diff := cmp.Diff([]string{"ok", "fail"}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	a.Reset()
	a.Output = "table"
	if err := (&app{a.App}).runHealth(a.Ctx, o); !errors.Is(err, cmdutil.ErrProblem) {
		t.Fatal(err)
	}
	blocks := strings.Split(strings.TrimRight(a.Out.String(), "\n"), "\n\n")
	if len(blocks) != 2 || !strings.HasSuffix(strings.SplitN(blocks[0], "\n", 2)[0], ": OK") || !strings.HasSuffix(strings.SplitN(blocks[1], "\n", 2)[0], ": FAIL") {
		t.Errorf("want an OK block then a FAIL block:\n%s", a.Out)
	}
}

// A run whose context ends is stopped as such: a signal (cancel) gives the
// context's error for package cli to report, and no partial report.
func TestHealthCancelled(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a.Ctx = ctx
	err := (&app{a.App}).runHealth(a.Ctx, opts(cmdutiltest.Manual(t, "")))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v, want context.Canceled", err)
	}
	if a.Out.Len() != 0 {
		t.Errorf("a stopped run printed: %s", a.Out)
	}
}

// The flags reach healthOptions as given (runF stands in for runHealth),
// and nothing is read.
func TestHealthFlagsToOptions(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	var got *healthOptions
	c := (&app{a.App}).newHealthCmd(func(o *healthOptions, _ []string) error { got = o; return nil })
	if err := a.Run(c, "-d", "emu", "--all", "-v", "--interval", "3s", "--unused-ports", "2,3", "--timeout", "4s"); err != nil {
		t.Fatal(err)
	}
	want := &healthOptions{df: cmdutil.DeviceFlags{Name: "emu", Timeout: 4 * time.Second, Via: "auto"}, all: true, verbose: true,
		interval: 3 * time.Second, unused: []int{2, 3}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(healthOptions{})); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
}

// docs/health.md sketches health -o json; the document has exactly those
// keys.
func TestDocsSketchTheDocument(t *testing.T) {
	cmdutiltest.Sketch(t, "health", cmdutiltest.Sketches(t, "../../../docs/health.md")["health"], health.Document{})
}

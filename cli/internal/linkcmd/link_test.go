package linkcmd

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
	"github.com/cxray/cxray/feature/link"
)

func linkRun(a *cmdutiltest.App, args ...string) error {
	a.Reset()
	return a.Run(New(a.App), args...)
}

// opts are the flags' defaults with -d name.
func opts(name string) *linkOptions {
	return &linkOptions{df: cmdutil.DeviceFlags{Name: name, Timeout: 10 * time.Second, Via: "auto"}, port: 1}
}

type doc struct {
	Device   string        `json:"device"`
	Backend  string        `json:"backend"`
	Cleared  []string      `json:"cleared"`
	Links    []link.Report `json:"links"`
	Verdicts int           `json:"verdicts"`
}

func decode(t *testing.T, s string) doc {
	t.Helper()
	var d doc
	cmdutiltest.JSON(t, s, &d)
	return d
}

// verdicts is every port's verdict codes.
func verdicts(d doc) map[int][]string {
	out := map[int][]string{}
	for _, r := range d.Links {
		out[r.Port] = []string{}
		for _, v := range r.Verdicts {
			out[r.Port] = append(out[r.Port], v.Code)
		}
	}
	return out
}

// Usage errors are exit 2 and say what to give.
func TestLinkUsage(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, "")
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{}, "add -d DEV ('cxray status' lists them"},
		{[]string{"-d", dev, "--all", "--port", "1"}, "--port and --all exclude each other"},
		{[]string{"-d", dev, "--port", "0"}, "--port 0: ports are numbered from 1"},
		{[]string{"-d", dev, "--interval", "-1s"}, "--interval -1s: give a duration between 1ms and 10m"},
		{[]string{"-d", dev, "--interval", "11m"}, "between 1ms and 10m"},
		{[]string{"-d", dev, "--port", "9"}, "this function has no local port 9"},
		{[]string{"-d", dev, "--port", "9", "--clear", "--yes"}, "this function has no local port 9"},
		{[]string{"-d", dev, "--clear"}, "add --yes"},
	} {
		err := linkRun(a, c.args...)
		if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%v: exit %d %v; want exit 2 saying %q", c.args, code, err, c.words)
		}
		if a.Out.Len() != 0 {
			t.Errorf("%v: a usage error printed %.200q", c.args, a.Out)
		}
	}
}

// A healthy link: exit 0 and no verdicts, one report for the default port
// and one per port with --all; the table has a block per port.
func TestLinkHealthy(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	name := cmdutiltest.Manual(t, "")
	if err := (&app{a.App}).runLink(opts(name)); err != nil {
		t.Fatalf("healthy: %v\n%s", err, a.Out)
	}
	d := decode(t, a.Out.String())
	if diff := cmp.Diff(map[int][]string{1: {}}, verdicts(d)); diff != "" || d.Verdicts != 0 || d.Device != name || len(d.Cleared) != 0 {
		t.Errorf("device %q verdicts %d cleared %v (-want +got):\n%s", d.Device, d.Verdicts, d.Cleared, diff)
	}
	a.Reset()
	o := opts(name)
	o.all, o.interval, o.counters = true, 10*time.Second, true
	if err := (&app{a.App}).runLink(o); err != nil {
		t.Fatalf("--all --interval: %v", err)
	}
	d = decode(t, a.Out.String())
	if diff := cmp.Diff(map[int][]string{1: {}, 2: {}}, verdicts(d)); diff != "" {
		t.Errorf("--all (-want +got):\n%s", diff)
	}
	for _, r := range d.Links {
		if r.Rates == nil {
			t.Errorf("port %d: --interval gave no rates", r.Port)
		}
	}
	a.Reset()
	a.Output = "table"
	if err := (&app{a.App}).runLink(o); err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Split(strings.TrimRight(a.Out.String(), "\n"), "\n\n")); n < 2 {
		t.Errorf("--all table: %d blocks, want one per port:\n%s", n, a.Out)
	}
}

// Link faults are exit 1 with a verdict on the faulty port only, in both
// output modes.
func TestLinkFaults(t *testing.T) {
	for _, c := range []struct{ name, extra string }{
		{"no partner", "    faults: {link_down: [2]}\n"},
		{"FEC mismatch", "    ports:\n      - {port: 2, link: {partner_fec: none}}\n"},
		{"degraded lane", "    ports:\n      - {port: 2, link: {lane_ber: [0, 0, 3e-5, 0]}}\n"},
		{"speed mismatch", "    ports:\n      - {port: 2, link: {partner_protocols: [CAUI-4]}}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := cmdutiltest.New(t, "json")
			o := opts(cmdutiltest.Manual(t, c.extra))
			o.all, o.interval = true, 10*time.Second
			err := (&app{a.App}).runLink(o)
			if !errors.Is(err, cmdutil.ErrProblem) {
				t.Fatalf("%v, want exit 1\n%.2000s", err, a.Out)
			}
			d := decode(t, a.Out.String())
			got := verdicts(d)
			if len(got[1]) != 0 || len(got[2]) == 0 || d.Verdicts != len(got[2]) {
				t.Errorf("verdicts %v (total %d), want some on port 2 only", got, d.Verdicts)
			}
			a.Reset()
			a.Output = "table"
			if err := (&app{a.App}).runLink(o); !errors.Is(err, cmdutil.ErrProblem) {
				t.Errorf("table: %v, want exit 1 as in JSON", err)
			}
		})
	}
}

// An adapter that is gone is exit 3.
func TestLinkRemoved(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	err := (&app{a.App}).runLink(opts(cmdutiltest.Manual(t, "    faults: {removed: true}\n")))
	if code := cmdutiltest.Code(err); code != cmdutil.ExitDevice {
		t.Errorf("removed adapter: exit %d %v, want 3\n%s", code, err, a.Out)
	}
}

// sinceClear is port 1's time since its counters were cleared.
func sinceClear(t *testing.T, a *cmdutiltest.App, name string) uint64 {
	t.Helper()
	saved := a.Output
	a.Output = "json"
	defer func() { a.Output = saved }()
	a.Reset()
	if err := (&app{a.App}).runLink(opts(name)); err != nil {
		t.Fatal(err)
	}
	d := decode(t, a.Out.String())
	if len(d.Links) != 1 || d.Links[0].Counters == nil || d.Links[0].Counters.TimeSinceClearMS == nil {
		t.Fatalf("no time since clear:\n%s", a.Out)
	}
	return *d.Links[0].Counters.TimeSinceClearMS
}

// --clear asks first: declined it is exit 1, says nothing was cleared, and
// the counters run on; confirmed (--yes) they restart and the report says
// which groups were cleared.
func TestLinkClear(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	name := cmdutiltest.Manual(t, "")
	o := opts(name)
	o.interval = 30 * time.Second // moves the emulated clock
	if err := (&app{a.App}).runLink(o); err != nil {
		t.Fatal(err)
	}
	before := sinceClear(t, a, name)
	if before == 0 {
		t.Fatal("the counters were never cleared, yet no time passed since")
	}

	a.Reset()
	a.Stdin = cmdutiltest.Terminal(t, "n\n")
	o = opts(name)
	o.clear = true
	if err := (&app{a.App}).runLink(o); !errors.Is(err, cmdutil.ErrProblem) || !strings.HasSuffix(a.Err.String(), "cxray: not confirmed; nothing cleared\n") {
		t.Fatalf("declined: %v %q, want exit 1 saying nothing was cleared", err, a.Err)
	}
	if a.Out.Len() != 0 {
		t.Errorf("a declined clear printed a report: %.200s", a.Out)
	}
	if after := sinceClear(t, a, name); after < before {
		t.Errorf("a declined clear cleared: time since clear %d ms, was %d", after, before)
	}

	a.Reset()
	o.yes = true
	if err := (&app{a.App}).runLink(o); err != nil {
		t.Fatalf("--clear --yes: %v", err)
	}
	d := decode(t, a.Out.String())
	var want []string
	for _, g := range link.ClearGroups {
		want = append(want, "port 1 PPCNT group "+g)
	}
	if diff := cmp.Diff(want, d.Cleared); diff != "" {
		t.Errorf("cleared (-want +got):\n%s", diff)
	}
	if after := *d.Links[0].Counters.TimeSinceClearMS; after >= before {
		t.Errorf("after a clear the time since clear is %d ms, was %d", after, before)
	}
}

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
)

// linkDoc is the part of `cxray link -o json` the tests read.
type linkDoc struct {
	Device  string   `json:"device"`
	Cleared []string `json:"cleared"`
	Links   []struct {
		Port        int `json:"port"`
		Operational struct {
			State     string   `json:"state"`
			OperUp    *bool    `json:"oper_up"`
			SpeedGbps *float64 `json:"speed_gbps"`
		} `json:"operational"`
		Counters *struct {
			TimeSinceClearMS *uint64 `json:"time_since_clear_ms"`
			RawBER           struct {
				Value *float64 `json:"value"`
				Text  string   `json:"text"`
			} `json:"raw_ber"`
		} `json:"counters"`
		Rates *struct {
			IntervalS float64 `json:"interval_s"`
		} `json:"rates"`
		Unavailable []struct {
			What string `json:"what"`
			Why  string `json:"why"`
		} `json:"unavailable"`
		Verdicts []struct {
			Code     string `json:"code"`
			Category string `json:"category"`
			NextStep string `json:"next_step"`
		} `json:"verdicts"`
	} `json:"links"`
	Verdicts int `json:"verdicts"`
}

// Every function of every example scenario, in both output modes: the
// same exit code, 1 exactly when a verdict is raised, 3 when the device
// does not answer, and every verdict with a category and a next step.
func TestLinkEveryExampleFunction(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.yaml")
	if len(files) < 5 {
		t.Fatalf("found %v", files)
	}
	n := 0
	for _, file := range files {
		sc, err := scenario.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range sc.Devices {
			for _, f := range d.Functions {
				n++
				name := "emu:" + file + "@" + f.BDF
				out, errs, code := cli(t, "", "--adb", "builtin", "link", "-d", name, "--all", "-o", "json")
				_, errsT, codeT := cli(t, "", "--adb", "builtin", "link", "-d", name, "--all", "--counters")
				if code != codeT {
					t.Errorf("%s: exit %d in JSON mode, %d in table mode (%s %s)", name, code, codeT, errs, errsT)
				}
				if code == cmdutil.ExitDevice {
					if !strings.Contains(errs, "semaphore") && !strings.Contains(errs, "cxray") {
						t.Errorf("%s: exit 3 without a reason: %q", name, errs)
					}
					continue
				}
				var doc linkDoc
				mustJSON(t, out, &doc)
				verdicts := 0
				for _, l := range doc.Links {
					verdicts += len(l.Verdicts)
					for _, v := range l.Verdicts {
						if v.Category == "" || v.NextStep == "" || v.Code == "" {
							t.Errorf("%s port %d: verdict %+v lacks code, category or next step", name, l.Port, v)
						}
					}
				}
				if verdicts != doc.Verdicts || (verdicts > 0) != (code == cmdutil.ExitProblem) || (code != 0 && code != cmdutil.ExitProblem) {
					t.Errorf("%s: %d verdicts (JSON says %d), exit %d: %s", name, verdicts, doc.Verdicts, code, errs)
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d functions", n)
	}
}

// The link-trouble example: each port's problem by its code and category.
func TestLinkTroubleVerdicts(t *testing.T) {
	file := "../examples/link-trouble.yaml"
	for _, c := range []struct{ bdf, code, category string }{
		{"0000:03:00.0", "", ""},
		{"0000:03:00.1", "firmware_troubleshooting", "signal quality"}, // nothing counted yet: the firmware's word
		{"0000:04:00.0", "link_down", "link partner"},
		{"0000:04:00.1", "fec_mismatch", "configuration"},
		{"0000:05:00.0", "speed_mismatch", "configuration"},
	} {
		out, errs, code := cli(t, "", "link", "-d", "emu:"+file+"@"+c.bdf, "-o", "json")
		var doc linkDoc
		mustJSON(t, out, &doc)
		var got []string
		for _, v := range doc.Links[0].Verdicts {
			got = append(got, v.Code+"/"+v.Category)
		}
		want := c.code + "/" + c.category
		switch {
		case c.code == "" && (code != 0 || len(got) > 0):
			t.Errorf("%s: exit %d, verdicts %v; want none (%s)", c.bdf, code, got, errs)
		case c.code != "" && (code != cmdutil.ExitProblem || len(got) != 1 || got[0] != want):
			t.Errorf("%s: exit %d, verdicts %v; want [%s] and exit 1 (%s)", c.bdf, code, got, want, errs)
		}
	}
}

// --clear goes through the guarded write: refused without a terminal or
// --yes (exit 2, nothing written); with --yes the counters restart, so
// after --interval the time since clear is exactly the interval.
func TestLinkClear(t *testing.T) {
	file := "emu:../examples/link-trouble.yaml@0000:03:00.1"
	// Let time pass first (the manual clock moves with --interval).
	if _, errs, code := cli(t, "", "link", "-d", file, "--interval", "1m", "-o", "json"); code != cmdutil.ExitProblem {
		t.Fatalf("exit %d: %s", code, errs)
	}
	before := linkJSON(t, file)
	if ms := *before.Links[0].Counters.TimeSinceClearMS; ms < 60000 {
		t.Fatalf("time since clear %d ms after a one-minute interval", ms)
	}
	_, errs, code := cli(t, "", "link", "-d", file, "--clear")
	// It names the flags link has: --yes, and --dry-run.
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "--yes") || !strings.Contains(errs, "--dry-run") {
		t.Errorf("--clear without a terminal: exit %d, %q", code, errs)
	}
	// --clear --dry-run names the writes and clears nothing.
	if out, errs, code := cli(t, "", "link", "-d", file, "--clear", "--dry-run"); code != 0 || !strings.Contains(out, "would write PPCNT local_port=1 grp=0x12 clr=1") {
		t.Errorf("--clear --dry-run: exit %d, %q %q", code, out, errs)
	}
	// reg set has --dry-run: there it is suggested.
	if _, errs, code := cli(t, "", "reg", "set", "PAOS", "admin_status=up", "ase=1", "-d", file); code != cmdutil.ExitUsage || !strings.Contains(errs, "--dry-run") {
		t.Errorf("reg set without a terminal: exit %d, %q", code, errs)
	}
	if again := linkJSON(t, file); *again.Links[0].Counters.TimeSinceClearMS < 60000 {
		t.Error("a refused --clear cleared the counters")
	}
	out, errs, code := cli(t, "", "link", "-d", file, "--clear", "--yes", "--interval", "10s", "-o", "json")
	var doc linkDoc
	mustJSON(t, out, &doc)
	if len(doc.Cleared) != 2 || doc.Links[0].Rates == nil || doc.Links[0].Rates.IntervalS != 10 {
		t.Fatalf("exit %d, cleared %v: %s\n%s", code, doc.Cleared, errs, out)
	}
	if ms := *doc.Links[0].Counters.TimeSinceClearMS; ms != 10000 {
		t.Errorf("time since clear %d ms after clearing and a 10 s interval, want 10000", ms)
	}
	// Cleared and no time since: the ratio is n/a, not a number.
	out, _, _ = cli(t, "", "link", "-d", file, "--clear", "--yes", "-o", "json")
	doc = linkDoc{}
	mustJSON(t, out, &doc)
	c := doc.Links[0].Counters
	if *c.TimeSinceClearMS != 0 || c.RawBER.Value != nil || c.RawBER.Text != "n/a" {
		t.Errorf("just cleared: time %d ms, raw BER %+v; want 0 and n/a", *c.TimeSinceClearMS, c.RawBER)
	}
}

func linkJSON(t *testing.T, name string, args ...string) linkDoc {
	t.Helper()
	out, errs, code := cli(t, "", append([]string{"link", "-d", name, "-o", "json"}, args...)...)
	if code > cmdutil.ExitProblem {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc linkDoc
	mustJSON(t, out, &doc)
	return doc
}

func TestLinkUsage(t *testing.T) {
	for _, args := range [][]string{
		{"link"},
		{"link", "-d", "emu", "--port", "0"},
		{"link", "-d", "emu", "--port", "1", "--all"},
		{"link", "-d", "emu", "--interval", "-1s"},
		{"link", "-d", "emu", "--interval", "11m"},
		{"link", "-d", "emu", "--port", "9"},
		{"link", "-d", "emu", "extra"},
	} {
		for _, mode := range []string{"table", "json"} {
			_, errs, code := cli(t, "", append(args, "-o", mode)...)
			if code != cmdutil.ExitUsage || errs == "" {
				t.Errorf("%v -o %s: exit %d, %q; want 2 with a message", args, mode, code, errs)
			}
		}
	}
}

// The kernel backend: what sysfs gives, and the rest named as not
// available (with the way to get it), in both modes.
func TestLinkKernel(t *testing.T) {
	withKernelFixture(t)
	out, errs, code := cli(t, "", "link", "-d", "kernel:mlx5_0", "-o", "json")
	var doc linkDoc
	if code > cmdutil.ExitProblem {
		t.Fatalf("exit %d: %s", code, errs)
	}
	mustJSON(t, out, &doc)
	if len(doc.Links) != 1 {
		t.Fatalf("%s", out)
	}
	l := doc.Links[0]
	if l.Operational.OperUp == nil || l.Counters != nil {
		t.Errorf("kernel: oper_up %v, counters %v; want the state and no PHY counters", l.Operational.OperUp, l.Counters != nil)
	}
	var missing []string
	for _, u := range l.Unavailable {
		missing = append(missing, u.What)
		if !strings.Contains(u.Why, "register access") {
			t.Errorf("%s: %q does not say how to get it", u.What, u.Why)
		}
	}
	if !strings.Contains(strings.Join(missing, ";"), "bit error ratios") || !strings.Contains(strings.Join(missing, ";"), "FEC") {
		t.Errorf("unavailable %v: want the BER and FEC named", missing)
	}
	text, _, codeT := cli(t, "", "link", "-d", "kernel:mlx5_0")
	if codeT != code || !strings.Contains(text, "Not available") {
		t.Errorf("table: exit %d (JSON %d):\n%s", codeT, code, text)
	}
}

// The InfiniBand function on the kernel backend: its IB meaning from
// sysfs (speed IB-NDR, 4 lanes, ACTIVE with its LID) and the PMA counters'
// link downs and recoveries judged, the same exit in both output modes.
func TestLinkKernelInfiniBand(t *testing.T) {
	withKernelFixture(t)
	out, errs, code := cli(t, "", "link", "-d", "kernel:mlx5_1", "-o", "json")
	if code != cmdutil.ExitProblem {
		t.Fatalf("exit %d, want 1 (the fixture's link downs): %s", code, errs)
	}
	var doc struct {
		Links []struct {
			Operational struct {
				Protocol   string `json:"protocol"`
				Speed      string `json:"speed"`
				WidthLanes *int   `json:"width_lanes"`
				IB         *struct {
					LogicalState string  `json:"logical_state"`
					LID          *uint32 `json:"lid"`
					Counters     *struct {
						LinkDowned *uint64 `json:"link_downed"`
					} `json:"counters"`
				} `json:"infiniband"`
			} `json:"operational"`
			Verdicts []struct {
				Code string `json:"code"`
			} `json:"verdicts"`
		} `json:"links"`
	}
	mustJSON(t, out, &doc)
	if len(doc.Links) != 1 || doc.Links[0].Operational.IB == nil || doc.Links[0].Operational.IB.Counters == nil {
		t.Fatalf("%s", out)
	}
	op := doc.Links[0].Operational
	ib := op.IB
	var codes []string
	for _, v := range doc.Links[0].Verdicts {
		codes = append(codes, v.Code)
	}
	if op.Protocol != "InfiniBand" || op.Speed != "IB-NDR" || op.WidthLanes == nil || *op.WidthLanes != 4 || ib.LogicalState != "ACTIVE" ||
		ib.LID == nil || *ib.LID != 0x1a || ib.Counters.LinkDowned == nil || *ib.Counters.LinkDowned != 2570 ||
		cmp.Diff([]string{"link_downed", "link_error_recovery"}, codes) != "" {
		t.Errorf("IB link %+v, IB %+v, verdicts %v", op, ib, codes)
	}
	if _, _, codeT := cli(t, "", "link", "-d", "kernel:mlx5_1"); codeT != code {
		t.Errorf("table exit %d, JSON %d", codeT, code)
	}
}

// Every PRM revision of the history decodes the same link, and --clear
// writes through each one's layout (Rev 0.59+ add plane_ind and lp_gl to
// PPCNT, 0.62+ test_mode to PPLM, 0.64 resilink_fec_ind and SLRG's
// all_lanes).
func TestLinkRevisions(t *testing.T) {
	name := "emu:../examples/link-trouble.yaml@0000:03:00.1"
	for _, f := range prmhistorytest.Files(t) {
		out, errs, code := cli(t, "", "--adb", f, "link", "-d", name, "--clear", "--yes", "--counters", "-o", "json")
		var doc linkDoc
		mustJSON(t, out, &doc)
		l := doc.Links[0]
		if code != cmdutil.ExitProblem || len(doc.Cleared) != 2 || len(l.Verdicts) != 1 || l.Verdicts[0].Code != "firmware_troubleshooting" ||
			l.Operational.State != "Active" || len(l.Unavailable) != 0 {
			t.Errorf("%s: exit %d, cleared %v, state %q, verdicts %+v, unavailable %+v: %s", filepath.Base(f), code, doc.Cleared, l.Operational.State, l.Verdicts, l.Unavailable, errs)
		}
		if _, _, codeT := cli(t, "", "--adb", f, "link", "-d", name, "--counters"); codeT != code {
			t.Errorf("%s: exit %d in table mode, %d in JSON", filepath.Base(f), codeT, code)
		}
	}
}

// A module whose MCIA answers busy does not spend the whole deadline of
// link --all: each port's module summary gets a share of it (here the
// firmware's view answers instead), and every port's own registers are
// read (issue 26.10: the busy MCIA of port 1 left port 2's PDDR a
// deadline "before the write of space 0x3", and all of link --all failed).
// Real time: the firmware answers busy for as long as it is asked.
func TestLinkAllWithBusyModule(t *testing.T) {
	sc := filepath.Join(t.TempDir(), "busy.yaml")
	os.WriteFile(sc, []byte("devices:\n  - profile: cx7-2p400g\n    faults:\n      register_status: {MCIA: busy}\n"), 0o644)
	out, errs, code := cli(t, "", "--adb", "builtin", "link", "-d", "emu:"+sc, "--all", "--timeout", "4s", "-o", "json")
	if code == cmdutil.ExitDevice || code == cmdutil.ExitUsage {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var r struct {
		Links []struct {
			Port        int `json:"port"`
			Operational struct {
				SpeedGbps float64 `json:"speed_gbps"`
			} `json:"operational"`
			Cable *struct {
				Source string `json:"source"`
			} `json:"cable"`
		} `json:"links"`
	}
	mustJSON(t, out, &r)
	if len(r.Links) != 2 {
		t.Fatalf("%d ports, want 2\n%s", len(r.Links), out)
	}
	for _, l := range r.Links {
		if l.Operational.SpeedGbps == 0 {
			t.Errorf("port %d: its own registers were not read (speed 0)", l.Port)
		}
		if l.Cable == nil || l.Cable.Source != "firmware" {
			t.Errorf("port %d: cable %+v, want the firmware's view", l.Port, l.Cable)
		}
	}
}

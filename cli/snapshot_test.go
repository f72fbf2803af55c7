package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/snapshot"
	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
)

// scenarioFile writes a one-adapter scenario with a manual clock.
func scenarioFile(t *testing.T, start, mac, extra string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sc.yaml")
	body := "clock: {start: " + start + ", mode: manual}\ndevices:\n  - profile: cx7-2p400g\n    base_mac: " + mac + "\n    base_guid: b83f:d203:00a1:b2c0\n" + extra
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func takeSnap(t *testing.T, sc string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "snap.json")
	a := append([]string{"--adb", "builtin", "snapshot", "-d", "emu:" + sc, "--out", out}, args...)
	if _, errs, code := cli(t, "", a...); code != 0 {
		t.Fatalf("snapshot: exit %d %s", code, errs)
	}
	return out
}

type diffOut struct {
	Notes  []string          `json:"notes"`
	Static []snapshot.Change `json:"static_changes"`
	Stale  []snapshot.Change `json:"stale"`
	Dyn    []snapshot.Change `json:"dynamic_changes"`
	Count  []snapshot.Change `json:"counters"`
}

// The acceptance check: a changed static value (the base MAC) fails the
// diff and is the only static change, while temperatures and counters that
// moved in the hour between the snapshots do not.
func TestSnapshotDiffStaticChange(t *testing.T) {
	a := takeSnap(t, scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", ""), "--samples", "2", "--interval", "30m")
	b := takeSnap(t, scenarioFile(t, "2024-05-01T09:00:00Z", "b8:3f:d2:a1:b2:d0", ""), "--samples", "2", "--interval", "45m")
	out, errs, code := cli(t, "", "diff", a, b, "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, errs)
	}
	var r diffOut
	mustJSON(t, out, &r)
	// The base MAC moves the OS's MACs with it (the OS section).
	gotStatic := map[string]any{}
	for _, c := range r.Static {
		gotStatic[c.Register+" "+c.Path] = c.New
	}
	wantStatic := map[string]any{
		"MGIR hw_info.manufacturing_base_mac":    "b8:3f:d2:a1:b2:d0",
		"OS[netdev=ens1f0np0] address":           "b8:3f:d2:a1:b2:d0",
		"OS[netdev=ens1f0np0] permanent_address": "b8:3f:d2:a1:b2:d0",
	}
	if d := cmp.Diff(wantStatic, gotStatic); d != "" {
		t.Errorf("static changes (-want +got):\n%s", d)
	}
	if len(r.Count) == 0 || len(r.Dyn) == 0 {
		t.Errorf("counters and temperatures should have moved: %d counters, %d dynamic", len(r.Count), len(r.Dyn))
	}
	// The same device later: only dynamic changes, exit 0.
	c := takeSnap(t, scenarioFile(t, "2024-05-01T09:00:00Z", "b8:3f:d2:a1:b2:c0", ""), "--samples", "2", "--interval", "45m")
	out, _, code = cli(t, "", "diff", a, c, "-o", "json")
	mustJSON(t, out, &r)
	if code != 0 || len(r.Static) != 0 || len(r.Count) == 0 {
		t.Errorf("drift only: exit %d, %d static, %d counters", code, len(r.Static), len(r.Count))
	}
	// Against the device now, with the baseline's profile.
	_, _, code = cli(t, "", "--adb", "builtin", "diff", a, "-d", "emu:"+scenarioFile(t, "2024-05-01T10:00:00Z", "b8:3f:d2:a1:b2:c0", ""))
	if code != 0 {
		t.Errorf("diff -d: exit %d", code)
	}
}

// Frozen temperatures are stale over several samples; moving ones are not.
func TestSnapshotStale(t *testing.T) {
	base := takeSnap(t, scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", ""))
	frozen := scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", "    faults: {freeze_temperatures: true}\n")
	out, _, code := cli(t, "", "--adb", "builtin", "diff", base, "-d", "emu:"+frozen, "--samples", "4", "--interval", "10m", "-o", "json")
	var r diffOut
	mustJSON(t, out, &r)
	found := false
	for _, s := range r.Stale {
		if s.Register == "MTMP[sensor_index=0]" && s.Path == "temperature" {
			found = true
		}
	}
	if code != 1 || !found {
		t.Errorf("frozen temperature not flagged: exit %d stale %+v", code, r.Stale)
	}
	out, _, _ = cli(t, "", "--adb", "builtin", "diff", base, "-d", "emu:"+scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", ""), "--samples", "4", "--interval", "10m", "-o", "json")
	mustJSON(t, out, &r)
	for _, s := range r.Stale {
		if strings.HasPrefix(s.Register, "MTMP") {
			t.Errorf("moving temperature flagged stale: %+v", s)
		}
	}
}

// A multi-sample snapshot of examples/troubled.yaml, whose module 0
// froze: diff flags that module's monitors (exit 1, table and JSON), as
// health and module --verify do.
func TestSnapshotStaleModuleMonitors(t *testing.T) {
	snap := takeSnap(t, filepath.Join("..", "examples", "troubled.yaml"), "--profile", "full", "--samples", "3", "--interval", "10s")
	out, errs, code := cli(t, "", "--adb", "builtin", "diff", snap, snap, "-o", "json")
	var r diffOut
	mustJSON(t, out, &r)
	var got []string
	for _, s := range r.Stale {
		got = append(got, s.Register+" "+s.Path)
	}
	if d := cmp.Diff([]string{"PDDR[page_select=3,local_port=1] module monitors"}, got); d != "" || code != 1 {
		t.Errorf("diff -o json: exit %d %s; stale (-want +got):\n%s", code, errs, d)
	}
	out, _, code = cli(t, "", "--adb", "builtin", "diff", snap, snap)
	if code != 1 || !strings.Contains(out, "STALE values") || !strings.Contains(out, "module monitors = ") {
		t.Errorf("diff table: exit %d\n%s", code, out)
	}
}

// A snapshot decoded with Rev 0.57 and one with Rev 0.64 diff cleanly.
func TestSnapshotAcrossRevisions(t *testing.T) {
	dir := prmhistorytest.Require(t)
	sc := scenarioFile(t, "2024-05-01T08:00:00Z", "b8:3f:d2:a1:b2:c0", "")
	a := takeSnap(t, sc)
	b := filepath.Join(t.TempDir(), "b.json")
	if _, errs, code := cli(t, "", "--adb", filepath.Join(dir, "hca-ext-rev0.64.adb"), "snapshot", "-d", "emu:"+sc, "--out", b); code != 0 {
		t.Fatalf("snapshot with Rev 0.64: %s", errs)
	}
	out, errs, code := cli(t, "", "diff", a, b, "-o", "json")
	var r diffOut
	mustJSON(t, out, &r)
	if code != 0 || len(r.Static) != 0 {
		t.Errorf("exit %d %s; static changes across revisions: %+v", code, errs, r.Static)
	}
	if len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "Rev 0.57 → Rev 0.64") {
		t.Errorf("notes %v", r.Notes)
	}
}

func TestSnapshotErrors(t *testing.T) {
	_, errs, code := cli(t, "", "snapshot", "-d", "emu", "--profile", "nonesuch")
	if code != 2 || !strings.Contains(errs, "minimal") {
		t.Errorf("bad profile: %d %s", code, errs)
	}
	_, errs, code = cli(t, "", "snapshot", "-d", "emu", "--samples", "3")
	if code != 2 || !strings.Contains(errs, "--interval") {
		t.Errorf("samples without interval: %d %s", code, errs)
	}
	bad := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(bad, []byte(`{"format":"something"}`), 0o644)
	_, errs, code = cli(t, "", "diff", bad, bad)
	if code != 2 || !strings.Contains(errs, "not a cxray snapshot") {
		t.Errorf("bad file: %d %s", code, errs)
	}
}

// TestDiffCatchesWhatVanished: a function missing from the new snapshot,
// and registers that became unreadable, are findings (exit 1), listed
// before any value change.
func TestDiffCatchesWhatVanished(t *testing.T) {
	dir := t.TempDir()
	base, one, held := filepath.Join(dir, "base.json"), filepath.Join(dir, "one.json"), filepath.Join(dir, "held.json")
	two := "emu:../examples/two-adapters.yaml"
	for _, c := range [][]string{
		{"snapshot", "-d", two, "--all", "--profile", "minimal", "--out", base},
		{"snapshot", "-d", two + "@0000:03:00.0", "--profile", "minimal", "--out", one},
	} {
		if _, errs, code := cli(t, "", c...); code != 0 {
			t.Fatalf("%v: exit %d %s", c, code, errs)
		}
	}
	out, _, code := cli(t, "", "diff", base, one)
	if code != cmdutil.ExitProblem || !strings.Contains(out, "VANISHED") || !strings.Contains(out, "0000:04:00.1: the device is in the baseline but not in the new snapshot") {
		t.Errorf("three functions gone: exit %d\n%s", code, out)
	}
	if i, j := strings.Index(out, "VANISHED"), strings.Index(out, "STATIC"); j >= 0 && j < i {
		t.Errorf("vanished listed after static changes:\n%s", out)
	}
	// The same function read again while a register answers an error.
	sc := filepath.Join(dir, "held.yaml")
	os.WriteFile(sc, []byte("clock: {mode: manual, start: 2024-05-01T08:00:00Z}\ndevices:\n  - profile: cx7-2p400g\n    bdf: 0000:03:00.0\n    faults:\n      register_status: {PAOS: internal_error, MTMP: busy}\n"), 0o644)
	if _, errs, code := cli(t, "", "snapshot", "-d", "emu:"+sc, "--profile", "minimal", "--out", held); code != 0 {
		t.Fatalf("snapshot: exit %d %s", code, errs)
	}
	out, _, code = cli(t, "", "diff", one, held, "-o", "json")
	var r struct {
		Vanished []struct {
			Register string `json:"register"`
			Note     string `json:"note"`
		} `json:"vanished"`
	}
	mustJSON(t, out, &r)
	regs := map[string]bool{}
	for _, v := range r.Vanished {
		if strings.Contains(v.Note, "unreadable now") {
			regs[strings.SplitN(v.Register, "[", 2)[0]] = true
		}
	}
	if code != cmdutil.ExitProblem || !regs["PAOS"] {
		t.Errorf("unreadable registers: exit %d %+v", code, r.Vanished)
	}
}

// An NV change between two snapshots of the same emulated device is a
// static change (exit 1), Next Boot first, Current after the firmware
// reset applies it; table and JSON say the same.
func TestSnapshotDiffNV(t *testing.T) {
	privateState(t)
	dir := t.TempDir()
	snap := func(name string) string {
		p := filepath.Join(dir, name)
		mustRun(t, "snapshot", "-d", "emu", "--out", p)
		return p
	}
	nvChanges := func(out string) map[string]snapshot.Change {
		var r diffOut
		mustJSON(t, out, &r)
		m := map[string]snapshot.Change{}
		for _, c := range r.Static {
			if strings.HasPrefix(c.Register, "NV[") {
				m[c.Register+" "+c.Path] = c
			} else {
				t.Errorf("unexpected static change %+v", c)
			}
		}
		return m
	}
	a := snap("a.json")
	mustRun(t, "config", "set", "-d", "emu", "LOG_TX_PSN_WINDOW=14", "--yes")
	b := snap("b.json")
	out, errs, code := cfgcli(t, "", "diff", a, b, "-o", "json")
	if code != cmdutil.ExitProblem {
		t.Fatalf("diff after config set: exit %d, want %d: %s", code, cmdutil.ExitProblem, errs)
	}
	got := nvChanges(out)
	want := map[string][2]any{"NV[next_boot] LOG_TX_PSN_WINDOW": {"9", "14"}}
	if len(got) != len(want) {
		t.Errorf("NV changes %v, want %v", got, want)
	}
	for k, w := range want {
		if c, ok := got[k]; !ok || c.Old != w[0] || c.New != w[1] || c.Class != snapshot.Static {
			t.Errorf("%s: %+v, want %v → %v (static)", k, c, w[0], w[1])
		}
	}
	text, _, code := cfgcli(t, "", "diff", a, b)
	if code != cmdutil.ExitProblem {
		t.Errorf("table diff: exit %d, want %d", code, cmdutil.ExitProblem)
	}
	wantIn(t, "table diff", text, "STATIC values changed", "NV[next_boot] LOG_TX_PSN_WINDOW: 9 → 14")

	mustRun(t, "config", "apply", "-d", "emu", "--yes")
	c := snap("c.json")
	out, _, code = cfgcli(t, "", "diff", b, c, "-o", "json")
	got = nvChanges(out)
	if cc, ok := got["NV[current] LOG_TX_PSN_WINDOW"]; code != cmdutil.ExitProblem || !ok || cc.Old != "9" || cc.New != "14" {
		t.Errorf("after apply: exit %d, changes %v; want NV[current] LOG_TX_PSN_WINDOW 9 → 14", code, got)
	}
	if _, ok := got["NV[next_boot] LOG_TX_PSN_WINDOW"]; ok {
		t.Errorf("after apply, Next Boot did not change again: %v", got)
	}
}

// A snapshot written before the NV, OS and capability sections existed
// still loads and diffs: the sections are said to be not compared, and
// nothing is reported vanished.
func TestSnapshotDiffOlderFile(t *testing.T) {
	privateState(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	mustRun(t, "snapshot", "-d", "emu", "--out", a)
	mustRun(t, "snapshot", "-d", "emu", "--out", b)
	f, err := snapshot.Read(a)
	if err != nil {
		t.Fatal(err)
	}
	if d := f.Devices[0]; d.NV == nil || len(d.NV.Settings) == 0 || d.OS == nil || len(d.OS.Netdevs) == 0 || d.Caps == nil || d.Caps.Report == nil {
		t.Fatalf("the snapshot lacks a section: nv %v, os %v, caps %v", d.NV != nil, d.OS, d.Caps)
	}
	f.Devices[0].NV, f.Devices[0].OS, f.Devices[0].Caps = nil, nil, nil
	old := filepath.Join(dir, "old.json")
	if err := snapshot.Write(old, f); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{old, b}, {b, old}} {
		out, errs, code := cfgcli(t, "", append([]string{"diff", "-o", "json"}, args...)...)
		if code != cmdutil.ExitOK {
			t.Errorf("diff %v: exit %d: %s%s", args, code, out, errs)
		}
		var r struct {
			Notes    []string          `json:"notes"`
			Vanished []snapshot.Change `json:"vanished"`
			Static   []snapshot.Change `json:"static_changes"`
		}
		mustJSON(t, out, &r)
		if len(r.Vanished)+len(r.Static) > 0 {
			t.Errorf("diff %v: vanished %v, static %v", args, r.Vanished, r.Static)
		}
		notes := strings.Join(r.Notes, "\n")
		for _, w := range []string{"NV configuration", "OS view (MACs)", "capability pages"} {
			if !strings.Contains(notes, w) {
				t.Errorf("diff %v: no note on the missing %s: %q", args, w, notes)
			}
		}
	}
}

// Every example scenario: a snapshot records the NV configuration (Next
// Boot and Current), the OS MACs and the capability pages of every
// function, and a second snapshot diffs clean against it (exit 0, in
// table and JSON mode); the held-semaphore scenario fails with a device
// error (exit 3), as every reading does.
func TestSnapshotExamples(t *testing.T) {
	files, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			privateState(t)
			abs, _ := filepath.Abs(f)
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
			args := []string{"snapshot", "-d", "emu:" + abs, "--all", "--out", a}
			if strings.Contains(f, "semaphore-held") {
				if _, errs, code := cfgcli(t, "", append(args, "--timeout", "500ms")...); code != 3 || !strings.Contains(errs, "semaphore") {
					t.Errorf("held semaphore: exit %d %s", code, errs)
				}
				return
			}
			// The 10 s default is for one adapter; on a loaded CI machine
			// sixteen functions take longer, which is the machine's figure.
			mustRun(t, append(args, "--timeout", "3m")...)
			mustRun(t, "snapshot", "-d", "emu:"+abs, "--all", "--out", b, "--timeout", "3m")
			snap, err := snapshot.Read(a)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range snap.Devices {
				if d.NV == nil || d.NV.Error != "" || len(d.NV.Settings) == 0 {
					t.Errorf("%s: NV %+v", d.BDF, d.NV)
				}
				if d.OS == nil || len(d.OS.Netdevs) == 0 || d.OS.Netdevs[0].Address == "" {
					t.Errorf("%s: OS %+v", d.BDF, d.OS)
				}
				if d.Caps == nil || d.Caps.Report == nil || len(d.Caps.Report.Pages) == 0 {
					t.Errorf("%s: caps %+v", d.BDF, d.Caps)
				}
				if strings.Contains(f, "troubled") {
					for _, s := range d.NV.Settings {
						if s.Name == "LOG_TX_PSN_WINDOW" && (s.Next != "12" || s.Current != "9") {
							t.Errorf("troubled's pending LOG_TX_PSN_WINDOW: next %q current %q, want 12 and 9", s.Next, s.Current)
						}
					}
				}
				if strings.Contains(f, "two-adapters") && strings.HasPrefix(d.BDF, "0000:03:") && d.Identity.FirmwarePending != "28.40.1000" {
					t.Errorf("%s: pending firmware %q", d.BDF, d.Identity.FirmwarePending)
				}
			}
			for _, mode := range [][]string{nil, {"-o", "json"}} {
				out, errs, code := cfgcli(t, "", append([]string{"diff", a, b}, mode...)...)
				if code != 0 {
					t.Errorf("diff %v: exit %d\n%s%s", mode, code, out, errs)
				}
			}
		})
	}
}

// diff reads a snapshot from standard input ("-"), as piped from another
// host; a cut one is refused (exit 2), two from standard input too.
func TestDiffFromStandardInput(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	snap, errs, code := cli(t, "", "snapshot", "-d", "emu", "--profile", "minimal")
	if code != 0 {
		t.Fatalf("snapshot: exit %d %s", code, errs)
	}
	base := filepath.Join(t.TempDir(), "base.json")
	os.WriteFile(base, []byte(snap), 0o644)
	out, errs, code := cli(t, snap, "diff", base, "-")
	if code != 0 || !strings.Contains(out, "no static changes") {
		t.Errorf("diff base -: exit %d %s %s", code, out, errs)
	}
	if _, errs, code := cli(t, snap[:len(snap)/2], "diff", base, "-"); code != 2 || !strings.Contains(errs, "cut short") {
		t.Errorf("a cut snapshot on standard input: exit %d %s", code, errs)
	}
	if _, _, code := cli(t, snap, "diff", "-", "-"); code != 2 {
		t.Errorf("diff - -: exit %d", code)
	}
}

// The --out destination is checked before the device is read: a folder
// that does not exist or a directory is exit 2 at once (the semaphore-held
// example would be exit 3 after its deadline had it been read), in both
// modes; a device (/dev/null) is written into.
func TestSnapshotOutCheckedFirst(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	held := "emu:../examples/semaphore-held.yaml"
	for _, out := range []string{filepath.Join(t.TempDir(), "no", "such", "snap.json"), t.TempDir()} {
		for _, mode := range []string{"table", "json"} {
			_, errs, code := cli(t, "", "--adb", "builtin", "snapshot", "-d", held, "--timeout", "30s", "--out", out, "-o", mode)
			if code != 2 || !strings.Contains(errs, "nothing was read") {
				t.Errorf("--out %s (%s): exit %d %s", out, mode, code, errs)
			}
		}
	}
	out, errs, code := cli(t, "", "--adb", "builtin", "snapshot", "-d", "emu", "--out", os.DevNull)
	if code != 0 || !strings.Contains(out, "wrote "+os.DevNull) {
		t.Errorf("--out %s: exit %d %s%s", os.DevNull, code, out, errs)
	}
}

// A profile reads what it names plus the identity: a user's profile
// without "record" takes no NV configuration, capabilities or OS MACs
// (mstlink -m's registers stay a register read); "record" adds each; the
// built-in profiles record all three. A bad record is exit 2.
func TestSnapshotProfileReadsWhatItNames(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	regs := "registers:\n  - {register: PDDR, per: port, index: {page_select: 3}}\n  - {register: PMAOS, per: module}\n"
	for _, c := range []struct {
		profile string
		want    []string
	}{
		{write("bare.yaml", "name: bare\n"+regs), nil},
		{write("caps.yaml", "name: caps\nrecord: [caps]\n"+regs), []string{"caps"}},
		{"minimal", []string{"caps", "nv", "os", "pcie", "driver_health"}},
	} {
		out, errs, code := cli(t, "", "--adb", "builtin", "snapshot", "-d", "emu", "--profile", c.profile, "-o", "json")
		var doc struct {
			Devices []map[string]json.RawMessage `json:"devices"`
		}
		mustJSON(t, out, &doc)
		if code != 0 || len(doc.Devices) != 1 {
			t.Fatalf("%s: exit %d %s", c.profile, code, errs)
		}
		var got []string
		for _, k := range []string{"caps", "nv", "os", "pcie", "driver_health"} {
			if _, ok := doc.Devices[0][k]; ok {
				got = append(got, k)
			}
		}
		if _, ok := doc.Devices[0]["identity"]; !ok || !cmp.Equal(c.want, got) {
			t.Errorf("%s: recorded %v (identity %v), want %v", filepath.Base(c.profile), got, ok, c.want)
		}
	}
	bad := write("bad.yaml", "name: bad\nrecord: [everything]\n"+regs)
	if _, errs, code := cli(t, "", "--adb", "builtin", "snapshot", "-d", "emu", "--profile", bad); code != 2 || !strings.Contains(errs, "not one of nv, os, caps") {
		t.Errorf("bad record: exit %d %s", code, errs)
	}
}

// A snapshot in which a device could not be read exits 3 and names it on
// standard error, in both output modes; the devices that were read are in
// the file, the other marked with its error (issue 26.9). A single device
// that cannot be read gives no file.
func TestSnapshotUnreadDeviceExits3(t *testing.T) {
	privateState(t)
	dir := t.TempDir()
	sc := filepath.Join(dir, "gone.yaml")
	os.WriteFile(sc, []byte("clock: {mode: manual, start: 2024-05-01T08:00:00Z}\ndevices:\n  - profile: cx7-2p400g\n    bdf: 0000:03:00.0\n  - profile: cx7-2p400g\n    bdf: 0000:05:00.0\n    faults:\n      removed: true\n"), 0o644)
	for _, format := range []string{"table", "json"} {
		out := filepath.Join(dir, format+".json")
		_, errs, code := cli(t, "", "snapshot", "-d", "emu:"+sc, "--all", "--profile", "minimal", "--timeout", "3s", "--out", out, "-o", format)
		if code != cmdutil.ExitDevice || !strings.Contains(errs, "cxray: 0000:05:00.0: ") {
			t.Errorf("-o %s: exit %d, want 3 naming 0000:05:00.0\n%s", format, code, errs)
		}
		f, err := snapshot.Read(out)
		if err != nil {
			t.Fatalf("-o %s: %v", format, err)
		}
		for _, d := range f.Devices {
			if (d.Error != "") != strings.HasPrefix(d.BDF, "0000:05") {
				t.Errorf("-o %s: %s error %q", format, d.BDF, d.Error)
			}
		}
	}
	one := filepath.Join(dir, "one.json")
	if _, _, code := cli(t, "", "snapshot", "-d", "emu:"+sc+"@0000:05:00.0", "--profile", "minimal", "--timeout", "3s", "--out", one); code != cmdutil.ExitDevice {
		t.Errorf("the removed device alone: exit %d, want 3", code)
	}
	if _, err := os.Stat(one); err == nil {
		t.Error("a snapshot of a device that could not be read was written")
	}
}

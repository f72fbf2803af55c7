package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/internal/prmhistory"
	"github.com/cxray/cxray/snapshot"
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
	if len(r.Static) != 1 || r.Static[0].Path != "hw_info.manufacturing_base_mac" || r.Static[0].New != "b8:3f:d2:a1:b2:d0" {
		t.Errorf("static changes %+v", r.Static)
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

// A snapshot decoded with Rev 0.57 and one with Rev 0.64 diff cleanly.
func TestSnapshotAcrossRevisions(t *testing.T) {
	dir := prmhistory.Require(t)
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
	two := "emu:../../examples/two-adapters.yaml"
	for _, c := range [][]string{
		{"snapshot", "-d", two, "--all", "--profile", "minimal", "--out", base},
		{"snapshot", "-d", two + "@0000:03:00.0", "--profile", "minimal", "--out", one},
	} {
		if _, errs, code := cli(t, "", c...); code != 0 {
			t.Fatalf("%v: exit %d %s", c, code, errs)
		}
	}
	out, _, code := cli(t, "", "diff", base, one)
	if code != exitProblem || !strings.Contains(out, "VANISHED") || !strings.Contains(out, "0000:04:00.1: the device is in the baseline but not in the new snapshot") {
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
	if code != exitProblem || !regs["PAOS"] {
		t.Errorf("unreadable registers: exit %d %+v", code, r.Vanished)
	}
}

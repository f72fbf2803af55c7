package snapshotcmd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
	"github.com/cxray/cxray/feature/snapshot"
	"github.com/cxray/cxray/prm/source"
)

func snap(a *cmdutiltest.App, args ...string) error {
	a.Reset()
	return a.Run(New(a.App), args...)
}

func diff(a *cmdutiltest.App, args ...string) error {
	a.Reset()
	return a.Run(NewDiff(a.App), args...)
}

// Usage errors are exit 2, say what to give, and print no snapshot.
func TestSnapshotUsage(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	junk := filepath.Join(t.TempDir(), "junk.json")
	os.WriteFile(junk, []byte("{not a snapshot"), 0o644)
	for _, c := range []struct {
		snapshot bool
		args     []string
		words    string
	}{
		{true, []string{}, "add -d DEV, or --all"},
		{true, []string{"-d", "emu", "--samples", "0"}, "--samples 0: give 1 to 1000"},
		{true, []string{"-d", "emu", "--samples", "1001"}, "--samples 1001: give 1 to 1000"},
		{true, []string{"-d", "emu", "--samples", "3"}, "--samples 3 needs --interval"},
		{true, []string{"-d", "emu", "--profile", "no-such-profile"}, "no-such-profile"},
		{true, []string{"-d", "emu", "--adb", "x"}, "unknown flag"},
		{false, []string{"-", "-"}, "only one of the snapshots can come from standard input"},
		{false, []string{junk}, "junk.json"},
		{false, []string{filepath.Join(t.TempDir(), "missing.json")}, "missing.json"},
		{false, []string{"a", "b", "c"}, "accepts between 1 and 2 arg(s)"},
	} {
		var err error
		if c.snapshot {
			err = snap(a, c.args...)
		} else {
			err = diff(a, c.args...)
		}
		if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%v: exit %d %v; want exit 2 saying %q", c.args, code, err, c.words)
		}
		if a.Out.Len() != 0 {
			t.Errorf("%v: a usage error printed %.200q", c.args, a.Out)
		}
	}
}

// The diff's other usage errors need a readable baseline first.
func TestDiffUsage(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, "")
	base := filepath.Join(t.TempDir(), "base.json")
	if err := snap(a, "-d", dev, "--out", base); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{base}, "give a second snapshot file, or -d DEV"},
		{[]string{base, base, "-d", dev}, "compare with a file or with -d DEV, not both"},
	} {
		if err := diff(a, c.args...); cmdutiltest.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%v: %v; want exit 2 saying %q", c.args, err, c.words)
		}
	}
}

// Without --out the snapshot is the JSON document itself: one device,
// readable, decoded with the database's revision, with the profile and
// sample count asked for.
func TestSnapshotJSON(t *testing.T) {
	a := cmdutiltest.New(t, "table") // the snapshot is JSON in either mode
	dev := cmdutiltest.Manual(t, "")
	if err := snap(a, "-d", dev, "--profile", "minimal"); err != nil {
		t.Fatal(err)
	}
	var f snapshot.File
	cmdutiltest.JSON(t, a.Out.String(), &f)
	db, err := source.Open("builtin")
	if err != nil {
		t.Fatal(err)
	}
	type meta struct {
		Format, PRM, Profile, Tool string
		Samples, Devices           int
	}
	got := meta{f.Format, f.PRMRevision, f.Profile.Name, f.Tool, f.Samples, len(f.Devices)}
	if diff := cmp.Diff(meta{snapshot.Format, db.Revision, "minimal", "test", 1, 1}, got); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	if len(f.Devices) == 1 {
		d := f.Devices[0]
		if d.Error != "" || d.Name != dev || len(d.Registers) == 0 || d.Identity.Firmware == "" {
			t.Errorf("device %q error %q, %d registers, firmware %q", d.Name, d.Error, len(d.Registers), d.Identity.Firmware)
		}
	}
}

// --out writes the file and prints a summary whose counts are the file's
// (a register that fails counted unreadable, not fatal), in both modes.
func TestSnapshotOut(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	dev := cmdutiltest.Manual(t, "    faults: {register_status: {PDDR: internal_error}}\n")
	out := filepath.Join(t.TempDir(), "s.json")
	if err := snap(a, "-d", dev, "--out", out, "--samples", "2", "--interval", "5s"); err != nil {
		t.Fatal(err)
	}
	f, err := snapshot.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	type sum struct {
		BDF       string `json:"bdf"`
		Firmware  string `json:"firmware"`
		Registers int    `json:"registers"`
		Fields    int    `json:"fields"`
		Failed    int    `json:"failed"`
	}
	want := sum{BDF: f.Devices[0].BDF, Firmware: f.Devices[0].Identity.Firmware}
	for _, r := range f.Devices[0].Registers {
		if r.Error != "" {
			want.Failed++
		} else {
			want.Registers++
			want.Fields += len(r.Fields)
		}
	}
	var s struct {
		File    string `json:"file"`
		Profile string `json:"profile"`
		Samples int    `json:"samples"`
		Devices []sum  `json:"devices"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &s)
	if s.File != out || s.Profile != "standard" || s.Samples != 2 || f.Samples != 2 {
		t.Errorf("file %q profile %q samples %d (file %d)", s.File, s.Profile, s.Samples, f.Samples)
	}
	if diff := cmp.Diff([]sum{want}, s.Devices); diff != "" {
		t.Errorf("summary against the file (-want +got):\n%s", diff)
	}
	if want.Failed == 0 {
		t.Errorf("the PDDR reads that fail were not counted as unreadable")
	}
	a.Output = "table"
	if err := snap(a, "-d", dev, "--out", out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(a.Out.String(), "\n")
	if !strings.HasPrefix(lines[0], "wrote "+out+" (profile standard, 1 sample(s), ") || strings.Fields(lines[1])[0] != "BDF" || strings.Fields(lines[2])[0] != want.BDF {
		t.Errorf("table summary:\n%s", a.Out)
	}
}

// An adapter that is gone: no device could be read, exit 3, no file.
func TestSnapshotRemoved(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	out := filepath.Join(t.TempDir(), "s.json")
	err := snap(a, "-d", cmdutiltest.Manual(t, "    faults: {removed: true}\n"), "--out", out)
	if code := cmdutiltest.Code(err); code != cmdutil.ExitDevice || !strings.Contains(err.Error(), "no device could be read") {
		t.Errorf("removed adapter: exit %d %v, want 3", code, err)
	}
	if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("a failed snapshot left a file: %v", serr)
	}
}

// --all records every function; one that cannot be read is recorded with
// its error, and the command exits 3 (issue 26.9: it exited 0).
func TestSnapshotAllOneRemoved(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	two := cmdutiltest.Scenario(t, "clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n  - profile: cx6dx-2p100g\n    faults: {removed: true}\n")
	if err := snap(a, "-d", two, "--all", "--profile", "minimal"); cmdutiltest.Code(err) != cmdutil.ExitDevice {
		t.Fatalf("one of two removed: %v, want exit 3", err)
	}
	var f snapshot.File
	cmdutiltest.JSON(t, a.Out.String(), &f)
	var errs []bool
	for _, d := range f.Devices {
		errs = append(errs, d.Error != "")
	}
	if diff := cmp.Diff([]bool{false, true}, errs); diff != "" {
		t.Errorf("which devices failed (-want +got):\n%s", diff)
	}
}

// diff: a snapshot against itself is exit 0 in both modes; against an
// adapter whose NV configuration changed it is exit 1 with the change
// among the static ones, also from standard input.
func TestDiffExitCodes(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dir := t.TempDir()
	devA := cmdutiltest.Manual(t, "    nv: {configured: {NUM_OF_VFS: 8}}\n")
	base, other := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	if err := snap(a, "-d", devA, "--out", base); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"table", "json"} {
		a.Output = mode
		if err := diff(a, base, base); err != nil {
			t.Errorf("%s: a snapshot against itself: %v\n%s", mode, err, a.Out)
		}
	}
	a.Output = "table"
	devB := cmdutiltest.Manual(t, "    nv: {configured: {NUM_OF_VFS: 16}}\n")
	if err := snap(a, "-d", devB, "--out", other); err != nil {
		t.Fatal(err)
	}
	if err := diff(a, base, other); !errors.Is(err, cmdutil.ErrProblem) || !strings.Contains(a.Out.String(), "NUM_OF_VFS") {
		t.Errorf("changed NV: %v, want exit 1 naming NUM_OF_VFS\n%s", err, a.Out)
	}
	b, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	a.Output = "json"
	a.Stdin = strings.NewReader(string(b))
	if err := diff(a, base, "-"); !errors.Is(err, cmdutil.ErrProblem) {
		t.Fatalf("from standard input: %v, want exit 1", err)
	}
	var rep snapshot.Report
	cmdutiltest.JSON(t, a.Out.String(), &rep)
	var static []string
	for _, c := range rep.Static {
		static = append(static, c.Register+" "+c.Path)
	}
	if len(rep.Static) == 0 || !strings.Contains(strings.Join(static, " "), "NUM_OF_VFS") {
		t.Errorf("static changes %v, want NUM_OF_VFS among them", static)
	}

	// Against the device now (-d), read with the baseline's profile.
	if err := diff(a, base, "-d", devA); err != nil {
		t.Errorf("baseline against its own adapter now: %v\n%.600s", err, a.Out)
	}
}

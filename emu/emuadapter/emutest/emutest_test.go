package emutest_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/emu/scenario"
)

// The scenario files are the repository's, found the same from any
// directory of the module, once each.
func TestScenarioFiles(t *testing.T) {
	files := emutest.ScenarioFiles(t)
	seen := map[string]bool{}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		if seen[f] {
			t.Errorf("%s twice", f)
		}
		seen[f] = true
	}
	for _, want := range []string{"../../../examples/link-trouble.yaml", "../../scenario/testdata/reference.yaml"} {
		if !seen[want] {
			t.Errorf("%s is not among %v", want, files)
		}
	}
	// From another directory: the same files, relative to that one.
	const dir = "../../scenario"
	abs := make([]string, len(files))
	for i, f := range files {
		abs[i], _ = filepath.Abs(f)
	}
	t.Chdir(dir)
	there := emutest.ScenarioFiles(t)
	if len(there) != len(files) {
		t.Fatalf("from %s: %v; from here: %v", dir, there, files)
	}
	for i, f := range there {
		if got, _ := filepath.Abs(f); got != abs[i] {
			t.Errorf("from %s: file %d is %s (%s), want %s", dir, i, f, got, abs[i])
		}
	}
}

// The manual clock starts where the scenario says, else at the default
// start, and moves only when advanced.
func TestBuildClock(t *testing.T) {
	em := emutest.BuildFile(t, "../../../examples/two-adapters.yaml")
	if want := time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC); em.Manual == nil || !em.Manual.Now().Equal(want) {
		t.Fatalf("clock %v, want a manual clock at %v", em.Manual, want)
	}
	ads, clk := emutest.OpenYAML(t, "devices:\n  - profile: cx7-2p400g\n")
	if !clk.Now().Equal(scenario.DefaultStart) || !ads[0].Clock().Now().Equal(scenario.DefaultStart) {
		t.Errorf("clock %v, adapter's %v; want both at %v", clk.Now(), ads[0].Clock().Now(), scenario.DefaultStart)
	}
	clk.Advance(time.Minute)
	if got := ads[0].Clock().Now(); !got.Equal(scenario.DefaultStart.Add(time.Minute)) {
		t.Errorf("the adapter's clock %v after advancing a minute", got)
	}
}

func names(ads []*adapter.Adapter) []string {
	var out []string
	for _, a := range ads {
		out = append(out, a.Name()+" "+a.BDF())
	}
	return out
}

// Open names adapters as `-d` does: NAME@BDF for every function or
// several, NAME for one; they read the emulated registers.
func TestOpen(t *testing.T) {
	const file = "../../../examples/link-trouble.yaml"
	em := emutest.BuildFile(t, file)
	all := emutest.Open(t, em, "emu:x", nil)
	if len(all) != len(em.Functions()) || len(all) < 3 {
		t.Fatalf("%d adapters for %d functions", len(all), len(em.Functions()))
	}
	for i, f := range em.Functions() {
		if want := "emu:x@" + f.BDF + " " + f.BDF; names(all[i : i+1])[0] != want {
			t.Errorf("adapter %d: %q, want %q", i, names(all[i : i+1])[0], want)
		}
	}
	if d := cmp.Diff([]string{"emu:x 0000:03:00.1"}, names(emutest.Open(t, em, "emu:x", nil, "0000:03:00.1"))); d != "" {
		t.Errorf("one function (-want +got):\n%s", d)
	}
	two := emutest.Open(t, em, "emu:x", nil, "0000:04:00.0", "0000:03:00.0")
	if d := cmp.Diff([]string{"emu:x@0000:04:00.0 0000:04:00.0", "emu:x@0000:03:00.0 0000:03:00.0"}, names(two)); d != "" {
		t.Errorf("two functions (-want +got):\n%s", d)
	}
	ads, _ := emutest.OpenFile(t, file, "0000:03:00.1")
	if d := cmp.Diff([]string{"emu:" + file + " 0000:03:00.1"}, names(ads)); d != "" {
		t.Errorf("OpenFile (-want +got):\n%s", d)
	}
	id, err := ads[0].Identity(t.Context())
	if err != nil || id.Model != "ConnectX-7" {
		t.Errorf("identity %+v: %v", id, err)
	}
	ys, _ := emutest.OpenYAML(t, "devices:\n  - profile: cx7-2p400g\n    functions: 2\n")
	if d := cmp.Diff([]string{"emu:t.yaml@0000:03:00.0 0000:03:00.0", "emu:t.yaml@0000:03:00.1 0000:03:00.1"}, names(ys)); d != "" {
		t.Errorf("OpenYAML (-want +got):\n%s", d)
	}
}

// EachScenario gives every file a subtest of its own, with that file
// built and every function of it open.
func TestEachScenario(t *testing.T) {
	var got []string
	emutest.EachScenario(t, nil, func(st *testing.T, em *scenario.Emulation, ads []*adapter.Adapter) {
		got = append(got, em.Scenario.Source)
		if filepath.Dir(st.Name()) != t.Name() {
			st.Errorf("%s is not a subtest of %s", st.Name(), t.Name())
		}
		if len(ads) != len(em.Functions()) || len(ads) == 0 {
			st.Errorf("%d adapters for %d functions", len(ads), len(em.Functions()))
		}
	})
	if d := cmp.Diff(emutest.ScenarioFiles(t), got); d != "" {
		t.Errorf("scenarios built (-files +built):\n%s", d)
	}
}

// BestGbps: the port's fastest protocol, unless the module in its cage
// cannot carry it.
func TestBestGbps(t *testing.T) {
	em := emutest.BuildFile(t, "../../../examples/link-trouble.yaml")
	for _, c := range []struct {
		bdf  string
		port int
		want int
	}{
		{"0000:03:00.0", 1, 400},
		{"0000:05:00.0", 1, 400}, // the partner is slower; the port and module are not
	} {
		f, err := em.Function(c.bdf)
		if err != nil {
			t.Fatal(err)
		}
		if got := emutest.BestGbps(f.Adapter, c.port); got != c.want {
			t.Errorf("%s port %d: %d Gb/s, want %d", c.bdf, c.port, got, c.want)
		}
	}
	sc, err := scenario.Parse([]byte("devices:\n  - profile: cx7-2p400g\n    modules:\n      - {module: 0, type: qsfp28-100g-sr4}\n"), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := emutest.Build(t, sc).Adapters[0]
	if got := emutest.BestGbps(a, 1); got != 100 {
		t.Errorf("a 100G module in a 400G port: %d Gb/s, want 100", got)
	}
	if got := emutest.BestGbps(a, 2); got != 400 {
		t.Errorf("the other port: %d Gb/s, want 400", got)
	}
}

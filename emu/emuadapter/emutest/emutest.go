// Package emutest opens the emulator's scenarios as adapters for the
// tests of the features above the adapter layer: the scenario built on a
// manual clock, its functions opened through emuadapter.Emulator (the
// same register path as `-d emu:FILE`), closed when the test ends. It
// also finds every scenario file the repository ships, for the tests
// that walk all of them.
//
// Only _test.go files import it: it takes a testing.TB and fails the test
// on a setup error, and it brings the emulator in, which client-side code
// never imports (ARCHITECTURE.md).
package emutest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/emuadapter"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm"
)

// SemaphoreTimeout bounds the wait for a held semaphore, short so that a
// scenario's semaphore faults fail fast on the manual clock.
const SemaphoreTimeout = 50 * time.Millisecond

// YAMLName is the file name OpenYAML gives a scenario's text (its
// adapters are "emu:t.yaml@BDF").
const YAMLName = "t.yaml"

// BuildFile loads a scenario file and powers it on (Build).
func BuildFile(t testing.TB, path string) *scenario.Emulation {
	t.Helper()
	sc, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return Build(t, sc)
}

// Build powers a scenario on with the firmware answering from the
// built-in database, on a manual clock (em.Manual) that starts where the
// scenario's own clock does (scenario.DefaultStart when it names none),
// so time moves only when the test advances it.
func Build(t testing.TB, sc *scenario.Scenario) *scenario.Emulation {
	t.Helper()
	start := sc.Clock.Start
	if start.IsZero() {
		start = scenario.DefaultStart
	}
	em, err := scenario.Build(sc, scenario.Options{DB: devtest.DB(t), Clock: clock.NewManual(start)})
	if err != nil {
		t.Fatal(err)
	}
	return em
}

// Open opens functions of em as adapters that decode with db (nil: the
// built-in database): the ones at bdfs, or every function when none is
// given. Their names are name, with "@BDF" when every function or more
// than one is opened (as `-d NAME --all` names them). The test's cleanup
// closes them.
func Open(t testing.TB, em *scenario.Emulation, name string, db *prm.DB, bdfs ...string) []*adapter.Adapter {
	t.Helper()
	if db == nil {
		db = devtest.DB(t)
	}
	funcs := em.Functions()
	if len(bdfs) > 0 {
		funcs = nil
		for _, b := range bdfs {
			f, err := em.Function(b)
			if err != nil {
				t.Fatal(err)
			}
			funcs = append(funcs, f)
		}
	}
	e := &emuadapter.Emulator{Stack: dev.StackOptions{SemaphoreTimeout: SemaphoreTimeout}}
	if em.Manual != nil {
		// A nil *clock.Manual in the interface would be a clock that
		// panics: a scenario on the wall clock leaves the stack's default.
		e.Stack.Clock = em.Manual
	}
	ads, err := e.Open(context.Background(), em, funcs, name, len(bdfs) == 0, nil, adapter.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { adapter.CloseAll(ads) })
	return ads
}

// OpenFile builds a scenario file and opens its functions at bdfs (every
// function when none is given) as "emu:PATH" does, decoding with the
// built-in database; it returns them and the manual clock.
func OpenFile(t testing.TB, path string, bdfs ...string) ([]*adapter.Adapter, *clock.Manual) {
	t.Helper()
	em := BuildFile(t, path)
	return Open(t, em, "emu:"+path, nil, bdfs...), em.Manual
}

// OpenYAML builds a scenario from its text (named YAMLName) and opens
// every function, decoding with the built-in database; it returns them
// and the manual clock.
func OpenYAML(t testing.TB, text string) ([]*adapter.Adapter, *clock.Manual) {
	t.Helper()
	sc, err := scenario.Parse([]byte(text), YAMLName)
	if err != nil {
		t.Fatal(err)
	}
	em := Build(t, sc)
	return Open(t, em, "emu:"+YAMLName, nil), em.Manual
}

// EachScenario runs fn as a subtest of t named after each scenario file
// (ScenarioFiles), with the file built (BuildFile) and every function of
// it open as "emu:FILE@BDF", decoding with db (Open).
func EachScenario(t *testing.T, db *prm.DB, fn func(t *testing.T, em *scenario.Emulation, ads []*adapter.Adapter)) {
	t.Helper()
	for _, file := range ScenarioFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			em := BuildFile(t, file)
			fn(t, em, Open(t, em, "emu:"+file, db))
		})
	}
}

// minScenarioFiles is fewer files than the repository ships: finding
// fewer means the search went wrong, not that there is less to test.
const minScenarioFiles = 6

// ScenarioFiles is every example scenario (examples/*.yaml) and every
// scenario of the emulator's tests (emu/scenario/testdata/*.yaml), found
// from the module root (the directory above the test's with go.mod), as
// paths relative to the test's directory. It fails t when it finds fewer
// than the repository ships.
func ScenarioFiles(t testing.TB) []string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		up := filepath.Dir(root)
		if up == root {
			t.Fatalf("no go.mod in %s or above it: run the test inside the module", wd)
		}
		root = up
	}
	var files []string
	for _, pattern := range []string{"examples/*.yaml", "emu/scenario/testdata/*.yaml"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if rel, err := filepath.Rel(wd, f); err == nil {
				f = rel
			}
			files = append(files, f)
		}
	}
	if len(files) < minScenarioFiles {
		t.Fatalf("found only %d scenario files under %s (%v); want at least %d", len(files), root, files, minScenarioFiles)
	}
	return files
}

// BestGbps is the fastest speed an emulated port can link at with the
// module in its cage: the fastest of the port's Ethernet protocols that
// the module supports too (any of the port's when the module names none).
// Tests hold a port that links slower to a speed mismatch.
func BestGbps(a *scenario.Adapter, port int) int {
	spec := a.Spec.Spec
	ps := spec.Ports[port-1]
	mod := spec.Modules[ps.Module].Protocols
	best := 0
	for _, n := range ps.Protocols {
		p, _ := fw.LookupEthProtocol(n)
		if len(mod) == 0 || slices.ContainsFunc(mod, func(m string) bool { q, _ := fw.LookupEthProtocol(m); return q.Name == p.Name }) {
			best = max(best, p.Gbps)
		}
	}
	return best
}

// BestIB is the fastest InfiniBand speed an emulated IB port can train to
// with the module in its cage, and its rate on every lane of the port:
// the port's speeds (its spec's, or every speed its Ethernet lanes' rate
// reaches but FDR10) that the module's lane rate carries too (any when the
// module names no protocols). Tests hold a port that links slower to a
// speed mismatch.
func BestIB(a *scenario.Adapter, port int) (name string, gbps float64) {
	spec := a.Spec.Spec
	ps := spec.Ports[port-1]
	laneOf := func(protos []string) float64 {
		lane := 0.0
		for _, n := range protos {
			if p, err := fw.LookupEthProtocol(n); err == nil && p.Lanes > 0 {
				lane = max(lane, float64(p.Gbps)/float64(p.Lanes))
			}
		}
		return lane
	}
	portLane, modLane := laneOf(ps.Protocols), laneOf(spec.Modules[ps.Module].Protocols)
	for _, sp := range fw.IBSpeeds() {
		ok := slices.Contains(ps.IB.Speeds, sp.Name) || (len(ps.IB.Speeds) == 0 && sp.Name != "FDR10" && sp.LaneGbps <= portLane)
		if ok && (modLane == 0 || sp.LaneGbps <= modLane) && sp.LaneGbps*float64(ps.Lanes) >= gbps {
			name, gbps = sp.Name, sp.LaneGbps*float64(ps.Lanes)
		}
	}
	return name, gbps
}

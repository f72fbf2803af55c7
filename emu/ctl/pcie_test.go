package ctl

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/pcie"
)

func pcieServer(t *testing.T) (*Server, *scenario.Emulation, *clock.Manual) {
	sc, err := scenario.Parse([]byte("devices:\n  - profile: cx7-2p400g\n    functions: 2\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	e, err := scenario.Build(sc, scenario.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return &Server{e: e}, e, clk
}

func TestPCIeFaults(t *testing.T) {
	s, e, clk := pcieServer(t)
	a := e.Adapters[0]
	f1 := a.Functions[1]
	// Errors on one function.
	if r := s.Do(Request{Op: "fault", BDF: f1.BDF, Set: map[string]string{"pcie.aer": "BadTLP:5,CmpltTO"}}); !r.OK {
		t.Fatal(r.Error)
	}
	c0, _ := a.Link.Counts(0)
	c1, _ := a.Link.Counts(1)
	if len(c0.Correctable) != 0 || c1.Correctable[6] != 5 || c1.NonFatal[14] != 1 {
		t.Errorf("counts: function 0 %+v, function 1 %+v", c0, c1)
	}
	// Retrain both at x8, with a steady rate.
	if r := s.Do(Request{Op: "fault", Set: map[string]string{"pcie.width": "8", "pcie.correctable_per_sec": "RxErr:2"}}); !r.OK {
		t.Fatal(r.Error)
	}
	clk.Advance(3 * time.Second)
	if got := a.Link.Spec().Trained; got != (pcie.Link{Speed: pcie.Gen5, Width: 8}) {
		t.Errorf("trained %v", got)
	}
	if c0, _ = a.Link.Counts(0); c0.Correctable[0] != 6 {
		t.Errorf("6 RxErr expected on function 0 after 3 s at 2/s: %+v", c0)
	}
	// A request with one bad setting changes nothing, whatever else it asks.
	before := a.Link.Spec()
	for _, bad := range []map[string]string{
		{"pcie.aer": "BadTLP:5", "pcie.speed": "gen6"},
		{"pcie.aer": "BadTLP:5", "pcie.width": "3"},
		{"pcie.aer": "Nope"},
		{"pcie.aer": "BadTLP", "pcie.colour": "red"},
		{"pcie.aer": "BadTLP", "removed": "perhaps"},
		{"pcie.correctable_per_sec": "CmpltTO:1"},
		{"pcie.clear": "no"},
	} {
		if r := s.Do(Request{Op: "fault", Set: bad}); r.OK {
			t.Errorf("%v accepted", bad)
		}
	}
	if d := cmp.Diff(before, a.Link.Spec()); d != "" {
		t.Errorf("a refused request changed the link:\n%s", d)
	}
	if c1b, _ := a.Link.Counts(1); c1b.Correctable[6] != 5 {
		t.Errorf("a refused request injected: %+v", c1b)
	}
	// clear: the scenario's link back, the status cleared, the counts kept.
	if r := s.Do(Request{Op: "clear"}); !r.OK {
		t.Fatal(r.Error)
	}
	if got := a.Link.Spec().Trained; got != (pcie.Link{Speed: pcie.Gen5, Width: 16}) {
		t.Errorf("after clear: trained %v", got)
	}
	if ds := a.Link.DeviceStatus(1); ds&^pcie.DevStaCorrectable != 0 {
		t.Errorf("after clear: device status %#x (steady errors may set CorrErr again)", ds)
	}
	if c1b, _ := a.Link.Counts(1); c1b.NonFatal[14] != 1 {
		t.Errorf("after clear the counts went: %+v", c1b)
	}
	// max retrains as capable.
	s.Do(Request{Op: "fault", Set: map[string]string{"pcie.speed": "gen3"}})
	if r := s.Do(Request{Op: "fault", Set: map[string]string{"pcie.speed": "max"}}); !r.OK || a.Link.Spec().Trained.Speed != pcie.Gen5 {
		t.Errorf("speed=max: %+v %v", r, a.Link.Spec().Trained)
	}
}

package ctl

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm/builtin"
)

func linkServer(t testing.TB) (*Server, *scenario.Emulation) {
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.FromProfile("cx7-2p400g")
	if err != nil {
		t.Fatal(err)
	}
	e, err := scenario.Build(sc, scenario.Options{DB: db, Clock: clock.NewManual(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	return &Server{e: e}, e
}

// Link faults act on the function's own port, together with device
// faults in one request; clear resets them.
func TestLinkFaults(t *testing.T) {
	s, e := linkServer(t)
	f := e.Functions()[0]
	r := s.Do(Request{Op: "fault", BDF: f.BDF, Set: map[string]string{"link.lane_ber": "0,0,3e-5,0", "link.raw_ber": "1e-9",
		"link.partner_protocols": "CAUI-4", "link.partner_fec": "rs528"}})
	if !r.OK {
		t.Fatal(r.Error)
	}
	got, _ := f.Adapter.Firmware.Link(f.Port)
	want := fw.LinkSpec{RawBER: 1e-9, LaneBER: []float64{0, 0, 3e-5, 0}, PartnerProtocols: []string{"CAUI-4"}, PartnerFEC: "rs528"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("link (-want +got):\n%s", d)
	}
	if st := f.Adapter.Firmware.Ports()[f.Port-1]; !st.OperUp || st.SpeedGbps != 100 {
		t.Errorf("partner at 100G with RS(528,514): up %v at %d", st.OperUp, st.SpeedGbps)
	}
	if r := s.Do(Request{Op: "fault", BDF: f.BDF, Set: map[string]string{"link.partner": "absent"}}); !r.OK {
		t.Fatal(r.Error)
	}
	if st := f.Adapter.Firmware.Ports()[f.Port-1]; st.OperUp || !strings.Contains(st.DownReason, "partner") {
		t.Errorf("partner absent: up %v (%s)", st.OperUp, st.DownReason)
	}
	for _, bad := range []map[string]string{{"link.raw_ber": "2"}, {"link.partner": "gone"}, {"link.partner_fec": "rs9"},
		{"link.colour": "blue"}, {"link.lane_ber": "0,0,0,0,0,0,0,0,0"}, {"link.reset": "no"}} {
		if r := s.Do(Request{Op: "fault", BDF: f.BDF, Set: bad}); r.OK || r.Error == "" {
			t.Errorf("%v accepted", bad)
		}
	}
	if r := s.Do(Request{Op: "clear"}); !r.OK {
		t.Fatal(r.Error)
	}
	got, _ = f.Adapter.Firmware.Link(f.Port)
	if d := cmp.Diff(fw.LinkSpec{}, got); d != "" {
		t.Errorf("after clear (-want +got):\n%s", d)
	}
	if st := f.Adapter.Firmware.Ports()[f.Port-1]; !st.OperUp || st.SpeedGbps != 400 {
		t.Errorf("after clear: up %v at %d, want 400G", st.OperUp, st.SpeedGbps)
	}
}

// FuzzLinkSetting: a setting either is refused with a message and leaves
// the spec as it was, or gives a spec that validates.
func FuzzLinkSetting(f *testing.F) {
	f.Add("lane_ber", "0,0,3e-5")
	f.Add("partner_protocols", "CAUI-4,400GAUI-4")
	f.Add("raw_ber", "NaN")
	f.Add("partner_fec", "auto")
	f.Add("lane_ber", "0,0,0,0,0,0,0,0,0") // one lane more than any port has
	f.Fuzz(func(t *testing.T, k, v string) {
		spec := fw.LinkSpec{RawBER: 1e-9}
		before := spec
		down := false
		err := linkSetting(&spec, &down, map[string]string{k: v})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			if !cmp.Equal(before, spec) || down {
				t.Fatalf("%s=%q refused (%v) but changed the spec to %+v", k, v, err, spec)
			}
			return
		}
		if err := spec.Validate(fw.MaxLanes); err != nil {
			t.Fatalf("%s=%q accepted, spec %+v invalid: %v", k, v, spec, err)
		}
	})
}

// A link request for every function that one port cannot take changes
// none: an 8-lane BER list fits the first adapter's port (made 8 lanes
// wide here) but not the second's (4 lanes), and the first keeps its spec.
func TestLinkRequestAllOrNothing(t *testing.T) {
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse([]byte("devices:\n  - profile: cx7-2p400g\n  - profile: cx7-2p400g\n"), "two adapters")
	if err != nil {
		t.Fatal(err)
	}
	sc.Devices[0].Spec.Ports[0].Lanes = fw.MaxLanes
	e, err := scenario.Build(sc, scenario.Options{DB: db, Clock: clock.NewManual(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{e: e}
	fns := e.Functions()
	if len(fns) < 2 || fns[0].Adapter == fns[1].Adapter {
		t.Fatalf("want functions on two adapters, have %d", len(fns))
	}
	before, _ := fns[0].Adapter.Firmware.Link(fns[0].Port)
	r := s.Do(Request{Op: "fault", Set: map[string]string{"link.lane_ber": "0,0,0,0,0,0,0,1e-5"}})
	if r.OK || !strings.Contains(r.Error, "port has 4") {
		t.Fatalf("8 lane BERs on a 4-lane port: ok %v, error %q", r.OK, r.Error)
	}
	after, _ := fns[0].Adapter.Firmware.Link(fns[0].Port)
	if d := cmp.Diff(before, after); d != "" {
		t.Errorf("refused request changed the 8-lane port (-before +after):\n%s", d)
	}
	if r := s.Do(Request{Op: "fault", BDF: fns[0].BDF, Set: map[string]string{"link.lane_ber": "0,0,0,0,0,0,0,1e-5"}}); !r.OK {
		t.Errorf("8 lane BERs on the 8-lane port alone: %s", r.Error)
	}
}

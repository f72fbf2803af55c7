package hostlink_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/hostlink"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/pcie"
	"github.com/cxray/cxray/prm"
)

var start = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func TestResolve(t *testing.T) {
	s, err := hostlink.Spec{Card: pcie.Link{Speed: pcie.Gen5, Width: 16}, Slot: pcie.Link{Width: 8}}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	want := hostlink.Spec{Card: pcie.Link{Speed: pcie.Gen5, Width: 16}, Slot: pcie.Link{Speed: pcie.Gen5, Width: 8},
		Trained: pcie.Link{Speed: pcie.Gen5, Width: 8}, Target: pcie.Gen5}
	if d := cmp.Diff(want, s); d != "" {
		t.Errorf("an x8 slot (-want +got):\n%s", d)
	}
	for name, bad := range map[string]hostlink.Spec{
		"wider than the slot":   {Slot: pcie.Link{Width: 8}, Trained: pcie.Link{Width: 16}},
		"faster than the card":  {Card: pcie.Link{Speed: pcie.Gen4}, Trained: pcie.Link{Speed: pcie.Gen5}},
		"x3":                    {Trained: pcie.Link{Width: 3}},
		"x32":                   {Card: pcie.Link{Width: 32}},
		"target above the card": {Card: pcie.Link{Speed: pcie.Gen4}, Target: pcie.Gen5},
		"unknown error":         {CorrectablePerSec: map[string]float64{"CmpltTO": 1}},
		"negative rate":         {CorrectablePerSec: map[string]float64{"BadTLP": -1}},
	} {
		if _, err := bad.Resolve(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The model through the three paths a client reads: config space (decoded
// by package pcie, as cxray does), the AER counters the kernel's sysfs
// shows, and MPCNT's link counters; errors injected and steady.
func TestModelPaths(t *testing.T) {
	clk := clock.NewManual(start)
	m, err := hostlink.New(hostlink.Spec{Card: pcie.Link{Speed: pcie.Gen5, Width: 16}, Trained: pcie.Link{Speed: pcie.Gen4, Width: 16},
		CorrectablePerSec: map[string]float64{"BadDLLP": 0.5}}, clk, 2)
	if err != nil {
		t.Fatal(err)
	}
	dev := emu.New(emu.Config{Express: m.Express(1)})
	cfg := func() *pcie.ConfigView {
		buf := make([]byte, emu.ConfigSize)
		if _, err := dev.ReadAt(buf, 0); err != nil {
			t.Fatal(err)
		}
		return pcie.DecodeConfig(buf)
	}
	v := cfg()
	if v.Express == nil || v.AER == nil || len(v.Problems) != 0 {
		t.Fatalf("config space: %+v", v)
	}
	if v.Express.Capable != (pcie.Link{Speed: pcie.Gen5, Width: 16}) || v.Express.Current != (pcie.Link{Speed: pcie.Gen4, Width: 16}) || v.Express.Target != pcie.Gen5 {
		t.Errorf("express: %+v", v.Express)
	}
	if v.Express.DeviceStatus != 0 || v.AER.CorrectableRaw != 0 || v.AER.UncorrectableRaw != 0 {
		t.Errorf("errors at power-on: %+v %+v", v.Express, v.AER)
	}
	// Injected: correctable on function 1, a fatal and a non-fatal one.
	for _, e := range []struct {
		name string
		n    uint64
	}{{"BadTLP", 3}, {"MalfTLP", 1}, {"CmpltTO", 2}} {
		if err := m.Inject(1, e.name, e.n); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Inject(1, "NoSuchError", 1); err == nil {
		t.Error("an unknown error was injected")
	}
	if err := m.Inject(2, "BadTLP", 1); err == nil {
		t.Error("function 2 of 2 took an error")
	}
	clk.Advance(10 * time.Second) // 5 BadDLLP at 0.5/s
	v = cfg()
	if d := cmp.Diff([]string{"BadTLP", "BadDLLP"}, v.AER.Correctable()); d != "" {
		t.Errorf("correctable status: %s", d)
	}
	if d := cmp.Diff([]string{"MalfTLP"}, v.AER.Fatal()); d != "" {
		t.Errorf("fatal status: %s", d)
	}
	if d := cmp.Diff([]string{"CmpltTO"}, v.AER.NonFatal()); d != "" {
		t.Errorf("non-fatal status: %s", d)
	}
	if v.AER.FirstError != 18 {
		t.Errorf("first error %d, want 18 (MalfTLP)", v.AER.FirstError)
	}
	if want := uint16(pcie.DevStaCorrectable | pcie.DevStaNonFatal | pcie.DevStaFatal); v.Express.DeviceStatus != want {
		t.Errorf("device status %#x, want %#x", v.Express.DeviceStatus, want)
	}
	c, _ := m.Counts(1)
	want := hostlink.Counts{Correctable: map[int]uint64{6: 3, 7: 5}, NonFatal: map[int]uint64{14: 2}, Fatal: map[int]uint64{18: 1}}
	if d := cmp.Diff(want, c); d != "" {
		t.Errorf("counts of function 1 (-want +got):\n%s", d)
	}
	// The steady errors are on every function; the injected ones on one.
	c0, _ := m.Counts(0)
	if d := cmp.Diff(hostlink.Counts{Correctable: map[int]uint64{7: 5}, NonFatal: map[int]uint64{}, Fatal: map[int]uint64{}}, c0); d != "" {
		t.Errorf("counts of function 0 (-want +got):\n%s", d)
	}
	// The steady errors are the link's: counted once, not per function.
	if d := cmp.Diff(hostlink.Perf{CRCErrorTLP: 3, CRCErrorDLLP: 5}, m.Perf()); d != "" {
		t.Errorf("MPCNT (-want +got):\n%s", d)
	}
	// Clearing the status keeps the counts; a steady error sets its bit
	// again only when one more comes.
	if err := m.Clear(1); err != nil {
		t.Fatal(err)
	}
	v = cfg()
	if v.AER.CorrectableRaw != 0 || v.AER.UncorrectableRaw != 0 || v.Express.DeviceStatus != 0 {
		t.Errorf("after clear: %+v %+v", v.AER, v.Express)
	}
	clk.Advance(2 * time.Second)
	v = cfg()
	if d := cmp.Diff([]string{"BadDLLP"}, v.AER.Correctable()); d != "" {
		t.Errorf("a new steady error after clear: %s", d)
	}
	if c, _ = m.Counts(1); c.Correctable[7] != 6 || c.Correctable[6] != 3 {
		t.Errorf("counts after clear: %+v", c)
	}
	// Retraining changes what config space says; a link the ends cannot
	// train is refused and changes nothing.
	if err := m.Retrain(pcie.Link{Speed: pcie.Gen5, Width: 8}); err != nil {
		t.Fatal(err)
	}
	if err := m.Retrain(pcie.Link{Speed: pcie.Gen6}); err == nil {
		t.Error("a Gen6 link trained on a Gen5 card")
	}
	v = cfg()
	if v.Express.Current != (pcie.Link{Speed: pcie.Gen5, Width: 8}) {
		t.Errorf("retrained: %v", v.Express.Current)
	}
}

// MPEIN and MPCNT through the firmware of a built scenario, decoded with
// the built-in database as a client does.
func TestRegisters(t *testing.T) {
	sc, err := scenario.Parse([]byte(`
devices:
  - profile: cx7-2p400g
    functions: 2
    pcie: {width: 8, slot_speed: gen4, correctable_per_sec: {BadTLP: 2}}
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(start)
	e, err := scenario.Build(sc, scenario.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	a := e.Adapters[0]
	db := a.Firmware.DB()
	get := func(reg string, kv ...string) *prm.Decoded {
		t.Helper()
		r, _ := db.Register(reg)
		p, _ := db.RegisterPlan(r)
		buf := p.NewBuffer()
		var as []prm.Assignment
		for i := 0; i+1 < len(kv); i += 2 {
			as = append(as, prm.Assignment{Path: kv[i], Value: kv[i+1]})
		}
		if err := p.Encode(buf, as); err != nil {
			t.Fatal(err)
		}
		out, st := a.Functions[0].View.AccessRegister(uint16(r.ID), emu.MethodGet, buf)
		if st != 0 {
			t.Fatalf("%s: status %d", reg, st)
		}
		d, err := p.Decode(out)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	num := func(d *prm.Decoded, path string) uint64 {
		t.Helper()
		v, err := d.Get(path)
		if err != nil {
			t.Fatal(err)
		}
		return v.Uint()
	}
	d := get("MPEIN")
	got := map[string]uint64{}
	for _, f := range []string{"link_speed_enabled", "link_width_enabled", "link_speed_active", "link_width_active", "link_peer_max_speed", "num_of_pfs", "device_status"} {
		got[f] = num(d, f)
	}
	// Gen4 x8 trained (the Gen4 slot), a Gen5 x16 card: masks, not codes.
	want := map[string]uint64{"link_speed_enabled": 0x37, "link_width_enabled": 16, "link_speed_active": 0x10,
		"link_width_active": 8, "link_peer_max_speed": 0x17, "num_of_pfs": 2, "device_status": 0}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("MPEIN (-want +got):\n%s", d)
	}
	clk.Advance(5 * time.Second)
	if ds := num(get("MPEIN"), "device_status"); ds != pcie.DevStaCorrectable {
		t.Errorf("MPEIN device_status %#x after correctable errors", ds)
	}
	// 10 BadTLP on the link in 5 s (each of the 2 functions logs them,
	// the link counts them once).
	d = get("MPCNT", "grp", "0")
	if n := num(d, "counter_set.pcie_perf_counters_ext.crc_error_tlp"); n != 10 {
		t.Errorf("MPCNT crc_error_tlp %d, want 10", n)
	}
	get("MPCNT", "grp", "0", "clr", "1")
	clk.Advance(time.Second)
	if n := num(get("MPCNT", "grp", "0"), "counter_set.pcie_perf_counters_ext.crc_error_tlp"); n != 2 {
		t.Errorf("MPCNT crc_error_tlp %d a second after clr, want 2", n)
	}
	// Another DPN does not exist.
	r, _ := db.Register("MPEIN")
	p, _ := db.RegisterPlan(r)
	buf := p.NewBuffer()
	p.Encode(buf, []prm.Assignment{{Path: "node", Value: "1"}})
	if _, st := a.Functions[0].View.AccessRegister(uint16(r.ID), emu.MethodGet, buf); st != 7 {
		t.Errorf("MPEIN node 1: status %d, want 7 (bad parameter)", st)
	}
}

func TestParseInjection(t *testing.T) {
	got, err := hostlink.ParseInjection("BadTLP:5, CmpltTO ,BadTLP")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]uint64{"BadTLP": 6, "CmpltTO": 1}, got); d != "" {
		t.Error(d)
	}
	for _, bad := range []string{"", "BadTLP:0", "BadTLP:x", "Nope", ",", "BadTLP:-1"} {
		if _, err := hostlink.ParseInjection(bad); err == nil || !strings.Contains(err.Error(), "pcie.aer") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

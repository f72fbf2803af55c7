package monitor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm/builtin"
)

func TestParseAlert(t *testing.T) {
	a, err := ParseAlert("rate(ppcnt.symbol_errors) > 0")
	if err != nil || a.Fn != "rate" || a.Key != "ppcnt.symbol_errors" || a.Op != ">" || a.Limit != 0 {
		t.Fatalf("%+v %v", a, err)
	}
	cur := map[string]float64{"port1.ppcnt.symbol_errors": 30, "port2.ppcnt.symbol_errors": 10, "port1.ppcnt.other": 99}
	prev := map[string]float64{"port1.ppcnt.symbol_errors": 10, "port2.ppcnt.symbol_errors": 10}
	got := a.Eval(cur, prev, 10)
	if len(got) != 1 || !strings.Contains(got[0], "rate(port1.ppcnt.symbol_errors) = 2 > 0") {
		t.Errorf("rate alert %v", got)
	}
	if got := a.Eval(cur, nil, 10); len(got) != 0 {
		t.Errorf("rate without a previous sample fired: %v", got)
	}
	b, _ := ParseAlert("temp.*_c >= 70")
	if got := b.Eval(map[string]float64{"temp.asic_c": 70, "temp.module0_c": 40}, nil, 0); len(got) != 1 {
		t.Errorf("wildcard %v", got)
	}
	for _, bad := range []string{"temp.asic_c", "temp.asic_c > hot", "rate() > 1", "> 3"} {
		if _, err := ParseAlert(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestLogFileRepairAndRotate(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(p, []byte("{\"a\":1}\n{\"a\":2}\n{\"a\":"), 0o644)
	l, err := OpenLog(p, 40, 2)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "{\"a\":1}\n{\"a\":2}\n" {
		t.Fatalf("torn line not cut: %q", b)
	}
	for i := 0; i < 6; i++ {
		if err := l.WriteLine([]byte(`{"n":12345}`)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	for _, f := range []string{p, p + ".1"} {
		b, err := os.ReadFile(f)
		if err != nil || len(b) > 40 || !strings.HasSuffix(string(b), "\n") {
			t.Errorf("%s: %q %v", f, b, err)
		}
	}
	if _, err := os.Stat(p + ".3"); err == nil {
		t.Error("kept more rotated files than asked")
	}
}

// Frozen temperatures are reported once; a device that disappears is
// reported and the others keep being sampled.
func TestMonitorFrozenAndGone(t *testing.T) {
	db, _ := builtin.Load()
	sc, _ := scenario.Parse([]byte("devices:\n  - profile: cx7-2p400g\n  - profile: cx6dx-2p100g\n"), "t")
	clk := clock.NewManual(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	e, err := scenario.Build(sc, scenario.Options{DB: db, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var ts []*Target
	for _, f := range e.Functions() {
		d, _, err := dev.OpenConfigSpace(ctx, f.BDF, f.BDF, "emulator", db, f.Device, dev.StackOptions{Clock: clk, SemaphoreTimeout: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ad := adapter.New(adapter.Config{Name: f.BDF, BDF: f.BDF, Backend: dev.BackendEmulator, DB: db, Registers: d, Clock: clk})
		ts = append(ts, &Target{Name: f.BDF, Adapter: ad})
	}
	sensors, err := ts[0].Adapter.Temperatures(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := &Monitor{Collectors: []Collector{tempCollector{}}, FrozenAfter: 3, Now: clk.Now}
	e.Adapters[0].Firmware.SetFaults(fw.Faults{FreezeTemperatures: true})
	var frozen []string
	for i := 0; i < 6; i++ {
		for _, s := range m.Sample(ctx, ts) {
			if s.Device == ts[0].Name {
				frozen = append(frozen, s.Frozen...)
			} else if len(s.Frozen) > 0 {
				t.Errorf("moving device reported frozen: %v", s.Frozen)
			}
		}
		clk.Advance(10 * time.Minute)
	}
	if len(frozen) != len(sensors) || len(sensors) < 2 { // every sensor (ASIC and modules), each once
		t.Errorf("frozen reports %v for sensors %v", frozen, sensors)
	}
	// The first adapter is pulled out: reported, the second goes on.
	f0 := e.Functions()[0].Device
	fl := f0.Faults()
	fl.Removed = true
	f0.SetFaults(fl)
	ss := m.Sample(ctx, ts)
	if len(ss[0].Values) != 0 || len(ss[0].Errors) == 0 || !strings.Contains(ss[0].Errors[0], "stopped answering") {
		t.Errorf("gone device: %+v", ss[0])
	}
	if len(ss[1].Values) == 0 {
		t.Errorf("the other device stopped too: %+v", ss[1])
	}
	fl.Removed = false
	f0.SetFaults(fl)
	ss = m.Sample(ctx, ts)
	if len(ss[0].Values) == 0 || !strings.Contains(strings.Join(ss[0].Errors, ";"), "answers again") {
		t.Errorf("back: %+v", ss[0])
	}
}

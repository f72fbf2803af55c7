package monitor_test

import (
	"context"
	"testing"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/internal/emuadapter"
	"github.com/cxray/cxray/prm/builtin"
)

// --what link on the link-trouble example: the degraded lane's ratio is
// the model's, a down port has its opcode and no ratio, and nothing is
// reported as unreadable.
func TestLinkCollector(t *testing.T) {
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load("../examples/link-trouble.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(scenario.DefaultStart)
	em, err := scenario.Build(sc, scenario.Options{DB: db, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	e := &emuadapter.Emulator{Stack: dev.StackOptions{Clock: clk, SemaphoreTimeout: 50 * time.Millisecond}}
	ads, err := e.Open(context.Background(), em, em.Functions(), "emu:link-trouble", true, nil, adapter.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	defer adapter.CloseAll(ads)
	// At power-on no time has passed since the clear: no ratio at all.
	out, errs := collect(t, ads[1], "link")
	if _, ok := out["port1.link.raw_ber"]; ok || len(errs) > 0 {
		t.Errorf("no time since clear: raw BER %v, errors %v", out["port1.link.raw_ber"], errs)
	}
	clk.Advance(time.Minute)
	out, errs = collect(t, ads[1], "link")
	if b := out["port1.link.lane2_raw_ber"]; b < 3.9e-5 || b > 4.1e-5 || len(errs) > 0 {
		t.Errorf("degraded lane 2 BER %v (errors %v), want 4e-5", b, errs)
	}
	if out["port1.link.up"] != 1 || out["port1.link.speed_gbps"] != 400 || out["port1.link.verdicts"] != 1 {
		t.Errorf("up %v speed %v verdicts %v", out["port1.link.up"], out["port1.link.speed_gbps"], out["port1.link.verdicts"])
	}
	down, _ := collect(t, ads[2], "link")
	if _, ok := down["port1.link.raw_ber"]; ok || down["port1.link.up"] != 0 || down["port1.link.status_opcode"] != 2 {
		t.Errorf("down port: %v", down)
	}
}

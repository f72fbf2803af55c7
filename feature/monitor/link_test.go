package monitor_test

import (
	"testing"
	"time"

	"github.com/cxray/cxray/emu/emuadapter/emutest"
)

// --what link on the link-trouble example: the degraded lane's ratio is
// the model's, a down port has its opcode and no ratio, and nothing is
// reported as unreadable.
func TestLinkCollector(t *testing.T) {
	ads, clk := emutest.OpenFile(t, "../../examples/link-trouble.yaml")
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

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

// --what link and counters on the GPU node's InfiniBand ports: the
// degraded port's width, the IB counters that grow on the planted port,
// under keys an alert can name (rate(ib.symbol_error) ...).
func TestInfiniBandCollectors(t *testing.T) {
	ads, clk := emutest.OpenFile(t, "../../examples/gpu-node.yaml")
	clk.Advance(10 * time.Minute)
	deg, errs := collect(t, ads[3], "link")
	if deg["port1.link.width"] != 2 || deg["port1.link.speed_gbps"] != 200 || len(errs) > 0 {
		t.Errorf("0000:5e:00.0: width %v speed %v (errors %v), want 2 lanes at 200", deg["port1.link.width"], deg["port1.link.speed_gbps"], errs)
	}
	noisy, _ := collect(t, ads[5], "link")
	if noisy["port1.link.ib_link_error_recovery"] != 20 || noisy["port1.link.ib_symbol_errors"] < 2280 {
		t.Errorf("0000:c0:00.0: recoveries %v, symbol errors %v; want 20 and about 2400",
			noisy["port1.link.ib_link_error_recovery"], noisy["port1.link.ib_symbol_errors"])
	}
	c, _ := collect(t, ads[5], "counters")
	if c["port1.ib.symbol_error"] != noisy["port1.link.ib_symbol_errors"] || c["port1.ib.link_downed"] != 0 {
		t.Errorf("counters: symbol_error %v, link_downed %v; the link collector read %v", c["port1.ib.symbol_error"], c["port1.ib.link_downed"], noisy["port1.link.ib_symbol_errors"])
	}
	if _, ok := c["port1.ppcnt.a_frames_transmitted_ok"]; ok {
		t.Error("an InfiniBand port reports Ethernet MAC counters")
	}
}

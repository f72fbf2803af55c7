package fw_test

import (
	"testing"
	"time"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
)

// mstlink's PRBS flow on the emulated port: PAOS down, the generator and
// the checker on, PPAOS test mode. The PHY trains for the pattern (the
// checker locks) while PAOS says the port is down; PPAOS says it is in
// test mode; phy_test_mode_admin 0 (mstlink's DS) ends the test.
func TestPRBSTestModeAndPPAOS(t *testing.T) {
	r := newRig(t)
	r.clk.Advance(10 * time.Second) // the module and link are up
	if d := r.get("PAOS", "local_port", "1"); enum(t, d, "oper_status") != "up" {
		t.Fatalf("before the test: PAOS oper %s", enum(t, d, "oper_status"))
	}
	if d := r.get("PPAOS", "local_port", "1"); u(t, d, "phy_test_mode_status") != 0 {
		t.Fatalf("before the test: PPAOS says test mode")
	}
	r.set("PAOS", "local_port", "1", "admin_status", "2", "ase", "1")
	r.set("PPTT", "local_port", "1", "e", "1", "prbs_mode_admin", "0", "lane_rate_admin", "5")
	r.set("PPRT", "local_port", "1", "e", "1", "prbs_mode_admin", "0", "lane_rate_oper", "5")
	r.set("PPAOS", "local_port", "1", "phy_test_mode_admin", "1")
	r.clk.Advance(10 * time.Second)
	if d := r.get("PAOS", "local_port", "1"); enum(t, d, "oper_status") != "down" {
		t.Errorf("in test mode, admin down: PAOS oper %s, want down", enum(t, d, "oper_status"))
	}
	if d := r.get("PPAOS", "local_port", "1"); u(t, d, "phy_test_mode_status") != 1 || u(t, d, "phy_test_mode_admin") != 1 {
		t.Errorf("in test mode: PPAOS status %d admin %d, want 1/1", u(t, d, "phy_test_mode_status"), u(t, d, "phy_test_mode_admin"))
	}
	if d := r.get("PPRT", "local_port", "1"); u(t, d, "prbs_lock_status") == 0 {
		t.Errorf("in test mode: the checker has not locked on any lane")
	}
	if d := r.get("PPAOS", "local_port", "2"); u(t, d, "phy_test_mode_status") != 0 {
		t.Errorf("port 2 says test mode")
	}
	r.set("PPAOS", "local_port", "1", "phy_test_mode_admin", "0")
	if d := r.get("PPAOS", "local_port", "1"); u(t, d, "phy_test_mode_status") != 0 {
		t.Errorf("after phy_test_mode_admin 0: PPAOS still says test mode")
	}
	if d := r.get("PPTT", "local_port", "1"); u(t, d, "e") != 0 {
		t.Errorf("after phy_test_mode_admin 0: the generator still runs")
	}
	if _, st := r.access(emu.MethodSet, "PPAOS", "local_port", "1", "phy_test_mode_admin", "7"); st == fw.StatusOK {
		t.Errorf("phy_test_mode_admin 7 accepted")
	}
}

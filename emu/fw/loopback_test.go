package fw_test

import (
	"testing"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
)

// paosOper is PAOS oper_status of a port (1 up, 2 down).
func paosOper(t *testing.T, r *rig, port string) uint64 {
	t.Helper()
	return u(t, r.get("PAOS", "local_port", port), "oper_status")
}

// PPLR: lb_cap lists remote, PHY local and external loopback; lb_en takes
// one of them (two bits, or one outside lb_cap, are refused). PHY local
// loopback brings a port whose partner is gone up by itself, and PDDR
// says so; external loopback needs a module in the cage; remote loopback
// leaves the link to the partner; NO puts the port back to its partner.
func TestLoopback(t *testing.T) {
	r := newRig(t, func(s *fw.Spec) {
		s.Modules[1].Absent = true
	})
	if err := r.fw.SetFaults(fw.Faults{LinkDown: []int{1}}); err != nil {
		t.Fatal(err)
	}
	if got := u(t, r.get("PPLR", "local_port", "1"), "lb_cap"); got != 7 {
		t.Errorf("lb_cap 0x%x, want 0x7 (remote, PHY local, external)", got)
	}
	for _, v := range []string{"6", "8", "0x80"} {
		if _, st := r.access(emu.MethodSet, "PPLR", "local_port", "1", "lb_en", v); st != fw.StatusBadParam {
			t.Errorf("lb_en=%s: status %d, want bad parameter", v, st)
		}
	}
	if got := paosOper(t, r, "1"); got != 2 {
		t.Fatalf("port 1 without partner: oper %d, want 2 (down)", got)
	}
	const lbMode = "page_data.pddr_operation_info_page_ext.loopback_mode"
	for _, c := range []struct {
		port, lb string
		oper     uint64
		why      string
	}{
		{"1", "2", 1, "PHY local loopback needs no partner"},
		{"1", "1", 2, "remote loopback still needs the partner"},
		{"1", "4", 1, "external loopback: the module in the cage links the port with itself"},
		{"2", "4", 2, "external loopback with an empty cage"},
		{"2", "2", 1, "PHY local loopback needs no module"},
		{"1", "0", 2, "no loopback: back to the partner, who is gone"},
	} {
		r.set("PPLR", "local_port", c.port, "lb_en", c.lb)
		if got := u(t, r.get("PPLR", "local_port", c.port), "lb_en"); got != u64(c.lb) {
			t.Errorf("port %s: lb_en reads %d after writing %s", c.port, got, c.lb)
		}
		if got := paosOper(t, r, c.port); got != c.oper {
			t.Errorf("port %s lb_en=%s: oper %d, want %d (%s)", c.port, c.lb, got, c.oper, c.why)
		}
		if got := u(t, r.get("PDDR", "local_port", c.port, "page_select", "0"), lbMode); got != u64(c.lb) {
			t.Errorf("port %s: PDDR loopback_mode %d, want %s", c.port, got, c.lb)
		}
	}
}

func u64(s string) uint64 {
	var v uint64
	for _, c := range s {
		v = v*10 + uint64(c-'0')
	}
	return v
}

package fw_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
)

// The recorder hears of every access that changed the device (a SET, a
// GET with an OP field such as PPCNT clr), and of nothing else; replaying
// what it heard on a second copy of the firmware, at the same times,
// brings that copy to the same state, whatever faults the copy has on.
func TestRecorderReplay(t *testing.T) {
	a, b := newRig(t), newRig(t)
	var heard []fw.Change
	a.fw.SetRecorder(func(c fw.Change) { heard = append(heard, c) })
	a.clk.Advance(time.Minute)
	a.get("PAOS", "local_port", "1")
	a.get("PPCNT", "local_port", "1", "grp", "IEEE_802_3_Counters")
	a.set("PAOS", "local_port", "1", "admin_status", "down_by_configuration", "ase", "1")
	a.clk.Advance(time.Minute)
	a.get("PPCNT", "local_port", "2", "grp", "IEEE_802_3_Counters", "clr", "1")
	if _, st := a.access(emu.MethodSet, "PAOS", "local_port", "9", "admin_status", "up", "ase", "1"); st == fw.StatusOK {
		t.Fatal("a SET of a port that does not exist worked")
	}
	var got []string
	for _, c := range heard {
		got = append(got, c.Method.String()+" "+c.Time.Sub(t0).String())
	}
	if d := cmp.Diff([]string{"SET 1m0s", "GET 2m0s"}, got); d != "" {
		t.Fatalf("recorded (-want +got):\n%s", d)
	}
	// b refuses PAOS by a fault and is busy: faults do not apply to replays.
	if err := b.fw.SetFaults(fw.Faults{Busy: 5, Status: []fw.StatusFault{{Register: "PAOS", Status: fw.StatusBadParam}}}); err != nil {
		t.Fatal(err)
	}
	var heardB int
	b.fw.SetRecorder(func(fw.Change) { heardB++ })
	for _, c := range heard {
		b.clk.Advance(c.Time.Sub(b.clk.Now()))
		if st, why := b.fw.Replay(c.ID, c.Method, c.Data); st != fw.StatusOK {
			t.Fatalf("replay: status %d: %s", st, why)
		}
	}
	if heardB != 0 {
		t.Errorf("replays were recorded %d times", heardB)
	}
	if f := b.fw.Faults(); f.Busy != 5 {
		t.Errorf("replays counted down the busy fault: %d left", f.Busy)
	}
	b.fw.SetFaults(fw.Faults{})
	for _, r := range []*rig{a, b} {
		r.clk.Advance(time.Hour - (r.clk.Now().Sub(t0)))
	}
	for _, reg := range [][]string{
		{"PAOS", "local_port", "1"},
		{"PPCNT", "local_port", "2", "grp", "IEEE_802_3_Counters"},
		{"PPCNT", "local_port", "1", "grp", "IEEE_802_3_Counters"},
	} {
		da, db := a.get(reg[0], reg[1:]...), b.get(reg[0], reg[1:]...)
		if d := cmp.Diff(da.Assignments(), db.Assignments()); d != "" {
			t.Errorf("%v differs after the replay (-original +replayed):\n%s", reg, d)
		}
	}
}

package prm_test

import (
	"testing"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

// A layout that holds both foo and foo_ext (PPRT: prbs_lock_status_ext,
// lanes 4-7, comes before prbs_lock_status, lanes 0-3) answers foo with
// foo itself, reading and writing; the _ext spelling is only a fallback
// for names a later revision renamed.
func TestExactNameBeforeExtSpelling(t *testing.T) {
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	reg, err := db.Register("PPRT")
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.RegisterPlan(reg)
	if err != nil {
		t.Fatal(err)
	}
	buf := p.NewBuffer()
	if err := p.Encode(buf, []prm.Assignment{{Path: "prbs_lock_status", Value: "0xf"}, {Path: "prbs_lock_status_ext", Value: "0x3"}}); err != nil {
		t.Fatal(err)
	}
	d, err := p.Decode(buf)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]uint64{"prbs_lock_status": 0xf, "prbs_lock_status_ext": 0x3, "PRBS_LOCK_STATUS": 0xf} {
		v, err := d.Get(path)
		if err != nil || v.Uint() != want {
			t.Errorf("Get(%s) = %v, %v; want %#x", path, v.Uint(), err, want)
		}
	}
}

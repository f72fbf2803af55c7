package emutest_test

import (
	"testing"
	"time"

	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/prm"
)

// TestPlainRepeats: what counts as a plain repeat.
func TestPlainRepeats(t *testing.T) {
	db := devtest.DB(t)
	mgir, _ := db.Register("MGIR")
	paos, _ := db.Register("PAOS")
	t0 := time.Unix(0, 0)
	t1 := t0.Add(time.Second)
	get := func(r *prm.Register, at time.Time, b ...byte) emutest.Transaction {
		return emutest.Transaction{uint16(r.ID), emu.MethodGet, b, at, 0}
	}
	busy := func(r *prm.Register, at time.Time) emutest.Transaction {
		return emutest.Transaction{uint16(r.ID), emu.MethodGet, nil, at, 1}
	}
	set := func(r *prm.Register, at time.Time) emutest.Transaction {
		return emutest.Transaction{uint16(r.ID), emu.MethodSet, []byte{1}, at, 0}
	}
	for _, c := range []struct {
		name string
		log  []emutest.Transaction
		want int
	}{
		{"the same read twice", []emutest.Transaction{get(mgir, t0), get(mgir, t0)}, 1},
		{"three times", []emutest.Transaction{get(mgir, t0), get(paos, t0, 1), get(mgir, t0), get(mgir, t0)}, 2},
		{"another index", []emutest.Transaction{get(paos, t0, 1), get(paos, t0, 2)}, 0},
		{"a write between", []emutest.Transaction{get(paos, t0, 1), set(paos, t0), get(paos, t0, 1)}, 0},
		{"a write to another register between", []emutest.Transaction{get(mgir, t0), set(paos, t0), get(mgir, t0)}, 0},
		{"a second sample", []emutest.Transaction{get(mgir, t0), get(mgir, t1)}, 0},
		{"twice in the second sample", []emutest.Transaction{get(mgir, t0), get(mgir, t1), get(mgir, t1)}, 1},
		{"again after busy", []emutest.Transaction{busy(mgir, t0), get(mgir, t0)}, 0},
	} {
		if got := emutest.PlainRepeats(db, c.log); len(got) != c.want {
			t.Errorf("%s: %d plain repeats %v, want %d", c.name, len(got), got, c.want)
		}
	}
}

package tracetest_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/tracetest"
)

// Kinds keeps the order of the events it picks; Count and Reset agree.
func TestRecorder(t *testing.T) {
	var r tracetest.Recorder
	evs := []emu.Event{{Kind: emu.EvSemTaken, Value: 1}, {Kind: emu.EvRead, Addr: 4}, {Kind: emu.EvSemReleased, Value: 1}, {Kind: emu.EvRead, Addr: 8}}
	for _, e := range evs {
		r.Record(e)
	}
	if d := cmp.Diff([]emu.Event{evs[0], evs[2]}, r.Kinds(emu.EvSemReleased, emu.EvSemTaken)); d != "" {
		t.Errorf("Kinds (-want +got):\n%s", d)
	}
	if r.Count(emu.EvRead) != 2 || len(r.Events()) != 4 {
		t.Errorf("Count(EvRead) %d (want 2), %d events (want 4)", r.Count(emu.EvRead), len(r.Events()))
	}
	r.Reset()
	if n := len(r.Events()); n != 0 {
		t.Errorf("%d events after Reset", n)
	}
}

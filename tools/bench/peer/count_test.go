package main

import (
	"testing"

	"github.com/cxray/cxray/emu"
)

func TestCycles(t *testing.T) {
	for _, c := range []struct {
		off  int64
		n, w int
	}{
		{0xD0, 4, 1}, {0xD0, 8, 2}, {0x00, 64, 16}, {0x01, 1, 1}, {0x01, 3, 2}, {0x02, 2, 1}, {0x03, 6, 3}, {0x00, 0, 0},
	} {
		if got := cycles(c.off, c.n); got != c.w {
			t.Errorf("cycles(0x%x, %d) = %d, want %d", c.off, c.n, got, c.w)
		}
	}
}

func TestCounterAttributes(t *testing.T) {
	c := newCounter()
	g := int64(emu.GatewayOffset)
	for _, e := range []emu.Event{
		{Kind: emu.EvConfigRead, Off: 0, Size: 64},
		{Kind: emu.EvConfigRead, Off: g + 0xC, Size: 4},
		{Kind: emu.EvConfigWrite, Off: g + 0x10, Size: 4},
		{Kind: emu.EvConfigRead, Off: g + 0x10, Size: 8},
		{Kind: emu.EvRead, Space: 0x3, Addr: 0x100004},
		{Kind: emu.EvWrite, Space: 0xA, Addr: 0},
		{Kind: emu.EvRegister, RegID: 0x5006},
		{Kind: emu.EvConfigWrite, Off: g + 0xC, Size: 4},
	} {
		c.record(e)
	}
	tl := c.snapshot()
	if tl.Ops() != 5 || tl.Cycles != 16+1+1+2+1 {
		t.Errorf("ops %d cycles %d", tl.Ops(), tl.Cycles)
	}
	for k, want := range map[string]int{"read header": 1, "read SEM": 1, "write ADDR": 1, "read ADDR+DATA": 1, "write SEM": 1} {
		if tl.ByTarget[k] != want {
			t.Errorf("%s: %d, want %d (%v)", k, tl.ByTarget[k], want, tl.ByTarget)
		}
	}
	if tl.Transactions["ICMD mailbox read"] != 1 || tl.Transactions["ICMD semaphore write"] != 1 {
		t.Errorf("transactions %v", tl.Transactions)
	}
	if len(tl.Segments) != 1 || tl.Segments[0] != (Segment{"0x5006", 4}) || tl.Tail != 1 || tl.RegisterAccesses() != 1 {
		t.Errorf("segments %v tail %d", tl.Segments, tl.Tail)
	}
	if n := c.snapshot(); n.Ops() != 0 || n.Tail != 0 {
		t.Errorf("snapshot did not start a new tally: %+v", n)
	}
}

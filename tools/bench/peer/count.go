package main

import (
	"fmt"
	"sort"
	"sync"

	"github.com/cxray/cxray/emu"
)

// Tally counts what one command did to the emulated function, from the
// device's trace: config-space calls as the FUSE file system delivered them
// (one pread/pwrite of the sysfs config file each), the dword cycles those
// are on a real PCI bus, and what the gateway made of them.
type Tally struct {
	// Config-space calls (FUSE requests): every pread/pwrite.
	Reads, Writes int
	// Cycles are the aligned 1-, 2- or 4-byte config cycles the calls
	// split into (an 8-byte read is two), as Linux issues them on hardware.
	Cycles int
	// Calls by what they touched: "read SEM", "write ADDR", "read
	// ADDR+DATA" (one 8-byte read), "read header" (below the capability).
	ByTarget map[string]int
	// Gateway dword transactions by purpose ("ICMD mailbox read", ...).
	Transactions map[string]int
	SemTaken     int // gateway semaphore acquisitions
	SpaceSelects int
	ICMD         map[string]int // commands by opcode
	Registers    map[string]int // access-register requests by register ID
	// Segments attribute the config calls to register accesses: each holds
	// the calls since the previous access ended, up to and including this
	// one (the first also carries opening the device). Tail is what came
	// after the last access (closing).
	Segments []Segment
	Tail     int
}

// Segment is one register access and the config calls it took.
type Segment struct {
	Reg string
	Ops int
}

// Ops is the number of config-space calls.
func (t *Tally) Ops() int { return t.Reads + t.Writes }

// RegisterAccesses is the number of access-register requests.
func (t *Tally) RegisterAccesses() int {
	n := 0
	for _, v := range t.Registers {
		n += v
	}
	return n
}

func newTally() *Tally {
	return &Tally{ByTarget: map[string]int{}, Transactions: map[string]int{}, ICMD: map[string]int{}, Registers: map[string]int{}}
}

// counter records the events of every emulated function.
type counter struct {
	mu  sync.Mutex
	t   *Tally
	seg int // config calls since the last register access
}

func newCounter() *counter { return &counter{t: newTally()} }

// snapshot returns the tally so far and starts a new one.
func (c *counter) snapshot() *Tally {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	t.Tail = c.seg
	c.t, c.seg = newTally(), 0
	return t
}

// Gateway register offsets from the capability (access/vsec/gateway.go;
// mstflint's mtcr_ul/mtcr_ul_com.c).
var gatewayRegs = map[int64]string{0x0: "capability header", 0x4: "CTRL", 0x8: "COUNTER", 0xC: "SEM", 0x10: "ADDR", 0x14: "DATA"}

func target(off int64, size int) string {
	rel := off - emu.GatewayOffset
	switch {
	case rel < 0 || rel >= 0x18:
		return "header"
	case rel == 0x10 && size == 8:
		return "ADDR+DATA"
	}
	if n, ok := gatewayRegs[rel&^3]; ok {
		return n
	}
	return fmt.Sprintf("gateway+0x%x", rel)
}

// purpose names a gateway transaction (ICMD layout: access/icmd/icmd.go and
// mstflint's mtcr_ul/mtcr_ul_icmd_cif.c; spaces: access/vsec/space.go).
func purpose(kind emu.EventKind, space uint16, addr uint32) string {
	dir := "read"
	if kind == emu.EvWrite {
		dir = "write"
	}
	switch space {
	case 0x3, 0x1:
		switch {
		case addr == 0:
			return "ICMD control " + dir
		case addr == 0x1000:
			return "ICMD mailbox-size " + dir
		case addr >= 0x100000:
			return "ICMD mailbox " + dir
		}
		return "ICMD other " + dir
	case 0xA:
		return "ICMD semaphore " + dir
	case 0x2, 0x6:
		return "CR space " + dir
	}
	return fmt.Sprintf("space 0x%x %s", space, dir)
}

// cycles is how many aligned config cycles Linux splits an access into.
func cycles(off int64, n int) int {
	c := 0
	if off&1 != 0 && n > 0 {
		c, off, n = c+1, off+1, n-1
	}
	if off&3 != 0 && n > 2 {
		c, off, n = c+1, off+2, n-2
	}
	c += n / 4
	n %= 4
	if n >= 2 {
		c, n = c+1, n-2
	}
	if n > 0 {
		c++
	}
	return c
}

// record is the device's trace hook (it runs with the device locked).
func (c *counter) record(e emu.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	switch e.Kind {
	case emu.EvConfigRead:
		c.seg++
		t.Reads++
		t.Cycles += cycles(e.Off, e.Size)
		t.ByTarget["read "+target(e.Off, e.Size)]++
	case emu.EvConfigWrite:
		c.seg++
		t.Writes++
		t.Cycles += cycles(e.Off, e.Size)
		t.ByTarget["write "+target(e.Off, e.Size)]++
	case emu.EvRead, emu.EvWrite:
		t.Transactions[purpose(e.Kind, e.Space, e.Addr)]++
	case emu.EvSemTaken:
		t.SemTaken++
	case emu.EvSpaceSelect:
		t.SpaceSelects++
	case emu.EvICMDStart:
		t.ICMD[fmt.Sprintf("0x%04x", e.Opcode)]++
	case emu.EvRegister:
		id := fmt.Sprintf("0x%04x", e.RegID)
		t.Registers[id]++
		t.Segments = append(t.Segments, Segment{Reg: id, Ops: c.seg})
		c.seg = 0
	}
}

// add accumulates u into t.
func (t *Tally) add(u *Tally) {
	t.Reads += u.Reads
	t.Writes += u.Writes
	t.Cycles += u.Cycles
	t.SemTaken += u.SemTaken
	t.SpaceSelects += u.SpaceSelects
	for _, p := range []struct{ dst, src map[string]int }{{t.ByTarget, u.ByTarget}, {t.Transactions, u.Transactions}, {t.ICMD, u.ICMD}, {t.Registers, u.Registers}} {
		for k, v := range p.src {
			p.dst[k] += v
		}
	}
}

func sortedKeys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

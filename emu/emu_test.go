package emu

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"
	"testing"
	"time"
)

// Raw config-space helpers: tests here drive the device the way the kernel
// would, without the access packages.

func rd(t testing.TB, d *Device, off int64, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := d.ReadAt(b, off); err != nil {
		t.Fatalf("ReadAt(0x%x, %d): %v", off, n, err)
	}
	return b
}

func rd32(t testing.TB, d *Device, off int64) uint32 {
	return binary.LittleEndian.Uint32(rd(t, d, off, 4))
}

func wr32(t testing.TB, d *Device, off int64, v uint32) {
	t.Helper()
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	if _, err := d.WriteAt(b[:], off); err != nil {
		t.Fatalf("WriteAt(0x%x): %v", off, err)
	}
}

const (
	gCtrl = GatewayOffset + gwCtrl
	gCnt  = GatewayOffset + gwCounter
	gSem  = GatewayOffset + gwSem
	gAddr = GatewayOffset + gwAddr
	gData = GatewayOffset + gwData
)

// gwRead32/gwWrite32 run one gateway transaction (semaphore not taken unless
// the test does it).
func gwRead32(t testing.TB, d *Device, space uint16, addr uint32) (uint32, uint32) {
	wr32(t, d, gCtrl, uint32(space))
	wr32(t, d, gAddr, addr)
	return rd32(t, d, gAddr), rd32(t, d, gData)
}

func gwWrite32(t testing.TB, d *Device, space uint16, addr, v uint32) uint32 {
	wr32(t, d, gCtrl, uint32(space))
	wr32(t, d, gData, v)
	wr32(t, d, gAddr, addr|addrFlag)
	return rd32(t, d, gAddr)
}

// recorder keeps the trace of one test's device. (tracetest.Recorder is
// the same for the other packages; this package's own tests cannot import
// it, since it imports emu.)
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) Record(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Kinds returns the events of the given kinds, in order.
func (r *recorder) Kinds(kinds ...EventKind) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, e := range r.events {
		if slices.Contains(kinds, e.Kind) {
			out = append(out, e)
		}
	}
	return out
}

func (r *recorder) Count(k EventKind) int { return len(r.Kinds(k)) }

func newDev(fw Firmware) (*Device, *recorder) {
	d := New(Config{Firmware: fw, Clock: NewManualClock(time.Unix(1000, 0))})
	rec := &recorder{}
	d.SetTrace(rec.Record)
	return d, rec
}

func TestHeaderAndCapabilityList(t *testing.T) {
	d, _ := newDev(nil)
	h := rd(t, d, 0, 64)
	le16 := func(o int) uint16 { return binary.LittleEndian.Uint16(h[o:]) }
	if le16(0) != 0x15b3 || le16(2) != 0x1021 {
		t.Errorf("vendor/device = %04x:%04x, want 15b3:1021", le16(0), le16(2))
	}
	if le16(6)&0x10 == 0 {
		t.Error("status register lacks the capabilities-list bit")
	}
	if class := uint32(h[9]) | uint32(h[10])<<8 | uint32(h[11])<<16; class != 0x020000 {
		t.Errorf("class = %06x, want 020000", class)
	}
	if le16(0x2C) != 0x15b3 || le16(0x2E) != 0x0021 {
		t.Errorf("subsystem = %04x:%04x", le16(0x2C), le16(0x2E))
	}
	var ids []byte
	var at []byte
	for p := rd(t, d, 0x34, 1)[0]; p != 0; {
		c := rd(t, d, int64(p), 4)
		ids, at = append(ids, c[0]), append(at, p)
		if c[0] == 0x09 && (c[2] != 0x18 || c[3] != 0) {
			t.Errorf("gateway header len/type = %#x/%d, want 0x18/0", c[2], c[3])
		}
		p = c[1]
	}
	if !bytes.Equal(ids, []byte{0x10, 0x03, 0x11, 0x09, 0x01}) || !bytes.Equal(at, []byte{0x60, 0x48, 0x9C, 0xC0, 0x40}) {
		t.Errorf("capability chain ids %x at %x", ids, at)
	}
}

// Reads of 1, 2, 4 and 64 bytes at any offset must return the same bytes as
// dword reads (outside side-effecting registers), and config space ends at 4 KiB.
func TestAccessSizesAndOffsets(t *testing.T) {
	d, _ := newDev(nil)
	wr32(t, d, gData, 0xA1B2C3D4)
	ref := make([]byte, 0x100)
	for o := 0; o < 0x100; o += 4 {
		if o == gCnt {
			continue
		}
		binary.LittleEndian.PutUint32(ref[o:], rd32(t, d, int64(o)))
	}
	for _, size := range []int{1, 2, 3, 4, 8, 64} {
		for off := 0; off+size <= 0x100; off++ {
			if off < gCnt+4 && off+size > gCnt {
				continue
			}
			if got := rd(t, d, int64(off), size); !bytes.Equal(got, ref[off:off+size]) {
				t.Fatalf("read %d@0x%x = %x, want %x", size, off, got, ref[off:off+size])
			}
		}
	}
	b := make([]byte, 8)
	if n, err := d.ReadAt(b, ConfigSize-4); n != 4 || err == nil {
		t.Errorf("read across the end: n=%d err=%v, want 4 and EOF", n, err)
	}
	if _, err := d.WriteAt(b, ConfigSize); err == nil {
		t.Error("write beyond config space succeeded")
	}
	if _, err := d.ReadAt(b, -1); err == nil {
		t.Error("negative offset accepted")
	}
}

// COUNTER gives a new ticket per configuration cycle, and accesses are split
// into cycles as Linux splits them.
func TestCounterCycles(t *testing.T) {
	d, _ := newDev(nil)
	c0 := rd32(t, d, gCnt)
	if c1 := rd32(t, d, gCnt); c1 != c0+1 || c0 == 0 {
		t.Fatalf("counter %d then %d, want distinct non-zero increasing", c0, c1)
	}
	rd(t, d, gCnt+1, 1) // one byte cycle
	rd(t, d, gCnt, 8)   // one dword cycle on COUNTER, one on SEM
	rd(t, d, gCnt+1, 3) // byte at +1 and word at +2: two cycles
	if got := rd32(t, d, gCnt); got != c0+6 {
		t.Errorf("counter = %d after 1+1+1+2 more cycles, want %d", got, c0+6)
	}
}

func TestCtrlPartialWriteAndReadOnlyBits(t *testing.T) {
	d, rec := newDev(nil)
	if _, err := d.WriteAt([]byte{0x03}, gCtrl); err != nil {
		t.Fatal(err)
	}
	if v := rd32(t, d, gCtrl); v != ctrlSupported|spaceICMD {
		t.Fatalf("CTRL = %#x after selecting 3, want %#x", v, ctrlSupported|spaceICMD)
	}
	wr32(t, d, gCtrl, 0xFFFF0007) // status bits are read-only; 7 is unsupported
	if v := rd32(t, d, gCtrl); v != 0x7 {
		t.Errorf("CTRL = %#x after selecting unsupported space 7 with junk in [31:16], want 0x7", v)
	}
	if rec.Count(EvSpaceSelect) != 2 {
		t.Errorf("space-select events = %d, want 2", rec.Count(EvSpaceSelect))
	}
}

func TestGatewaySemaphoreSemantics(t *testing.T) {
	d, rec := newDev(nil)
	wr32(t, d, gSem, 5)
	wr32(t, d, gSem, 9) // held: ignored
	if v := rd32(t, d, gSem); v != 5 {
		t.Fatalf("semaphore = %d, want 5 (second writer must be ignored)", v)
	}
	wr32(t, d, gSem, 0)
	if v := rd32(t, d, gSem); v != 0 {
		t.Fatalf("semaphore = %d after release", v)
	}
	ev := rec.Kinds(EvSemTaken, EvSemReleased)
	if len(ev) != 2 || ev[0].Kind != EvSemTaken || ev[0].Value != 5 || ev[1].Kind != EvSemReleased || ev[1].Value != 5 {
		t.Errorf("events %v", ev)
	}
}

func TestTransactionsFlagAndSyndrome(t *testing.T) {
	d, rec := newDev(nil)
	wr32(t, d, gSem, 1)
	a, v := gwRead32(t, d, spaceCR, crHardwareID)
	if a != addrFlag|crHardwareID || v != 0x218 {
		t.Fatalf("read: ADDRESS=%#x DATA=%#x, want flag set and 0x218", a, v)
	}
	if a := gwWrite32(t, d, spaceCR, 0x1000, 0xCAFE); a != 0x1000 {
		t.Fatalf("write: ADDRESS=%#x, want flag clear", a)
	}
	if _, v := gwRead32(t, d, spaceNDCR, 0x1000); v != 0xCAFE {
		t.Errorf("CR 0x1000 via ND space = %#x", v)
	}
	if a := gwWrite32(t, d, spaceCR, crHardwareID, 0); a&addrSyndrome != 0 {
		t.Error("write to the read-only hardware ID raised a syndrome")
	}
	if _, v := gwRead32(t, d, spaceCR, crHardwareID); v != 0x218 {
		t.Errorf("hardware ID changed to %#x", v)
	}

	a, _ = gwRead32(t, d, spaceCR, crSize)
	if a != addrFlag|addrSyndrome|crSize {
		t.Errorf("out-of-range read: ADDRESS=%#x, want flag+syndrome", a)
	}
	if code := rd32(t, d, gCtrl) >> 24 & 0xF; code != syndromeRange {
		t.Errorf("syndrome code %d, want 3", code)
	}
	if a := gwWrite32(t, d, spaceSemaphore, semSpaceSize, 1); a != addrSyndrome|semSpaceSize {
		t.Errorf("out-of-range write: ADDRESS=%#x, want syndrome without flag", a)
	}
	if a, _ := gwRead32(t, d, 0x7, 0); a&addrSyndrome == 0 {
		t.Error("transaction in unsupported space 7 did not raise a syndrome")
	}
	if a, _ := gwRead32(t, d, spaceCR, 0); a&addrSyndrome != 0 || rd32(t, d, gCtrl)>>24&0xF != 0 {
		t.Error("syndrome not cleared by the next good transaction")
	}
	if rec.Count(EvSyndrome) != 3 || rec.Count(EvUnlocked) != 0 {
		t.Errorf("syndrome events %d (want 3), unlocked %d (want 0)", rec.Count(EvSyndrome), rec.Count(EvUnlocked))
	}
	wr32(t, d, gSem, 0)
	gwRead32(t, d, spaceCR, 0)
	if rec.Count(EvUnlocked) != 1 {
		t.Error("transaction without the semaphore was not traced")
	}
}

func TestRemovalAndReset(t *testing.T) {
	d, _ := newDev(nil)
	wr32(t, d, gSem, 77)
	d.SetFaults(Faults{Removed: true})
	for _, n := range []int{1, 2, 4, 64} {
		for _, b := range rd(t, d, 0, n) {
			if b != 0xFF {
				t.Fatalf("removed device read %d bytes with a non-0xFF byte", n)
			}
		}
	}
	wr32(t, d, gCtrl, spaceICMD) // ignored
	d.ClearFaults()
	if s := d.State(); s.GatewaySemaphore != 0 || s.Space != 0 {
		t.Errorf("after re-plug: %+v, want a freshly reset gateway", s)
	}
	if rd32(t, d, 0) != 0x102115b3 {
		t.Error("IDs not back after clearing removal")
	}
}

// A held fault is an agent that took the semaphore and never gives it
// back: other values do not stick, but a write of 0 clears it, as on
// hardware (mstmcra -c, mstconfig clear_semaphore); clearing the fault
// frees it as well.
func TestSemaphoreFaults(t *testing.T) {
	d, _ := newDev(nil)
	d.SetFaults(Faults{GatewaySemaphoreHeld: true, ICMDSemaphoreHeld: true})
	wr32(t, d, gSem, 3)
	if v := rd32(t, d, gSem); v != ForeignHolder {
		t.Fatalf("gateway semaphore = %#x with fault on, want the foreign holder", v)
	}
	gwWrite32(t, d, spaceSemaphore, 0, 7)
	if _, v := gwRead32(t, d, spaceSemaphore, 0); v != ForeignHolder {
		t.Fatalf("ICMD semaphore = %#x with fault on", v)
	}
	gwWrite32(t, d, spaceSemaphore, 0, 0)
	wr32(t, d, gSem, 0)
	if s := d.State(); s.GatewaySemaphore != 0 || s.ICMDSemaphore != 0 {
		t.Fatalf("a write of 0 did not clear the held semaphores: %+v", s)
	}
	wr32(t, d, gSem, 3)
	if v := rd32(t, d, gSem); v != 3 {
		t.Errorf("after a forced clear the semaphore reads %#x, want it takeable (3)", v)
	}
	wr32(t, d, gSem, 0)
	d.SetFaults(Faults{GatewaySemaphoreHeld: true, ICMDSemaphoreHeld: true})
	d.ClearFaults()
	if s := d.State(); s.GatewaySemaphore != 0 || s.ICMDSemaphore != 0 {
		t.Errorf("semaphores still held after clearing: %+v", s)
	}
}

// icmdRun starts opcode with the given mailbox words through raw gateway ops.
func icmdRun(t testing.TB, d *Device, opcode uint16, in []uint32) {
	for i, w := range in {
		gwWrite32(t, d, spaceICMD, icmdMailbox+uint32(4*i), w)
	}
	gwWrite32(t, d, spaceICMD, icmdCtrl, uint32(opcode)<<16|ctrlBusy)
}

func icmdCtrlRead(t testing.TB, d *Device) uint32 {
	_, v := gwRead32(t, d, spaceICMD, icmdCtrl)
	return v
}

func TestICMDSlowAndStuck(t *testing.T) {
	d, rec := newDev(nil)
	clk := d.clk.(interface{ Advance(time.Duration) })

	d.SetFaults(Faults{SlowICMDPolls: 3})
	icmdRun(t, d, OpQueryCap, []uint32{0, 0})
	for i := 0; i < 3; i++ {
		if icmdCtrlRead(t, d)&ctrlBusy == 0 {
			t.Fatalf("poll %d: not busy, want busy for 3 polls", i+1)
		}
	}
	if v := icmdCtrlRead(t, d); v&ctrlBusy != 0 || v>>8&0xFF != 0 {
		t.Fatalf("poll 4: ctrl %#x, want done with status 0", v)
	}

	d.SetFaults(Faults{SlowICMD: 2 * time.Second})
	icmdRun(t, d, OpQueryCap, []uint32{0, 0})
	clk.Advance(1999 * time.Millisecond)
	if icmdCtrlRead(t, d)&ctrlBusy == 0 {
		t.Fatal("done before the slow-firmware delay passed")
	}
	clk.Advance(time.Millisecond)
	if icmdCtrlRead(t, d)&ctrlBusy != 0 {
		t.Fatal("still busy after the delay")
	}

	d.SetFaults(Faults{ICMDStuckBusy: true})
	icmdRun(t, d, 0x1234, nil)
	clk.Advance(time.Hour)
	if icmdCtrlRead(t, d)&ctrlBusy == 0 {
		t.Fatal("stuck command completed")
	}
	gwWrite32(t, d, spaceICMD, icmdCtrl, 0x8400<<16) // ignored while busy
	d.ClearFaults()
	if v := icmdCtrlRead(t, d); v&ctrlBusy != 0 || v>>8&0xFF != icmdInvalidOpcode || v>>16 != 0x1234 {
		t.Errorf("after clearing: ctrl %#x, want the pending unknown opcode finished with status 1", v)
	}
	if n := rec.Count(EvICMDDone); n != 3 {
		t.Errorf("%d commands completed, want 3", n)
	}
}

func TestICMDQueryCapAndFWInfo(t *testing.T) {
	d, _ := newDev(nil)
	icmdRun(t, d, OpQueryCap, []uint32{0, 0})
	if _, w0 := gwRead32(t, d, spaceICMD, icmdMailbox); w0 != d.id.Caps0 || w0&CapAccessRegAll == 0 {
		t.Errorf("QUERY_CAP dword0 = %#x", w0)
	}
	icmdRun(t, d, OpQueryCap, []uint32{1})
	if v := icmdCtrlRead(t, d); v>>8&0xFF != icmdBadParam {
		t.Errorf("capability group 1: status %d, want 4", v>>8&0xFF)
	}
	icmdRun(t, d, OpGetFWInfo, nil)
	var b []byte
	for i := 0; i < fwInfoSize/4; i++ {
		_, w := gwRead32(t, d, spaceICMD, icmdMailbox+uint32(4*i))
		b = binary.BigEndian.AppendUint32(b, w)
	}
	want := []byte{0, 28, 0, 0, 0, 39, 0x03, 0xF2, 0x56, 0x34, 0x12, 0, 0x20, 0x23, 0x10, 0x05}
	if !bytes.Equal(b[:16], want) || string(b[20:33]) != "MT_0000000834" {
		t.Errorf("GET_FW_INFO = %x", b)
	}
	if icmdCtrlRead(t, d)>>16 != OpGetFWInfo {
		t.Error("opcode not kept in the control register")
	}
	if _, v := gwRead32(t, d, spaceICMD, icmdMboxSize); v != 0x340 {
		t.Errorf("mailbox size %#x", v)
	}
}

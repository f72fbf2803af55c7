// Package emu is a software ConnectX-7 at the PCI configuration-space
// boundary. A *Device implements the ReadAt/WriteAt pair of pci.ConfigSpace
// (structurally; this package does not depend on the access code), so the
// same client code that drives real hardware drives the emulator, in process
// or behind a FUSE-served sysfs `config` file.
//
// Modelled: the PCI header and capability list, the vendor-specific gateway
// (semaphore, counter, address spaces, flag/data transactions, syndromes),
// CR space, the ICMD engine (opcodes 0x8400, 0x8007, 0x9001) and the
// access-register TLV framing, handing register payloads to a Firmware.
// Faults can be switched at run time and every step can be traced.
package emu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cxray/cxray/internal/clock"
)

// ConfigSize is the size of the emulated config space (PCIe extended).
const ConfigSize = 4096

// GatewayOffset is where the gateway capability sits in config space.
const GatewayOffset = 0xC0

// Clock is the time source of the device (slow-firmware faults).
type Clock interface{ Now() time.Time }

// NewManualClock returns a virtual clock for tests, shared by the emulator
// and the client: the client's sleeps advance it.
func NewManualClock(start time.Time) *clock.Manual { return clock.NewManual(start) }

// Method is an access-register method.
type Method uint8

// Access-register methods (operation TLV [14:8]).
const (
	MethodGet Method = 1 // query
	MethodSet Method = 2 // write
)

func (m Method) String() string {
	switch m {
	case MethodGet:
		return "GET"
	case MethodSet:
		return "SET"
	}
	return fmt.Sprintf("method(%d)", uint8(m))
}

// Firmware answers access-register requests. Calls are serialised by the
// device: at most one runs at a time, under the device lock, so an
// implementation must not call back into the Device.
type Firmware interface {
	// AccessRegister handles one access-register request. data is the
	// register payload as sent (for GET, the index fields filled in); it
	// returns the payload to send back and a PRM status (0 ok).
	AccessRegister(id uint16, method Method, data []byte) (out []byte, status uint8)
}

// Config builds a Device.
type Config struct {
	Identity Identity // zero value: ConnectX7()
	Firmware Firmware // nil: every register answers status 4 (not supported)
	Clock    Clock    // nil: wall clock
	// Express gives the PCI Express link and AER registers their live
	// values (express.go); nil: a Gen5 x16 link without errors.
	Express ExpressSource
}

// Device is one emulated PCI function. Safe for concurrent use.
type Device struct {
	mu    sync.Mutex
	id    Identity
	fw    Firmware
	clk   Clock
	hdr   [ConfigSize]byte // read-only part of config space
	gw    gateway
	cr    map[uint32]uint32
	sems  map[uint32]uint32 // semaphore space cells
	icmd  icmdEngine
	flt   Faults
	trace func(Event)
	// express is the live PCI Express link and AER state (nil: defaults).
	express ExpressSource
}

// New builds a device in its power-on state.
func New(cfg Config) *Device {
	d := &Device{id: cfg.Identity, fw: cfg.Firmware, clk: cfg.Clock, express: cfg.Express}
	if d.id == (Identity{}) {
		d.id = ConnectX7()
	}
	if d.clk == nil {
		d.clk = clock.Real{}
	}
	if d.id.MailboxSize < 0x40 || d.id.MailboxSize > mailboxLimit || d.id.MailboxSize%4 != 0 {
		d.id.MailboxSize = 0x340
	}
	d.buildHeader()
	d.cr = map[uint32]uint32{
		crHardwareID:     uint32(d.id.HardwareRevision)<<16 | uint32(d.id.HardwareID),
		crStaticConfig:   0,       // bit 31 clear: static configuration done, ICMD ready
		crCacheRepOffset: 0x10000, // the firmware owns the flash (cache replacement on)
		crCacheRepCmd:    0x0B << 24,
	}
	d.reset()
	return d
}

// reset puts the gateway, semaphores and ICMD engine in their power-on state
// (CR-space contents survive, like straps and firmware state do across a
// function re-enumeration).
func (d *Device) reset() {
	d.gw = gateway{counter: 0x1000}
	d.sems = map[uint32]uint32{}
	d.icmd = icmdEngine{mbox: make([]uint32, d.id.MailboxSize/4)}
}

// Identity returns the device's identity.
func (d *Device) Identity() Identity { return d.id }

// SetTrace installs fn to be called for every event (nil removes it). fn runs
// with the device locked and must not call back into the Device.
func (d *Device) SetTrace(fn func(Event)) {
	d.mu.Lock()
	d.trace = fn
	d.mu.Unlock()
}

func (d *Device) emit(e Event) {
	if d.trace != nil && e.Kind != 0 {
		d.trace(e)
	}
}

// State is a snapshot of the device's locks and engines, for tests.
type State struct {
	GatewaySemaphore uint32 // 0 when free
	ICMDSemaphore    uint32 // 0 when free
	ICMDBusy         bool
	Space            uint16 // selected gateway space
}

// State returns a snapshot.
func (d *Device) State() State {
	d.mu.Lock()
	defer d.mu.Unlock()
	return State{GatewaySemaphore: d.gw.sem, ICMDSemaphore: d.sems[0], ICMDBusy: d.icmd.ctrl&ctrlBusy != 0, Space: d.gw.space}
}

// ReadAt reads config space. Accesses are split into naturally aligned 1, 2
// and 4-byte cycles exactly as Linux's sysfs `config` file does, so register
// side effects happen once per cycle, as on hardware.
func (d *Device) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("emu: negative config offset")
	}
	if off >= ConfigSize {
		return 0, io.EOF
	}
	n := min(int64(len(p)), ConfigSize-off)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.emit(Event{Kind: EvConfigRead, Off: off, Size: int(n)})
	forCycles(off, n, func(o int64, size int) {
		v := d.cycleRead(o, size)
		for i := 0; i < size; i++ {
			p[o-off+int64(i)] = byte(v >> (8 * i))
		}
	})
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// WriteAt writes config space, cycle by cycle like ReadAt.
func (d *Device) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("emu: negative config offset")
	}
	if off >= ConfigSize {
		return 0, fmt.Errorf("emu: write at 0x%x beyond the %d-byte config space", off, ConfigSize)
	}
	n := min(int64(len(p)), ConfigSize-off)
	d.mu.Lock()
	defer d.mu.Unlock()
	var first [4]byte
	copy(first[:], p[:n])
	d.emit(Event{Kind: EvConfigWrite, Off: off, Size: int(n), Value: binary.LittleEndian.Uint32(first[:])})
	forCycles(off, n, func(o int64, size int) {
		var v uint32
		for i := 0; i < size; i++ {
			v |= uint32(p[o-off+int64(i)]) << (8 * i)
		}
		d.cycleWrite(o, size, v)
	})
	if n < int64(len(p)) {
		return int(n), fmt.Errorf("emu: write of %d bytes at 0x%x runs past the %d-byte config space", len(p), off, ConfigSize)
	}
	return int(n), nil
}

// forCycles splits [off, off+n) like Linux pci_read_config/pci_write_config:
// a leading byte to reach even alignment, a word to reach dword alignment,
// dwords, then a trailing word and byte.
func forCycles(off, n int64, fn func(off int64, size int)) {
	if off&1 != 0 && n > 0 {
		fn(off, 1)
		off, n = off+1, n-1
	}
	if off&3 != 0 && n > 2 {
		fn(off, 2)
		off, n = off+2, n-2
	}
	for n > 3 {
		fn(off, 4)
		off, n = off+4, n-4
	}
	if n >= 2 {
		fn(off, 2)
		off, n = off+2, n-2
	}
	if n > 0 {
		fn(off, 1)
	}
}

func laneMask(off int64, size int) (shift uint, mask uint32) {
	shift = uint(off&3) * 8
	return shift, uint32(uint64(1)<<(8*size)-1) << shift
}

// cycleRead performs one aligned config read cycle of size bytes.
func (d *Device) cycleRead(off int64, size int) uint32 {
	if d.flt.Removed {
		return 0xFFFFFFFF
	}
	shift, mask := laneMask(off, size)
	dw := off &^ 3
	var v uint32
	if isGateway(dw) {
		v = d.gwRead(dw - GatewayOffset)
	} else if isExpressLive(dw) {
		v = d.expressRead(dw)
	} else {
		v = binary.LittleEndian.Uint32(d.hdr[dw:])
	}
	return (v & mask) >> shift
}

// cycleWrite performs one aligned config write cycle; a partial write merges
// into the dword, which then takes effect as a whole (byte enables).
func (d *Device) cycleWrite(off int64, size int, v uint32) {
	if d.flt.Removed {
		return
	}
	dw := off &^ 3
	if !isGateway(dw) {
		return // the standard header and other capabilities are read-only here
	}
	shift, mask := laneMask(off, size)
	cur := d.gwPeek(dw - GatewayOffset)
	d.gwWrite(dw-GatewayOffset, cur&^mask|(v<<shift)&mask)
}

func isGateway(dw int64) bool { return dw >= GatewayOffset && dw < GatewayOffset+gwLen }

// buildHeader lays out a type-0 header and the capability list of a
// ConnectX-7 function: Express at 0x60 → VPD at 0x48 → MSI-X at 0x9C →
// gateway at 0xC0 → power management at 0x40; and the extended list: AER
// at 0x100 (express.go).
func (d *Device) buildHeader() {
	h := d.hdr[:]
	le16 := binary.LittleEndian.PutUint16
	le32 := binary.LittleEndian.PutUint32
	le16(h[0x00:], d.id.VendorID)
	le16(h[0x02:], d.id.DeviceID)
	le16(h[0x04:], 0x0006) // memory space + bus master enabled
	le16(h[0x06:], 0x0010) // capabilities list present
	h[0x08] = d.id.Revision
	h[0x09], h[0x0A], h[0x0B] = byte(d.id.ClassCode), byte(d.id.ClassCode>>8), byte(d.id.ClassCode>>16)
	le32(h[0x10:], 0xE000000C) // BAR0: 64-bit prefetchable memory
	le16(h[0x2C:], d.id.SubsystemVendorID)
	le16(h[0x2E:], d.id.SubsystemID)
	h[0x34] = 0x60
	h[0x3C], h[0x3D] = 0xFF, 0x01

	h[0x60], h[0x61] = 0x10, 0x48 // PCI Express
	h[0x48], h[0x49] = 0x03, 0x9C // VPD
	h[0x9C], h[0x9D] = 0x11, 0xC0 // MSI-X
	le16(h[0x9E:], 0x003F)        // 64 vectors
	le32(h[0xA0:], 0x00002000)    // table in BAR0
	le32(h[0xA4:], 0x00003000)    // PBA in BAR0
	h[GatewayOffset], h[GatewayOffset+1], h[GatewayOffset+2], h[GatewayOffset+3] = 0x09, 0x40, gwLen, 0x00
	h[0x40], h[0x41] = 0x01, 0x00 // power management, end of list
	le16(h[0x42:], 0x0003)
	d.buildExpress()
}

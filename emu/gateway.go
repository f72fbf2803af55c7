package emu

import "encoding/binary"

// Gateway register offsets from GatewayOffset, and bit fields.
const (
	gwHeader  = 0x00
	gwCtrl    = 0x04
	gwCounter = 0x08
	gwSem     = 0x0C
	gwAddr    = 0x10
	gwData    = 0x14
	gwLen     = 0x18

	addrFlag     = 1 << 31
	addrSyndrome = 1 << 30
	addrMask     = 1<<30 - 1

	ctrlSupported = 1 << 29 // CTRL[31:29] = 1 for a supported space
	syndromeRange = 3       // CTRL[27:24]: address out of range

	// ForeignHolder is the value another agent's hold shows in a semaphore
	// when a "semaphore held" fault is on.
	ForeignHolder = 0x7E57AB1E
)

// Address spaces and their limits.
const (
	spaceICMDExt   = 0x1
	spaceCR        = 0x2
	spaceICMD      = 0x3
	spaceNDCR      = 0x6
	spaceSemaphore = 0xA

	crSize        = 0x1000000 // 16 MiB; ConnectX-7's dump map ends below 0xA00000
	icmdSpaceSize = 0x200000
	semSpaceSize  = 0x100

	crHardwareID   = 0xF0014
	crStaticConfig = 0xB5F04
	// The flash cache-replacement registers of ConnectX-7 and later:
	// non-zero while the firmware owns the flash, so tools reach it
	// through the firmware (MFPA, MFBA) rather than the CR-space flash
	// gateway, which the emulator does not model (mstflint's mflash,
	// check_cache_replacement_guard).
	crCacheRepOffset = 0xF0484
	crCacheRepCmd    = 0xF0488
)

type gateway struct {
	space    uint16
	syndrome uint8 // CTRL[27:24] of the last transaction
	counter  uint32
	sem      uint32
	addr     uint32 // ADDRESS register: [29:0] address, [30] syndrome, [31] flag
	data     uint32
}

func supportedSpace(sp uint16) bool {
	switch sp {
	case spaceICMDExt, spaceCR, spaceICMD, spaceNDCR, spaceSemaphore:
		return true
	}
	return false
}

func (d *Device) ctrl() uint32 {
	v := uint32(d.gw.space) | uint32(d.gw.syndrome)<<24
	if supportedSpace(d.gw.space) {
		v |= ctrlSupported
	}
	return v
}

// gwPeek returns a register without side effects (for merging partial writes).
func (d *Device) gwPeek(r int64) uint32 {
	switch r {
	case gwCtrl:
		return d.ctrl()
	case gwSem:
		return d.gw.sem
	case gwAddr:
		return d.gw.addr
	case gwData:
		return d.gw.data
	}
	return 0
}

func (d *Device) gwRead(r int64) uint32 {
	switch r {
	case gwHeader:
		return binary.LittleEndian.Uint32(d.hdr[GatewayOffset:])
	case gwCounter:
		// A fresh ticket on every read, never 0 (0 means "free").
		d.gw.counter++
		if d.gw.counter == 0 {
			d.gw.counter = 1
		}
		return d.gw.counter
	}
	return d.gwPeek(r)
}

func (d *Device) gwWrite(r int64, v uint32) {
	switch r {
	case gwCtrl:
		// Only the selector is writable; status and syndrome are read-only.
		d.gw.space = uint16(v)
		d.emit(Event{Kind: EvSpaceSelect, Space: d.gw.space})
	case gwSem:
		d.semWrite(&d.gw.sem, v, EvSemTaken, EvSemReleased)
	case gwAddr:
		d.transaction(v)
	case gwData:
		d.gw.data = v
	}
}

// semWrite applies semaphore-cell semantics: 0 frees, a non-zero value sticks
// only when the cell is free. This holds while a "held" fault is on too:
// the other agent's value sticks until someone writes 0, which on hardware
// anyone can (that is what `mstmcra -c` does to the gateway semaphore and
// `mstconfig clear_semaphore` to the ICMD one). The emulated agent never
// gives the semaphore back itself; switching the fault off does.
func (d *Device) semWrite(cell *uint32, v uint32, taken, released EventKind) {
	switch {
	case v == 0 && *cell != 0:
		d.emit(Event{Kind: released, Value: *cell})
		*cell = 0
	case v != 0 && *cell == 0:
		*cell = v
		d.emit(Event{Kind: taken, Value: v})
	}
}

// transaction runs the gateway access started by a write to ADDRESS. It
// completes at once: a read sets FLAG with DATA loaded, a write clears FLAG.
// An unsupported space or out-of-range address sets ADDRESS[30] and the
// syndrome code in CTRL[27:24] (FLAG still moves, so pollers finish).
func (d *Device) transaction(v uint32) {
	addr, write := v&addrMask, v&addrFlag != 0
	sp := d.gw.space
	d.gw.syndrome = 0
	if d.gw.sem == 0 {
		d.emit(Event{Kind: EvUnlocked, Space: sp, Addr: addr, Value: v})
	}
	var ok bool
	if write {
		ok = d.spaceWrite(sp, addr, d.gw.data)
		d.gw.addr = addr
		if ok {
			d.emit(Event{Kind: EvWrite, Space: sp, Addr: addr, Value: d.gw.data})
		}
	} else {
		var val uint32
		if val, ok = d.spaceRead(sp, addr); ok {
			d.gw.data = val
			d.emit(Event{Kind: EvRead, Space: sp, Addr: addr, Value: val})
		}
		d.gw.addr = addr | addrFlag
	}
	if !ok {
		d.gw.addr |= addrSyndrome
		d.gw.syndrome = syndromeRange
		d.emit(Event{Kind: EvSyndrome, Space: sp, Addr: addr, Value: syndromeRange})
	}
}

func (d *Device) spaceRead(sp uint16, addr uint32) (uint32, bool) {
	switch sp {
	case spaceCR, spaceNDCR:
		if addr >= crSize {
			return 0, false
		}
		return d.cr[addr], true
	case spaceICMD, spaceICMDExt:
		if addr >= icmdSpaceSize {
			return 0, false
		}
		return d.icmdRead(addr), true
	case spaceSemaphore:
		if addr >= semSpaceSize {
			return 0, false
		}
		return d.sems[addr], true
	}
	return 0, false
}

func (d *Device) spaceWrite(sp uint16, addr, v uint32) bool {
	switch sp {
	case spaceCR, spaceNDCR:
		if addr >= crSize {
			return false
		}
		if addr != crHardwareID {
			d.cr[addr] = v
		}
		return true
	case spaceICMD, spaceICMDExt:
		if addr >= icmdSpaceSize {
			return false
		}
		d.icmdWrite(addr, v)
		return true
	case spaceSemaphore:
		if addr >= semSpaceSize {
			return false
		}
		cell := d.sems[addr]
		if addr == 0 {
			d.semWrite(&cell, v, EvICMDSemTaken, EvICMDSemReleased)
		} else {
			d.semWrite(&cell, v, 0, 0)
		}
		d.sems[addr] = cell
		return true
	}
	return false
}

// SetCR sets a CR-space dword (the hardware ID at 0xF0014 included).
func (d *Device) SetCR(addr, v uint32) {
	d.mu.Lock()
	d.cr[addr&^3] = v
	d.mu.Unlock()
}

// CR returns a CR-space dword.
func (d *Device) CR(addr uint32) uint32 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cr[addr&^3]
}

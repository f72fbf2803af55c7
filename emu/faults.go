package emu

import (
	"maps"
	"time"
)

// Faults are failure modes that can be switched on and off at run time.
// Clearing a fault leaves the device usable.
type Faults struct {
	// GatewaySemaphoreHeld: another agent takes the gateway semaphore when
	// the fault goes on and never gives it back (it reads ForeignHolder;
	// other values do not stick). As on hardware, a write of 0 clears it
	// anyway, as `mstmcra -c` does; switching the fault off frees it too.
	GatewaySemaphoreHeld bool
	// ICMDSemaphoreHeld: the same for the ICMD semaphore (space 0xA,
	// address 0); `mstconfig clear_semaphore` writes the 0 that clears it.
	ICMDSemaphoreHeld bool
	// ICMDStuckBusy: ICMD commands never complete (BUSY stays set). When the
	// fault is cleared (as for the slow faults) the pending command runs.
	ICMDStuckBusy bool
	// SlowICMDPolls: each command keeps BUSY for this many control reads.
	SlowICMDPolls int
	// SlowICMD: each command keeps BUSY until this much clock time has passed.
	SlowICMD time.Duration
	// RegisterStatus: these registers answer the given PRM status.
	RegisterStatus map[uint16]uint8
	// Removed: surprise removal. Config reads return all-ones, writes are
	// ignored. Clearing it brings the function back freshly reset (gateway,
	// semaphores and ICMD engine at power-on state).
	Removed bool
}

// SetFaults replaces the active faults.
func (d *Device) SetFaults(f Faults) {
	f.RegisterStatus = maps.Clone(f.RegisterStatus)
	d.mu.Lock()
	defer d.mu.Unlock()
	old := d.flt
	d.flt = f
	if old.Removed && !f.Removed {
		d.reset()
	}
	d.holdFault(&d.gw.sem, old.GatewaySemaphoreHeld, f.GatewaySemaphoreHeld)
	icmdSem := d.sems[0]
	d.holdFault(&icmdSem, old.ICMDSemaphoreHeld, f.ICMDSemaphoreHeld)
	d.sems[0] = icmdSem
	if d.icmd.ctrl&ctrlBusy != 0 {
		d.icmdTryFinish()
	}
}

// holdFault makes the other agent take the cell when the fault goes on and
// give it back when it goes off.
func (d *Device) holdFault(cell *uint32, was, is bool) {
	switch {
	case is && !was:
		*cell = ForeignHolder
	case was && !is && *cell == ForeignHolder:
		*cell = 0
	}
}

// Faults returns the active faults.
func (d *Device) Faults() Faults {
	d.mu.Lock()
	defer d.mu.Unlock()
	f := d.flt
	f.RegisterStatus = maps.Clone(f.RegisterStatus)
	return f
}

// ClearFaults switches every fault off.
func (d *Device) ClearFaults() { d.SetFaults(Faults{}) }

package emu

import "encoding/binary"

// The PCI Express capability (at ExpressOffset) and the Advanced Error
// Reporting extended capability (at AEROffset) of a function. Their static
// parts are laid out with the header (buildHeader); the link and error
// registers are read live from an ExpressSource, as hardware updates them
// when the link retrains or an error is detected. Offsets are the PCI
// Express Base Specification's (include/uapi/linux/pci_regs.h).
const (
	// ExpressOffset is where the PCI Express capability sits.
	ExpressOffset = 0x60
	// AEROffset is where the AER extended capability sits: the first
	// extended capability.
	AEROffset = 0x100

	expDevCtl  = 0x08 // Device Control (16) | Device Status (16) << 16
	expLnkCap  = 0x0C
	expLnkCtl  = 0x10 // Link Control (16) | Link Status (16) << 16
	expLnkCap2 = 0x2C
	expLnkCtl2 = 0x30 // Link Control 2 (16) | Link Status 2 (16) << 16

	aerUncorStatus = 0x04
	aerUncorMask   = 0x08
	aerUncorSever  = 0x0C
	aerCorStatus   = 0x10
	aerCorMask     = 0x14
	aerCapCtl      = 0x18
	// aerLen is the AER capability of an endpoint: through the header log
	// and the TLP prefix log.
	aerLen = 0x38
)

// ExpressState is the live part of a function's PCI Express link and
// error registers. Speeds are the capability's codes (1 is 2.5 GT/s, 2 is
// 5 GT/s, ... 6 is 64 GT/s), widths lane counts; 0 width is a link down.
type ExpressState struct {
	MaxSpeed, Speed, TargetSpeed uint8
	MaxWidth, Width              uint8
	// DevStatus is the Device Status register (bit 0 correctable, 1
	// non-fatal, 2 fatal, 3 unsupported request).
	DevStatus uint16
	AER       AERState
}

// AERState is the AER capability's status, mask and severity registers
// and the first error pointer (bits 4:0 of Capabilities and Control).
type AERState struct {
	UncorStatus, UncorMask, UncorSeverity uint32
	CorStatus, CorMask                    uint32
	FirstError                            uint8
}

// ExpressSource gives a function its live link and error registers (the
// adapter's PCIe model, emu/hostlink). It is called with the device
// locked: it must not call back into the Device.
type ExpressSource interface {
	ExpressState() ExpressState
}

// Default AER masks and severities of a function after reset (PCI Express
// Base Specification, AER capability: Data Link Protocol, Surprise Down,
// Flow Control Protocol, Receiver Overflow, Malformed TLP and
// Uncorrectable Internal errors are fatal; Advisory Non-Fatal and
// Corrected Internal errors are masked).
const (
	DefaultUncorSeverity = 1<<4 | 1<<5 | 1<<13 | 1<<17 | 1<<18 | 1<<22
	DefaultCorMask       = 1<<13 | 1<<14
	DefaultUncorMask     = 1 << 22
)

// DefaultExpress is a ConnectX-7's link when nothing models it: Gen5 x16,
// trained as capable, no error.
func DefaultExpress() ExpressState {
	return ExpressState{MaxSpeed: 5, Speed: 5, TargetSpeed: 5, MaxWidth: 16, Width: 16,
		AER: AERState{UncorSeverity: DefaultUncorSeverity, CorMask: DefaultCorMask, UncorMask: DefaultUncorMask}}
}

// buildExpress lays out the static parts of the PCI Express capability
// (version 2, endpoint) and the AER capability header.
func (d *Device) buildExpress() {
	h := d.hdr[:]
	le16 := binary.LittleEndian.PutUint16
	le32 := binary.LittleEndian.PutUint32
	e := ExpressOffset
	le16(h[e+0x02:], 0x0002)     // version 2, endpoint (type 0)
	le32(h[e+0x04:], 0x00008002) // DevCap: 512-byte payloads, role-based error reporting
	// Extended capabilities: AER only, the end of the list.
	le32(h[AEROffset:], 0x0001|2<<16)
	le32(h[AEROffset+aerCapCtl:], 1<<5|1<<7) // ECRC generation and check capable
}

// isExpressLive says whether the dword at dw holds live link or error
// registers.
func isExpressLive(dw int64) bool {
	switch dw - ExpressOffset {
	case expDevCtl, expLnkCap, expLnkCtl, expLnkCap2, expLnkCtl2:
		return true
	}
	switch dw - AEROffset {
	case aerUncorStatus, aerUncorMask, aerUncorSever, aerCorStatus, aerCorMask, aerCapCtl:
		return true
	}
	return false
}

// expressRead is one live dword.
func (d *Device) expressRead(dw int64) uint32 {
	s := DefaultExpress()
	if d.express != nil {
		s = d.express.ExpressState()
	}
	switch dw - ExpressOffset {
	case expDevCtl:
		// Error reporting enabled (as the kernel's AER driver sets it),
		// 256-byte payloads, 4096-byte read requests.
		const devCtl = 0x000F | 1<<5 | 5<<12
		return devCtl | uint32(s.DevStatus)<<16
	case expLnkCap:
		return uint32(s.MaxSpeed&0xF) | uint32(s.MaxWidth&0x3F)<<4
	case expLnkCtl:
		// Link Control: common clock configuration. Link Status: speed,
		// width, slot clock.
		sta := uint32(s.Speed&0xF) | uint32(s.Width&0x3F)<<4 | 1<<12
		return 1<<6 | sta<<16
	case expLnkCap2:
		if s.MaxSpeed == 0 {
			return 0
		}
		return (uint32(1)<<s.MaxSpeed - 1) << 1 // every speed up to the fastest
	case expLnkCtl2:
		return uint32(s.TargetSpeed & 0xF)
	}
	switch dw - AEROffset {
	case aerUncorStatus:
		return s.AER.UncorStatus
	case aerUncorMask:
		return s.AER.UncorMask
	case aerUncorSever:
		return s.AER.UncorSeverity
	case aerCorStatus:
		return s.AER.CorStatus
	case aerCorMask:
		return s.AER.CorMask
	case aerCapCtl:
		return binary.LittleEndian.Uint32(d.hdr[AEROffset+aerCapCtl:]) | uint32(s.AER.FirstError&0x1F)
	}
	return 0
}

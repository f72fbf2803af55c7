package emu

import "time"

// Identity is what the emulated adapter says about itself: PCI IDs, the
// hardware ID in CR space, the ICMD mailbox size, and the firmware facts that
// ICMD QUERY_CAP (0x8400) and GET_FW_INFO (0x8007) report.
type Identity struct {
	VendorID, DeviceID             uint16
	SubsystemVendorID, SubsystemID uint16
	ClassCode                      uint32 // 24 bits: 0x020000 Ethernet, 0x020700 InfiniBand
	Revision                       uint8

	HardwareID       uint16 // CR 0xF0014 [15:0]
	HardwareRevision uint8  // CR 0xF0014 [23:16]
	MailboxSize      uint32 // ICMD 0x1000, bytes (0x40..0x10000, a multiple of 4; else 0x340)

	FWMajor, FWMinor, FWSubMinor uint16
	FWBuildTime                  time.Time // reported in GET_FW_INFO as BCD digits
	PSID                         string    // up to 16 ASCII characters
	HashSignature                uint16

	// ICMD QUERY_CAP general capabilities, dwords 0 and 1 as the device
	// returns them (bit 29 of Caps0: access register allowed on all registers).
	Caps0, Caps1 uint32
}

// QUERY_CAP general capability bits (dword 0).
const (
	CapNVAccess        = 1 << 31
	CapFWInfoPSID      = 1 << 30
	CapAccessRegAll    = 1 << 29
	CapMHSync          = 1 << 28
	CapPCAMReg         = 1 << 27
	CapMCAMReg         = 1 << 26
	CapQCAMReg         = 1 << 25
	CapCapabilityGroup = 1 << 20
)

// ConnectX7 returns the identity of a ConnectX-7 Ethernet adapter (PCI device
// 0x1021, hardware ID 0x218) with firmware 28.39.1010.
func ConnectX7() Identity {
	return Identity{
		VendorID: 0x15b3, DeviceID: 0x1021,
		SubsystemVendorID: 0x15b3, SubsystemID: 0x0021,
		ClassCode:  0x020000,
		HardwareID: 0x218, MailboxSize: 0x340,
		FWMajor: 28, FWMinor: 39, FWSubMinor: 1010,
		FWBuildTime: time.Date(2023, 10, 5, 12, 34, 56, 0, time.UTC),
		PSID:        "MT_0000000834",
		Caps0:       CapNVAccess | CapFWInfoPSID | CapAccessRegAll | CapPCAMReg | CapMCAMReg | CapQCAMReg,
	}
}

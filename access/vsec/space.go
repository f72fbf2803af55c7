package vsec

import "fmt"

// Space is a gateway address-space selector (CTRL[15:0]).
type Space uint16

// Address spaces of the ConnectX gateway.
const (
	SpaceICMDExt      Space = 0x1 // extended ICMD; must be supported for the gateway to be usable
	SpaceCR           Space = 0x2 // CR space (hardware registers), the default space
	SpaceICMD         Space = 0x3 // ICMD control, mailbox size and mailbox
	SpaceNodnicInit   Space = 0x4
	SpaceExpansionROM Space = 0x5
	SpaceNDCR         Space = 0x6 // "ND" CR space, preferred by register dumps
	SpaceScanCR       Space = 0x7
	SpaceSemaphore    Space = 0xA // ICMD semaphore (addr 0) and flash semaphore (addr 0x10)
	SpaceMAC          Space = 0xF
)

var spaceNames = map[Space]string{
	SpaceICMDExt: "ICMD_EXT", SpaceCR: "CR_SPACE", SpaceICMD: "ICMD", SpaceNodnicInit: "NODNIC_INIT_SEG",
	SpaceExpansionROM: "EXPANSION_ROM", SpaceNDCR: "ND_CRSPACE", SpaceScanCR: "SCAN_CRSPACE",
	SpaceSemaphore: "SEMAPHORE", SpaceMAC: "MAC",
}

func (s Space) String() string {
	if n, ok := spaceNames[s]; ok {
		return fmt.Sprintf("space 0x%x (%s)", uint16(s), n)
	}
	return fmt.Sprintf("space 0x%x", uint16(s))
}

package pcie

import (
	"encoding/binary"
	"fmt"
)

// Configuration space layout (PCI Express Base Specification; Linux's
// include/uapi/linux/pci_regs.h names every offset used here).
const (
	// HeaderSize is the standard (legacy) part of config space; capability
	// pointers there stay below it.
	HeaderSize = 0x100
	// ExtendedStart is where the extended capabilities begin.
	ExtendedStart = 0x100
	// ExtendedSize is the whole config space of a PCI Express function.
	ExtendedSize = 0x1000

	regStatus     = 0x06 // PCI_STATUS
	statusCapList = 0x10 // PCI_STATUS_CAP_LIST
	regCapPtr     = 0x34 // PCI_CAPABILITY_LIST

	// maxLegacyCaps bounds the legacy walk as the kernel does
	// (PCI_FIND_CAP_TTL in drivers/pci/pci.c): 48 capabilities of at least
	// 4 bytes fill the 192 bytes after the header.
	maxLegacyCaps = 48
	// maxExtendedCaps bounds the extended walk: (4096-256)/8, the most
	// 8-byte capabilities that fit, as the kernel's pci_find_next_ext_capability.
	maxExtendedCaps = (ExtendedSize - ExtendedStart) / 8
)

// Capability IDs used here (PCI_CAP_ID_*, PCI_EXT_CAP_ID_*).
const (
	CapPM      = 0x01
	CapVPD     = 0x03
	CapMSI     = 0x05
	CapVendor  = 0x09 // where mstflint's gateway lives
	CapExpress = 0x10
	CapMSIX    = 0x11

	ExtCapAER    = 0x0001
	ExtCapDSN    = 0x0003
	ExtCapVendor = 0x000B
	ExtCapARI    = 0x000E
	ExtCapATS    = 0x000F
	ExtCapSRIOV  = 0x0010
	ExtCapSecPCI = 0x0019
	ExtCapDLF    = 0x0025
	ExtCapPL16   = 0x0026
)

var capNames = map[uint16]string{CapPM: "power management", CapVPD: "VPD", CapMSI: "MSI", CapVendor: "vendor-specific",
	CapExpress: "PCI Express", CapMSIX: "MSI-X"}

var extCapNames = map[uint16]string{ExtCapAER: "advanced error reporting", ExtCapDSN: "device serial number",
	ExtCapVendor: "vendor-specific", ExtCapARI: "ARI", ExtCapATS: "ATS", ExtCapSRIOV: "SR-IOV",
	ExtCapSecPCI: "secondary PCI Express", ExtCapDLF: "data link feature", ExtCapPL16: "physical layer 16 GT/s"}

// Capability is one entry of a capability list.
type Capability struct {
	ID       uint16 `json:"id"`
	Name     string `json:"name,omitempty"`
	Offset   int    `json:"offset"`
	Extended bool   `json:"extended,omitempty"`
	// Version is an extended capability's version (bits 19:16 of its
	// header).
	Version uint8 `json:"version,omitempty"`
}

// Walk lists a function's capabilities: the legacy list from the pointer
// at 0x34 (when the status register says there is one) and the extended
// list from 0x100 (when cfg reaches it). It ends on any input: a pointer
// out of range, into the header, or back to an offset already visited
// ends its list, and the walk is bounded as the kernel's is; each such
// stop is named in problems. No offset is visited twice.
func Walk(cfg []byte) (caps []Capability, problems []string) {
	legacy, p1 := walkLegacy(cfg)
	ext, p2 := walkExtended(cfg)
	return append(legacy, ext...), append(p1, p2...)
}

func walkLegacy(cfg []byte) ([]Capability, []string) {
	if len(cfg) < 0x40 {
		return nil, []string{fmt.Sprintf("config space of %d bytes has no complete header (64 bytes)", len(cfg))}
	}
	if binary.LittleEndian.Uint16(cfg[regStatus:])&statusCapList == 0 {
		return nil, nil
	}
	var out []Capability
	var problems []string
	seen := map[int]bool{}
	ptr := int(cfg[regCapPtr] &^ 3)
	end := min(len(cfg), HeaderSize)
	for ptr != 0 {
		switch {
		case ptr >= 0x40 && ptr+2 > end && end < HeaderSize:
			problems = append(problems, fmt.Sprintf("capability at 0x%02x lies beyond the %d bytes read (an unprivileged reader gets the first 64)", ptr, len(cfg)))
			return out, problems
		case ptr < 0x40 || ptr+2 > end:
			problems = append(problems, fmt.Sprintf("capability pointer 0x%02x points outside 0x40..0x%x; the list ends there", ptr, end-1))
			return out, problems
		case seen[ptr]:
			problems = append(problems, fmt.Sprintf("capability list loops back to 0x%02x; the list ends there", ptr))
			return out, problems
		case len(out) >= maxLegacyCaps:
			problems = append(problems, fmt.Sprintf("more than %d capabilities; the list ends there", maxLegacyCaps))
			return out, problems
		}
		seen[ptr] = true
		id := uint16(cfg[ptr])
		out = append(out, Capability{ID: id, Name: capNames[id], Offset: ptr})
		ptr = int(cfg[ptr+1] &^ 3)
	}
	return out, problems
}

func walkExtended(cfg []byte) ([]Capability, []string) {
	if len(cfg) < ExtendedStart+4 {
		return nil, nil // a conventional function, or only the header was readable
	}
	var out []Capability
	var problems []string
	seen := map[int]bool{}
	off := ExtendedStart
	end := min(len(cfg), ExtendedSize)
	for {
		h := binary.LittleEndian.Uint32(cfg[off:])
		if h == 0 || h == 0xFFFFFFFF {
			// No extended capabilities (0), or a function that does not
			// answer (all ones: removed, or in reset).
			if h == 0xFFFFFFFF {
				problems = append(problems, fmt.Sprintf("extended capability header at 0x%03x reads all ones: the function did not answer", off))
			}
			return out, problems
		}
		seen[off] = true
		id := uint16(h)
		out = append(out, Capability{ID: id, Name: extCapNames[id], Offset: off, Extended: true, Version: uint8(h>>16) & 0xF})
		next := int(h>>20) &^ 3
		switch {
		case next == 0:
			return out, problems
		case next < ExtendedStart || next+4 > end:
			problems = append(problems, fmt.Sprintf("extended capability at 0x%03x points to 0x%03x, outside 0x100..0x%03x; the list ends there", off, next, end-1))
			return out, problems
		case seen[next]:
			problems = append(problems, fmt.Sprintf("extended capability list loops back to 0x%03x; the list ends there", next))
			return out, problems
		case len(out) >= maxExtendedCaps:
			problems = append(problems, fmt.Sprintf("more than %d extended capabilities; the list ends there", maxExtendedCaps))
			return out, problems
		}
		off = next
	}
}

// Find returns the first capability with the ID (legacy or extended).
func Find(caps []Capability, id uint16, extended bool) (Capability, bool) {
	for _, c := range caps {
		if c.ID == id && c.Extended == extended {
			return c, true
		}
	}
	return Capability{}, false
}

// PCI Express capability registers, offsets from the capability
// (PCI_EXP_*).
const (
	expFlags   = 0x02 // PCI_EXP_FLAGS: version 3:0, device/port type 7:4
	expDevCap  = 0x04 // PCI_EXP_DEVCAP: max payload supported 2:0
	expDevCtl  = 0x08 // PCI_EXP_DEVCTL: error reporting 3:0, payload 7:5, read request 14:12
	expDevSta  = 0x0A // PCI_EXP_DEVSTA
	expLnkCap  = 0x0C // PCI_EXP_LNKCAP: max speed 3:0, max width 9:4
	expLnkSta  = 0x12 // PCI_EXP_LNKSTA: speed 3:0, width 9:4, training 11, DLL active 13
	expLnkCap2 = 0x2C // PCI_EXP_LNKCAP2: supported speeds vector 7:1
	expLnkCtl2 = 0x30 // PCI_EXP_LNKCTL2: target speed 3:0
	// expV1Size and expV2Size are how much of the capability version 1
	// and 2 define.
	expV1Size = 0x14
	expV2Size = 0x3C
)

// Device Status bits (PCI_EXP_DEVSTA_*); MPEIN's device_status mirrors
// them.
const (
	DevStaCorrectable = 1 << 0
	DevStaNonFatal    = 1 << 1
	DevStaFatal       = 1 << 2
	DevStaUnsupReq    = 1 << 3
	DevStaAuxPower    = 1 << 4
	DevStaTransPend   = 1 << 5
)

// DeviceStatusNames names the set bits of a Device Status value, as lspci
// does (CorrErr, NonFatalErr, FatalErr, UnsupReq, AuxPwr, TransPend).
func DeviceStatusNames(v uint16) []string {
	names := []string{"CorrErr", "NonFatalErr", "FatalErr", "UnsupReq", "AuxPwr", "TransPend"}
	var out []string
	for i, n := range names {
		if v&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// Port types (PCI_EXP_TYPE_*), the Express Capabilities register's bits
// 7:4.
var portTypes = map[uint8]string{0: "endpoint", 1: "legacy endpoint", 4: "root port", 5: "upstream switch port",
	6: "downstream switch port", 7: "PCI Express to PCI bridge", 8: "PCI to PCI Express bridge",
	9: "root complex integrated endpoint", 10: "root complex event collector"}

// PortTypeName names a device/port type ("endpoint"); unknown codes are
// numbered.
func PortTypeName(t uint8) string {
	if n, ok := portTypes[t]; ok {
		return n
	}
	return fmt.Sprintf("type %d", t)
}

// Express is the PCI Express capability as read.
type Express struct {
	Offset   int    `json:"offset"`
	Version  uint8  `json:"version"`
	PortType string `json:"port_type"`
	// Capable is the link the function can train (Link Capabilities);
	// Current what it trained (Link Status); Target the speed Link
	// Control 2 asks for (unknown on version 1).
	Capable Link  `json:"capable"`
	Current Link  `json:"current"`
	Target  Speed `json:"target_speed,omitempty"`
	// Supported are the speeds of the Link Capabilities 2 vector.
	Supported []Speed `json:"supported_speeds,omitempty"`
	Training  bool    `json:"training,omitempty"`
	DLLActive bool    `json:"dll_link_active,omitempty"`
	// DeviceStatus is the Device Status register (DevSta*); its error
	// bits stay set until software clears them.
	DeviceStatus uint16 `json:"device_status"`
	// MaxPayload and MaxReadRequest are the sizes in bytes the Device
	// Control register sets.
	MaxPayload     int `json:"max_payload_bytes"`
	MaxReadRequest int `json:"max_read_request_bytes"`
	// Raw registers, for a user comparing with lspci -xxx.
	LinkCapRaw    uint32 `json:"lnkcap"`
	LinkStatusRaw uint16 `json:"lnksta"`
}

// DecodeExpress reads the PCI Express capability at off.
func DecodeExpress(cfg []byte, off int) (*Express, error) {
	if off < 0x40 || off+expV1Size > len(cfg) {
		return nil, fmt.Errorf("the PCI Express capability at 0x%02x runs past the %d bytes read", off, len(cfg))
	}
	le16 := func(o int) uint16 { return binary.LittleEndian.Uint16(cfg[off+o:]) }
	le32 := func(o int) uint32 { return binary.LittleEndian.Uint32(cfg[off+o:]) }
	flags := le16(expFlags)
	e := &Express{Offset: off, Version: uint8(flags & 0xF), PortType: PortTypeName(uint8(flags>>4) & 0xF)}
	ctl := le16(expDevCtl)
	e.MaxPayload = 128 << ((ctl >> 5) & 7)
	e.MaxReadRequest = 128 << ((ctl >> 12) & 7)
	e.DeviceStatus = le16(expDevSta)
	e.LinkCapRaw = le32(expLnkCap)
	e.Capable = Link{Speed: speedCode(e.LinkCapRaw & 0xF), Width: widthField(e.LinkCapRaw >> 4)}
	e.LinkStatusRaw = le16(expLnkSta)
	e.Current = Link{Speed: speedCode(uint32(e.LinkStatusRaw) & 0xF), Width: widthField(uint32(e.LinkStatusRaw) >> 4)}
	e.Training = e.LinkStatusRaw&(1<<11) != 0
	e.DLLActive = e.LinkStatusRaw&(1<<13) != 0
	if e.Version >= 2 && off+expV2Size <= len(cfg) {
		vec := le32(expLnkCap2) >> 1
		for s := Gen1; s <= MaxSpeed; s++ {
			if vec&(1<<(s-1)) != 0 {
				e.Supported = append(e.Supported, s)
			}
		}
		e.Target = speedCode(uint32(le16(expLnkCtl2)) & 0xF)
	}
	return e, nil
}

func speedCode(v uint32) Speed {
	if s := Speed(v); s.Known() {
		return s
	}
	return SpeedUnknown
}

// widthField reads the 6-bit width fields of LnkCap and LnkSta (a plain
// lane count; 0 while the link is down).
func widthField(v uint32) int {
	w := int(v & 0x3F)
	if !ValidWidth(w) {
		return 0
	}
	return w
}

// AER extended capability registers, offsets from the capability
// (PCI_ERR_*).
const (
	aerUncorStatus = 0x04
	aerUncorMask   = 0x08
	aerUncorSever  = 0x0C
	aerCorStatus   = 0x10
	aerCorMask     = 0x14
	aerCapCtl      = 0x18
	aerSize        = 0x1C
)

// AER is the Advanced Error Reporting capability as read. Status bits are
// set by the function when it detects an error and stay set until
// software writes them back (the kernel's AER driver does after handling
// them, firmware-first platforms may not).
type AER struct {
	Offset             int    `json:"offset"`
	UncorrectableRaw   uint32 `json:"uncorrectable_status"`
	UncorrectableMask  uint32 `json:"uncorrectable_mask"`
	UncorrectableSever uint32 `json:"uncorrectable_severity"`
	CorrectableRaw     uint32 `json:"correctable_status"`
	CorrectableMask    uint32 `json:"correctable_mask"`
	// FirstError is the bit number of the first uncorrectable error
	// logged (Capabilities and Control bits 4:0).
	FirstError int `json:"first_error"`
}

// DecodeAER reads the AER capability at off.
func DecodeAER(cfg []byte, off int) (*AER, error) {
	if off < ExtendedStart || off+aerSize > len(cfg) {
		return nil, fmt.Errorf("the AER capability at 0x%03x runs past the %d bytes read", off, len(cfg))
	}
	le32 := func(o int) uint32 { return binary.LittleEndian.Uint32(cfg[off+o:]) }
	return &AER{Offset: off, UncorrectableRaw: le32(aerUncorStatus), UncorrectableMask: le32(aerUncorMask),
		UncorrectableSever: le32(aerUncorSever), CorrectableRaw: le32(aerCorStatus), CorrectableMask: le32(aerCorMask),
		FirstError: int(le32(aerCapCtl) & 0x1F)}, nil
}

// Correctable names the correctable errors logged.
func (a *AER) Correctable() []string { return bitNames(a.CorrectableRaw, CorrectableNames) }

// Fatal names the uncorrectable errors logged whose severity is fatal.
func (a *AER) Fatal() []string {
	return bitNames(a.UncorrectableRaw&a.UncorrectableSever, UncorrectableNames)
}

// NonFatal names the uncorrectable errors logged whose severity is
// non-fatal.
func (a *AER) NonFatal() []string {
	return bitNames(a.UncorrectableRaw&^a.UncorrectableSever, UncorrectableNames)
}

// The error names, by status bit, as the kernel's aer_dev_* sysfs files
// print them (drivers/pci/pcie/aer.c, aer_correctable_error_string and
// aer_uncorrectable_error_string); bits without a name print as
// "bitN".
var (
	CorrectableNames = map[int]string{0: "RxErr", 6: "BadTLP", 7: "BadDLLP", 8: "Rollover", 12: "Timeout",
		13: "NonFatalErr", 14: "CorrIntErr", 15: "HeaderOF"}
	UncorrectableNames = map[int]string{0: "Undefined", 4: "DLP", 5: "SDES", 12: "TLP", 13: "FCP", 14: "CmpltTO",
		15: "CmpltAbrt", 16: "UnxCmplt", 17: "RxOF", 18: "MalfTLP", 19: "ECRC", 20: "UnsupReq", 21: "ACSViol",
		22: "UncorrIntErr", 23: "BlockedTLP", 24: "AtomicOpBlocked", 25: "TLPBlockedErr", 26: "PoisonTLPBlocked",
		27: "DMWrReqBlocked", 28: "IDECheck", 29: "MisIDETLP", 30: "PCRC_CHECK", 31: "TLPXlatBlocked"}
)

// BitOf is the status bit of an error name (either table), or -1.
func BitOf(name string, correctable bool) int {
	t := UncorrectableNames
	if correctable {
		t = CorrectableNames
	}
	for b, n := range t {
		if n == name {
			return b
		}
	}
	return -1
}

func bitNames(v uint32, names map[int]string) []string {
	var out []string
	for b := 0; b < 32; b++ {
		if v&(1<<b) == 0 {
			continue
		}
		if n, ok := names[b]; ok {
			out = append(out, n)
		} else {
			out = append(out, fmt.Sprintf("bit%d", b))
		}
	}
	return out
}

// ConfigView is what config space says about the link and its errors.
type ConfigView struct {
	Capabilities []Capability `json:"capabilities"`
	Express      *Express     `json:"express,omitempty"`
	AER          *AER         `json:"aer,omitempty"`
	// Problems are what the walk or the decoding stopped at.
	Problems []string `json:"problems,omitempty"`
}

// DecodeConfig walks cfg (the first 256 bytes, or all 4096) and decodes
// the PCI Express and AER capabilities it finds.
func DecodeConfig(cfg []byte) *ConfigView {
	caps, problems := Walk(cfg)
	v := &ConfigView{Capabilities: caps, Problems: problems}
	if v.Capabilities == nil {
		v.Capabilities = []Capability{}
	}
	if c, ok := Find(caps, CapExpress, false); ok {
		e, err := DecodeExpress(cfg, c.Offset)
		if err != nil {
			v.Problems = append(v.Problems, err.Error())
		}
		v.Express = e
	} else {
		v.Problems = append(v.Problems, "no PCI Express capability: a conventional PCI function, or a read limited to the header")
	}
	if c, ok := Find(caps, ExtCapAER, true); ok {
		a, err := DecodeAER(cfg, c.Offset)
		if err != nil {
			v.Problems = append(v.Problems, err.Error())
		}
		v.AER = a
	}
	return v
}

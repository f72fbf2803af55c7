package optics

import "fmt"

// Names from the SFF-8024 tables (identifiers, connectors, CMIS interface
// and media codes): only what cxray prints; other values print as hex.

var identifierNames = map[uint8]string{
	0x00: "Unknown or unspecified",
	0x01: "GBIC",
	0x02: "Module soldered to motherboard",
	0x03: "SFP/SFP+/SFP28",
	0x04: "300 pin XBI",
	0x05: "XENPAK",
	0x06: "XFP",
	0x07: "XFF",
	0x08: "XFP-E",
	0x09: "XPAK",
	0x0A: "X2",
	0x0B: "DWDM-SFP/SFP+",
	0x0C: "QSFP",
	0x0D: "QSFP+",
	0x0E: "CXP",
	0x0F: "Shielded Mini Multilane HD 4X",
	0x10: "Shielded Mini Multilane HD 8X",
	0x11: "QSFP28",
	0x12: "CXP2",
	0x13: "CDFP (Style 1/2)",
	0x14: "Shielded Mini Multilane HD 4X fanout",
	0x15: "Shielded Mini Multilane HD 8X fanout",
	0x16: "CDFP (Style 3)",
	0x17: "microQSFP",
	0x18: "QSFP-DD",
	0x19: "OSFP",
	0x1A: "SFP-DD",
	0x1B: "DSFP",
	0x1C: "x4 MiniLink/OcuLink",
	0x1D: "x8 MiniLink",
	0x1E: "QSFP+ or later with CMIS",
	0x1F: "SFP-DD with CMIS",
	0x20: "SFP+ or later with CMIS",
}

var connectorNames = map[uint8]string{
	0x00: "Unknown or unspecified",
	0x01: "SC",
	0x02: "FC Style 1 copper",
	0x03: "FC Style 2 copper",
	0x04: "BNC/TNC",
	0x05: "FC coax headers",
	0x06: "Fiber Jack",
	0x07: "LC",
	0x08: "MT-RJ",
	0x09: "MU",
	0x0A: "SG",
	0x0B: "Optical pigtail",
	0x0C: "MPO 1x12",
	0x0D: "MPO 2x16",
	0x20: "HSSDC II",
	0x21: "Copper pigtail",
	0x22: "RJ45",
	0x23: "No separable connector",
	0x24: "MXC 2x16",
	0x25: "CS optical connector",
	0x26: "SN optical connector",
	0x27: "MPO 2x12",
	0x28: "MPO 1x16",
}

// CMIS host electrical interface IDs (SFF-8024), the ones modules on a
// ConnectX commonly advertise.
var hostInterfaceNames = map[uint8]string{
	0x05: "25GAUI C2M",
	0x0A: "50GAUI-1 C2M",
	0x0B: "CAUI-4 C2M",
	0x0D: "100GAUI-2 C2M",
	0x0F: "200GAUI-4 C2M",
	0x11: "400GAUI-8 C2M",
	0x4B: "100GAUI-1-S C2M",
	0x4C: "100GAUI-1-L C2M",
	0x4D: "200GAUI-2-S C2M",
	0x4E: "200GAUI-2-L C2M",
	0x4F: "400GAUI-4-S C2M",
	0x50: "400GAUI-4-L C2M",
}

// Media interface IDs by CMIS media type (lower page byte 85).
var mmfInterfaceNames = map[uint8]string{
	0x02: "10GBASE-SR", 0x03: "25GBASE-SR", 0x04: "40GBASE-SR4", 0x07: "50GBASE-SR",
	0x09: "100GBASE-SR4", 0x0C: "100GBASE-SR2", 0x0E: "200GBASE-SR4", 0x10: "400GBASE-SR8",
	0x11: "400GBASE-SR4",
}

var smfInterfaceNames = map[uint8]string{
	0x04: "10GBASE-LR", 0x07: "25GBASE-LR", 0x0D: "100GBASE-LR4", 0x10: "100G CWDM4",
	0x14: "100GBASE-DR", 0x15: "100GBASE-FR1", 0x16: "100GBASE-LR1", 0x17: "200GBASE-DR4",
	0x1C: "400GBASE-DR4", 0x1D: "400GBASE-FR4",
}

// Transmitter technology (SFF-8636 byte 147 and CMIS 00h:212).
var technologyNames = map[uint8]string{
	0x0: "850 nm VCSEL", 0x1: "1310 nm VCSEL", 0x2: "1550 nm VCSEL", 0x3: "1310 nm FP",
	0x4: "1310 nm DFB", 0x5: "1550 nm DFB", 0x6: "1310 nm EML", 0x7: "1550 nm EML",
	0x8: "other", 0x9: "1490 nm DFB", 0xA: "copper, unequalized", 0xB: "copper, passive equalized",
	0xC: "copper, near and far end limiting active equalizers", 0xD: "copper, far end limiting active equalizers",
	0xE: "copper, near end limiting active equalizers", 0xF: "copper, linear active equalizers",
}

func named(table map[uint8]string, v uint8) Code {
	if n, ok := table[v]; ok {
		return Code{Value: v, Name: n}
	}
	return Code{Value: v, Name: fmt.Sprintf("0x%02x", v)}
}

// IdentifierName names an SFF-8024 identifier.
func IdentifierName(v uint8) Code {
	if v >= 0x80 {
		return Code{Value: v, Name: fmt.Sprintf("vendor specific (0x%02x)", v)}
	}
	return named(identifierNames, v)
}

// ConnectorName names an SFF-8024 connector type.
func ConnectorName(v uint8) Code { return named(connectorNames, v) }

// StandardOf says which memory map an identifier uses: SFF8472, SFF8636,
// CMIS, or "" for identifiers cxray does not decode.
func StandardOf(id uint8) string {
	switch id {
	case 0x03:
		return SFF8472
	case 0x0C, 0x0D, 0x11:
		return SFF8636
	case 0x18, 0x19, 0x1B, 0x1E, 0x1F, 0x20:
		return CMIS
	}
	return ""
}

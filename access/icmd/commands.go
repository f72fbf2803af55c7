package icmd

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"
)

// Opcodes.
const (
	OpQueryCap     = 0x8400 // ICMD_QUERY_CAP
	OpGetFWInfo    = 0x8007 // GET_FW_INFO
	OpAccessReg    = 0x9001 // access register (see package regaccess)
	queryCapSize   = 8
	getFWInfoBytes = 0x24
)

// Capabilities is the general capability group of ICMD_QUERY_CAP.
type Capabilities struct {
	Raw [2]uint32 // dwords 0 and 1 as returned

	NVAccess         bool // access register supports the NV registers (MNVDA, MNVDI, MNVIA, MNVQC)
	FWInfoPSID       bool // GET_FW_INFO reports the PSID
	AccessRegAll     bool // access register works on every register; mstreg and mstlink refuse to run without it
	MHSync           bool // multi-host synchronisation
	PCAMReg          bool
	MCAMReg          bool
	QCAMReg          bool
	CAPI             bool
	ICMDExMB         bool // external (host memory) mailbox
	VirtualLinkDown  bool
	CapabilityGroups bool // groups other than "general" may be queried
	SBCAMReg         bool
	CWCAMReg         bool
	NCFGReg          bool
	VirtNodeGUID     bool
	NICCapReg        bool

	NumDiagnosticCounters uint16
}

// QueryCapabilities runs ICMD_QUERY_CAP for the general capability group.
// The command does not report a maximum register size; that is bounded by the
// mailbox size (see regaccess.Client.MaxRegisterSize).
func (c *Client) QueryCapabilities(ctx context.Context) (*Capabilities, error) {
	out, err := c.Send(ctx, OpQueryCap, make([]byte, queryCapSize), queryCapSize)
	if err != nil {
		return nil, err
	}
	return DecodeCapabilities(out), nil
}

// DecodeCapabilities decodes an ICMD_QUERY_CAP reply (at least 8 bytes, PRM
// byte order); a shorter reply decodes as zeros for the missing dwords.
func DecodeCapabilities(b []byte) *Capabilities {
	var w [2]uint32
	for i := range w {
		if len(b) >= 4*i+4 {
			w[i] = binary.BigEndian.Uint32(b[4*i:])
		}
	}
	return decodeCapabilities(w[0], w[1])
}

func decodeCapabilities(w0, w1 uint32) *Capabilities {
	bit := func(n uint) bool { return w0>>n&1 != 0 }
	return &Capabilities{
		Raw:      [2]uint32{w0, w1},
		NVAccess: bit(31), FWInfoPSID: bit(30), AccessRegAll: bit(29), MHSync: bit(28),
		PCAMReg: bit(27), MCAMReg: bit(26), QCAMReg: bit(25), CAPI: bit(24), ICMDExMB: bit(23),
		VirtualLinkDown: bit(22), CapabilityGroups: bit(20), SBCAMReg: bit(18), CWCAMReg: bit(17),
		NCFGReg: bit(16), VirtNodeGUID: bit(15), NICCapReg: bit(13),
		NumDiagnosticCounters: uint16(w1 >> 16),
	}
}

// FirmwareInfo is the reply of GET_FW_INFO.
type FirmwareInfo struct {
	Major, Minor, SubMinor uint16
	// Build date and time fields as returned; BuildTime interprets them.
	Year                             uint16
	Month, Day, Hour, Minute, Second uint8
	HashSignature                    uint16
	PSID                             string // parameter-set ID, e.g. "MT_0000000834"
	Raw                              [getFWInfoBytes]byte
}

// Version returns "major.minor.subminor", e.g. "28.39.1010".
func (f *FirmwareInfo) Version() string {
	return fmt.Sprintf("%d.%d.%04d", f.Major, f.Minor, f.SubMinor)
}

// BuildTime returns the build time, reading the fields as BCD digits (how
// firmware images store dates, e.g. year 0x2023). It reports false when the
// fields are not a valid BCD date.
func (f *FirmwareInfo) BuildTime() (time.Time, bool) {
	var vals [6]int
	for i, v := range []uint16{f.Year, uint16(f.Month), uint16(f.Day), uint16(f.Hour), uint16(f.Minute), uint16(f.Second)} {
		n, ok := fromBCD(v)
		if !ok {
			return time.Time{}, false
		}
		vals[i] = n
	}
	t := time.Date(vals[0], time.Month(vals[1]), vals[2], vals[3], vals[4], vals[5], 0, time.UTC)
	if vals[1] < 1 || vals[1] > 12 || vals[2] < 1 || t.Day() != vals[2] || vals[3] > 23 || vals[4] > 59 || vals[5] > 59 {
		return time.Time{}, false
	}
	return t, true
}

func fromBCD(v uint16) (int, bool) {
	n := 0
	for shift := 12; shift >= 0; shift -= 4 {
		d := int(v >> shift & 0xF)
		if d > 9 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// FirmwareInfo runs GET_FW_INFO (no input; the mailbox is not written).
func (c *Client) FirmwareInfo(ctx context.Context) (*FirmwareInfo, error) {
	out, err := c.Send(ctx, OpGetFWInfo, nil, getFWInfoBytes)
	if err != nil {
		return nil, err
	}
	return ParseFirmwareInfo(out)
}

// ParseFirmwareInfo decodes a GET_FW_INFO reply (0x24 bytes, PRM byte order).
func ParseFirmwareInfo(b []byte) (*FirmwareInfo, error) {
	if len(b) < getFWInfoBytes {
		return nil, fmt.Errorf("icmd: GET_FW_INFO reply is %d bytes, want %d", len(b), getFWInfoBytes)
	}
	f := &FirmwareInfo{
		Major:    binary.BigEndian.Uint16(b[0:]),
		Minor:    binary.BigEndian.Uint16(b[4:]),
		SubMinor: binary.BigEndian.Uint16(b[6:]),
		Second:   b[8], Minute: b[9], Hour: b[10],
		Year:  binary.BigEndian.Uint16(b[12:]),
		Month: b[14], Day: b[15],
		HashSignature: binary.BigEndian.Uint16(b[18:]),
	}
	psid := b[20:36]
	if i := bytes.IndexByte(psid, 0); i >= 0 {
		psid = psid[:i]
	}
	f.PSID = string(bytes.TrimRight(psid, " "))
	copy(f.Raw[:], b)
	return f, nil
}

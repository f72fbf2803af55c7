package icmd_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/cxray/cxray/access/icmd"
)

// FuzzParseFirmwareInfo: any GET_FW_INFO reply. Short replies are refused;
// otherwise every field is the bytes where the PRM puts them, the PSID is
// the printable prefix of bytes 20..35 without padding, and a build time
// that parses prints back as the same BCD digits.
func FuzzParseFirmwareInfo(f *testing.F) {
	good := make([]byte, 0x24)
	binary.BigEndian.PutUint16(good[0:], 28)
	binary.BigEndian.PutUint16(good[4:], 39)
	binary.BigEndian.PutUint16(good[6:], 1010)
	good[8], good[9], good[10] = 0x53, 0x26, 0x09
	good[12], good[13], good[14], good[15] = 0x20, 0x24, 0x03, 0x14
	copy(good[20:], "MT_0000000834")
	f.Add(good)
	f.Add(make([]byte, 0x23))
	f.Add(bytes.Repeat([]byte{0xFF}, 0x30))
	f.Fuzz(func(t *testing.T, b []byte) {
		fi, err := icmd.ParseFirmwareInfo(b)
		if len(b) < 0x24 {
			if err == nil {
				t.Fatalf("a %d-byte reply was accepted", len(b))
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if fi.Major != binary.BigEndian.Uint16(b[0:]) || fi.Minor != binary.BigEndian.Uint16(b[4:]) ||
			fi.SubMinor != binary.BigEndian.Uint16(b[6:]) || fi.HashSignature != binary.BigEndian.Uint16(b[18:]) ||
			fi.Second != b[8] || fi.Minute != b[9] || fi.Hour != b[10] || fi.Month != b[14] || fi.Day != b[15] ||
			!bytes.Equal(fi.Raw[:], b[:0x24]) {
			t.Fatalf("fields do not match the reply: %+v", fi)
		}
		psid := b[20:36]
		if i := bytes.IndexByte(psid, 0); i >= 0 {
			psid = psid[:i]
		}
		if fi.PSID != string(bytes.TrimRight(psid, " ")) || len(fi.PSID) > 16 {
			t.Fatalf("PSID %q from % x", fi.PSID, b[20:36])
		}
		if bt, ok := fi.BuildTime(); ok {
			bcd := func(v int) byte { return byte(v/10%10<<4 | v%10) }
			y := uint16(bcd(bt.Year()/100))<<8 | uint16(bcd(bt.Year()%100))
			if y != fi.Year || bcd(int(bt.Month())) != fi.Month || bcd(bt.Day()) != fi.Day ||
				bcd(bt.Hour()) != fi.Hour || bcd(bt.Minute()) != fi.Minute || bcd(bt.Second()) != fi.Second {
				t.Fatalf("build time %v does not print back as the reply's BCD fields %+v", bt, fi)
			}
		}
	})
}

// FuzzDecodeCapabilities: any QUERY_CAP reply decodes; every flag is its
// bit of dword 0, Raw holds the dwords, and the counter count is dword 1's
// upper half.
func FuzzDecodeCapabilities(f *testing.F) {
	f.Add([]byte{0xE4, 0, 0, 0, 0, 0x10, 0, 0})
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		c := icmd.DecodeCapabilities(b)
		var w [2]uint32
		for i := range w {
			if len(b) >= 4*i+4 {
				w[i] = binary.BigEndian.Uint32(b[4*i:])
			}
		}
		if c.Raw != w || c.NumDiagnosticCounters != uint16(w[1]>>16) {
			t.Fatalf("raw %x / %d from % x", c.Raw, c.NumDiagnosticCounters, b)
		}
		for bit, got := range map[uint]bool{31: c.NVAccess, 30: c.FWInfoPSID, 29: c.AccessRegAll, 28: c.MHSync,
			27: c.PCAMReg, 26: c.MCAMReg, 25: c.QCAMReg, 24: c.CAPI, 23: c.ICMDExMB, 22: c.VirtualLinkDown,
			20: c.CapabilityGroups, 18: c.SBCAMReg, 17: c.CWCAMReg, 16: c.NCFGReg, 15: c.VirtNodeGUID, 13: c.NICCapReg} {
			if got != (w[0]>>bit&1 == 1) {
				t.Fatalf("bit %d decoded as %v from dword 0 %#x", bit, got, w[0])
			}
		}
	})
}

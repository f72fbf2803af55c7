package pcie

import (
	"encoding/binary"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// space is a config-space fixture written register by register at the
// offsets of the PCI Express Base Specification (pci_regs.h names).
type space []byte

func newSpace() space {
	s := make(space, ExtendedSize)
	s.w16(0x00, 0x15b3)
	s.w16(0x02, 0x1021)
	return s
}

func (s space) w8(off int, v uint8)   { s[off] = v }
func (s space) w16(off int, v uint16) { binary.LittleEndian.PutUint16(s[off:], v) }
func (s space) w32(off int, v uint32) { binary.LittleEndian.PutUint32(s[off:], v) }

// legacy links capability id at off to next.
func (s space) legacy(off int, id, next uint8) { s.w8(off, id); s.w8(off+1, next) }

// ext writes an extended capability header: ID 15:0, version 19:16, next
// 31:20.
func (s space) ext(off int, id uint16, ver uint8, next int) {
	s.w32(off, uint32(id)|uint32(ver)<<16|uint32(next)<<20)
}

// connectX7 is a ConnectX-7 function trained at Gen5 x8 in an x16-capable
// link, as lspci shows such a card: capabilities 0x60 Express, 0x48 VPD,
// 0x9C MSI-X, 0xC0 vendor (the gateway), 0x40 power management; extended
// AER at 0x100, DSN at 0x148, ARI at 0x154.
func connectX7() space {
	s := newSpace()
	s.w16(0x06, 0x0010) // PCI_STATUS_CAP_LIST
	s.w8(0x34, 0x60)
	s.legacy(0x60, CapExpress, 0x48)
	s.w16(0x62, 0x0002)             // version 2, endpoint (type 0)
	s.w32(0x64, 0x00000005)         // DevCap: max payload 4096 supported
	s.w16(0x68, 0x1<<5|0x5<<12)     // DevCtl: payload 256, read request 4096
	s.w16(0x6A, 0x0009)             // DevSta: CorrErr, UnsupReq
	s.w32(0x6C, 0x00400000|16<<4|5) // LnkCap: Gen5 x16, DLL active reporting
	s.w16(0x72, 1<<13|8<<4|5)       // LnkSta: Gen5 x8, DLL link active
	s.w32(0x8C, 0x3E)               // LnkCap2: 2.5 to 32 GT/s
	s.w16(0x90, 5)                  // LnkCtl2: target Gen5
	s.legacy(0x48, CapVPD, 0x9C)
	s.legacy(0x9C, CapMSIX, 0xC0)
	s.legacy(0xC0, CapVendor, 0x40)
	s.legacy(0x40, CapPM, 0x00)

	s.ext(0x100, ExtCapAER, 2, 0x148)
	s.w32(0x104, 1<<14|1<<20)           // uncorrectable: CmpltTO, UnsupReq
	s.w32(0x108, 1<<20)                 // UnsupReq masked
	s.w32(0x10C, 1<<4|1<<5|1<<14|1<<18) // severity: DLP, SDES, CmpltTO, MalfTLP fatal
	s.w32(0x110, 1<<0|1<<6|1<<13)       // correctable: RxErr, BadTLP, NonFatalErr
	s.w32(0x114, 1<<13)                 // advisory non-fatal masked
	s.w32(0x118, 14)                    // first error: bit 14
	s.ext(0x148, ExtCapDSN, 1, 0x154)
	s.ext(0x154, ExtCapARI, 1, 0)
	return s
}

func TestDecodeConfig(t *testing.T) {
	got := DecodeConfig(connectX7())
	want := &ConfigView{
		Capabilities: []Capability{
			{ID: CapExpress, Name: "PCI Express", Offset: 0x60},
			{ID: CapVPD, Name: "VPD", Offset: 0x48},
			{ID: CapMSIX, Name: "MSI-X", Offset: 0x9C},
			{ID: CapVendor, Name: "vendor-specific", Offset: 0xC0},
			{ID: CapPM, Name: "power management", Offset: 0x40},
			{ID: ExtCapAER, Name: "advanced error reporting", Offset: 0x100, Extended: true, Version: 2},
			{ID: ExtCapDSN, Name: "device serial number", Offset: 0x148, Extended: true, Version: 1},
			{ID: ExtCapARI, Name: "ARI", Offset: 0x154, Extended: true, Version: 1},
		},
		Express: &Express{Offset: 0x60, Version: 2, PortType: "endpoint",
			Capable: Link{Gen5, 16}, Current: Link{Gen5, 8}, Target: Gen5,
			Supported: []Speed{Gen1, Gen2, Gen3, Gen4, Gen5}, DLLActive: true,
			DeviceStatus: DevStaCorrectable | DevStaUnsupReq, MaxPayload: 256, MaxReadRequest: 4096,
			LinkCapRaw: 0x00400105, LinkStatusRaw: 0x2085},
		AER: &AER{Offset: 0x100, UncorrectableRaw: 1<<14 | 1<<20, UncorrectableMask: 1 << 20,
			UncorrectableSever: 1<<4 | 1<<5 | 1<<14 | 1<<18, CorrectableRaw: 1<<0 | 1<<6 | 1<<13, CorrectableMask: 1 << 13, FirstError: 14},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("decoded config (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"RxErr", "BadTLP", "NonFatalErr"}, got.AER.Correctable()); d != "" {
		t.Errorf("correctable names: %s", d)
	}
	if d := cmp.Diff([]string{"CmpltTO"}, got.AER.Fatal()); d != "" {
		t.Errorf("fatal names: %s", d)
	}
	if d := cmp.Diff([]string{"UnsupReq"}, got.AER.NonFatal()); d != "" {
		t.Errorf("non-fatal names: %s", d)
	}
	if d := cmp.Diff([]string{"CorrErr", "UnsupReq"}, DeviceStatusNames(got.Express.DeviceStatus)); d != "" {
		t.Errorf("device status names: %s", d)
	}
}

// What an unprivileged reader gets (the first 64 bytes, or 256 without the
// extended space) and what broken lists do.
func TestWalkStops(t *testing.T) {
	loopLegacy := connectX7()
	loopLegacy.legacy(0x40, CapPM, 0x48) // back to VPD
	loopExt := connectX7()
	loopExt.ext(0x154, ExtCapARI, 1, 0x100)
	intoHeader := connectX7()
	intoHeader.legacy(0x9C, CapMSIX, 0x20)
	extLow := connectX7()
	extLow.ext(0x148, ExtCapDSN, 1, 0x0F0)
	gone := connectX7()
	for i := range gone {
		gone[i] = 0xFF
	}
	noList := connectX7()
	noList.w16(0x06, 0)
	for _, c := range []struct {
		name     string
		cfg      []byte
		offsets  []int
		problems int
	}{
		{"whole", connectX7(), []int{0x60, 0x48, 0x9C, 0xC0, 0x40, 0x100, 0x148, 0x154}, 0},
		{"header only", connectX7()[:64], nil, 1},
		{"legacy only", connectX7()[:256], []int{0x60, 0x48, 0x9C, 0xC0, 0x40}, 0},
		{"too short", connectX7()[:32], nil, 1},
		{"legacy loop", loopLegacy, []int{0x60, 0x48, 0x9C, 0xC0, 0x40, 0x100, 0x148, 0x154}, 1},
		{"extended loop", loopExt, []int{0x60, 0x48, 0x9C, 0xC0, 0x40, 0x100, 0x148, 0x154}, 1},
		{"pointer into the header", intoHeader, []int{0x60, 0x48, 0x9C, 0x100, 0x148, 0x154}, 1},
		{"extended pointer below 0x100", extLow, []int{0x60, 0x48, 0x9C, 0xC0, 0x40, 0x100, 0x148}, 1},
		{"no capability list", noList, []int{0x100, 0x148, 0x154}, 0},
	} {
		caps, problems := Walk(c.cfg)
		var offs []int
		for _, cp := range caps {
			offs = append(offs, cp.Offset)
		}
		if d := cmp.Diff(c.offsets, offs); d != "" || len(problems) != c.problems {
			t.Errorf("%s: offsets (-want +got) %s; problems %q, want %d", c.name, d, problems, c.problems)
		}
	}
	// A function that does not answer reads all ones: no list, and said.
	caps, problems := Walk(gone)
	if len(problems) == 0 {
		t.Errorf("all ones: no problem named (caps %v)", caps)
	}
	if v := DecodeConfig(connectX7()[:64]); v.Express != nil || len(v.Problems) == 0 {
		t.Errorf("header only: %+v", v)
	}
}

func TestDecodeExpressV1(t *testing.T) {
	s := connectX7()
	s.w16(0x62, 0x0001) // version 1: no LnkCap2, no LnkCtl2
	e, err := DecodeExpress(s, 0x60)
	if err != nil {
		t.Fatal(err)
	}
	if e.Target != SpeedUnknown || e.Supported != nil || e.Capable != (Link{Gen5, 16}) {
		t.Errorf("version 1: %+v", e)
	}
	if _, err := DecodeExpress(s[:0x70], 0x60); err == nil {
		t.Error("a capability cut short decoded")
	}
	// A link down reads width 0 and a speed code the link had: width 0
	// is unknown, and reserved codes are unknown.
	s.w16(0x72, 0x000F)
	e, _ = DecodeExpress(s, 0x60)
	if e.Current != (Link{}) {
		t.Errorf("link down: current %+v", e.Current)
	}
}

// counting is a config space that records which bytes were read.
type counting struct {
	b    []byte
	read map[int]bool
	max  int // reads at or past max fail (an unprivileged reader's 64)
}

func (c *counting) ReadAt(p []byte, off int64) (int, error) {
	if int(off)+len(p) > c.max || int(off)+len(p) > len(c.b) {
		return 0, io.EOF
	}
	for i := range p {
		c.read[int(off)+i] = true
	}
	return copy(p, c.b[off:]), nil
}

// ReadConfig reads the capabilities it decodes and never the gateway
// (the vendor capability's body, where a read has side effects), and what
// it returns decodes as the whole space does.
func TestReadConfig(t *testing.T) {
	full := connectX7()
	c := &counting{b: full, read: map[int]bool{}, max: len(full)}
	img, err := ReadConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(DecodeConfig(full), DecodeConfig(img)); d != "" {
		t.Errorf("decoded image differs from the whole space (-whole +image):\n%s", d)
	}
	for off := 0xC0 + 2; off < 0xC0+0x40; off++ {
		if c.read[off] {
			t.Fatalf("read 0x%x inside the vendor capability", off)
		}
	}
	// An unprivileged reader: 64 bytes, and the decode says so.
	img, err = ReadConfig(&counting{b: full, read: map[int]bool{}, max: 64})
	if err != nil || len(img) != 64 {
		t.Fatalf("64-byte reader: %d bytes, %v", len(img), err)
	}
	if v := DecodeConfig(img); v.Express != nil || len(v.Problems) == 0 {
		t.Errorf("64 bytes decoded as %+v", v)
	}
	// No extended space.
	img, err = ReadConfig(&counting{b: full[:256], read: map[int]bool{}, max: 256})
	if err != nil || len(img) != 256 {
		t.Fatalf("256-byte space: %d bytes, %v", len(img), err)
	}
	if _, err := ReadConfig(&counting{b: full, read: map[int]bool{}, max: 10}); err == nil {
		t.Error("no header, no error")
	}
}

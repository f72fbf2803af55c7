package fwimage

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The FS4 layout, as mstflint reads it (offsets in bytes; fields are
// big-endian; text is ASCII, NUL-padded).
const (
	// hwPointersAt is where the hardware pointers start, relative to the
	// image start (mlxfwops/lib/flint_base.h FS4_HW_PTR_START); 16 entries
	// of 8 bytes (image_layout_hw_pointers_carmel).
	hwPointersAt  = 0x18
	hwPointerSize = 8
	hwPointers    = 16

	toolsAreaSize = 0x40 // image_layout_tools_area
	tocHeaderSize = 0x20 // image_layout_itoc_header
	tocEntrySize  = 0x20 // image_layout_itoc_entry
	maxTOCEntries = 64   // fs3_ops.h MAX_TOCS_NUM
	sectorSize    = 0x1000

	imageInfoSize = 0x400 // image_layout_image_info
	mfgInfoSize   = 0x140 // cx4fw_mfg_info
	devInfoSize   = 0x200 // cx4fw_device_info
	signatureSize = 0x140 // cx4fw_image_signature_256

	// maxBoot2Dwords bounds boot2's size field (fw_ops.cpp checkBoot2).
	maxBoot2Dwords = 1 << 20

	// formatVersionAt holds the image format version in its first byte
	// (1 for FS4: fw_ops.cpp IsFS4Image).
	formatVersionAt = 0x10
)

// Hardware pointer slots (image_layout_hw_pointers_carmel, in order).
const (
	ptrBootRecord = iota
	ptrBoot2
	ptrTOC
	ptrTools
	_ // authentication start
	_ // authentication end
	_ // digest
	_ // digest recovery key
	_ // fw window start
	_ // fw window end
	ptrImageInfo
	_ // hmac end
	_ // public key
	ptrSecurityVersion
	_ // gcm iv delta
	_ // hashes table
)

// Section types (mlxfwops/lib/flint_base.h fs3_section_t).
const (
	SectionMainCode    = 0x03
	SectionImageInfo   = 0x10
	SectionSignature   = 0xA0 // IMAGE_SIGNATURE_256
	SectionMFGInfo     = 0xE0
	SectionDevInfo     = 0xE1
	SectionEnd         = 0xFF
	tocSignatureFirstI = 0x49544F43 // "ITOC"
	tocSignatureFirstD = 0x44544F43 // "DTOC"
)

// magic is the FS4 image start pattern; starts are the offsets it is
// looked for at (mlxfwops/lib/fw_ops.cpp _fs4_magic_pattern,
// _cntx_image_start_pos).
var (
	magic      = [4]uint32{0x4D544657, 0xABCDEF00, 0xFADE1234, 0x5678DEAD}
	starts     = []int{0, 0x10000, 0x20000, 0x40000, 0x80000, 0x100000, 0x200000, 0x400000, 0x800000, 0x1000000}
	tocRandoms = [3]uint32{0x04081516, 0x2342CAFA, 0xBACAFE00}
	devInfoSig = [4]uint32{0x6D446576, 0x496E666F, 0x2342CAFA, 0xBACAFE00} // "mDevInfo" and the TOC randoms
)

var sectionNames = map[uint8]string{
	SectionMainCode: "MAIN_CODE", SectionImageInfo: "IMAGE_INFO", SectionSignature: "IMAGE_SIGNATURE_256",
	SectionMFGInfo: "MFG_INFO", SectionDevInfo: "DEV_INFO", 0x12: "FW_MAIN_CFG", 0x11: "FW_BOOT_CFG",
	0x18: "ROM_CODE", 0x33: "FW_ADB", 0xA1: "PUBLIC_KEYS_2048", 0xA2: "PUBLIC_KEYS_4096",
	0xA3: "FORBIDDEN_VERSIONS", 0xA4: "IMAGE_SIGNATURE_512", 0xE3: "VPD_R0",
}

// SectionName names a section type as mstflint's verify does.
func SectionName(t uint8) string {
	if n, ok := sectionNames[t]; ok {
		return n
	}
	return fmt.Sprintf("0x%02x", t)
}

// ErrFormat matches every error that says a file is not a valid image
// (errors.Is): a FormatError.
var ErrFormat = errors.New("not a valid firmware image")

// FormatError says what is wrong with a file and where.
type FormatError struct {
	// Offset is where the problem is found (-1: the file as a whole).
	Offset int64
	What   string
	// Truncated says the file ends before something it describes: it was
	// cut short (a partial download or copy).
	Truncated bool
}

func (e *FormatError) Error() string {
	if e.Offset < 0 {
		return e.What
	}
	return fmt.Sprintf("%s (at offset 0x%x)", e.What, e.Offset)
}

// Is makes errors.Is(err, ErrFormat) true.
func (e *FormatError) Is(target error) bool { return target == ErrFormat }

func bad(off int, format string, args ...any) *FormatError {
	return &FormatError{Offset: int64(off), What: fmt.Sprintf(format, args...)}
}

func cut(off, need, size int, what string) *FormatError {
	return &FormatError{Offset: int64(off), Truncated: true,
		What: fmt.Sprintf("%s needs bytes up to 0x%x, but the file ends at 0x%x: it is cut short", what, off+need, size)}
}

// Image is what an FS4 image file says about itself (flint -i IMG query).
type Image struct {
	Format string `json:"format"`
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
	// Start is where the image begins in the file (0 for a .bin file; a
	// flash dump may hold it further in).
	Start int `json:"image_start"`

	Version Version `json:"-"`
	// Released is the release date and time IMAGE_INFO records (UTC).
	Released       time.Time `json:"-"`
	PSID           string    `json:"psid"`
	OrigPSID       string    `json:"orig_psid,omitempty"`
	PartNumber     string    `json:"part_number,omitempty"`
	Description    string    `json:"description,omitempty"`
	ProductVersion string    `json:"product_version,omitempty"`
	PRSName        string    `json:"prs_name,omitempty"`
	PCIVendorID    uint16    `json:"pci_vendor_id"`
	PCIDeviceID    uint16    `json:"pci_device_id"`
	// HWIDs are the hardware device IDs the image supports (0x218 for
	// ConnectX-7).
	HWIDs     []uint32 `json:"hw_ids"`
	ImageVSD  string   `json:"image_vsd,omitempty"`
	DeviceVSD string   `json:"device_vsd,omitempty"`
	BaseGUID  uint64   `json:"-"`
	BaseMAC   uint64   `json:"-"`
	GUIDs     int      `json:"guids"`
	MACs      int      `json:"macs"`
	// MCCEnabled: the image is updated through the MCC flow (fw_ctrl).
	MCCEnabled      bool   `json:"mcc_enabled"`
	SignedFW        bool   `json:"signed_fw"`
	SecureFW        bool   `json:"secure_fw"`
	DebugFW         bool   `json:"debug_fw"`
	SecurityVersion uint32 `json:"security_version"`
	// Signed says the image has a signature section.
	Signed   bool      `json:"signed"`
	Sections []Section `json:"sections"`

	sigEntry, sigAt, itocEnd int
}

// Section is one ITOC or DTOC entry.
type Section struct {
	Type   uint8  `json:"type"`
	Name   string `json:"name"`
	Offset int    `json:"offset"`
	Size   int    `json:"size"`
	// Device says the section is device data (DTOC): per board, not part
	// of what a firmware update writes.
	Device bool `json:"device,omitempty"`
}

// FormatDate is the release date the way flint prints it ("5.10.2023":
// day, month, year without leading zeros); "" when unknown.
func (im *Image) FormatDate() string {
	if im.Released.IsZero() {
		return ""
	}
	return fmt.Sprintf("%d.%d.%d", im.Released.Day(), int(im.Released.Month()), im.Released.Year())
}

// Parse reads an image file. A file that is not a whole, valid FS4 image
// is an error matching ErrFormat that says what is wrong; nothing is
// guessed.
func Parse(data []byte) (*Image, error) {
	p := &parser{b: data}
	return p.parse()
}

type parser struct {
	b     []byte
	start int
	im    *Image
}

func (p *parser) u32(off int) uint32 { return binary.BigEndian.Uint32(p.b[off:]) }

// need checks that n bytes at off are in the file.
func (p *parser) need(off, n int, what string) error {
	if off < 0 || n < 0 || off > len(p.b) || n > len(p.b)-off {
		return cut(off, n, len(p.b), what)
	}
	return nil
}

func (p *parser) parse() (*Image, error) {
	if len(p.b) < 16 {
		return nil, &FormatError{Offset: -1, What: fmt.Sprintf("%d bytes is too short for a firmware image (an FS4 image starts with the 16-byte pattern \"MTFW\"...)", len(p.b))}
	}
	var found []int
	for _, s := range starts {
		if s+16 > len(p.b) {
			break
		}
		ok := true
		for i, w := range magic {
			if p.u32(s+4*i) != w {
				ok = false
				break
			}
		}
		if ok {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return nil, &FormatError{Offset: -1, What: "no FS4 image start pattern (\"MTFW\" 0xABCDEF00 0xFADE1234 0x5678DEAD) at any of the offsets a firmware image starts at: not an FS4 firmware image (an MFA2 package starts with \"MLNX.MFA2.XZ.00!\")"}
	case 1:
	default:
		return nil, &FormatError{Offset: int64(found[1]), What: fmt.Sprintf("%d image start patterns (at 0x%x and 0x%x): a flash dump with two images, not one image", len(found), found[0], found[1])}
	}
	p.start = found[0]
	if err := p.need(p.start+formatVersionAt, 1, "the image format version"); err != nil {
		return nil, err
	}
	if v := p.b[p.start+formatVersionAt]; v != 1 {
		return nil, bad(p.start+formatVersionAt, "image format version %d: FS4 images are version 1", v)
	}
	sum := sha256.Sum256(p.b)
	p.im = &Image{Format: "FS4", Size: len(p.b), SHA256: hex.EncodeToString(sum[:]), Start: p.start, sigEntry: -1, HWIDs: []uint32{}, Sections: []Section{}}

	ptrs, err := p.hwPointers()
	if err != nil {
		return nil, err
	}
	p.im.SecurityVersion = ptrs[ptrSecurityVersion]
	if err := p.toolsArea(ptrs[ptrTools]); err != nil {
		return nil, err
	}
	if err := p.boot2(ptrs[ptrBoot2]); err != nil {
		return nil, err
	}
	itoc := p.start + int(ptrs[ptrTOC])
	if err := p.tocHeader(itoc, tocSignatureFirstI, "ITOC"); err != nil {
		// mstflint looks one sector further when the first ITOC is not valid
		// (fs4_ops.cpp FsVerifyAux).
		if err2 := p.tocHeader(itoc+sectorSize, tocSignatureFirstI, "ITOC"); err2 != nil {
			return nil, err
		}
		itoc += sectorSize
	}
	if err := p.entries(itoc, false); err != nil {
		return nil, err
	}
	if !p.has(SectionImageInfo) {
		return nil, bad(itoc, "the ITOC lists no IMAGE_INFO section: the image does not say its version or PSID")
	}
	dtoc := len(p.b) - sectorSize
	if dtoc < p.im.itocEnd {
		return nil, &FormatError{Offset: int64(len(p.b)), Truncated: true,
			What: fmt.Sprintf("the file ends at 0x%x, before the device data (DTOC) that closes an image: it is cut short", len(p.b))}
	}
	if err := p.tocHeader(dtoc, tocSignatureFirstD, "DTOC"); err != nil {
		var fe *FormatError
		if errors.As(err, &fe) && !fe.Truncated {
			fe.What += "; the DTOC sits in the last 4 KiB of an image file, so the file may be cut short or padded"
		}
		return nil, err
	}
	if err := p.entries(dtoc, true); err != nil {
		return nil, err
	}
	if !p.has(SectionMFGInfo) {
		return nil, bad(dtoc, "the DTOC lists no MFG_INFO section")
	}
	return p.im, nil
}

func (p *parser) has(t uint8) bool {
	return slices.ContainsFunc(p.im.Sections, func(s Section) bool { return s.Type == t })
}

func (p *parser) hwPointers() ([hwPointers]uint32, error) {
	var ptrs [hwPointers]uint32
	at := p.start + hwPointersAt
	if err := p.need(at, hwPointers*hwPointerSize, "the hardware pointers"); err != nil {
		return ptrs, err
	}
	for k := range hwPointers {
		e := p.b[at+k*hwPointerSize : at+(k+1)*hwPointerSize]
		ptr := binary.BigEndian.Uint32(e)
		if ptr == 0xFFFFFFFF { // an erased pointer reads as unused
			continue
		}
		if got, want := hwCRC(e[:6]), binary.BigEndian.Uint16(e[6:]); got != want {
			return ptrs, bad(at+k*hwPointerSize, "hardware pointer %d has CRC 0x%04x, its bytes give 0x%04x: the image is damaged", k, want, got)
		}
		ptrs[k] = ptr
	}
	for _, k := range []int{ptrBoot2, ptrTOC, ptrTools} {
		if ptrs[k] == 0 || int(ptrs[k]) >= len(p.b)-p.start {
			return ptrs, bad(at+k*hwPointerSize, "hardware pointer %d (0x%x) points outside the file", k, ptrs[k])
		}
	}
	return ptrs, nil
}

func (p *parser) toolsArea(ptr uint32) error {
	at := p.start + int(ptr)
	if err := p.need(at, toolsAreaSize, "the tools area"); err != nil {
		return err
	}
	t := p.b[at : at+toolsAreaSize]
	if got, want := sectionCRC(t[:toolsAreaSize-4]), binary.BigEndian.Uint16(t[toolsAreaSize-2:]); got != want {
		return bad(at, "the tools area has CRC 0x%04x, its bytes give 0x%04x: the image is damaged", want, got)
	}
	return nil
}

func (p *parser) boot2(ptr uint32) error {
	at := p.start + int(ptr)
	if err := p.need(at, 8, "boot2"); err != nil {
		return err
	}
	n := p.u32(at + 4)
	if n < 4 || n > maxBoot2Dwords {
		return bad(at+4, "boot2 says it is %d dwords long (4..%d are possible)", n, maxBoot2Dwords)
	}
	size := int(n+4) * 4
	if err := p.need(at, size, "boot2"); err != nil {
		return err
	}
	if got, want := uint32(sectionCRC(p.b[at:at+size-4])), p.u32(at+size-4); got != want {
		return bad(at, "boot2 has CRC 0x%04x, its bytes give 0x%04x: the image is damaged", want, got)
	}
	return nil
}

func (p *parser) tocHeader(at int, first uint32, name string) error {
	if err := p.need(at, tocHeaderSize, "the "+name+" header"); err != nil {
		return err
	}
	if p.u32(at) != first || p.u32(at+4) != tocRandoms[0] || p.u32(at+8) != tocRandoms[1] || p.u32(at+12) != tocRandoms[2] {
		return bad(at, "no %s header here (its signature is missing)", name)
	}
	h := p.b[at : at+tocHeaderSize]
	if got, want := sectionCRC(h[:tocHeaderSize-4]), binary.BigEndian.Uint16(h[tocHeaderSize-2:]); got != want {
		return bad(at, "the %s header has CRC 0x%04x, its bytes give 0x%04x: the image is damaged", name, want, got)
	}
	return nil
}

// entries walks a TOC, checks every entry and section, and reads the
// sections that identify the image.
func (p *parser) entries(toc int, device bool) error {
	name := "ITOC"
	if device {
		name = "DTOC"
	}
	devInfos := 0
	for i := 0; ; i++ {
		if i >= maxTOCEntries {
			return bad(toc, "the %s has more than %d entries and no end entry", name, maxTOCEntries-1)
		}
		at := toc + tocHeaderSize + i*tocEntrySize
		if err := p.need(at, tocEntrySize, "the "+name+" entries"); err != nil {
			return err
		}
		e := p.b[at : at+tocEntrySize]
		typ := e[0]
		if typ == SectionEnd {
			break
		}
		if got, want := sectionCRC(e[:tocEntrySize-4]), binary.BigEndian.Uint16(e[tocEntrySize-2:]); got != want {
			return bad(at, "%s entry %d has CRC 0x%04x, its bytes give 0x%04x: the image is damaged", name, i, want, got)
		}
		d0 := binary.BigEndian.Uint32(e[0:])
		size := int(d0>>2&0x3FFFFF) * 4
		addr := int(binary.BigEndian.Uint32(e[20:]) & 0x7FFFFFFC)
		d6 := binary.BigEndian.Uint32(e[24:])
		crcMode := d6 >> 16 & 0x7
		off := addr
		if !device {
			off += p.start
		}
		sname := SectionName(typ)
		if err := p.need(off, size, name+" section "+sname); err != nil {
			return err
		}
		sec := p.b[off : off+size]
		switch crcMode {
		case 0: // in the entry
			if got, want := sectionCRC(sec), uint16(d6); got != want {
				return bad(off, "section %s has CRC 0x%04x, its bytes give 0x%04x: the image is damaged", sname, want, got)
			}
		case 2: // in the section's last dword
			if size < 4 {
				return bad(at, "section %s is %d bytes, too short to hold its CRC", sname, size)
			}
			if got, want := sectionCRC(sec[:size-4]), binary.BigEndian.Uint16(sec[size-2:]); got != want {
				return bad(off, "section %s has CRC 0x%04x, its bytes give 0x%04x: the image is damaged", sname, want, got)
			}
		}
		p.im.Sections = append(p.im.Sections, Section{Type: typ, Name: sname, Offset: off, Size: size, Device: device})
		if !device && off+size > p.im.itocEnd {
			p.im.itocEnd = off + size
		}
		var err error
		switch {
		case typ == SectionImageInfo && !device:
			err = p.imageInfo(off, sec)
		case typ == SectionSignature && !device:
			p.im.Signed, p.im.sigEntry, p.im.sigAt = true, at, off
		case typ == SectionMFGInfo && device:
			err = p.mfgInfo(off, sec)
		case typ == SectionDevInfo && device:
			if len(sec) >= 16 && p.u32(off) == devInfoSig[0] && p.u32(off+4) == devInfoSig[1] && p.u32(off+8) == devInfoSig[2] && p.u32(off+12) == devInfoSig[3] {
				devInfos++
				err = p.devInfo(off, sec)
			}
		}
		if err != nil {
			return err
		}
	}
	if device && devInfos != 1 {
		return bad(toc, "the DTOC has %d valid DEV_INFO sections; an image has exactly one", devInfos)
	}
	return nil
}

// text reads NUL-terminated text.
func text(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return strings.TrimRight(string(b), " ")
}

// putText is text's inverse; s is cut to len(b).
func putText(b []byte, s string) { copy(b, s) }

func fromBCD(v uint32) (int, bool) {
	n := 0
	for mul := 1; v != 0; mul *= 10 {
		d := v & 0xF
		if d > 9 {
			return 0, false
		}
		n += int(d) * mul
		v >>= 4
	}
	return n, true
}

func toBCD(n int) uint32 {
	var v uint32
	for shift := 0; n > 0; shift += 4 {
		v |= uint32(n%10) << shift
		n /= 10
	}
	return v
}

func (p *parser) imageInfo(off int, s []byte) error {
	if len(s) < imageInfoSize {
		return bad(off, "IMAGE_INFO is %d bytes; it holds %d", len(s), imageInfoSize)
	}
	if s[0] != 0 {
		return bad(off, "IMAGE_INFO format %d.%d is unknown (0.x is)", s[0], s[1])
	}
	im := p.im
	flags := binary.BigEndian.Uint16(s[2:])
	im.SecureFW = flags&0x8000 != 0
	im.SignedFW = flags&0x4000 != 0
	im.DebugFW = flags&0x2000 != 0
	im.MCCEnabled = flags&0x0100 != 0
	be16 := func(o int) uint16 { return binary.BigEndian.Uint16(s[o:]) }
	im.Version = Version{be16(4), be16(8), be16(10)}
	if im.Version.IsZero() {
		return bad(off+4, "IMAGE_INFO holds no firmware version")
	}
	// The release date and time are BCD: year 0x2023, month 0x10, day 0x05.
	sec, ok1 := fromBCD(uint32(s[12]))
	mi, ok2 := fromBCD(uint32(s[13]))
	hr, ok3 := fromBCD(uint32(s[14]))
	yr, ok4 := fromBCD(uint32(be16(16)))
	mo, ok5 := fromBCD(uint32(s[18]))
	dy, ok6 := fromBCD(uint32(s[19]))
	if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && mo >= 1 && mo <= 12 && dy >= 1 && dy <= 31 && yr > 0 && hr < 24 && mi < 60 && sec < 60 {
		im.Released = time.Date(yr, time.Month(mo), dy, hr, mi, sec, 0, time.UTC)
	}
	im.PCIDeviceID, im.PCIVendorID = be16(28), be16(30)
	im.PSID = text(s[0x24 : 0x24+16])
	if im.PSID == "" {
		return bad(off+0x24, "IMAGE_INFO holds no PSID")
	}
	im.ImageVSD = text(s[0x38 : 0x38+208])
	for i := range 4 {
		if id := binary.BigEndian.Uint32(s[0x118+4*i:]); id != 0 {
			im.HWIDs = append(im.HWIDs, id)
		}
	}
	if len(im.HWIDs) == 0 {
		return bad(off+0x118, "IMAGE_INFO lists no supported hardware ID")
	}
	im.ProductVersion = text(s[0x1C0 : 0x1C0+16])
	if s[1] >= 3 { // name, description and PRS name are in IMAGE_INFO from format 0.3
		im.Description = text(s[0x1D0 : 0x1D0+256])
		im.PartNumber = text(s[0x340 : 0x340+64])
		im.PRSName = text(s[0x380 : 0x380+128])
	}
	return nil
}

// uids reads a guids block (cx4fw_guids): GUIDs then MACs, each with the
// number allocated and the base.
func uids(b []byte) (guid uint64, nguids int, mac uint64, nmacs int) {
	return binary.BigEndian.Uint64(b[8:]), int(b[3]), binary.BigEndian.Uint64(b[24:]), int(b[19])
}

func (p *parser) mfgInfo(off int, s []byte) error {
	if len(s) < mfgInfoSize {
		return bad(off, "MFG_INFO is %d bytes; it holds %d", len(s), mfgInfoSize)
	}
	if s[28] > 1 {
		return bad(off+28, "MFG_INFO format %d.%d is unknown", s[28], s[29])
	}
	p.im.OrigPSID = text(s[0:16])
	if p.im.BaseGUID == 0 && p.im.BaseMAC == 0 {
		p.im.BaseGUID, p.im.GUIDs, p.im.BaseMAC, p.im.MACs = uids(s[32:])
	}
	return nil
}

func (p *parser) devInfo(off int, s []byte) error {
	if len(s) < devInfoSize {
		return bad(off, "DEV_INFO is %d bytes; it holds %d", len(s), devInfoSize)
	}
	major := binary.BigEndian.Uint16(s[17:]) & 0x1FF
	if major != 1 && major != 2 {
		return bad(off+16, "DEV_INFO format %d.%d is unknown", major, s[19])
	}
	p.im.BaseGUID, p.im.GUIDs, p.im.BaseMAC, p.im.MACs = uids(s[32:])
	p.im.DeviceVSD = text(s[112 : 112+208])
	return nil
}

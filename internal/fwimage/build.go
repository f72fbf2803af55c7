package fwimage

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Spec describes a synthetic image for Build.
type Spec struct {
	Version Version
	// Released is the release date and time (UTC; zero: 2024-01-01 12:00).
	Released time.Time
	// PSID is the image's PSID; OrigPSID the board's (MFG_INFO; "": PSID).
	PSID, OrigPSID string
	PartNumber     string
	Description    string
	// ProductVersion defaults to the version as text.
	ProductVersion string
	PCIDeviceID    uint16
	// HWID is the hardware device ID the image runs on (MGIR hw_dev_id).
	HWID      uint32
	ImageVSD  string
	DeviceVSD string
	BaseGUID  uint64
	BaseMAC   uint64
	// UIDs is the number of GUIDs and MACs allocated (default 2).
	UIDs int
	// Size is the file size in bytes (default 64 KiB; at least 32 KiB, a
	// multiple of 4 KiB).
	Size int
	// Signature: SignEmulator (default), SignNone, SignBadKey, SignUnknownKey.
	Signature Signing
	// Secure marks the image secure-boot firmware (IMAGE_INFO secure_fw,
	// signed_fw).
	Secure bool
}

// Signing chooses the signature section Build writes.
type Signing int

const (
	// SignEmulator signs with the key the emulated adapters trust.
	SignEmulator Signing = iota
	// SignNone writes no signature section.
	SignNone
	// SignBadKey signs with the right key ID but another key: the
	// signature does not verify.
	SignBadKey
	// SignUnknownKey names a key the emulated adapters do not know.
	SignUnknownKey
)

// MinSize is the smallest image Build writes: the fixed areas, one sector
// of MAIN_CODE and the device area. DefaultSize is what it writes unless
// told.
const (
	MinSize     = 0x8000
	DefaultSize = 0x10000
)

// The synthetic image's layout (offsets from the image start).
const (
	buildTools     = 0x500
	buildBoot2     = 0x1000
	buildBoot2Dw   = 60 // boot2 is (60+4) dwords
	buildITOC      = 0x2000
	buildImageInfo = 0x3000
	buildSignature = 0x3400
	buildMainCode  = 0x4000
	// The DTOC and its sections take the last three sectors.
	buildDeviceArea = 3 * sectorSize
	buildSlotLog2   = 0x16
)

// Build writes a synthetic FS4 image: every CRC right, so Parse and
// mstflint read it, and a MAIN_CODE section of filler bytes derived from
// the version (two versions differ in content, as real images do).
func Build(s Spec) ([]byte, error) {
	if s.Version.IsZero() {
		return nil, errors.New("fwimage: the image needs a firmware version")
	}
	if s.PSID == "" || len(s.PSID) > 16 || !printable(s.PSID) {
		return nil, fmt.Errorf("fwimage: PSID %q must be 1..16 printable characters", s.PSID)
	}
	if s.HWID == 0 {
		return nil, errors.New("fwimage: the image needs the hardware ID it runs on")
	}
	for _, f := range []string{s.OrigPSID, s.PartNumber, s.Description, s.ProductVersion, s.ImageVSD, s.DeviceVSD} {
		if !printable(f) {
			return nil, fmt.Errorf("fwimage: %q is not printable ASCII", f)
		}
	}
	if s.Size == 0 {
		s.Size = DefaultSize
	}
	if s.Size < MinSize || s.Size%sectorSize != 0 || s.Size > 1<<26 {
		return nil, fmt.Errorf("fwimage: size %d must be a multiple of 4 KiB from %d to 64 MiB", s.Size, MinSize)
	}
	if s.Released.IsZero() {
		s.Released = time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	}
	if s.ProductVersion == "" {
		s.ProductVersion = s.Version.String()
	}
	if s.OrigPSID == "" {
		s.OrigPSID = s.PSID
	}
	if s.UIDs == 0 {
		s.UIDs = 2
	}
	b := make([]byte, s.Size)
	be32 := func(off int, v uint32) { binary.BigEndian.PutUint32(b[off:], v) }
	for i, w := range magic {
		be32(4*i, w)
	}
	b[formatVersionAt] = 1 // FS4 format version

	// Hardware pointers.
	ptr := func(k int, v uint32) {
		at := hwPointersAt + k*hwPointerSize
		be32(at, v)
		binary.BigEndian.PutUint16(b[at+6:], hwCRC(b[at:at+6]))
	}
	ptr(ptrBoot2, buildBoot2)
	ptr(ptrTOC, buildITOC)
	ptr(ptrTools, buildTools)
	ptr(ptrImageInfo, buildImageInfo)

	// Tools area: binary format 0.0 (any tool reads it), the image slot size.
	t := b[buildTools : buildTools+toolsAreaSize]
	binary.BigEndian.PutUint16(t[4:], buildSlotLog2)
	binary.BigEndian.PutUint16(t[toolsAreaSize-2:], sectionCRC(t[:toolsAreaSize-4]))

	// Boot2: a size and filler, closed by its CRC.
	b2 := b[buildBoot2 : buildBoot2+(buildBoot2Dw+4)*4]
	binary.BigEndian.PutUint32(b2[4:], buildBoot2Dw)
	fill(b2[8:len(b2)-4], "boot2", s.Version)
	binary.BigEndian.PutUint32(b2[len(b2)-4:], uint32(sectionCRC(b2[:len(b2)-4])))

	// Sections.
	info := b[buildImageInfo : buildImageInfo+imageInfoSize]
	imageInfo(info, s)
	dtoc := s.Size - sectorSize
	mainSize := s.Size - buildDeviceArea - buildMainCode
	fill(b[buildMainCode:buildMainCode+mainSize], "main", s.Version)
	type sect struct {
		typ       uint8
		off, size int
	}
	secs := []sect{{SectionImageInfo, buildImageInfo, imageInfoSize}, {SectionMainCode, buildMainCode, mainSize}}
	if s.Signature != SignNone {
		secs = append(secs, sect{SectionSignature, buildSignature, signatureSize})
	}
	entry := func(toc, i int, sc sect) int {
		at := toc + tocHeaderSize + i*tocEntrySize
		e := b[at : at+tocEntrySize]
		binary.BigEndian.PutUint32(e[0:], uint32(sc.typ)<<24|uint32(sc.size/4)<<2)
		binary.BigEndian.PutUint32(e[20:], uint32(sc.off)&0x7FFFFFFC)
		binary.BigEndian.PutUint32(e[24:], uint32(sectionCRC(b[sc.off:sc.off+sc.size]))) // CRC in the entry (mode 0)
		binary.BigEndian.PutUint16(e[tocEntrySize-2:], sectionCRC(e[:tocEntrySize-4]))
		return at
	}
	header := func(at int, first uint32, n int) {
		be32(at, first)
		for i, r := range tocRandoms {
			be32(at+4+4*i, r)
		}
		b[at+23] = byte(n)
		binary.BigEndian.PutUint16(b[at+tocHeaderSize-2:], sectionCRC(b[at:at+tocHeaderSize-4]))
	}
	end := func(toc, n int) {
		at := toc + tocHeaderSize + n*tocEntrySize
		for i := range tocEntrySize {
			b[at+i] = 0xFF
		}
	}
	header(buildITOC, tocSignatureFirstI, len(secs))
	sigEntry := -1
	for i, sc := range secs {
		at := entry(buildITOC, i, sc)
		if sc.typ == SectionSignature {
			sigEntry = at
		}
	}
	end(buildITOC, len(secs))

	// Device data: MFG_INFO, DEV_INFO and the DTOC in the last sectors.
	mfgAt, devAt := s.Size-3*sectorSize, s.Size-2*sectorSize
	mfg := b[mfgAt : mfgAt+mfgInfoSize]
	putText(mfg[0:16], s.OrigPSID)
	mfg[28] = 1 // format 1.0
	putUIDs(mfg[32:], s)
	dev := b[devAt : devAt+devInfoSize]
	for i, w := range devInfoSig {
		binary.BigEndian.PutUint32(dev[4*i:], w)
	}
	dev[18] = 2 // format 2.0
	putUIDs(dev[32:], s)
	binary.BigEndian.PutUint16(dev[110:], 0x15B3)
	putText(dev[112:112+208], s.DeviceVSD)
	dsecs := []sect{{SectionMFGInfo, mfgAt, mfgInfoSize}, {SectionDevInfo, devAt, devInfoSize}}
	header(dtoc, tocSignatureFirstD, len(dsecs))
	for i, sc := range dsecs {
		entry(dtoc, i, sc)
	}
	end(dtoc, len(dsecs))

	if sigEntry >= 0 {
		im, err := Parse(b)
		if err != nil {
			return nil, fmt.Errorf("fwimage: the image built does not read back: %w", err)
		}
		sig := b[buildSignature : buildSignature+signatureSize]
		key, id := emulatorKey, emulatorKeyID
		switch s.Signature {
		case SignBadKey:
			key = []byte("not the key the emulator trusts")
		case SignUnknownKey:
			id = "cxray-other-key!"
		}
		copy(sig[0:16], id)
		copy(sig[32:], sign(key, im.signedBytes(b)))
		entry(buildITOC, len(secs)-1, secs[len(secs)-1])
	}
	return b, nil
}

func imageInfo(info []byte, s Spec) {
	info[0], info[1] = 0, 3 // format 0.3: name, description and PRS name inside
	flags := uint16(0x0100) // mcc_en: updated through the MCC flow
	if s.Secure {
		flags |= 0x8000 | 0x4000 // secure_fw, signed_fw
	}
	binary.BigEndian.PutUint16(info[2:], flags)
	binary.BigEndian.PutUint16(info[4:], s.Version.Major)
	binary.BigEndian.PutUint16(info[8:], s.Version.Minor)
	binary.BigEndian.PutUint16(info[10:], s.Version.SubMinor)
	r := s.Released.UTC()
	info[12], info[13], info[14] = byte(toBCD(r.Second())), byte(toBCD(r.Minute())), byte(toBCD(r.Hour()))
	binary.BigEndian.PutUint16(info[16:], uint16(toBCD(r.Year())))
	info[18], info[19] = byte(toBCD(int(r.Month()))), byte(toBCD(r.Day()))
	binary.BigEndian.PutUint16(info[28:], s.PCIDeviceID)
	binary.BigEndian.PutUint16(info[30:], 0x15B3)
	putText(info[0x24:0x24+16], s.PSID)
	putText(info[0x38:0x38+208], s.ImageVSD)
	binary.BigEndian.PutUint32(info[0x118:], s.HWID)
	putText(info[0x1C0:0x1C0+16], s.ProductVersion)
	putText(info[0x1D0:0x1D0+256], s.Description)
	putText(info[0x340:0x340+64], s.PartNumber)
}

func putUIDs(b []byte, s Spec) {
	b[2], b[3] = 1, byte(s.UIDs) // step 1
	binary.BigEndian.PutUint64(b[8:], s.BaseGUID)
	b[18], b[19] = 1, byte(s.UIDs)
	binary.BigEndian.PutUint64(b[24:], s.BaseMAC)
}

// fill writes deterministic filler bytes: SHA-256 blocks of a label, the
// version and a counter.
func fill(b []byte, label string, v Version) {
	var seed [40]byte
	copy(seed[:], label)
	binary.BigEndian.PutUint16(seed[24:], v.Major)
	binary.BigEndian.PutUint16(seed[26:], v.Minor)
	binary.BigEndian.PutUint16(seed[28:], v.SubMinor)
	for i := 0; i < len(b); i += sha256.Size {
		binary.BigEndian.PutUint64(seed[32:], uint64(i))
		sum := sha256.Sum256(seed[:])
		copy(b[i:], sum[:])
	}
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7E {
			return false
		}
	}
	return true
}

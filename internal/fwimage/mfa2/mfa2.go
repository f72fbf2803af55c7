// Package mfa2 reads and writes MFA2 firmware packages: one file that
// carries firmware images for several boards (PSIDs), as NVIDIA ships them
// for mlxfwmanager and as the kernel's devlink flash takes them.
//
// The layout (the kernel's drivers/net/ethernet/mellanox/mlxfw/
// mlxfw_mfa2.c and mlxfw_mfa2_format.h; mstflint's mlxarchive/ and the
// tools_open_* layouts in tools_layouts/tools_open_layouts.c): the
// fingerprint "MLNX.MFA2.XZ.00!", then TLVs aligned to 4 bytes (version
// byte, type byte, big-endian 16-bit length). A multi-part TLV
// (type 1; payload: the number of children less one, and their total
// length) is followed by its children. The first multi-part holds the
// package descriptor (type 2: numbers of devices and components, where
// the component block is, its sizes) and the package version (type 0x21);
// one multi-part per device follows, with its PSID (type 0x2A) and
// pointers to components (type 0x22); then one per component, with its
// descriptor (type 4: identifier, offset in the block, size) and version.
// The component block is one XZ stream; inside it each component is the
// 16 bytes "#BIN.COMPONENT!#" followed by its data.
package mfa2

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ulikunitz/xz"

	"github.com/cxray/cxray/internal/fwimage"
)

// Fingerprint starts every MFA2 file.
const Fingerprint = "MLNX.MFA2.XZ.00!"

// componentMagic precedes each component in the decompressed block.
const componentMagic = "#BIN.COMPONENT!#"

// TLV types.
const (
	tlvMultiPart     = 0x01
	tlvPackage       = 0x02
	tlvDevice        = 0x03
	tlvComponent     = 0x04
	tlvVersion       = 0x21
	tlvComponentPtr  = 0x22
	tlvPSID          = 0x2A
	tlvSHA256        = 0x2F
	tlvDescriptorSHA = 0x30
)

const (
	packageDescSize   = 0x1C // tools_open_package_descriptor
	componentDescSize = 0x10 // tools_open_component_desciptor
	componentPtrSize  = 0x08 // tools_open_component_ptr
	versionSize       = 0x0C // tools_open_version
	multiPartSize     = 0x04 // tools_open_multi_part

	// Bounds a package may claim before it is refused: they keep a damaged
	// file from asking for absurd work.
	maxDevices    = 4096
	maxComponents = 4096
	maxChildren   = 256
	// MaxBlock is the largest decompressed component block read.
	MaxBlock = 1 << 30
)

// ErrFormat matches every error that says a file is not a valid package.
var ErrFormat = fwimage.ErrFormat

func bad(off int, format string, args ...any) error {
	return &fwimage.FormatError{Offset: int64(off), What: fmt.Sprintf(format, args...)}
}

// Package is what an MFA2 file holds.
type Package struct {
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
	// Version is the package's own version (zero when it has none).
	Version fwimage.Version `json:"-"`
	// Created is the package version's date (zero when unknown).
	Created    time.Time   `json:"-"`
	Devices    []Device    `json:"devices"`
	Components []Component `json:"components"`

	data                   []byte
	cbOffset, cbArchive    int
	cbSize                 uint64
	componentsTLV, devsTLV int
}

// Device is one board the package has images for.
type Device struct {
	PSID string `json:"psid"`
	// Components are indexes into Package.Components.
	Components []int `json:"components"`
}

// Component is one image in the package.
type Component struct {
	// Identifier is the MCQS component identifier the image updates (the
	// kernel passes it to the device); mstflint's packages write 0, which
	// the device takes as the boot image.
	Identifier uint16          `json:"identifier"`
	Version    fwimage.Version `json:"-"`
	Released   time.Time       `json:"-"`
	Size       int             `json:"size"`
	offset     uint64
}

// Parse reads an MFA2 package's descriptors (not its compressed block:
// Extract reads that).
func Parse(data []byte) (*Package, error) {
	if len(data) < len(Fingerprint) || string(data[:len(Fingerprint)]) != Fingerprint {
		return nil, &fwimage.FormatError{Offset: -1, What: "no MFA2 fingerprint (\"MLNX.MFA2.XZ.00!\") at the start: not an MFA2 package"}
	}
	sum := sha256.Sum256(data)
	p := &Package{Size: len(data), SHA256: hex.EncodeToString(sum[:]), data: data, Devices: []Device{}, Components: []Component{}}
	r := reader{b: data}
	off := align(len(Fingerprint))
	kids, next, err := r.multi(off, "the package descriptor")
	if err != nil {
		return nil, err
	}
	if len(kids) == 0 || kids[0].typ != tlvPackage || len(kids[0].val) < packageDescSize {
		return nil, bad(off, "the first multi-part TLV does not start with a package descriptor")
	}
	pd := kids[0].val
	nComp := int(binary.BigEndian.Uint16(pd[0:]))
	nDev := int(binary.BigEndian.Uint16(pd[2:]))
	p.cbOffset = align(int(binary.BigEndian.Uint32(pd[4:])))
	p.cbArchive = int(binary.BigEndian.Uint32(pd[8:]))
	p.cbSize = uint64(binary.BigEndian.Uint32(pd[12:]))<<32 | uint64(binary.BigEndian.Uint32(pd[16:]))
	if nDev == 0 || nDev > maxDevices || nComp == 0 || nComp > maxComponents {
		return nil, bad(kids[0].off, "the package descriptor lists %d devices and %d components (1..%d each)", nDev, nComp, maxDevices)
	}
	if p.cbOffset <= 0 || p.cbArchive <= 0 || p.cbOffset > len(data) || p.cbArchive > len(data)-p.cbOffset {
		return nil, &fwimage.FormatError{Offset: int64(kids[0].off), Truncated: p.cbOffset+p.cbArchive > len(data),
			What: fmt.Sprintf("the component block (0x%x bytes at 0x%x) is not inside the file (0x%x bytes): the package is cut short or damaged", p.cbArchive, p.cbOffset, len(data))}
	}
	for _, k := range kids[1:] {
		if k.typ == tlvVersion && len(k.val) >= versionSize {
			p.Version, p.Created = version(k.val)
		}
	}
	p.devsTLV = next
	for i := range nDev {
		kids, n, err := r.multi(next, fmt.Sprintf("device %d", i))
		if err != nil {
			return nil, err
		}
		d := Device{Components: []int{}}
		for _, k := range kids {
			switch k.typ {
			case tlvPSID:
				if d.PSID == "" {
					d.PSID = string(bytes.TrimRight(k.val, "\x00 "))
				}
			case tlvComponentPtr:
				if len(k.val) < componentPtrSize {
					return nil, bad(k.off, "device %d: a component pointer of %d bytes", i, len(k.val))
				}
				d.Components = append(d.Components, int(binary.BigEndian.Uint16(k.val[2:])))
			}
		}
		if d.PSID == "" {
			return nil, bad(next, "device %d has no PSID", i)
		}
		if len(d.Components) == 0 {
			return nil, bad(next, "device %d (%s) points to no component", i, d.PSID)
		}
		p.Devices = append(p.Devices, d)
		next = n
	}
	p.componentsTLV = next
	for i := range nComp {
		kids, n, err := r.multi(next, fmt.Sprintf("component %d", i))
		if err != nil {
			return nil, err
		}
		if len(kids) == 0 || kids[0].typ != tlvComponent || len(kids[0].val) < componentDescSize {
			return nil, bad(next, "component %d does not start with a component descriptor", i)
		}
		cd := kids[0].val
		c := Component{Identifier: binary.BigEndian.Uint16(cd[2:]),
			offset: uint64(binary.BigEndian.Uint32(cd[4:]))<<32 | uint64(binary.BigEndian.Uint32(cd[8:])),
			Size:   int(binary.BigEndian.Uint32(cd[12:]))}
		if p.cbSize != 0 && (c.offset > p.cbSize || uint64(c.Size)+uint64(len(componentMagic)) > p.cbSize-c.offset) {
			return nil, bad(kids[0].off, "component %d (0x%x bytes at 0x%x) is not inside the component block (0x%x bytes)", i, c.Size, c.offset, p.cbSize)
		}
		for _, k := range kids[1:] {
			if k.typ == tlvVersion && len(k.val) >= versionSize {
				c.Version, c.Released = version(k.val)
			}
		}
		p.Components = append(p.Components, c)
		next = n
	}
	for i, d := range p.Devices {
		for _, ci := range d.Components {
			if ci < 0 || ci >= len(p.Components) {
				return nil, bad(p.devsTLV, "device %d (%s) points to component %d; the package has %d", i, d.PSID, ci, len(p.Components))
			}
		}
	}
	return p, nil
}

// Device returns the device entry of a PSID.
func (p *Package) Device(psid string) (*Device, bool) {
	for i := range p.Devices {
		if p.Devices[i].PSID == psid {
			return &p.Devices[i], true
		}
	}
	return nil, false
}

// PSIDs lists the boards the package has images for.
func (p *Package) PSIDs() []string {
	var out []string
	for _, d := range p.Devices {
		out = append(out, d.PSID)
	}
	return out
}

// Extract decompresses the component block and returns component i's
// data.
func (p *Package) Extract(i int) ([]byte, error) {
	if i < 0 || i >= len(p.Components) {
		return nil, fmt.Errorf("mfa2: component %d does not exist (0..%d)", i, len(p.Components)-1)
	}
	c := p.Components[i]
	zr, err := xz.NewReader(bytes.NewReader(p.data[p.cbOffset : p.cbOffset+p.cbArchive]))
	if err != nil {
		return nil, bad(p.cbOffset, "the component block is not an XZ stream: %v", err)
	}
	end := c.offset + uint64(len(componentMagic)) + uint64(c.Size)
	if end > MaxBlock {
		return nil, bad(p.cbOffset, "component %d ends 0x%x bytes into the block, more than %d MiB", i, end, MaxBlock>>20)
	}
	if _, err := io.CopyN(io.Discard, zr, int64(c.offset)); err != nil {
		return nil, p.blockErr(i, err)
	}
	buf := make([]byte, len(componentMagic)+c.Size)
	if _, err := io.ReadFull(zr, buf); err != nil {
		return nil, p.blockErr(i, err)
	}
	if string(buf[:len(componentMagic)]) != componentMagic {
		return nil, bad(p.cbOffset, "component %d does not start with %q inside the component block", i, componentMagic)
	}
	return buf[len(componentMagic):], nil
}

func (p *Package) blockErr(i int, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &fwimage.FormatError{Offset: int64(p.cbOffset), Truncated: true,
			What: fmt.Sprintf("the component block ends before component %d: the package is cut short or damaged", i)}
	}
	return bad(p.cbOffset, "the component block does not decompress (component %d): %v", i, err)
}

// version reads a version TLV: major, minor, sub-minor, then a BCD date
// and time.
func version(b []byte) (fwimage.Version, time.Time) {
	v := fwimage.Version{Major: uint16(b[0]), Minor: uint16(b[1]), SubMinor: binary.BigEndian.Uint16(b[2:])}
	bcd := func(x uint32) int {
		n := 0
		for mul := 1; x != 0; mul *= 10 {
			d := x & 0xF
			if d > 9 {
				return -1
			}
			n += int(d) * mul
			x >>= 4
		}
		return n
	}
	y, mo, d := bcd(uint32(binary.BigEndian.Uint16(b[4:]))), bcd(uint32(b[6])), bcd(uint32(b[7]))
	h, mi, s := bcd(uint32(b[8])), bcd(uint32(b[9])), bcd(uint32(b[10]))
	if y <= 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 {
		return v, time.Time{}
	}
	return v, time.Date(y, time.Month(mo), d, h, mi, s, 0, time.UTC)
}

func align(n int) int { return (n + 3) &^ 3 }

type tlv struct {
	typ uint8
	off int
	val []byte
}

type reader struct{ b []byte }

// tlv reads the TLV at off.
func (r reader) tlv(off int, what string) (tlv, error) {
	if off < 0 || off+4 > len(r.b) {
		return tlv{}, &fwimage.FormatError{Offset: int64(off), Truncated: true, What: fmt.Sprintf("%s: the file ends at 0x%x, before the TLV it expects: the package is cut short", what, len(r.b))}
	}
	n := int(binary.BigEndian.Uint16(r.b[off+2:]))
	if off+4+n > len(r.b) {
		return tlv{}, &fwimage.FormatError{Offset: int64(off), Truncated: true, What: fmt.Sprintf("%s: a TLV of 0x%x bytes runs past the end of the file (0x%x): the package is cut short", what, n, len(r.b))}
	}
	return tlv{typ: r.b[off+1], off: off, val: r.b[off+4 : off+4+n]}, nil
}

// multi reads the multi-part TLV at off: its children, and where the TLV
// after them starts.
func (r reader) multi(off int, what string) ([]tlv, int, error) {
	m, err := r.tlv(off, what)
	if err != nil {
		return nil, 0, err
	}
	if m.typ != tlvMultiPart || len(m.val) < multiPartSize {
		return nil, 0, bad(off, "%s: a multi-part TLV was expected, type 0x%02x found", what, m.typ)
	}
	count := int(binary.BigEndian.Uint16(m.val[0:])) + 1
	total := int(binary.BigEndian.Uint16(m.val[2:]))
	start := align(off + 4 + len(m.val))
	end := start + total
	if count > maxChildren {
		return nil, 0, bad(off, "%s: %d children; at most %d are read", what, count, maxChildren)
	}
	if end > len(r.b) {
		return nil, 0, &fwimage.FormatError{Offset: int64(off), Truncated: true, What: fmt.Sprintf("%s: its children run to 0x%x, past the end of the file (0x%x): the package is cut short", what, end, len(r.b))}
	}
	var kids []tlv
	at := start
	for range count {
		k, err := r.tlv(at, what)
		if err != nil {
			return nil, 0, err
		}
		if at+4+len(k.val) > end {
			return nil, 0, bad(at, "%s: a child runs past the multi-part's length", what)
		}
		kids = append(kids, k)
		at = align(at + 4 + len(k.val))
	}
	return kids, align(end), nil
}

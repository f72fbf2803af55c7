package mfa2

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/ulikunitz/xz"

	"github.com/cxray/cxray/internal/fwimage"
)

// Spec describes a package for Build.
type Spec struct {
	Version fwimage.Version
	Created time.Time
	// Images are the FS4 images to carry; each becomes one component, for
	// the board its PSID names (several images of one PSID are several
	// components of one device).
	Images [][]byte
}

// Build writes an MFA2 package of FS4 images. Each image must parse; its
// PSID, version and release date become the package's device and
// component entries.
func Build(s Spec) ([]byte, error) {
	if len(s.Images) == 0 {
		return nil, errors.New("mfa2: a package needs at least one image")
	}
	if s.Created.IsZero() {
		s.Created = time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	}
	type comp struct {
		im   *fwimage.Image
		data []byte
		off  uint64
	}
	var comps []comp
	var devs []Device
	var block bytes.Buffer
	for i, data := range s.Images {
		im, err := fwimage.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("mfa2: image %d: %w", i, err)
		}
		comps = append(comps, comp{im: im, data: data, off: uint64(block.Len())})
		block.WriteString(componentMagic)
		block.Write(data)
		found := false
		for d := range devs {
			if devs[d].PSID == im.PSID {
				devs[d].Components = append(devs[d].Components, i)
				found = true
			}
		}
		if !found {
			devs = append(devs, Device{PSID: im.PSID, Components: []int{i}})
		}
	}
	var z bytes.Buffer
	w, err := xz.WriterConfig{CheckSum: xz.CRC32}.NewWriter(&z)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(block.Bytes()); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}

	var out bytes.Buffer
	out.WriteString(Fingerprint)
	pad := func() {
		for out.Len()%4 != 0 {
			out.WriteByte(0)
		}
	}
	// tlvBytes is one TLV, padded to 4 bytes.
	tlvBytes := func(typ uint8, val []byte) []byte {
		b := make([]byte, 4, align(4+len(val)))
		b[1] = typ
		binary.BigEndian.PutUint16(b[2:], uint16(len(val)))
		b = append(b, val...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	multi := func(kids ...[]byte) {
		total := 0
		for _, k := range kids {
			total += len(k)
		}
		mp := make([]byte, multiPartSize)
		binary.BigEndian.PutUint16(mp[0:], uint16(len(kids)-1))
		binary.BigEndian.PutUint16(mp[2:], uint16(total))
		pad()
		out.Write(tlvBytes(tlvMultiPart, mp))
		for _, k := range kids {
			out.Write(k)
		}
	}
	ver := func(v fwimage.Version, t time.Time) []byte {
		b := make([]byte, versionSize)
		b[0], b[1] = byte(v.Major), byte(v.Minor)
		binary.BigEndian.PutUint16(b[2:], v.SubMinor)
		t = t.UTC()
		binary.BigEndian.PutUint16(b[4:], uint16(toBCD(t.Year())))
		b[6], b[7], b[8], b[9], b[10] = byte(toBCD(int(t.Month()))), byte(toBCD(t.Day())), byte(toBCD(t.Hour())), byte(toBCD(t.Minute())), byte(toBCD(t.Second()))
		return b
	}
	// The package descriptor's offsets depend on the descriptors' length,
	// which does not: write them once with zeros, then again.
	write := func(cbOffset int, descSHA []byte) {
		out.Reset()
		out.WriteString(Fingerprint)
		pd := make([]byte, packageDescSize)
		binary.BigEndian.PutUint16(pd[0:], uint16(len(comps)))
		binary.BigEndian.PutUint16(pd[2:], uint16(len(devs)))
		binary.BigEndian.PutUint32(pd[4:], uint32(cbOffset))
		binary.BigEndian.PutUint32(pd[8:], uint32(z.Len()))
		binary.BigEndian.PutUint32(pd[12:], uint32(uint64(block.Len())>>32))
		binary.BigEndian.PutUint32(pd[16:], uint32(block.Len()))
		pd[20] = 1 // xz
		blockSHA := sha256.Sum256(z.Bytes())
		multi(tlvBytes(tlvPackage, pd), tlvBytes(tlvVersion, ver(s.Version, s.Created)),
			tlvBytes(tlvSHA256, blockSHA[:]), tlvBytes(tlvDescriptorSHA, descSHA))
		for _, d := range devs {
			kids := [][]byte{tlvBytes(tlvDevice, nil), tlvBytes(tlvPSID, []byte(d.PSID))}
			for _, c := range d.Components {
				cp := make([]byte, componentPtrSize)
				cp[1] = 1 // storage: the component block
				binary.BigEndian.PutUint16(cp[2:], uint16(c))
				kids = append(kids, tlvBytes(tlvComponentPtr, cp))
			}
			multi(kids...)
		}
		for _, c := range comps {
			cd := make([]byte, componentDescSize)
			// identifier: the component index the kernel hands to MCC; 0 is
			// the boot image (mstflint's packages write 0 too).
			binary.BigEndian.PutUint32(cd[4:], uint32(c.off>>32))
			binary.BigEndian.PutUint32(cd[8:], uint32(c.off))
			binary.BigEndian.PutUint32(cd[12:], uint32(len(c.data)))
			multi(tlvBytes(tlvComponent, cd), tlvBytes(tlvVersion, ver(c.im.Version, c.im.Released)))
		}
		pad()
	}
	write(0, make([]byte, sha256.Size))
	cb := out.Len()
	write(cb, make([]byte, sha256.Size))
	descSHA := sha256.Sum256(out.Bytes())
	write(cb, descSHA[:])
	out.Write(z.Bytes())
	return out.Bytes(), nil
}

func toBCD(n int) uint32 {
	var v uint32
	for shift := 0; n > 0; shift += 4 {
		v |= uint32(n%10) << shift
		n /= 10
	}
	return v
}

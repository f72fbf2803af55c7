package pcie

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Lengths read of the two capabilities decoded here: the PCI Express
// capability of version 2 and an endpoint's AER capability.
const (
	expressLen = expV2Size
	aerLen     = 0x38
)

// ReadConfig reads from a function's config space what DecodeConfig needs
// and nothing else: the 64-byte header, each capability's header, and the
// PCI Express and AER capabilities. The rest of the returned image is
// zero. Registers with read side effects elsewhere (the counter of
// mstflint's gateway in the vendor-specific capability hands out a ticket
// per read) are never touched. The image ends where reading stopped: at
// 64 bytes for an unprivileged reader of sysfs's config, at 256 for a
// function without extended space. Only a header that cannot be read is
// an error.
func ReadConfig(r io.ReaderAt) ([]byte, error) {
	img := make([]byte, ExtendedSize)
	read := func(off, n int) bool {
		got, err := r.ReadAt(img[off:off+n], int64(off))
		return got == n && (err == nil || err == io.EOF)
	}
	if !read(0, 0x40) {
		_, err := r.ReadAt(img[:0x40], 0)
		return nil, fmt.Errorf("reading the config header: %v", err)
	}
	if binary.LittleEndian.Uint16(img[regStatus:])&statusCapList != 0 {
		seen := map[int]bool{}
		for ptr := int(img[regCapPtr] &^ 3); ptr >= 0x40 && ptr+2 <= HeaderSize && !seen[ptr] && len(seen) < maxLegacyCaps; {
			seen[ptr] = true
			if !read(ptr, 2) {
				return img[:0x40], nil // the rest of config space is not readable
			}
			if img[ptr] == CapExpress && ptr+expV1Size <= HeaderSize && !read(ptr, min(expressLen, HeaderSize-ptr)) {
				read(ptr, expV1Size)
			}
			ptr = int(img[ptr+1] &^ 3)
		}
	}
	if !read(ExtendedStart, 4) {
		return img[:HeaderSize], nil
	}
	seen := map[int]bool{}
	for off := ExtendedStart; !seen[off] && len(seen) < maxExtendedCaps; {
		seen[off] = true
		h := binary.LittleEndian.Uint32(img[off:])
		if h == 0 || h == 0xFFFFFFFF {
			break
		}
		if uint16(h) == ExtCapAER && off+aerLen <= ExtendedSize {
			read(off, aerLen)
		}
		next := int(h>>20) &^ 3
		if next < ExtendedStart || next+4 > ExtendedSize || !read(next, 4) {
			break
		}
		off = next
	}
	return img, nil
}

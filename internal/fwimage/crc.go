package fwimage

import "encoding/binary"

// The two CRCs of the FS4 layout. Both use the polynomial 0x100B; they
// differ in how data is fed and finished (mstflint: the Crc16 class in
// mlxfwops/lib/flint_base.cpp for sections and tables, calc_hw_crc in
// mft_utils/calc_hw_crc.c for the hardware pointers).

const crcPoly = 0x100B

// sectionCRC is the CRC of sections, TOC headers and entries, the tools
// area and boot2: each big-endian dword of b shifted in most significant
// bit first from 0xFFFF, then 16 zero bits, then complemented. len(b) is a
// multiple of 4 (a trailing partial dword is ignored).
func sectionCRC(b []byte) uint16 {
	crc := uint32(0xFFFF)
	for i := 0; i+4 <= len(b); i += 4 {
		w := binary.BigEndian.Uint32(b[i:])
		for range 32 {
			in := w >> 31
			if crc&0x8000 != 0 {
				crc = ((crc << 1) | in) ^ crcPoly
			} else {
				crc = (crc << 1) | in
			}
			crc &= 0xFFFF
			w <<= 1
		}
	}
	for range 16 {
		if crc&0x8000 != 0 {
			crc = (crc << 1) ^ crcPoly
		} else {
			crc <<= 1
		}
		crc &= 0xFFFF
	}
	return uint16(crc ^ 0xFFFF)
}

// hwTable is the byte table of the reflected polynomial (0x100B bit-reversed
// is 0xD008).
var hwTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xD008
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()

// hwCRC is the CRC of a hardware pointer entry (its first 6 bytes): the
// reflected CRC from 0xFFFF over the bytes with the first two complemented,
// its two bytes swapped. Six zero bytes give 0, so an unused pointer is
// all zeros.
func hwCRC(b []byte) uint16 {
	crc := uint16(0xFFFF)
	for i, c := range b {
		if i < 2 {
			c = ^c
		}
		crc = crc>>8 ^ hwTable[byte(crc)^c]
	}
	return crc<<8 | crc>>8
}

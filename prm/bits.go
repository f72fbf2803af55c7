package prm

import "encoding/binary"

// getBits reads width (1..64) bits starting at MSB-first bit offset bit.
// Bits past the end of buf read as zero.
func getBits(buf []byte, bit, width int) uint64 {
	start := bit >> 3
	lead := uint(bit & 7)
	var v uint64
	if start+9 <= len(buf) || (start+8 <= len(buf) && int(lead)+width <= 64) {
		v = binary.BigEndian.Uint64(buf[start:]) << lead
		if int(lead)+width > 64 {
			v |= uint64(buf[start+8]) >> (8 - lead)
		}
	} else {
		var tmp [9]byte
		if start < len(buf) {
			copy(tmp[:], buf[start:])
		}
		v = binary.BigEndian.Uint64(tmp[:]) << lead
		if int(lead)+width > 64 {
			v |= uint64(tmp[8]) >> (8 - lead)
		}
	}
	return v >> (64 - uint(width))
}

// setBits writes the low width (1..64) bits of v at MSB-first bit offset
// bit. The caller has checked that the range lies inside buf.
func setBits(buf []byte, bit, width int, v uint64) {
	end := bit + width
	for b := bit; b < end; {
		off := b & 7
		n := 8 - off
		if end-b < n {
			n = end - b
		}
		shift := uint(end - b - n)
		chunk := byte(v>>shift) & byte(1<<n-1)
		pos := uint(8 - off - n)
		m := byte(1<<n-1) << pos
		buf[b>>3] = buf[b>>3]&^m | chunk<<pos
		b += n
	}
}

// fits says whether v fits in width bits.
func fits(v uint64, width int) bool {
	return width >= 64 || v>>uint(width) == 0
}

func maxFor(width int) uint64 {
	if width >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(width) - 1
}

// Package regaccess reads and writes PRM access registers through ICMD
// command 0x9001: it frames the register in an operation TLV and a register
// TLV, sends it, and maps the status the firmware returns to typed errors.
package regaccess

import (
	"encoding/binary"
	"fmt"
)

// Method is an access-register method.
type Method uint8

// Methods (operation TLV dword 1 [14:8]).
const (
	Get Method = 1 // query
	Set Method = 2 // write
)

func (m Method) String() string {
	switch m {
	case Get:
		return "GET"
	case Set:
		return "SET"
	}
	return fmt.Sprintf("method(%d)", uint8(m))
}

// Frame layout (PRM byte order; mailbox dword i = big-endian bytes 4i..4i+3):
//
//	0x00 operation TLV: [31:27] type 1, [26:16] length 4 dwords, [15] dr, [14:8] status
//	0x04 [31:16] register id, [15] r (response), [14:8] method, [7:0] class 1
//	0x08 transaction id, 64 bits (unused)
//	0x10 register TLV: [31:27] type 3, [26:16] length in dwords including this header
//	0x14 register payload
const (
	HeaderSize   = 20 // operation TLV (16) + register TLV header (4)
	tlvOperation = 1
	tlvRegister  = 3
	opTLVDwords  = 4
	classReg     = 1
	maxTLVDwords = 0x7FF
)

// EncodeRequest builds the request frame for register id with payload data
// (a multiple of 4 bytes).
func EncodeRequest(method Method, id uint16, data []byte) []byte {
	f := make([]byte, HeaderSize+len(data))
	binary.BigEndian.PutUint32(f[0:], tlvOperation<<27|opTLVDwords<<16)
	binary.BigEndian.PutUint32(f[4:], uint32(id)<<16|uint32(method&0x7F)<<8|classReg)
	binary.BigEndian.PutUint32(f[16:], tlvRegister<<27|uint32((len(data)+4)/4)<<16)
	copy(f[HeaderSize:], data)
	return f
}

// ParseReply checks a reply frame for register id and returns the PRM status
// and up to size bytes of payload (fewer if the frame is shorter). It fails
// only when the frame is not a reply to this request at all.
func ParseReply(frame []byte, id uint16, size int) (payload []byte, status uint8, err error) {
	if len(frame) < HeaderSize {
		return nil, 0, fmt.Errorf("regaccess: reply of %d bytes is shorter than the %d-byte TLV header; the ICMD transfer was cut short", len(frame), HeaderSize)
	}
	op := binary.BigEndian.Uint32(frame[0:])
	if t := op >> 27; t != tlvOperation {
		return nil, 0, fmt.Errorf("regaccess: reply does not start with an operation TLV (type %d, dword 0x%08x); the firmware did not run the request", t, op)
	}
	if got := binary.BigEndian.Uint16(frame[4:]); got != id {
		return nil, 0, fmt.Errorf("regaccess: reply is for register 0x%04x, not 0x%04x; another agent may have overwritten the mailbox", got, id)
	}
	status = uint8(op >> 8 & 0x7F)
	size = max(0, min(size, len(frame)-HeaderSize))
	return frame[HeaderSize : HeaderSize+size], status, nil
}

package emu

import "encoding/binary"

// Access-register frame (ICMD 0x9001 mailbox), PRM byte order:
//
//	0x00 operation TLV: [31:27] type 1, [26:16] length 4 (dwords), [15] dr, [14:8] status
//	0x04 [31:16] register id, [15] r, [14:8] method, [7:0] class (1)
//	0x08 transaction id (64 bits)
//	0x10 register TLV: [31:27] type 3, [26:16] length in dwords including this header
//	0x14 register payload
const (
	tlvOperation = 1
	tlvRegister  = 3
	opTLVLen     = 4
	classReg     = 1
	frameHdr     = 20 // operation TLV + register TLV header

	// PRM access-register status codes the device itself produces.
	StatusOK            = 0
	StatusUnknownTLV    = 3
	StatusRegNotSupp    = 4
	StatusClassNotSupp  = 5
	StatusMethodNotSupp = 6
	StatusBadParam      = 7
	StatusLenTooSmall   = 0x24
)

// RegRequest is a parsed access-register request.
type RegRequest struct {
	ID      uint16
	Method  Method
	Payload []byte // register payload (a copy)
}

// ParseRegRequest decodes an access-register frame as the firmware sees it in
// the mailbox. On a framing error it returns the PRM status to answer with
// (never panics on any input). The returned payload length comes from the
// register TLV and is bounded by the frame.
func ParseRegRequest(frame []byte) (RegRequest, uint8) {
	if len(frame) < frameHdr {
		return RegRequest{}, StatusUnknownTLV
	}
	op := binary.BigEndian.Uint32(frame[0:])
	if op>>27 != tlvOperation || op>>16&0x7FF != opTLVLen {
		return RegRequest{}, StatusUnknownTLV
	}
	w1 := binary.BigEndian.Uint32(frame[4:])
	req := RegRequest{ID: uint16(w1 >> 16), Method: Method(w1 >> 8 & 0x7F)}
	if w1&0xFF != classReg {
		return req, StatusClassNotSupp
	}
	if req.Method != MethodGet && req.Method != MethodSet {
		return req, StatusMethodNotSupp
	}
	reg := binary.BigEndian.Uint32(frame[16:])
	if reg>>27 != tlvRegister {
		return req, StatusUnknownTLV
	}
	dwords := int(reg >> 16 & 0x7FF)
	if dwords < 1 || 16+4*dwords > len(frame) {
		return req, StatusBadParam
	}
	req.Payload = append([]byte(nil), frame[frameHdr:16+4*dwords]...)
	return req, StatusOK
}

// accessReg handles ICMD 0x9001: parse the mailbox, ask the firmware (or an
// injected status fault), and write the reply frame back in place.
func (d *Device) accessReg() {
	frame := d.mailboxBytes(int(d.id.MailboxSize))
	req, status := ParseRegRequest(frame)
	out := req.Payload
	if status == StatusOK {
		if st, ok := d.flt.RegisterStatus[req.ID]; ok {
			status = st
		} else if d.fw == nil {
			status = StatusRegNotSupp
		} else {
			out, status = d.fw.AccessRegister(req.ID, req.Method, append([]byte(nil), req.Payload...))
		}
	}
	d.emit(Event{Kind: EvRegister, RegID: req.ID, Method: req.Method, Status: status})

	// Reply in place: status in the operation TLV, r (response) bit set, the
	// payload resized to the register TLV length the request gave.
	op := binary.BigEndian.Uint32(frame[0:])
	binary.BigEndian.PutUint32(frame[0:], op&^(0x7F<<8)|uint32(status&0x7F)<<8)
	frame[4+2] |= 0x80
	if req.Payload != nil {
		n := len(req.Payload)
		if out == nil {
			out = req.Payload
		}
		payload := frame[frameHdr : frameHdr+n]
		clear(payload)
		copy(payload, out)
		frame = frame[:frameHdr+n]
	} else {
		frame = frame[:frameHdr]
	}
	d.putMailbox(frame)
}

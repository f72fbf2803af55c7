package regaccess

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func TestEncodeRequestLayout(t *testing.T) {
	data := make([]byte, 0xA0)
	data[0] = 0xAB
	f := EncodeRequest(Set, 0x9020, data)
	be := func(o int) uint32 { return binary.BigEndian.Uint32(f[o:]) }
	if len(f) != 20+0xA0 {
		t.Fatalf("frame length %d", len(f))
	}
	if be(0) != 1<<27|4<<16 {
		t.Errorf("operation TLV %#08x, want type 1 length 4", be(0))
	}
	if be(4) != 0x9020<<16|2<<8|1 {
		t.Errorf("dword 1 %#08x, want id 0x9020 method 2 class 1", be(4))
	}
	if be(8) != 0 || be(12) != 0 {
		t.Error("transaction id not zero")
	}
	if be(16) != 3<<27|(0xA0/4+1)<<16 {
		t.Errorf("register TLV %#08x, want type 3 length %d dwords", be(16), 0xA0/4+1)
	}
	if f[20] != 0xAB {
		t.Error("payload not at offset 20")
	}
}

func TestParseReply(t *testing.T) {
	reply := EncodeRequest(Get, 0x5031, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	reply[2] = 0x80 | 0x07 // dr bit and status 7
	p, st, err := ParseReply(reply, 0x5031, 8)
	if err != nil || st != 7 || !bytes.Equal(p, []byte{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("got %x status %d err %v", p, st, err)
	}
	if p, _, err := ParseReply(reply, 0x5031, 100); err != nil || len(p) != 8 {
		t.Errorf("oversized request: %d bytes, %v", len(p), err)
	}
	if _, _, err := ParseReply(reply[:19], 0x5031, 8); err == nil {
		t.Error("short frame accepted")
	}
	if _, _, err := ParseReply(reply, 0x9020, 8); err == nil {
		t.Error("reply for another register accepted")
	}
	bad := append([]byte(nil), reply...)
	bad[0] = 0x18 // type 3
	if _, _, err := ParseReply(bad, 0x5031, 8); err == nil {
		t.Error("frame without operation TLV accepted")
	}
}

// Every status the PRM defines has its own meaning and advice; status 4 is
// also ErrRegisterNotSupported.
func TestStatusErrors(t *testing.T) {
	want := map[uint8]string{
		1: "busy", 2: "version", 3: "unknown TLV", 4: "not supported by this firmware", 5: "class",
		6: "method not supported", 7: "bad parameter", 8: "resource not available", 9: "receipt",
		0x0E: "secondary", 0x20: "rejected", 0x21: "erase count", 0x22: "corrupted", 0x24: "too small",
		0x70: "internal error", 0x55: "unknown status",
	}
	seen := map[string]bool{}
	for st, text := range want {
		e := &StatusError{Status: st, RegisterID: 0x9020, Method: Get}
		msg := e.Error()
		if !strings.Contains(msg, text) || !strings.Contains(msg, "0x9020") || !strings.Contains(msg, "; ") {
			t.Errorf("status %#x: %q lacks %q, the register or advice", st, msg, text)
		}
		if seen[msg] {
			t.Errorf("status %#x: message not distinct", st)
		}
		seen[msg] = true
		if errors.Is(e, ErrRegisterNotSupported) != (st == 4) {
			t.Errorf("status %#x: Is(ErrRegisterNotSupported) wrong", st)
		}
	}
	if !strings.Contains((&StatusError{Status: 4, RegisterID: 1}).Error(), "cxray reg list") {
		t.Error("status 4 does not point at `cxray reg list`")
	}
}

// FuzzParseReply: any frame. A frame shorter than the header, of another
// TLV type or for another register is refused; otherwise the status is the
// operation TLV's [14:8] and the payload is the frame's bytes after the
// header, at most size of them.
func FuzzParseReply(f *testing.F) {
	f.Add(EncodeRequest(Get, 0x9020, make([]byte, 16)), uint16(0x9020), 16)
	f.Add([]byte{}, uint16(0), -1)
	f.Add(make([]byte, 20), uint16(0), 1<<20)
	f.Fuzz(func(t *testing.T, frame []byte, id uint16, size int) {
		p, st, err := ParseReply(frame, id, size)
		if err != nil {
			if len(frame) >= HeaderSize && frame[0]>>3 == tlvOperation && binary.BigEndian.Uint16(frame[4:]) == id {
				t.Fatalf("a well-formed reply for 0x%04x was refused: %v", id, err)
			}
			return
		}
		if len(frame) < HeaderSize || frame[0]>>3 != tlvOperation || binary.BigEndian.Uint16(frame[4:]) != id {
			t.Fatalf("accepted a frame that is not a reply for 0x%04x: % x", id, frame)
		}
		if st != frame[2]&0x7F {
			t.Fatalf("status %#x, frame says %#x", st, frame[2]&0x7F)
		}
		if len(p) != max(0, min(size, len(frame)-HeaderSize)) || !bytes.Equal(p, frame[HeaderSize:HeaderSize+len(p)]) {
			t.Fatalf("payload %d bytes from a %d-byte frame with size %d", len(p), len(frame), size)
		}
	})
}

// FuzzFrameRoundTrip: a request, answered by a firmware that sets a status
// and rewrites the payload (the response bit and the method may change),
// parses back to that status and payload.
func FuzzFrameRoundTrip(f *testing.F) {
	f.Add(uint8(1), uint16(0x9020), []byte("0123456789abcdef"), uint8(0), []byte("fedcba9876543210"))
	f.Add(uint8(2), uint16(0x5006), []byte{}, uint8(7), []byte{})
	f.Fuzz(func(t *testing.T, m uint8, id uint16, data []byte, status uint8, reply []byte) {
		data = data[:len(data)&^3]
		req := EncodeRequest(Method(m), id, data)
		if len(req) != HeaderSize+len(data) || !bytes.Equal(req[HeaderSize:], data) {
			t.Fatalf("request frame % x for %d payload bytes", req, len(data))
		}
		if got := int(binary.BigEndian.Uint32(req[16:])>>16) & maxTLVDwords; got != (len(data)+4)/4 {
			t.Fatalf("register TLV length %d dwords for %d bytes", got, len(data))
		}
		resp := append([]byte(nil), req...)
		resp[2] = resp[2]&0x80 | status&0x7F
		resp[6] |= 0x80 // the response bit
		copy(resp[HeaderSize:], reply)
		p, st, err := ParseReply(resp, id, len(data))
		if err != nil || st != status&0x7F {
			t.Fatalf("reply with status %#x: %v, status %#x", status, err, st)
		}
		want := append([]byte(nil), data...)
		copy(want, reply)
		if !bytes.Equal(p, want) {
			t.Fatalf("payload % x, want % x", p, want)
		}
	})
}

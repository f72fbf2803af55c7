package vsec_test

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/cxray/cxray/access/vsec"
	"github.com/cxray/cxray/internal/clock"
)

// FuzzOpen: any 256-byte config header. Open never panics or loops (its
// reads are bounded by the 48 possible capability pointers); when it finds
// a gateway, the capability walk really reaches an ID-9 entry at that
// offset; otherwise the error is one of the typed kinds.
func FuzzOpen(f *testing.F) {
	good := newFake(0x15b3, [2]byte{0x40, 1}, [2]byte{0x60, 0x10}, [2]byte{0xC0, 9})
	f.Add(good.b[:])
	f.Add(newFake(0x8086).b[:])
	f.Add(make([]byte, 256))
	f.Fuzz(func(t *testing.T, hdr []byte) {
		var fc fakeConfig
		copy(fc.b[:], hdr)
		gw, err := vsec.Open(&fc, nil)
		if fc.reads > 1+64 {
			t.Fatalf("%d reads to walk a 256-byte capability list", fc.reads)
		}
		if err != nil {
			if !errors.Is(err, vsec.ErrNotMellanox) && !errors.Is(err, vsec.ErrNoCapability) && !errors.Is(err, vsec.ErrDeviceGone) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		off := gw.Offset()
		if off < 0x40 || off > 0xFC || off%4 != 0 || fc.b[off] != vsec.CapID || binary.LittleEndian.Uint16(fc.b[0:]) != vsec.VendorMellanox {
			t.Fatalf("Open found a gateway at %#x that is not a vendor-specific capability of a Mellanox device", off)
		}
		seen := map[byte]bool{}
		for p := fc.b[0x34] &^ 3; p >= 0x40 && !seen[p]; p = fc.b[int(p)+1] &^ 3 {
			seen[p] = true
			if int64(p) == off {
				return
			}
		}
		t.Fatalf("offset %#x is not on the capability list", off)
	})
}

// scripted is a gateway whose register reads come from the fuzzer: each
// read of a gateway register takes the next dword of the script (zeros
// once it runs out). It records what a correct client must respect.
type scripted struct {
	fakeConfig
	script      []byte
	ops         int
	semHeld     uint32 // the ticket the client holds: SEM read right after its write gave it back
	lastSemW    uint32
	wroteTicket uint32          // a ticket just written, not yet read back
	flagData    map[uint32]bool // DATA values returned together with a set flag
}

const gwBase = 0x40

func (s *scripted) next() uint32 {
	if len(s.script) < 4 {
		s.script = nil
		return 0
	}
	v := binary.LittleEndian.Uint32(s.script)
	s.script = s.script[4:]
	return v
}

func (s *scripted) ReadAt(p []byte, off int64) (int, error) {
	s.ops++
	if off < gwBase+4 || off >= gwBase+0x18 {
		return s.fakeConfig.ReadAt(p, off)
	}
	for i := 0; i+4 <= len(p); i += 4 {
		v := s.next()
		if off+int64(i) == gwBase+0xC && s.wroteTicket != 0 {
			if v == s.wroteTicket {
				s.semHeld = v
			}
			s.wroteTicket = 0
		}
		binary.LittleEndian.PutUint32(p[i:], v)
	}
	if off == gwBase+0x10 && len(p) == 8 && binary.LittleEndian.Uint32(p)>>31 == 1 {
		s.flagData[binary.LittleEndian.Uint32(p[4:])] = true
	}
	return len(p), nil
}

func (s *scripted) WriteAt(p []byte, off int64) (int, error) {
	s.ops++
	if off == gwBase+0xC && len(p) == 4 {
		v := binary.LittleEndian.Uint32(p)
		s.lastSemW = v
		s.wroteTicket = v
	}
	return len(p), nil
}

// FuzzGatewayReplies: whatever the gateway registers return (garbage,
// all-ones, flags that never come, a semaphore that never sticks), a read
// ends within its bounds, returns only a DATA value that came with the
// flag set, and a semaphore the client took is always released.
func FuzzGatewayReplies(f *testing.F) {
	ok := func(ws ...uint32) []byte {
		b := make([]byte, 4*len(ws))
		for i, w := range ws {
			binary.LittleEndian.PutUint32(b[4*i:], w)
		}
		return b
	}
	// COUNTER 5, SEM 5 (taken), CTRL, CTRL status ok, ADDR+DATA with flag.
	f.Add(ok(5, 5, 0x20000002, 0x20000002, 1<<31|0x14, 0xCAFE))
	f.Add(ok(5, 6, 6, 0, 0))
	f.Add(ok(0xFFFFFFFF, 0xFFFFFFFF))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, script []byte) {
		s := &scripted{script: script, flagData: map[uint32]bool{}}
		s.b[0], s.b[1], s.b[2], s.b[3] = 0xb3, 0x15, 0x21, 0x10
		s.b[0x34] = gwBase
		s.b[gwBase] = vsec.CapID
		clk := clock.NewManual(time.Unix(0, 0))
		gw, err := vsec.Open(s, &vsec.Options{Clock: clk, PollLimit: 32})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		v, err := gw.Read32(ctx, vsec.SpaceCR, 0x14)
		if s.ops > 5000 {
			t.Fatalf("%d config accesses for one read", s.ops)
		}
		if err == nil && !s.flagData[v] {
			t.Fatalf("read returned %#x, which never came with the flag set", v)
		}
		if s.semHeld != 0 && s.lastSemW != 0 {
			t.Fatalf("the semaphore (ticket %#x) was taken and not released (last write %#x)", s.semHeld, s.lastSemW)
		}
	})
}

package vsec

import (
	"context"
	"fmt"
)

// Session holds the gateway semaphore. Its operations switch address spaces
// only when needed. A Session is used by one goroutine at a time; Release it
// when done (Gateway.Do does that for you).
type Session struct {
	g         *Gateway
	space     Space
	haveSpace bool   // space is what CTRL currently selects
	ctrl      uint32 // last known CTRL value, for read-modify-write of [15:0]
	haveCtrl  bool
	released  bool
}

// Release gives the semaphore back. Calling it again does nothing. It is
// one config write and needs no context, so it also runs after the
// caller's context has ended. If the write fails the semaphore may stay
// held; the witness lock is dropped all the same, so the next cxray
// process can recognise and release it.
func (s *Session) Release() error {
	if s.released {
		return nil
	}
	s.released = true
	defer func() { <-s.g.turn }()
	if s.haveCtrl {
		s.g.setCtrl(s.ctrl)
	}
	err := s.g.wr("release", offSem, 0)
	s.g.unlockWitness()
	return err
}

// Read32 reads the dword at addr in space sp.
func (s *Session) Read32(ctx context.Context, sp Space, addr uint32) (uint32, error) {
	if err := s.prepare(ctx, "read", sp, addr); err != nil {
		return 0, err
	}
	return s.read(ctx, sp, addr)
}

// Write32 writes v to the dword at addr in space sp.
func (s *Session) Write32(ctx context.Context, sp Space, addr, v uint32) error {
	if err := s.prepare(ctx, "write", sp, addr); err != nil {
		return err
	}
	return s.write(ctx, sp, addr, v)
}

// ReadBlock reads len(dst) consecutive dwords starting at addr.
func (s *Session) ReadBlock(ctx context.Context, sp Space, addr uint32, dst []uint32) error {
	if err := s.checkRange("read", sp, addr, len(dst)); err != nil {
		return err
	}
	for i := range dst {
		a := addr + uint32(4*i)
		if err := s.prepare(ctx, "read", sp, a); err != nil {
			return err
		}
		v, err := s.read(ctx, sp, a)
		if err != nil {
			return err
		}
		dst[i] = v
	}
	return nil
}

// WriteBlock writes src to consecutive dwords starting at addr.
func (s *Session) WriteBlock(ctx context.Context, sp Space, addr uint32, src []uint32) error {
	if err := s.checkRange("write", sp, addr, len(src)); err != nil {
		return err
	}
	for i, v := range src {
		a := addr + uint32(4*i)
		if err := s.prepare(ctx, "write", sp, a); err != nil {
			return err
		}
		if err := s.write(ctx, sp, a, v); err != nil {
			return err
		}
	}
	return nil
}

func (s *Session) checkRange(op string, sp Space, addr uint32, n int) error {
	if uint64(addr)+4*uint64(n) > addrMask+1 {
		return &Error{Op: op, Kind: ErrBadAddress, Space: sp, Addr: addr,
			Detail: fmt.Sprintf("%d dwords from 0x%x run past the 30-bit gateway address range", n, addr),
			Hint:   "use addresses below 0x40000000"}
	}
	return nil
}

// prepare checks the session, the context and the address, and selects sp.
func (s *Session) prepare(ctx context.Context, op string, sp Space, addr uint32) error {
	if s.released {
		return &Error{Op: op, Kind: ErrReleased, Detail: "the session was already released",
			Hint: "acquire a new session (a bug in the caller)"}
	}
	if err := ctx.Err(); err != nil {
		return s.g.ctxError(op, sp, addr, err)
	}
	if addr&3 != 0 || addr > addrMask {
		return &Error{Op: op, Kind: ErrBadAddress, Space: sp, Addr: addr,
			Detail: fmt.Sprintf("address 0x%x is not a dword-aligned 30-bit address", addr),
			Hint:   "gateway addresses are multiples of 4 below 0x40000000"}
	}
	return s.selectSpace(sp)
}

// selectSpace writes CTRL[15:0] = sp, keeping [31:16] as last read (they are
// read-only status; mstflint and Linux write them back unchanged). CTRL is
// read once per Gateway, not per session: the next session only rewrites
// the selector. The status bits [31:29] are checked the first time a space
// is used on this Gateway; after that a switch costs one config write.
func (s *Session) selectSpace(sp Space) error {
	if s.haveSpace && s.space == sp {
		return nil
	}
	g := s.g
	if !s.haveCtrl {
		s.ctrl, s.haveCtrl = g.knownCtrl()
	}
	if !s.haveCtrl {
		v, err := g.rd("select space", offCtrl)
		if err != nil {
			return err
		}
		s.ctrl, s.haveCtrl = v, true
	}
	w := s.ctrl&^0xFFFF | uint32(sp)
	if err := g.wr("select space", offCtrl, w); err != nil {
		s.haveSpace = false
		return err
	}
	s.ctrl = w
	if !g.isVerified(sp) {
		v, err := g.rd("select space", offCtrl)
		if err != nil {
			s.haveSpace = false
			return err
		}
		s.ctrl = v
		// Status 0 means unsupported; a selector that did not stick means the
		// device ignored high bits of it (mstflint HEAD checks both).
		if v>>29 == 0 || Space(v&0xFFFF) != sp {
			s.haveSpace = false
			return &Error{Op: "select space", Kind: ErrSpaceNotSupported, Space: sp,
				Detail: fmt.Sprintf("the device does not support %s (CTRL reads 0x%08x)", sp, v),
				Hint:   "this firmware or device does not offer that space; ICMD needs spaces 0x3 and 0xA, CR reads need 0x2"}
		}
		g.setVerified(sp)
	}
	s.space, s.haveSpace = sp, true
	return nil
}

// read: write ADDRESS with flag 0, poll until the device sets the flag, then
// take DATA.
func (s *Session) read(ctx context.Context, sp Space, addr uint32) (uint32, error) {
	if err := s.g.wr("read", offAddr, addr); err != nil {
		return 0, err
	}
	a, d, err := s.poll(ctx, "read", sp, addr, true)
	if err != nil {
		return 0, err
	}
	if a&syndromeBit != 0 {
		return 0, s.syndrome("read", sp, addr)
	}
	return d, nil
}

// write: put the value in DATA, write ADDRESS with the flag set, poll until
// the device clears it.
func (s *Session) write(ctx context.Context, sp Space, addr, v uint32) error {
	if err := s.g.wr("write", offData, v); err != nil {
		return err
	}
	if err := s.g.wr("write", offAddr, addr|flagBit); err != nil {
		return err
	}
	a, _, err := s.poll(ctx, "write", sp, addr, false)
	if err != nil {
		return err
	}
	if a&syndromeBit != 0 {
		return s.syndrome("write", sp, addr)
	}
	return nil
}

// poll reads ADDRESS until FLAG equals want, at most PollLimit times,
// sleeping 1 ms after every 16 polls. For reads it also returns DATA.
func (s *Session) poll(ctx context.Context, op string, sp Space, addr uint32, want bool) (a, d uint32, err error) {
	g := s.g
	for i := 0; i < g.pollLimit; i++ {
		if i > 0 && i%pollSleepEvery == 0 {
			if err := g.clk.Sleep(ctx, retrySleep); err != nil {
				return 0, 0, g.ctxError(op, sp, addr, err)
			}
		}
		if want && g.paired {
			a, d, err = g.rdPair(op)
		} else {
			a, err = g.rd(op, offAddr)
		}
		if err != nil {
			return 0, 0, err
		}
		if (a&flagBit != 0) == want {
			if want && !g.paired {
				d, err = g.rd(op, offData)
			}
			return a, d, err
		}
	}
	return 0, 0, &Error{Op: op, Kind: ErrTimeout, Space: sp, Addr: addr,
		Detail: fmt.Sprintf("the gateway did not complete the %s of %s address 0x%x after %d polls", op, sp, addr, g.pollLimit),
		Hint:   "the device is hung or resetting; check dmesg, wait for any firmware reset to finish and retry"}
}

func (s *Session) syndrome(op string, sp Space, addr uint32) error {
	v, err := s.g.rd(op, offCtrl)
	if err != nil {
		return err
	}
	s.ctrl, s.haveCtrl = v, true
	return syndromeError(op, sp, addr, v>>24&0xF)
}

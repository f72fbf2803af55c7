// Package icmd sends ICMD commands to a ConnectX adapter through the
// configuration-space gateway: the control register and mailbox in the ICMD
// address space, guarded by the ICMD semaphore in the semaphore space.
//
// One command is one gateway session: the gateway semaphore is taken once,
// then the ICMD semaphore, the mailbox transfer, the busy poll and the reply
// all happen inside it.
package icmd

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/cxray/cxray/access/vsec"
	"github.com/cxray/cxray/internal/clock"
)

// Addresses (ICMD space unless noted) and control-register fields.
const (
	addrCtrl     = 0x0
	addrMboxSize = 0x1000
	addrMailbox  = 0x100000
	addrSem      = 0x0     // semaphore space
	addrHWID     = 0xF0014 // CR space: [15:0] hardware ID, [23:16] revision

	ctrlBusy   = 1 << 0
	ctrlEXMB   = 1 << 1
	ctrlOpMask = 0xFFFF << 16

	maxMailbox = 0x10000 // sanity bound on the reported mailbox size
)

// Defaults for Options.
const (
	DefaultCommandTimeout   = 10 * time.Second
	DefaultSemaphoreTimeout = 5 * time.Second // mstflint: up to 256 tries, 0-50 ms apart
)

// Options tune a Client. The zero value is ready to use.
type Options struct {
	// CommandTimeout bounds the wait for BUSY to clear (gateway clock).
	CommandTimeout time.Duration
	// SemaphoreTimeout bounds the wait for an ICMD semaphore held elsewhere.
	SemaphoreTimeout time.Duration
	// SemaphoreValue is written to take the ICMD semaphore; 0 means the
	// process ID, as mstflint does, so a holder can be identified.
	SemaphoreValue uint32
}

// staticConfig gives, per hardware ID, the CR address whose bit 31 reads 1
// while the firmware has not finished static configuration (ICMD not ready).
var staticConfig = map[uint16]uint32{
	0x1ff: 0xB0004, // Connect-IB
	0x209: 0xB0004, // ConnectX-4
	0x20b: 0xB0004, // ConnectX-4 Lx
	0x20d: 0xB5E04, // ConnectX-5
	0x211: 0xB5E04, // BlueField
	0x20f: 0xB5F04, // ConnectX-6
	0x212: 0xB5F04, // ConnectX-6 Dx
	0x216: 0xB5F04, // ConnectX-6 Lx
	0x214: 0xB5F04, // BlueField-2
	0x218: 0xB5F04, // ConnectX-7
	0x21c: 0xB5F04, // BlueField-3
	0x220: 0xB5F04, // BlueField-4
	0x21e: 0xA0304, // ConnectX-8
	0x224: 0xA0304, // ConnectX-9
}

// Client sends ICMD commands. Safe for concurrent use; commands are
// serialised by the gateway.
type Client struct {
	gw         *vsec.Gateway
	clk        clock.Clock
	mbox       uint32
	hwID       uint16
	hwRev      uint8
	staticAddr uint32
	semValue   uint32
	cmdTimeout time.Duration
	semTimeout time.Duration
	ready      atomic.Bool // static configuration seen done; re-checked after a failure
}

// Open prepares ICMD on gw in one gateway session: it reads the hardware ID,
// refuses unknown and live-fish (flash recovery) devices, checks that static
// configuration is done and reads the mailbox size.
func Open(ctx context.Context, gw *vsec.Gateway, opts *Options) (*Client, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	c := &Client{gw: gw, clk: gw.Clock(), semValue: o.SemaphoreValue,
		cmdTimeout: o.CommandTimeout, semTimeout: o.SemaphoreTimeout}
	if c.semValue == 0 {
		c.semValue = uint32(os.Getpid())
	}
	if c.cmdTimeout <= 0 {
		c.cmdTimeout = DefaultCommandTimeout
	}
	if c.semTimeout <= 0 {
		c.semTimeout = DefaultSemaphoreTimeout
	}
	err := gw.Do(ctx, func(s *vsec.Session) error {
		id, err := s.Read32(ctx, vsec.SpaceCR, addrHWID)
		if err != nil {
			return err
		}
		c.hwID, c.hwRev = uint16(id), uint8(id>>16)
		addr, ok := staticConfig[c.hwID]
		if !ok {
			return &Error{Op: "open", Kind: ErrNotSupported,
				Detail: fmt.Sprintf("hardware ID 0x%x (CR 0xF0014) is not a ConnectX-4 or newer adapter with ICMD", c.hwID),
				Hint:   "this device needs another access method; check the device address with `cxray status`"}
		}
		if c.hwID == gw.DeviceID() {
			// In flash-recovery ("live-fish") mode the PCI device ID equals
			// the hardware ID and no firmware is running.
			return &Error{Op: "open", Kind: ErrNotSupported,
				Detail: fmt.Sprintf("the device is in live-fish (flash recovery) mode: PCI device ID 0x%x equals its hardware ID, no firmware is running", c.hwID),
				Hint:   "burn a firmware image (mstflint -d DEV -i FW.bin burn) and reset or power-cycle the host"}
		}
		c.staticAddr = addr
		if err := c.checkReady(ctx, s); err != nil {
			return err
		}
		size, err := s.Read32(ctx, vsec.SpaceICMD, addrMboxSize)
		if err != nil {
			return err
		}
		if size < 0x20 || size > maxMailbox || size%4 != 0 {
			return &Error{Op: "open", Kind: ErrNotSupported,
				Detail: fmt.Sprintf("the device reports an implausible ICMD mailbox size 0x%x", size),
				Hint:   "the firmware may be initialising or broken; retry after a reset"}
		}
		c.mbox = size
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// MailboxSize returns the mailbox size in bytes (the largest command).
func (c *Client) MailboxSize() int { return int(c.mbox) }

// HardwareID returns CR 0xF0014 [15:0] (0x218 for ConnectX-7).
func (c *Client) HardwareID() uint16 { return c.hwID }

// HardwareRevision returns CR 0xF0014 [23:16].
func (c *Client) HardwareRevision() uint8 { return c.hwRev }

// checkReady reads the static-configuration flag; bit 31 set means the
// firmware is still initialising and cannot take commands.
func (c *Client) checkReady(ctx context.Context, s *vsec.Session) error {
	v, err := s.Read32(ctx, vsec.SpaceCR, c.staticAddr)
	if err != nil {
		return err
	}
	if v&(1<<31) != 0 {
		c.ready.Store(false)
		return &Error{Op: "check ready", Kind: ErrNotReady,
			Detail: fmt.Sprintf("firmware static configuration is not done (CR 0x%x bit 31 set): the firmware is still starting or resetting", c.staticAddr),
			Hint:   "wait a few seconds and retry; if it persists, the firmware failed to boot (check dmesg, reflash or power-cycle)"}
	}
	c.ready.Store(true)
	return nil
}

// Send runs one command. in is the request in PRM byte order (mailbox dword i
// = big-endian bytes 4i..4i+3), padded to a dword; nil leaves the mailbox
// unwritten (commands without input). It returns outSize bytes of the reply.
func (c *Client) Send(ctx context.Context, opcode uint16, in []byte, outSize int) ([]byte, error) {
	inWords := (len(in) + 3) / 4
	outWords := (outSize + 3) / 4
	if outSize < 0 || 4*inWords > int(c.mbox) || 4*outWords > int(c.mbox) {
		return nil, &Error{Op: "send", Kind: ErrTooLarge, Opcode: opcode,
			Detail: fmt.Sprintf("command 0x%04x needs %d bytes in / %d out, the mailbox holds %d", opcode, len(in), outSize, c.mbox),
			Hint:   "use a smaller register or transfer size"}
	}
	words := make([]uint32, max(inWords, outWords))
	for i := 0; i < len(in); i += 4 {
		var b [4]byte
		copy(b[:], in[i:])
		words[i/4] = binary.BigEndian.Uint32(b[:])
	}

	s, err := c.begin(ctx, opcode)
	if err == nil {
		err = c.run(ctx, s, opcode, words[:inWords], in == nil, words[:outWords])
		if rerr := c.end(ctx, s); err == nil {
			err = rerr
		}
	}
	if err != nil {
		if se := (*StatusError)(nil); !errors.As(err, &se) {
			c.ready.Store(false) // re-check static configuration next time
		}
		return nil, err
	}
	out := make([]byte, 4*outWords)
	for i, w := range words[:outWords] {
		binary.BigEndian.PutUint32(out[4*i:], w)
	}
	return out[:outSize], nil
}

// begin opens a gateway session holding the ICMD semaphore. If another agent
// holds the ICMD semaphore, the gateway is released while waiting so that
// agent (which may need the gateway to finish) can proceed.
func (c *Client) begin(ctx context.Context, opcode uint16) (*vsec.Session, error) {
	start := c.clk.Now()
	wait := time.Millisecond
	for {
		s, err := c.gw.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		holder, err := c.takeSemaphore(ctx, s)
		if err == nil && holder == c.semValue {
			return s, nil
		}
		s.Release()
		if err != nil {
			return nil, err
		}
		waited := c.clk.Now().Sub(start)
		if waited >= c.semTimeout {
			return nil, semBusy(opcode, holder, waited, nil)
		}
		if err := c.clk.Sleep(ctx, wait); err != nil {
			return nil, semBusy(opcode, holder, c.clk.Now().Sub(start), err)
		}
		wait = min(2*wait, 16*time.Millisecond)
	}
}

func semBusy(opcode uint16, holder uint32, waited time.Duration, cause error) error {
	return &Error{Op: "acquire ICMD semaphore", Kind: ErrSemaphoreBusy, Opcode: opcode, Err: cause,
		Detail: fmt.Sprintf("device in use by another tool: the ICMD semaphore stayed held (holder 0x%x, usually a process ID) for %v", holder, waited),
		Hint:   "wait for the other tool (mstflint, mlxreg, mlxconfig, another cxray) to finish and retry; if that process is gone, a reset (mstfwreset) frees the semaphore"}
}

// takeSemaphore writes our value to the ICMD semaphore and reads back the
// holder; a non-zero value sticks only when the semaphore was free.
func (c *Client) takeSemaphore(ctx context.Context, s *vsec.Session) (uint32, error) {
	if err := s.Write32(ctx, vsec.SpaceSemaphore, addrSem, c.semValue); err != nil {
		return 0, err
	}
	return s.Read32(ctx, vsec.SpaceSemaphore, addrSem)
}

// end releases the ICMD semaphore and the gateway. The release write is
// attempted even when ctx has ended, so the device is not left locked.
func (c *Client) end(ctx context.Context, s *vsec.Session) error {
	err := s.Write32(context.WithoutCancel(ctx), vsec.SpaceSemaphore, addrSem, 0)
	if rerr := s.Release(); err == nil {
		err = rerr
	}
	return err
}

// run executes the command inside the session: program the opcode, fill the
// mailbox, set BUSY, poll until it clears, check the status, read the reply
// into out.
func (c *Client) run(ctx context.Context, s *vsec.Session, opcode uint16, in []uint32, skipWrite bool, out []uint32) error {
	if !c.ready.Load() {
		if err := c.checkReady(ctx, s); err != nil {
			return err
		}
	}
	ctrl, err := s.Read32(ctx, vsec.SpaceICMD, addrCtrl)
	if err != nil {
		return err
	}
	if ctrl&ctrlBusy != 0 {
		return &Error{Op: "send", Kind: ErrBusy, Opcode: opcode,
			Detail: fmt.Sprintf("a previous command (opcode 0x%04x) is still executing (BUSY set)", ctrl>>16),
			Hint:   "a tool may have given up on a slow or hung command; retry later, and reset the device (mstfwreset) if it never clears"}
	}
	ctrl = ctrl&^(ctrlOpMask|ctrlEXMB|ctrlBusy) | uint32(opcode)<<16
	if err := s.Write32(ctx, vsec.SpaceICMD, addrCtrl, ctrl); err != nil {
		return err
	}
	if !skipWrite {
		if err := s.WriteBlock(ctx, vsec.SpaceICMD, addrMailbox, in); err != nil {
			return err
		}
	}
	if err := s.Write32(ctx, vsec.SpaceICMD, addrCtrl, ctrl|ctrlBusy); err != nil {
		return err
	}
	if ctrl, err = c.waitDone(ctx, s, opcode); err != nil {
		return err
	}
	if st := uint8(ctrl >> 8); st != 0 {
		return &StatusError{Opcode: opcode, Status: st}
	}
	return s.ReadBlock(ctx, vsec.SpaceICMD, addrMailbox, out)
}

// waitDone polls the control register until BUSY clears: five polls back to
// back (most commands finish in microseconds), then sleeps of 1, 2, 4, 8, 8…
// ms, bounded by CommandTimeout on the gateway clock and by ctx.
func (c *Client) waitDone(ctx context.Context, s *vsec.Session, opcode uint16) (uint32, error) {
	start := c.clk.Now()
	sleep := time.Millisecond
	deadline := func(polls int, cause error) error {
		return &Error{Op: "send", Kind: ErrTimeout, Opcode: opcode, Err: cause,
			Detail: fmt.Sprintf("command 0x%04x still busy when the deadline passed (%v, %d polls)", opcode, c.clk.Now().Sub(start), polls),
			Hint:   "the firmware is slow or hung; retry with a longer deadline"}
	}
	for i := 0; ; i++ {
		ctrl, err := s.Read32(ctx, vsec.SpaceICMD, addrCtrl)
		if err != nil {
			if ctx.Err() != nil {
				return 0, deadline(i, ctx.Err())
			}
			return 0, err
		}
		if ctrl&ctrlBusy == 0 {
			return ctrl, nil
		}
		if waited := c.clk.Now().Sub(start); waited >= c.cmdTimeout {
			return 0, &Error{Op: "send", Kind: ErrTimeout, Opcode: opcode,
				Detail: fmt.Sprintf("command 0x%04x still busy after %v (%d polls)", opcode, waited, i+1),
				Hint:   "the firmware is hung or very slow; check dmesg, retry with a longer timeout, or reset the device (mstfwreset)"}
		}
		if i < 4 {
			continue
		}
		if err := c.clk.Sleep(ctx, sleep); err != nil {
			return 0, deadline(i+1, err)
		}
		sleep = min(2*sleep, 8*time.Millisecond)
	}
}

// Package icmd sends ICMD commands to a ConnectX adapter through the
// configuration-space gateway: the control register and mailbox in the ICMD
// address space, guarded by the ICMD semaphore in the semaphore space.
//
// One command is one gateway session: the gateway semaphore is taken once,
// then (unless this client already holds it) the ICMD semaphore, the
// mailbox transfer, the busy poll and the reply all happen inside it. Only
// a slow command that keeps BUSY set past the first polls gives the gateway
// back between polls, so other tools are not locked out of it meanwhile.
//
// By default the ICMD semaphore is held only while the protocol needs it:
// from the command's mailbox write to its reply, and released in the same
// gateway session. A process killed between two commands (SIGKILL, the OOM
// killer, systemd's stop timeout) then leaves nothing held for mstflint's
// tools, which cannot clear it (docs/reliability.md).
//
// A caller may opt in to keeping it across consecutive commands (KeepIdle,
// KeepMax): that saves about eight config accesses per command. A kept
// semaphore is verified (one read) before each command, released after
// KeepIdle without a command, after KeepMax of continuous holding (and then
// not retaken for a tenth of that, so tools polling for it get their turn),
// on any error other than a firmware status, when the caller's context has
// ended, and on Close. Close a Client before the config space under it.
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
	// DefaultKeepIdle is the idle keep a caller that opts in to keeping
	// the ICMD semaphore usually asks for (dev: CXRAY_ICMD_KEEP=on): long
	// enough to bridge the decoding between the registers of one command
	// line, short against mstflint's poll for it (a try every 0-50 ms, 256
	// tries).
	DefaultKeepIdle = 10 * time.Millisecond
	// DefaultKeepMax bounds one continuous hold; after it the semaphore is
	// released and left free for a tenth of it.
	DefaultKeepMax = 100 * time.Millisecond
	// AbandonGrace is how long a command whose caller went away (a signal,
	// the deadline) is still polled, so it finishes before the semaphore is
	// given back rather than leaving BUSY set for the next tool.
	AbandonGrace = 100 * time.Millisecond

	// DefaultCommandTimeout and DefaultSemaphoreTimeout were fixed bounds.
	// Waits now last as long as the caller's deadline (vsec.Until); the
	// constants stay for callers that still pass them as caps.
	//
	// Deprecated: leave Options.CommandTimeout and SemaphoreTimeout zero.
	DefaultCommandTimeout = 10 * time.Second
	// Deprecated: see DefaultCommandTimeout.
	DefaultSemaphoreTimeout = 5 * time.Second
)

// Options tune a Client. The zero value is ready to use.
type Options struct {
	// CommandTimeout, when positive, caps the wait for BUSY to clear below
	// the caller's deadline. Zero: the deadline alone.
	CommandTimeout time.Duration
	// SemaphoreTimeout, when positive, caps the wait for an ICMD semaphore
	// held elsewhere below the caller's deadline. Zero: the deadline alone.
	SemaphoreTimeout time.Duration
	// SemaphoreValue is written to take the ICMD semaphore; 0 means the
	// process ID, as mstflint does, so a holder can be identified.
	SemaphoreValue uint32
	// Witness records the ICMD semaphore for dead-holder recovery
	// (pci.Witness slot WitnessICMD); nil: none. Its notices go through
	// the gateway's Notify.
	Witness vsec.Witness
	// KeepIdle: how long the ICMD semaphore is kept between commands.
	// Zero or negative (the default): it is released at the end of every
	// command, so a process killed between commands leaves nothing held.
	KeepIdle time.Duration
	// KeepMax bounds one continuous hold (0: DefaultKeepMax).
	KeepMax time.Duration
	// QueryCapabilities runs ICMD_QUERY_CAP at Open, in the same gateway
	// session as the open's reads (see Client.Capabilities).
	QueryCapabilities bool
	// DeadHolder, when set, is asked about a holder the witness does not
	// know (a value other tools wrote: mstflint writes its PID) and says
	// whether that holder is certainly gone (pci.DeadPIDHolder). Such a
	// semaphore is released and reported like a dead cxray's.
	DeadHolder func(v uint32) (why string, dead bool)
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

// Client sends ICMD commands. Safe for concurrent use; commands run one at
// a time.
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
	keepIdle   time.Duration
	keepMax    time.Duration
	witness    vsec.Witness
	deadHolder func(uint32) (string, bool)
	holderWhy  string // what deadHolder said about the last holder seen
	caps       *Capabilities
	ready      atomic.Bool // static configuration seen done; re-checked after a failure

	mu chan struct{} // one command at a time; guards the fields below

	held       bool      // this client holds the ICMD semaphore (and its witness lock)
	locked     bool      // the witness lock is held
	heldSince  time.Time // when the semaphore was taken
	lastUse    time.Time // end of the last command
	yieldUntil time.Time // after a KeepMax release: leave it free until then
	timer      func() bool
	closed     bool
}

// timerClock is a clock that can run a function later (the wall clock
// does; tests may supply one). Without it a kept semaphore is released at
// the next command or at Close, never by a timer.
type timerClock interface {
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// Open prepares ICMD on gw in one gateway session: it reads the hardware ID,
// refuses unknown and live-fish (flash recovery) devices, checks that static
// configuration is done and reads the mailbox size; with
// Options.QueryCapabilities it also runs ICMD_QUERY_CAP in that session.
func Open(ctx context.Context, gw *vsec.Gateway, opts *Options) (*Client, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	c := &Client{gw: gw, clk: gw.Clock(), semValue: o.SemaphoreValue,
		cmdTimeout: o.CommandTimeout, semTimeout: o.SemaphoreTimeout,
		keepIdle: o.KeepIdle, keepMax: o.KeepMax, witness: o.Witness, deadHolder: o.DeadHolder,
		mu: make(chan struct{}, 1)}
	if c.semValue == 0 {
		c.semValue = uint32(os.Getpid())
	}
	if c.keepIdle < 0 {
		c.keepIdle = 0
	}
	if c.keepMax <= 0 {
		c.keepMax = DefaultKeepMax
	}
	if !o.QueryCapabilities {
		if err := gw.Do(ctx, func(s *vsec.Session) error { return c.probe(ctx, s) }); err != nil {
			return nil, err
		}
		return c, nil
	}
	if err := c.lock(ctx); err != nil {
		return nil, err
	}
	defer c.unlock()
	probed := false
	out := make([]uint32, queryCapSize/4)
	err := c.exec(ctx, OpQueryCap, make([]uint32, queryCapSize/4), false, out, func(s *vsec.Session) error {
		err := c.probe(ctx, s)
		probed = err == nil
		return err
	})
	var se *StatusError
	switch {
	case err == nil:
		c.caps = decodeCapabilities(out[0], out[1])
	case probed && errors.As(err, &se):
		// The firmware refused QUERY_CAP; the register-access layer asks
		// again and reports it.
	default:
		// No one will close a client that failed to open: give back what
		// it may hold (the semaphore kept after a command cut short by a
		// signal), as Close would; the lock is ours already.
		dctx, cancel := vsec.Detached(ctx)
		c.closed = true
		c.release(dctx, &cmdSession{}, true)
		cancel()
		return nil, err
	}
	return c, nil
}

// probe reads what Open needs, in session s.
func (c *Client) probe(ctx context.Context, s *vsec.Session) error {
	id, err := s.Read32(ctx, vsec.SpaceCR, addrHWID)
	if err != nil {
		return err
	}
	c.hwID, c.hwRev = uint16(id), uint8(id>>16)
	addr, ok := staticConfig[c.hwID]
	if !ok {
		return &Error{Op: "open", Kind: ErrNotSupported, Device: c.gw.Name(),
			Detail: fmt.Sprintf("hardware ID 0x%x (CR 0xF0014) is not a ConnectX-4 or newer adapter with ICMD", c.hwID),
			Hint:   "this device needs another access method; check the device address with `cxray status`"}
	}
	if c.hwID == c.gw.DeviceID() {
		// In flash-recovery ("live-fish") mode the PCI device ID equals
		// the hardware ID and no firmware is running.
		return &Error{Op: "open", Kind: ErrNotSupported, Device: c.gw.Name(),
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
		return &Error{Op: "open", Kind: ErrNotSupported, Device: c.gw.Name(),
			Detail: fmt.Sprintf("the device reports an implausible ICMD mailbox size 0x%x", size),
			Hint:   "the firmware may be initialising or broken; retry after a reset"}
	}
	c.mbox = size
	return nil
}

// MailboxSize returns the mailbox size in bytes (the largest command).
func (c *Client) MailboxSize() int { return int(c.mbox) }

// HardwareID returns CR 0xF0014 [15:0] (0x218 for ConnectX-7).
func (c *Client) HardwareID() uint16 { return c.hwID }

// HardwareRevision returns CR 0xF0014 [23:16].
func (c *Client) HardwareRevision() uint8 { return c.hwRev }

// Clock returns the clock of the gateway (sleeps and deadlines).
func (c *Client) Clock() clock.Clock { return c.clk }

// Gateway returns the gateway the client runs on.
func (c *Client) Gateway() *vsec.Gateway { return c.gw }

// Capabilities returns what ICMD_QUERY_CAP answered at Open
// (Options.QueryCapabilities), or nil.
func (c *Client) Capabilities() *Capabilities { return c.caps }

// checkReady reads the static-configuration flag; bit 31 set means the
// firmware is still initialising and cannot take commands.
func (c *Client) checkReady(ctx context.Context, s *vsec.Session) error {
	v, err := s.Read32(ctx, vsec.SpaceCR, c.staticAddr)
	if err != nil {
		return err
	}
	if v&(1<<31) != 0 {
		c.ready.Store(false)
		return &Error{Op: "check ready", Kind: ErrNotReady, Device: c.gw.Name(),
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
		return nil, &Error{Op: "send", Kind: ErrTooLarge, Opcode: opcode, Device: c.gw.Name(),
			Detail: fmt.Sprintf("command 0x%04x needs %d bytes in / %d out, the mailbox holds %d", opcode, len(in), outSize, c.mbox),
			Hint:   "use a smaller register or transfer size"}
	}
	words := make([]uint32, max(inWords, outWords))
	for i := 0; i < len(in); i += 4 {
		var b [4]byte
		copy(b[:], in[i:])
		words[i/4] = binary.BigEndian.Uint32(b[:])
	}
	if err := c.lock(ctx); err != nil {
		return nil, err
	}
	err := c.exec(ctx, opcode, words[:inWords], in == nil, words[:outWords], nil)
	c.unlock()
	if err != nil {
		return nil, err
	}
	out := make([]byte, 4*outWords)
	for i, w := range words[:outWords] {
		binary.BigEndian.PutUint32(out[4*i:], w)
	}
	return out[:outSize], nil
}

// lock takes the client's command lock, waiting for a command of another
// goroutine until ctx ends.
func (c *Client) lock(ctx context.Context) error {
	select {
	case c.mu <- struct{}{}: // free: taken even if ctx has ended, so a kept semaphore is released
	default:
		select {
		case c.mu <- struct{}{}:
		case <-ctx.Done():
			return &Error{Op: "send", Kind: ErrBusy, Device: c.gw.Name(), Err: ctx.Err(),
				Detail: fmt.Sprintf("%s: another command of this process ran until this one's deadline", c.gw.Name()),
				Hint:   "retry with a longer deadline, or issue fewer commands at once"}
		}
	}
	if c.closed {
		<-c.mu
		return &Error{Op: "send", Kind: ErrClosed, Device: c.gw.Name(),
			Detail: "the ICMD client was closed", Hint: "open the device again (a bug in the caller)"}
	}
	return nil
}

func (c *Client) unlock() { <-c.mu }

// exec runs one command with the command lock held: own the ICMD
// semaphore (running probe first in the same gateway session, if given),
// run the command, then keep or release the semaphore.
func (c *Client) exec(ctx context.Context, opcode uint16, in []uint32, skipWrite bool, out []uint32, probe func(*vsec.Session) error) error {
	s, err := c.own(ctx, opcode, probe)
	if err != nil {
		if se := (*StatusError)(nil); !errors.As(err, &se) {
			c.ready.Store(false)
		}
		if c.held {
			c.finish(ctx, &cmdSession{}, err) // a kept semaphore we could not use
		}
		return err
	}
	cs := &cmdSession{s: s}
	err = c.run(ctx, cs, opcode, in, skipWrite, out)
	if err != nil {
		if se := (*StatusError)(nil); !errors.As(err, &se) {
			c.ready.Store(false) // re-check static configuration next time
		}
	}
	c.finish(ctx, cs, err)
	return err
}

// cmdSession is the gateway session a command runs in; a slow command
// gives it back between polls and takes a new one.
type cmdSession struct{ s *vsec.Session }

func (cs *cmdSession) release() {
	if cs.s != nil {
		cs.s.Release()
		cs.s = nil
	}
}

// own returns a gateway session in which this client holds the ICMD
// semaphore. Another agent's hold is waited for with a backoff until the
// caller's deadline, with the gateway released while waiting (that agent
// may need it to finish); a hold that a dead cxray process left behind is
// released and reported.
func (c *Client) own(ctx context.Context, opcode uint16, probe func(*vsec.Session) error) (*vsec.Session, error) {
	start := c.clk.Now()
	until := vsec.Until(ctx, c.clk, c.semTimeout)
	if c.held && c.keepIdle > 0 && start.Sub(c.lastUse) >= c.keepIdle {
		// Kept through an idle gap longer than KeepIdle: only on a clock
		// without timers (a test's, the emulator's manual clock), where
		// nothing could release it. Count the hold from now, so KeepMax
		// measures commands run back to back, not the gap.
		c.heldSince = start
	}
	if !c.held {
		if wait := c.yieldUntil.Sub(start); wait > 0 {
			if err := c.clk.Sleep(ctx, min(wait, until.Sub(start))); err != nil {
				return nil, c.semBusy(opcode, 0, c.clk.Now().Sub(start), err)
			}
		}
		if c.witness != nil && !c.locked {
			waited, err := vsec.LockWitness(ctx, c.clk, c.witness, until)
			if err != nil {
				return nil, c.witnessBusy(opcode, waited, err)
			}
			c.locked = true
			if err := c.witness.Record(c.semValue); err != nil {
				c.unlockWitness()
				return nil, err
			}
		}
	}
	// On failure the witness lock goes with the semaphore: kept only while
	// the semaphore is (exec then releases both).
	fail := func(err error) (*vsec.Session, error) {
		if !c.held {
			c.unlockWitness()
		}
		return nil, err
	}
	b := vsec.NewBackoff(time.Millisecond, 16*time.Millisecond)
	var checked uint32
	var heldSince time.Time
	c.holderWhy = ""
	for {
		s, err := c.gw.Acquire(ctx)
		if err != nil {
			return fail(err)
		}
		if probe != nil {
			err := probe(s)
			probe = nil
			if err != nil {
				s.Release()
				return fail(err)
			}
		}
		holder, err := c.semaphore(ctx, s)
		if err == nil && holder != c.semValue && holder != checked {
			checked, heldSince = holder, c.clk.Now()
			var n *vsec.Notice
			if c.witness != nil {
				if pid, ok := c.witness.Orphaned(holder); ok {
					n = &vsec.Notice{Semaphore: "ICMD", Value: holder, PID: pid}
				}
			}
			if n == nil && c.deadHolder != nil {
				why, ok := c.deadHolder(holder)
				if ok {
					n = &vsec.Notice{Semaphore: "ICMD", Value: holder, Why: why}
				}
				c.holderWhy = why
			}
			if n != nil {
				// Released the way the hardware allows: a write of 0.
				if err = s.Write32(ctx, vsec.SpaceSemaphore, addrSem, 0); err == nil {
					n.Waited = c.clk.Now().Sub(start)
					c.gw.Notify(*n)
					holder, err = c.semaphore(ctx, s)
				}
			}
		}
		if err != nil {
			s.Release()
			if ctx.Err() != nil && checked != 0 { // the deadline came mid-check: say what we waited for
				err = c.semBusy(opcode, checked, c.clk.Now().Sub(start), ctx.Err(), c.clk.Now().Sub(heldSince))
			}
			// Without a holder seen, nothing was waited for: the
			// access's own error (the deadline passed before it) is
			// the answer, not "in use by another tool".
			return fail(err)
		}
		if holder == c.semValue {
			return s, nil
		}
		s.Release()
		if !c.clk.Now().Before(until) {
			return fail(c.semBusy(opcode, holder, c.clk.Now().Sub(start), ctx.Err(), c.clk.Now().Sub(heldSince)))
		}
		if err := b.Sleep(ctx, c.clk, until); err != nil {
			return fail(c.semBusy(opcode, holder, c.clk.Now().Sub(start), err, c.clk.Now().Sub(heldSince)))
		}
	}
}

// semaphore makes sure this client holds the ICMD semaphore, in session s,
// and returns the value it holds. A kept semaphore is checked with one
// read: a tool may have cleared it meanwhile (mstconfig clear_semaphore).
// Taking it writes our value and reads it back; a non-zero value sticks
// only when the semaphore was free.
//
// Once the write may have reached the device the semaphore may be ours,
// whatever happens to the caller's context: c.held is set before the
// write and cleared only when the read-back shows another value, and the
// read-back runs on a detached context. A signal between the write and
// the read-back (which checked the caller's context) used to leave the
// semaphore taken with c.held false, so nothing released it and the next
// tool waited its whole budget (TestSignalAtEveryAccessLeavesNothingHeld).
// When the read-back fails too, c.held stays set and the caller's error
// path reads it again and releases it if it holds our value.
func (c *Client) semaphore(ctx context.Context, s *vsec.Session) (uint32, error) {
	if c.held {
		v, err := s.Read32(ctx, vsec.SpaceSemaphore, addrSem)
		if err != nil || v == c.semValue {
			return v, err
		}
		c.held = false // cleared, or cleared and taken, by someone else
		if v != 0 {
			return v, nil
		}
	}
	c.held, c.heldSince = true, c.clk.Now()
	werr := s.Write32(ctx, vsec.SpaceSemaphore, addrSem, c.semValue)
	dctx, cancel := vsec.Detached(ctx)
	v, err := s.Read32(dctx, vsec.SpaceSemaphore, addrSem)
	cancel()
	if err != nil {
		return 0, err
	}
	c.held = v == c.semValue
	return v, werr
}

// finish ends a command: it keeps the ICMD semaphore for the next command
// when that is allowed, and otherwise releases it (with a detached context,
// so a caller whose context ended still leaves the device free); the
// gateway session is always released.
func (c *Client) finish(ctx context.Context, cs *cmdSession, err error) {
	now := c.clk.Now()
	var se *StatusError
	done := err == nil || errors.As(err, &se) // the command ran to its end
	if c.held && done && ctx.Err() == nil && !c.closed && c.keepIdle > 0 && now.Sub(c.heldSince) < c.keepMax {
		c.lastUse = now
		cs.release()
		c.arm(c.keepIdle)
		return
	}
	if c.held && done && now.Sub(c.heldSince) >= c.keepMax && c.keepIdle > 0 {
		c.yieldUntil = now.Add(c.keepMax / 10)
	}
	dctx, cancel := vsec.Detached(ctx)
	defer cancel()
	c.release(dctx, cs, false)
}

// release gives the ICMD semaphore back (if held) and the gateway session,
// then the witness lock. Without a session one is acquired on ctx. If
// another agent kept the gateway for the whole budget the semaphore is
// still ours: it stays held, with its witness lock, and the idle timer
// tries again. Any other failure (the device gone, its config file
// closed), or a final release (Close), lets go of the witness lock
// regardless, so that a later cxray process can recognise the semaphore
// as left behind and release it.
func (c *Client) release(ctx context.Context, cs *cmdSession, final bool) error {
	var err error
	if c.held {
		if cs.s == nil {
			cs.s, err = c.gw.Acquire(ctx)
		}
		if err != nil && !final && errors.Is(err, vsec.ErrSemaphoreBusy) {
			c.arm(max(c.keepIdle, DefaultKeepIdle)) // the gateway is busy: try again shortly
			return err
		}
		// Write 0 only over our own value: if a tool force-cleared the
		// semaphore while we kept it and another agent took it since, a
		// blind 0 would release that agent's hold.
		var v uint32
		if err == nil {
			v, err = cs.s.Read32(ctx, vsec.SpaceSemaphore, addrSem)
		}
		if err == nil && v == c.semValue {
			err = cs.s.Write32(ctx, vsec.SpaceSemaphore, addrSem, 0)
		}
		c.held = false
	}
	cs.release()
	c.unlockWitness()
	c.disarm()
	return err
}

func (c *Client) unlockWitness() {
	if c.locked {
		c.witness.Unlock()
		c.locked = false
	}
}

// arm schedules the idle release of a kept semaphore.
func (c *Client) arm(d time.Duration) {
	c.disarm()
	var stop func() bool
	switch clk := c.clk.(type) {
	case clock.Real:
		stop = time.AfterFunc(d, c.idle).Stop
	case timerClock:
		stop = clk.AfterFunc(d, c.idle)
	default:
		return
	}
	c.timer = stop
}

func (c *Client) disarm() {
	if c.timer != nil {
		c.timer()
		c.timer = nil
	}
}

// idle runs from the timer: it releases a semaphore kept for KeepIdle
// without a command. A command running now re-arms the timer when it ends.
func (c *Client) idle() {
	select {
	case c.mu <- struct{}{}:
	default:
		return
	}
	defer c.unlock()
	if !c.held || c.closed {
		return
	}
	if left := c.keepIdle - c.clk.Now().Sub(c.lastUse); left > 0 {
		c.arm(left)
		return
	}
	ctx, cancel := vsec.Detached(context.Background())
	defer cancel()
	c.release(ctx, &cmdSession{}, false) // on failure it re-arms itself
}

// Release gives back a kept ICMD semaphore now (a caller about to sleep
// between batches can call it; the idle timer would do it after KeepIdle).
func (c *Client) Release(ctx context.Context) error {
	if err := c.lock(ctx); err != nil {
		return err
	}
	defer c.unlock()
	dctx, cancel := vsec.Detached(ctx)
	defer cancel()
	return c.release(dctx, &cmdSession{}, false)
}

// Close releases whatever the client still holds (the kept ICMD semaphore)
// and refuses later commands. It waits for a running command until ctx
// ends; the release writes run on a detached, bounded context. Calling it
// again does nothing.
func (c *Client) Close(ctx context.Context) error {
	select {
	case c.mu <- struct{}{}:
	case <-ctx.Done():
		return &Error{Op: "close", Kind: ErrBusy, Device: c.gw.Name(), Err: ctx.Err(),
			Detail: "a command was still running when the close gave up waiting for it",
			Hint:   "it releases the semaphores itself when it ends"}
	}
	defer c.unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	dctx, cancel := vsec.Detached(ctx)
	defer cancel()
	return c.release(dctx, &cmdSession{}, true)
}

// Held reports whether the client holds the ICMD semaphore now (kept
// between commands).
func (c *Client) Held() bool {
	select {
	case c.mu <- struct{}{}:
		defer c.unlock()
		return c.held
	default:
		return true // a command is running: it holds it
	}
}

func (c *Client) semBusy(opcode uint16, holder uint32, waited time.Duration, cause error, heldFor ...time.Duration) error {
	why := "until the command's deadline"
	if errors.Is(cause, context.Canceled) {
		why = "when the command was interrupted"
	} else if c.semTimeout > 0 && waited >= c.semTimeout {
		why = fmt.Sprintf("the %v limit", c.semTimeout)
	}
	held := ""
	if len(heldFor) > 0 && holder != 0 {
		held = fmt.Sprintf("; it was held by 0x%x (%d: a holder's process ID, by mstflint's convention) for the last %v", holder, holder, heldFor[0].Round(time.Millisecond))
		if c.holderWhy != "" {
			held += " (" + c.holderWhy + ")"
		}
	}
	return &Error{Op: "acquire ICMD semaphore", Kind: ErrSemaphoreBusy, Opcode: opcode, Err: cause, Device: c.gw.Name(),
		Detail: fmt.Sprintf("%s: device in use by another tool: waited %v for the ICMD semaphore (semaphore space 0xA, address 0) to run command 0x%04x, %s%s",
			c.gw.Name(), waited.Round(time.Millisecond), opcode, why, held),
		Hint: "wait for the other tool (mstflint, mstreg, mstconfig, another cxray) to finish and retry, or give this command a longer --timeout. " +
			"Once the holder is gone and nothing else has the adapter open, cxray releases the semaphore itself (run as root on the host, " +
			"where it can see every process). mstflint 4.21's clear_semaphore cannot clear it (it needs this semaphore to open ICMD); " +
			"if it never clears, reboot the host"}
}

func (c *Client) witnessBusy(opcode uint16, waited time.Duration, cause error) error {
	if !errors.Is(cause, context.DeadlineExceeded) && !errors.Is(cause, context.Canceled) {
		return &Error{Op: "acquire ICMD semaphore", Kind: ErrSemaphoreBusy, Opcode: opcode, Err: cause, Device: c.gw.Name(),
			Detail: fmt.Sprintf("%s: cannot lock the ICMD semaphore's holder record", c.gw.Name()),
			Hint:   "check that /tmp/mstflint_lockfiles is writable (mstflint uses it too)"}
	}
	return &Error{Op: "acquire ICMD semaphore", Kind: ErrSemaphoreBusy, Opcode: opcode, Err: cause, Device: c.gw.Name(),
		Detail: fmt.Sprintf("%s: the ICMD semaphore stayed with another cxray process (pid %d) for %v, until the command's deadline",
			c.gw.Name(), c.witness.Recorder(), waited.Round(time.Millisecond)),
		Hint: "wait for that cxray command to finish (ps -p PID), or give this one a longer --timeout"}
}

// run executes the command: check readiness, wait for a command another
// process left running, program the opcode, fill the mailbox, set BUSY,
// poll until it clears, check the status, read the reply into out.
func (c *Client) run(ctx context.Context, cs *cmdSession, opcode uint16, in []uint32, skipWrite bool, out []uint32) error {
	until := vsec.Until(ctx, c.clk, c.cmdTimeout)
	if !c.ready.Load() {
		if err := c.checkReady(ctx, cs.s); err != nil {
			return err
		}
	}
	ctrl, err := c.waitIdle(ctx, cs, opcode, until)
	if err != nil {
		return err
	}
	ctrl = ctrl&^(ctrlOpMask|ctrlEXMB|ctrlBusy) | uint32(opcode)<<16
	if err := cs.s.Write32(ctx, vsec.SpaceICMD, addrCtrl, ctrl); err != nil {
		return err
	}
	if !skipWrite {
		if err := cs.s.WriteBlock(ctx, vsec.SpaceICMD, addrMailbox, in); err != nil {
			return err
		}
	}
	if err := cs.s.Write32(ctx, vsec.SpaceICMD, addrCtrl, ctrl|ctrlBusy); err != nil {
		return err
	}
	if ctrl, err = c.waitDone(ctx, cs, opcode, until); err != nil {
		return err
	}
	if st := uint8(ctrl >> 8); st != 0 {
		return &StatusError{Opcode: opcode, Status: st}
	}
	return cs.s.ReadBlock(ctx, vsec.SpaceICMD, addrMailbox, out)
}

// waitIdle reads the control register and, while a command another
// process started (and abandoned) keeps BUSY set, waits for it within the
// deadline, giving the gateway back between polls. We hold the ICMD
// semaphore, so no new command can start meanwhile.
func (c *Client) waitIdle(ctx context.Context, cs *cmdSession, opcode uint16, until time.Time) (uint32, error) {
	start := c.clk.Now()
	b := vsec.NewBackoff(time.Millisecond, 16*time.Millisecond)
	for {
		ctrl, err := cs.s.Read32(ctx, vsec.SpaceICMD, addrCtrl)
		if err != nil || ctrl&ctrlBusy == 0 {
			return ctrl, err
		}
		waited := c.clk.Now().Sub(start)
		if !c.clk.Now().Before(until) || ctx.Err() != nil {
			return 0, &Error{Op: "send", Kind: ErrBusy, Opcode: opcode, Device: c.gw.Name(), Err: ctx.Err(),
				Detail: fmt.Sprintf("%s: waited %v, until the command's deadline, for command 0x%04x that another tool left running (BUSY set) to finish",
					c.gw.Name(), waited.Round(time.Millisecond), ctrl>>16),
				Hint: "a tool gave up on a slow or hung command; retry later with a longer --timeout, and reset the device (mstfwreset) if BUSY never clears"}
		}
		cs.release()
		err = b.Sleep(ctx, c.clk, until)
		if err == nil {
			cs.s, err = c.gw.Acquire(ctx)
		}
		if err != nil {
			return 0, err
		}
	}
}

// waitDone polls the control register until BUSY clears: five polls back
// to back (most commands finish in microseconds), then sleeps of 1, 2, 4,
// 8, 8… ms with the gateway given back during each, until the deadline. If
// the caller's context ends meanwhile, the command is still polled for up
// to AbandonGrace so it does not stay BUSY for the next tool; the result is
// an ErrTimeout error wrapping the context's error either way.
func (c *Client) waitDone(ctx context.Context, cs *cmdSession, opcode uint16, until time.Time) (uint32, error) {
	start := c.clk.Now()
	b := vsec.NewBackoff(time.Millisecond, 8*time.Millisecond)
	pctx := ctx // the context polls run on: ctx, then a detached grace
	var cause error
	timeout := func(polls int, finished bool) error {
		d := &Error{Op: "send", Kind: ErrTimeout, Opcode: opcode, Device: c.gw.Name(), Err: cause,
			Detail: fmt.Sprintf("%s: command 0x%04x still running (BUSY set) after %v and %d polls, at the command's deadline",
				c.gw.Name(), opcode, c.clk.Now().Sub(start).Round(time.Millisecond), polls),
			Hint: "the firmware is slow or hung; check dmesg, retry with a longer --timeout, or reset the device (mstfwreset)"}
		if errors.Is(cause, context.Canceled) {
			d.Detail = fmt.Sprintf("%s: command 0x%04x was interrupted after %v and %d polls; ", c.gw.Name(), opcode,
				c.clk.Now().Sub(start).Round(time.Millisecond), polls)
			if finished {
				d.Detail += "it finished within the grace period, and its reply was dropped"
			} else {
				d.Detail += fmt.Sprintf("it was still running %v later, and was left to the firmware", AbandonGrace)
			}
			d.Hint = "nothing was left held; run the command again"
		}
		return d
	}
	for i := 0; ; i++ {
		if cause == nil && ctx.Err() != nil {
			cause = ctx.Err()
			var cancel context.CancelFunc
			pctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), AbandonGrace)
			defer cancel()
			until = c.clk.Now().Add(AbandonGrace)
		}
		var ctrl uint32
		var err error
		if cs.s == nil {
			cs.s, err = c.gw.Acquire(pctx)
		}
		if err == nil {
			ctrl, err = cs.s.Read32(pctx, vsec.SpaceICMD, addrCtrl)
		}
		switch {
		case err != nil && cause == nil && ctx.Err() != nil:
			continue // the caller went away mid-poll: the grace begins
		case err != nil && cause != nil:
			return 0, timeout(i, false)
		case err != nil:
			return 0, err
		case ctrl&ctrlBusy == 0 && cause != nil:
			return 0, timeout(i+1, true)
		case ctrl&ctrlBusy == 0:
			return ctrl, nil
		case !c.clk.Now().Before(until):
			if cause == nil {
				cause = ctx.Err()
			}
			return 0, timeout(i+1, false)
		case i < 4:
			continue
		}
		cs.release() // the ICMD semaphore keeps the command ours
		if err := b.Sleep(pctx, c.clk, until); err != nil && cause != nil {
			return 0, timeout(i+1, false)
		}
	}
}

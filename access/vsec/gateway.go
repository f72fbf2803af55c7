// Package vsec is the client of the ConnectX configuration-space gateway: the
// vendor-specific PCI capability (ID 0x09) through which software reads and
// writes the device's internal address spaces (CR space, ICMD, semaphores)
// one dword at a time.
//
// Work is done in a Session: the gateway semaphore is taken once, any number
// of dword operations run, and the semaphore is released. mstflint instead
// takes and releases it around every dword, which costs four to five extra
// config accesses per dword.
package vsec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cxray/cxray/access/pci"
	"github.com/cxray/cxray/internal/clock"
)

// Gateway register offsets from the capability base, and bit fields.
const (
	offCtrl    = 0x04 // [15:0] space, [27:24] syndrome code, [28] size valid, [31:29] space status
	offCounter = 0x08 // a new ticket on every read
	offSem     = 0x0C // 0 = free; a non-zero write sticks only when free
	offAddr    = 0x10 // [29:0] address, [30] syndrome, [31] flag
	offData    = 0x14

	flagBit     = 1 << 31
	syndromeBit = 1 << 30
	addrMask    = 1<<30 - 1
	allOnes     = 0xFFFFFFFF

	// CapID is the PCI capability ID of the gateway ("vendor specific").
	CapID = 0x09
	// VendorMellanox is the PCI vendor ID the gateway client accepts.
	VendorMellanox = 0x15b3
)

// Defaults for Options.
const (
	DefaultPollLimit = 2048 // flag polls per dword, as mstflint and Linux
	retrySleep       = time.Millisecond
	pollSleepEvery   = 16 // sleep 1 ms after every 16 flag polls, as mstflint
	maxSemBackoff    = 4 * time.Millisecond
	// maxFreeReads bounds how often the semaphore may read 0 right after our
	// ticket failed to stick (a holder released in between); a device that
	// always does is broken, not busy.
	maxFreeReads = 64
)

// DefaultSemaphoreTimeout was the fixed wait for a held gateway semaphore.
// Waits now last as long as the caller's deadline (see Until); the constant
// stays for callers that still pass it as an explicit cap.
//
// Deprecated: leave Options.SemaphoreTimeout zero.
const DefaultSemaphoreTimeout = 2 * time.Second

// Options tune a Gateway. The zero value is ready to use.
type Options struct {
	// Clock for sleeps and deadlines; nil means the wall clock.
	Clock clock.Clock
	// Name is the function in messages ("0000:03:00.0"); "" says "the device".
	Name string
	// SemaphoreTimeout, when positive, caps the wait for a semaphore another
	// agent holds below the caller's deadline. Zero: the deadline alone.
	SemaphoreTimeout time.Duration
	// PollLimit bounds the flag polls per dword transaction.
	PollLimit int
	// SingleDwordReads turns off paired reads. By default a read polls with one
	// 8-byte read covering ADDRESS and DATA: the kernel (and the emulator)
	// split it into two dword reads in address order, so DATA is read right
	// after the flag is seen set, saving one config access per dword.
	SingleDwordReads bool
	// Witness, when set, records the tickets this process writes into the
	// semaphore, so that a later process can release a semaphore this one
	// left held when it was killed, and this one can release what a killed
	// cxray left (pci.Witness, slot WitnessGateway). Nil: no recovery.
	Witness Witness
	// Notify receives a Notice when a semaphore is released from a dead
	// holder; nil drops them (the caller should say what happened).
	Notify func(Notice)
}

// Gateway is an opened gateway capability on one PCI function. It is safe for
// concurrent use: sessions from one Gateway run one at a time (in-process
// waiters queue instead of spinning on the device semaphore), and sessions
// from different Gateways or processes are kept apart by the semaphore.
type Gateway struct {
	cs             pci.ConfigSpace
	base           int64
	vendor, device uint16
	capType        uint8
	clk            clock.Clock
	name           string
	semTimeout     time.Duration
	pollLimit      int
	paired         bool
	witness        Witness
	notify         func(Notice)

	turn chan struct{} // holds one token while a session is open

	mu       sync.Mutex
	verified map[Space]bool // spaces whose status bits have been seen non-zero
	ctrl     uint32         // last known CTRL value: [31:16] are read-only status, written back as read
	haveCtrl bool
}

// Open finds the gateway capability of the function behind cs. It checks the
// vendor ID (it refuses anything but 0x15b3) and walks the standard
// capability list with loop detection. It does not take the semaphore.
func Open(cs pci.ConfigSpace, opts *Options) (*Gateway, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	g := &Gateway{
		cs: cs, clk: clock.Or(o.Clock), name: o.Name,
		semTimeout: o.SemaphoreTimeout, pollLimit: o.PollLimit, paired: !o.SingleDwordReads,
		witness: o.Witness, notify: o.Notify,
		turn: make(chan struct{}, 1), verified: map[Space]bool{},
	}
	if g.pollLimit <= 0 {
		g.pollLimit = DefaultPollLimit
	}

	var hdr [64]byte
	if _, err := cs.ReadAt(hdr[:], 0); err != nil {
		return nil, fmt.Errorf("vsec: open: read PCI header: %w", err)
	}
	id := binary.LittleEndian.Uint32(hdr[0:4])
	if id == allOnes {
		return nil, goneError("open")
	}
	g.vendor, g.device = uint16(id), uint16(id>>16)
	if g.vendor != VendorMellanox {
		return nil, &Error{Op: "open", Kind: ErrNotMellanox,
			Detail: fmt.Sprintf("PCI vendor 0x%04x device 0x%04x is not a Mellanox/NVIDIA adapter (vendor 0x15b3)", g.vendor, g.device),
			Hint:   "pick a ConnectX function (`cxray status` lists them); cxray never writes to other devices"}
	}
	base, err := g.findCap(hdr[0x34])
	if err != nil {
		return nil, err
	}
	g.base = base
	return g, nil
}

// findCap walks the standard capability list for CapID. Pointers must lie in
// 0x40..0xFC (dword aligned, per the PCI spec); a revisited pointer ends the
// walk, so a corrupt or malicious list cannot loop.
func (g *Gateway) findCap(ptr byte) (int64, error) {
	var seen [256]bool
	for p := ptr &^ 3; p != 0; {
		if p < 0x40 || seen[p] {
			break
		}
		seen[p] = true
		var c [4]byte
		if _, err := g.cs.ReadAt(c[:], int64(p)); err != nil {
			return 0, fmt.Errorf("vsec: open: read capability at 0x%x: %w", p, err)
		}
		if binary.LittleEndian.Uint32(c[:]) == allOnes {
			return 0, goneError("open")
		}
		if c[0] == CapID {
			g.capType = c[3]
			return int64(p), nil
		}
		p = c[1] &^ 3
	}
	return 0, &Error{Op: "open", Kind: ErrNoCapability,
		Detail: fmt.Sprintf("device 0x%04x has no vendor-specific capability (ID 9) in its PCI capability list", g.device),
		Hint: "direct access needs a ConnectX-4 or newer physical function (VFs and some secure modes hide the gateway); " +
			"use the read-only kernel backend (-d kernel:mlx5_0)"}
}

// Offset returns the config-space offset of the gateway capability.
func (g *Gateway) Offset() int64 { return g.base }

// VendorID returns the PCI vendor ID read at open.
func (g *Gateway) VendorID() uint16 { return g.vendor }

// DeviceID returns the PCI device ID read at open (0x1021 for ConnectX-7).
func (g *Gateway) DeviceID() uint16 { return g.device }

// CapType returns the VSC type byte: 0 functional, 2 recovery.
func (g *Gateway) CapType() uint8 { return g.capType }

// Clock returns the clock used for sleeps and deadlines.
func (g *Gateway) Clock() clock.Clock { return g.clk }

// Name returns the function's name for messages ("the device" if unnamed).
func (g *Gateway) Name() string {
	if g.name == "" {
		return "the device"
	}
	return g.name
}

// Notify passes a notice to Options.Notify (the ICMD client reports its
// recoveries through the gateway's callback).
func (g *Gateway) Notify(n Notice) {
	if n.Device == "" {
		n.Device = g.Name()
	}
	if g.notify != nil {
		g.notify(n)
	}
}

// Do runs fn in a session and releases it afterwards.
func (g *Gateway) Do(ctx context.Context, fn func(*Session) error) error {
	s, err := g.Acquire(ctx)
	if err != nil {
		return err
	}
	err = fn(s)
	if rerr := s.Release(); err == nil {
		err = rerr
	}
	return err
}

// Read32 reads one dword in its own session.
func (g *Gateway) Read32(ctx context.Context, sp Space, addr uint32) (v uint32, err error) {
	err = g.Do(ctx, func(s *Session) error {
		v, err = s.Read32(ctx, sp, addr)
		return err
	})
	return v, err
}

// Write32 writes one dword in its own session.
func (g *Gateway) Write32(ctx context.Context, sp Space, addr, v uint32) error {
	return g.Do(ctx, func(s *Session) error { return s.Write32(ctx, sp, addr, v) })
}

// Acquire takes the gateway semaphore and returns a session holding it.
// Another agent holding the semaphore is waited for, with a backoff, until
// ctx's deadline (capped by SemaphoreTimeout when set); a semaphore that a
// dead cxray process left held is released (see Options.Witness) and
// reported through Notify. Giving up is an ErrSemaphoreBusy error that
// names the function, the holder and the time waited.
func (g *Gateway) Acquire(ctx context.Context) (*Session, error) {
	start := g.clk.Now()
	until := Until(ctx, g.clk, g.semTimeout)
	select {
	case g.turn <- struct{}{}:
	default:
		select {
		case g.turn <- struct{}{}:
		case <-ctx.Done():
			return nil, &Error{Op: "acquire", Kind: ErrSemaphoreBusy, Err: ctx.Err(), Device: g.name,
				Detail: fmt.Sprintf("%s: another session of this process kept the gateway until the command's deadline (%v)", g.Name(), g.clk.Now().Sub(start).Round(time.Millisecond)),
				Hint:   "retry with a longer deadline, or issue fewer operations at once"}
		}
	}
	if g.witness != nil {
		if waited, err := LockWitness(ctx, g.clk, g.witness, until); err != nil {
			<-g.turn
			return nil, g.witnessBusy(waited, err)
		}
	}
	if err := g.takeSemaphore(ctx, start, until); err != nil {
		g.unlockWitness()
		<-g.turn
		return nil, err
	}
	return &Session{g: g}, nil
}

func (g *Gateway) unlockWitness() {
	if g.witness != nil {
		g.witness.Unlock()
	}
}

func (g *Gateway) witnessBusy(waited time.Duration, cause error) *Error {
	if !errors.Is(cause, context.DeadlineExceeded) && !errors.Is(cause, context.Canceled) {
		return &Error{Op: "acquire", Kind: ErrSemaphoreBusy, Err: cause, Device: g.name,
			Detail: fmt.Sprintf("%s: cannot lock the gateway's holder record", g.Name()),
			Hint:   "check that " + pci.LockDir + " is writable (mstflint uses it too)"}
	}
	pid := g.witness.Recorder()
	return &Error{Op: "acquire", Kind: ErrSemaphoreBusy, Err: cause, Device: g.name,
		Detail: fmt.Sprintf("%s: the gateway stayed in use by another cxray process (pid %d) for %v, until the command's deadline",
			g.Name(), pid, waited.Round(time.Millisecond)),
		Hint: "wait for that cxray command to finish (ps -p PID), or give this one a longer --timeout"}
}

// takeSemaphore: read a ticket from COUNTER, write it to SEMAPHORE, read it
// back; the semaphore is ours iff the ticket stuck. The first attempt skips
// the "is it free" read (a write to a held semaphore is ignored), saving a
// config access in the common, uncontended case.
func (g *Gateway) takeSemaphore(ctx context.Context, start, until time.Time) error {
	checkFirst := false
	b := NewBackoff(retrySleep, maxSemBackoff)
	var checked uint32 // holder value already checked against the witness
	var heldSince time.Time
	for free := 0; ; {
		taken, holder, err := g.trySemaphore(checkFirst)
		if err != nil || taken {
			return err
		}
		checkFirst = true
		if holder == 0 {
			// Released between our write and read-back: try again at once.
			if free++; free > maxFreeReads {
				return &Error{Op: "acquire", Kind: ErrSemaphoreBusy, Device: g.name,
					Detail: fmt.Sprintf("%s: the gateway semaphore reads 0 right after every ticket written to it (%d times): it does not hold values", g.Name(), free),
					Hint:   "the gateway is malfunctioning; reset the device (mstfwreset) or reboot"}
			}
			continue
		}
		if holder != checked {
			checked, heldSince = holder, g.clk.Now()
			if g.witness != nil {
				if pid, ok := g.witness.Orphaned(holder); ok {
					if err := g.wr("recover", offSem, 0); err != nil {
						return err
					}
					g.Notify(Notice{Semaphore: "gateway", Value: holder, PID: pid, Waited: g.clk.Now().Sub(start)})
					checkFirst = false
					continue
				}
			}
		}
		if !g.clk.Now().Before(until) {
			return g.busyError(holder, g.clk.Now().Sub(start), g.clk.Now().Sub(heldSince), ctx.Err())
		}
		if err := b.Sleep(ctx, g.clk, until); err != nil {
			return g.busyError(holder, g.clk.Now().Sub(start), g.clk.Now().Sub(heldSince), err)
		}
	}
}

// trySemaphore makes one attempt and reports the value seen in the
// semaphore when it was not taken.
func (g *Gateway) trySemaphore(checkFirst bool) (taken bool, holder uint32, err error) {
	if checkFirst {
		v, err := g.rd("acquire", offSem)
		if err != nil || v != 0 {
			return false, v, err
		}
	}
	ticket, err := g.rd("acquire", offCounter)
	if err == nil && ticket == 0 {
		// Writing 0 would release someone else's semaphore; draw again.
		ticket, err = g.rd("acquire", offCounter)
		if err == nil && ticket == 0 {
			return false, 0, &Error{Op: "acquire", Kind: ErrSemaphoreBusy, Device: g.name,
				Detail: fmt.Sprintf("%s: the gateway COUNTER register keeps returning 0, so no semaphore ticket can be drawn", g.Name()),
				Hint:   "the gateway is malfunctioning; reset the device (mstfwreset) or reboot"}
		}
	}
	if err != nil {
		return false, 0, err
	}
	if g.witness != nil {
		// Recorded before it is written: a process killed right after the
		// write leaves a record the next one can match.
		if err := g.witness.Record(ticket); err != nil {
			return false, 0, err
		}
	}
	if err := g.wr("acquire", offSem, ticket); err != nil {
		return false, 0, err
	}
	got, err := g.rd("acquire", offSem)
	return err == nil && got == ticket, got, err
}

// rd reads one gateway register. An all-ones value from a control register
// is checked against the vendor ID to tell a removed device from a real value.
func (g *Gateway) rd(op string, off int64) (uint32, error) {
	var b [4]byte
	if _, err := g.cs.ReadAt(b[:], g.base+off); err != nil {
		return 0, fmt.Errorf("vsec: %s: read config 0x%x: %w", op, g.base+off, err)
	}
	v := binary.LittleEndian.Uint32(b[:])
	if v == allOnes && off != offData && g.gone() {
		return 0, goneError(op)
	}
	return v, nil
}

// rdPair reads ADDRESS and DATA with one 8-byte access.
func (g *Gateway) rdPair(op string) (addr, data uint32, err error) {
	var b [8]byte
	if _, err := g.cs.ReadAt(b[:], g.base+offAddr); err != nil {
		return 0, 0, fmt.Errorf("vsec: %s: read config 0x%x: %w", op, g.base+offAddr, err)
	}
	addr = binary.LittleEndian.Uint32(b[0:4])
	if addr == allOnes && g.gone() {
		return 0, 0, goneError(op)
	}
	return addr, binary.LittleEndian.Uint32(b[4:8]), nil
}

func (g *Gateway) wr(op string, off int64, v uint32) error {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	if _, err := g.cs.WriteAt(b[:], g.base+off); err != nil {
		return fmt.Errorf("vsec: %s: write config 0x%x: %w", op, g.base+off, err)
	}
	return nil
}

// gone reports whether the vendor/device ID dword reads all-ones, which no
// present function returns.
func (g *Gateway) gone() bool {
	var b [4]byte
	_, err := g.cs.ReadAt(b[:], 0)
	return err == nil && binary.LittleEndian.Uint32(b[:]) == allOnes
}

func (g *Gateway) isVerified(sp Space) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.verified[sp]
}

func (g *Gateway) setVerified(sp Space) {
	g.mu.Lock()
	g.verified[sp] = true
	g.mu.Unlock()
}

// knownCtrl returns the CTRL value last seen by any session of this
// Gateway. Its [15:0] is stale (the next session selects its space anew);
// its [31:16] are read-only status bits, written back as read.
func (g *Gateway) knownCtrl() (uint32, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ctrl, g.haveCtrl
}

func (g *Gateway) setCtrl(v uint32) {
	g.mu.Lock()
	g.ctrl, g.haveCtrl = v, true
	g.mu.Unlock()
}

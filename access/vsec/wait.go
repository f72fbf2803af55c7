package vsec

import (
	"context"
	"fmt"
	"time"

	"github.com/cxray/cxray/internal/clock"
)

// Waits for an agent that holds something the caller needs (the gateway or
// ICMD semaphore, a command another process left running, a busy firmware)
// are bounded by the caller's deadline, never by a fixed constant: a
// command given 10 s may wait 10 s. DefaultWait bounds them only when the
// context has no deadline at all.
const DefaultWait = 10 * time.Second

// ReleaseBudget bounds the writes that give back what a caller holds once
// its context has ended (cancelled by a signal, or past its deadline):
// they run on a detached context of this length, so the device is never
// left locked and the process is never kept long.
const ReleaseBudget = 2 * time.Second

// Until turns the caller's deadline into a point on clk: now plus the time
// left before ctx's deadline (DefaultWait without one), and no more than
// limit when limit > 0. On the wall clock that is just short of the
// deadline itself (a margin of 2 %, at most 20 ms, so that the wait ends
// with an error that says what it waited for rather than a bare "context
// deadline exceeded" from the next step); on a test's manual clock it is
// the same budget in virtual time, so waits stay deterministic.
func Until(ctx context.Context, clk clock.Clock, limit time.Duration) time.Time {
	d := DefaultWait
	if dl, ok := ctx.Deadline(); ok {
		d = time.Until(dl)
		d -= min(d/50, 20*time.Millisecond)
	}
	if limit > 0 && limit < d {
		d = limit
	}
	return clk.Now().Add(max(d, 0))
}

// Detached returns a context for release writes: it keeps ctx's values but
// not its cancellation, and ends after ReleaseBudget.
func Detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), ReleaseBudget)
}

// Backoff is a sleep that doubles from its first value up to a cap.
type Backoff struct {
	next, cap time.Duration
}

// NewBackoff starts at first and doubles up to limit.
func NewBackoff(first, limit time.Duration) *Backoff { return &Backoff{next: first, cap: limit} }

// Sleep sleeps the next step on clk, cut short at until; it returns ctx's
// error when ctx ends first.
func (b *Backoff) Sleep(ctx context.Context, clk clock.Clock, until time.Time) error {
	d := min(b.next, until.Sub(clk.Now()))
	b.next = min(2*b.next, b.cap)
	if d <= 0 {
		return ctx.Err()
	}
	return clk.Sleep(ctx, d)
}

// A Witness records which semaphore value this process holds so that a
// later process can tell a holder that died from a live one (see
// pci.Witness; *pci.WitnessSlot implements it). Its lock is held for as
// long as the semaphore is; Record is called before the value is written.
type Witness interface {
	TryLock() (bool, error)
	Unlock() error
	Record(v uint32) error
	// Orphaned reports whether v, found in the semaphore, was recorded by
	// a process that no longer holds it (and that process's PID).
	Orphaned(v uint32) (pid int, ok bool)
	// Recorder is the PID in the record (0 if none), for messages.
	Recorder() int
}

// LockWitness takes w's lock, waiting with a short backoff until the lock
// is free, ctx ends or until passes. The holder is another cxray process
// using the same semaphore, whose hold is short (one command, or a bounded
// batch of them). It returns how long it waited.
func LockWitness(ctx context.Context, clk clock.Clock, w Witness, until time.Time) (time.Duration, error) {
	start := clk.Now()
	b := NewBackoff(50*time.Microsecond, 2*time.Millisecond)
	for {
		ok, err := w.TryLock()
		if err != nil || ok {
			return clk.Now().Sub(start), err
		}
		if !clk.Now().Before(until) {
			return clk.Now().Sub(start), context.DeadlineExceeded
		}
		if err := b.Sleep(ctx, clk, until); err != nil {
			return clk.Now().Sub(start), err
		}
	}
}

// Notice reports something the access layer did on its own that the user
// should hear about: a semaphore released from a holder that had died.
type Notice struct {
	Device    string        // the function, as named in Options.Name ("0000:03:00.0")
	Semaphore string        // "gateway" or "ICMD"
	Value     uint32        // the ticket or PID found in the semaphore
	PID       int           // the cxray process that had recorded it (0: not a cxray process)
	Why       string        // how the holder was known to be gone, when not from a cxray record
	Waited    time.Duration // how long this process had been waiting when it released it
}

func (n Notice) String() string {
	what := fmt.Sprintf("ticket 0x%x", n.Value)
	if n.Semaphore == "ICMD" {
		what = fmt.Sprintf("PID %d", n.Value)
	}
	who := fmt.Sprintf("by cxray process %d, which no longer holds it (it was killed, or could not release it)", n.PID)
	if n.PID == 0 {
		who = "by a process that is gone: " + n.Why
	}
	return fmt.Sprintf("%s: released the %s semaphore left held (%s) %s; the device is usable again",
		n.Device, n.Semaphore, what, who)
}

// BusyRetry is the one policy for a firmware that answers busy, whichever
// path asked (an access register through the gateway, a command through
// fwctl): ask again after 2, 4, 8 ... ms, at most 100 ms apart, for as
// long as the caller's deadline allows (DefaultWait without one), on the
// caller's clock (a test's manual clock runs it in virtual time).
type BusyRetry struct {
	clk          clock.Clock
	start, until time.Time
	b            *Backoff
	tries        int
}

// Busy retry steps (BusyRetry).
const (
	BusyFirst = 2 * time.Millisecond
	BusyMax   = 100 * time.Millisecond
)

// NewBusyRetry starts the policy for one request.
func NewBusyRetry(ctx context.Context, clk clock.Clock) *BusyRetry {
	if clk == nil {
		clk = clock.Real{}
	}
	now := clk.Now()
	return &BusyRetry{clk: clk, start: now, until: Until(ctx, clk, 0), b: NewBackoff(BusyFirst, BusyMax)}
}

// Again is called after each busy answer: it waits the next step and
// reports whether to ask again; false once the deadline is reached or ctx
// ends (Tries and Waited then say what was done).
func (r *BusyRetry) Again(ctx context.Context) bool {
	r.tries++
	if !r.clk.Now().Before(r.until) {
		return false
	}
	return r.b.Sleep(ctx, r.clk, r.until) == nil && ctx.Err() == nil
}

// Tries is how many busy answers Again was told of.
func (r *BusyRetry) Tries() int { return r.tries }

// Waited is the time since the request began.
func (r *BusyRetry) Waited() time.Duration { return r.clk.Now().Sub(r.start) }

package icmd_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cxray/cxray/access/icmd"
	"github.com/cxray/cxray/access/pci"
	"github.com/cxray/cxray/access/pci/pcitest"
	"github.com/cxray/cxray/access/vsec"
	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/tracetest"
	"github.com/cxray/cxray/internal/clock"
)

// timerClock is a manual clock whose AfterFunc timers fire when fire is
// called, so the idle release runs exactly when a test says.
type timerClock struct {
	*clock.Manual
	mu      sync.Mutex
	next    int
	pending map[int]func()
}

func (c *timerClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		c.pending = map[int]func(){}
	}
	id := c.next
	c.next++
	c.pending[id] = f
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.pending[id]
		delete(c.pending, id)
		return ok
	}
}

// fire advances the clock by d and runs the timers still pending.
func (c *timerClock) fire(d time.Duration) int {
	c.Advance(d)
	c.mu.Lock()
	fs := c.pending
	c.pending = nil
	c.mu.Unlock()
	for _, f := range fs {
		f()
	}
	return len(fs)
}

func newTimerRig(t *testing.T, o icmd.Options) (*rig, *timerClock) {
	t.Helper()
	tc := &timerClock{Manual: emu.NewManualClock(time.Unix(0, 0))}
	r := &rig{clk: tc.Manual, rec: &tracetest.Recorder{}}
	r.dev = emu.New(emu.Config{Clock: tc})
	r.dev.SetTrace(r.rec.Record)
	r.cs = pcitest.NewCounting(r.dev)
	gw, err := vsec.Open(r.cs, &vsec.Options{Clock: tc})
	if err != nil {
		t.Fatal(err)
	}
	r.gw = gw
	if r.ic, err = icmd.Open(ctxT(t), gw, &o); err != nil {
		t.Fatal(err)
	}
	r.rec.Reset()
	return r, tc
}

// The kept semaphore goes back KeepIdle after the last command, by the
// client's own timer.
func TestKeepReleasedWhenIdle(t *testing.T) {
	r, tc := newTimerRig(t, icmd.Options{KeepIdle: 5 * time.Millisecond})
	ctx := ctxT(t)
	if _, err := r.ic.QueryCapabilities(ctx); err != nil {
		t.Fatal(err)
	}
	if !r.ic.Held() || r.dev.State().ICMDSemaphore != pid() {
		t.Fatalf("not kept after a command: %+v", r.dev.State())
	}
	if n := tc.fire(5 * time.Millisecond); n != 1 {
		t.Fatalf("%d idle timers ran, want 1", n)
	}
	if r.ic.Held() {
		t.Error("still held after the idle timer")
	}
	r.released(t)
	if got := r.rec.Count(emu.EvICMDSemReleased); got != 1 {
		t.Errorf("%d releases, want 1", got)
	}
}

// A continuous hold is bounded: after KeepMax the semaphore is released at
// the end of the command, and the next command waits a tenth of KeepMax
// before taking it again, a window for tools that poll for it.
func TestKeepBoundedAndYields(t *testing.T) {
	r, _ := newTimerRig(t, icmd.Options{KeepIdle: time.Second, KeepMax: 100 * time.Millisecond})
	ctx := ctxT(t)
	if _, err := r.ic.QueryCapabilities(ctx); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(100 * time.Millisecond) // a long batch
	if _, err := r.ic.QueryCapabilities(ctx); err != nil {
		t.Fatal(err)
	}
	if r.ic.Held() || r.dev.State().ICMDSemaphore != 0 {
		t.Fatalf("kept past KeepMax: %+v", r.dev.State())
	}
	before := r.clk.Now()
	if _, err := r.ic.QueryCapabilities(ctx); err != nil {
		t.Fatal(err)
	}
	if waited := r.clk.Now().Sub(before); waited < 10*time.Millisecond {
		t.Errorf("retook the semaphore after %v, want a yield of 10ms", waited)
	}
	if got, rel := r.rec.Count(emu.EvICMDSemTaken), r.rec.Count(emu.EvICMDSemReleased); got != 2 || rel != 1 {
		t.Errorf("%d takes and %d releases, want 2 and 1 (taken, kept, released at KeepMax, taken again)", got, rel)
	}
	r.free(t)
}

// KeepIdle < 0 releases after every command, as mstflint does.
func TestNoKeep(t *testing.T) {
	r, _ := newTimerRig(t, icmd.Options{KeepIdle: -1})
	for i := 0; i < 3; i++ {
		if _, err := r.ic.QueryCapabilities(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		r.released(t)
	}
	if got := r.rec.Count(emu.EvICMDSemTaken); got != 3 {
		t.Errorf("%d takes, want one per command", got)
	}
}

// A kept semaphore that a tool cleared (mstconfig clear_semaphore) and
// another agent took meanwhile is found at the next command: that command
// waits for the other agent rather than running unprotected, and the
// client never writes 0 over the other agent's value.
func TestKeptSemaphoreLost(t *testing.T) {
	r := newKeepRig(t)
	ctx := ctxT(t)
	if _, err := r.ic.QueryCapabilities(ctx); err != nil {
		t.Fatal(err)
	}
	other, err := vsec.Open(r.dev, &vsec.Options{Clock: r.clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Write32(ctx, vsec.SpaceSemaphore, 0, 0); err != nil { // the forced clear
		t.Fatal(err)
	}
	if err := other.Write32(ctx, vsec.SpaceSemaphore, 0, 4242); err != nil { // another tool takes it
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err = r.ic.QueryCapabilities(short)
	if !errors.Is(err, icmd.ErrSemaphoreBusy) || !strings.Contains(err.Error(), "0x1092") {
		t.Fatalf("err %v, want ErrSemaphoreBusy naming holder 0x1092", err)
	}
	if err := r.ic.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if v := r.dev.State().ICMDSemaphore; v != 4242 {
		t.Fatalf("the other agent's semaphore reads %d after our release, want 4242 untouched", v)
	}
	if err := other.Write32(ctx, vsec.SpaceSemaphore, 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ic.QueryCapabilities(ctx); err != nil {
		t.Errorf("after the other agent released: %v", err)
	}
	r.free(t)
}

// Waits last as long as the caller's deadline, not a fixed constant, and
// the error says what was waited for, on which device, and how long.
func TestWaitsFollowTheDeadline(t *testing.T) {
	for _, d := range []time.Duration{800 * time.Millisecond, 30 * time.Second} {
		r := newNamedRig(t, "0000:03:00.0")
		r.dev.SetFaults(emu.Faults{ICMDSemaphoreHeld: true})
		ctx, cancel := context.WithTimeout(context.Background(), d)
		start := r.clk.Now()
		_, err := r.ic.QueryCapabilities(ctx)
		cancel()
		waited := r.clk.Now().Sub(start)
		if !errors.Is(err, icmd.ErrSemaphoreBusy) {
			t.Fatalf("deadline %v: %v, want ErrSemaphoreBusy", d, err)
		}
		if waited < d*9/10 || waited > d {
			t.Errorf("deadline %v: gave up after %v of clock time", d, waited)
		}
		for _, want := range []string{"0000:03:00.0", "ICMD semaphore", "waited", "0x7e57ab1e", "releases the semaphore itself", "clear_semaphore cannot"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("deadline %v: the error lacks %q: %v", d, want, err)
			}
		}
		if s := r.dev.State(); s.GatewaySemaphore != 0 || s.ICMDSemaphore != emu.ForeignHolder {
			t.Errorf("after giving up: %+v, want the gateway free and the foreign holder untouched", s)
		}
		r.dev.ClearFaults()

		// The same for a command that never finishes.
		r.dev.SetFaults(emu.Faults{ICMDStuckBusy: true})
		ctx, cancel = context.WithTimeout(context.Background(), d)
		start = r.clk.Now()
		_, err = r.ic.QueryCapabilities(ctx)
		cancel()
		if waited := r.clk.Now().Sub(start); !errors.Is(err, icmd.ErrTimeout) || waited < d*9/10 || waited > d+10*time.Millisecond {
			t.Errorf("deadline %v: stuck command: %v after %v", d, err, waited)
		}
		if !strings.Contains(err.Error(), "0000:03:00.0") || !strings.Contains(err.Error(), "still running") {
			t.Errorf("stuck command error lacks the device or what it waited for: %v", err)
		}
		r.released(t)
	}
}

func newNamedRig(t *testing.T, name string) *rig {
	t.Helper()
	r := &rig{clk: emu.NewManualClock(time.Unix(0, 0)), rec: &tracetest.Recorder{}}
	r.dev = emu.New(emu.Config{Clock: r.clk})
	r.dev.SetTrace(r.rec.Record)
	r.cs = pcitest.NewCounting(r.dev)
	gw, err := vsec.Open(r.cs, &vsec.Options{Clock: r.clk, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	r.gw = gw
	if r.ic, err = icmd.Open(ctxT(t), gw, nil); err != nil {
		t.Fatal(err)
	}
	return r
}

// A command another process started and abandoned (BUSY still set) is
// waited for within the deadline instead of failing at once.
func TestForeignCommandWaitedFor(t *testing.T) {
	r := newRig(t)
	ctx := ctxT(t)
	r.dev.SetFaults(emu.Faults{SlowICMD: 3 * time.Second})
	// "Another process" (its own gateway and semaphore value) gives up on
	// the slow command: its context is cancelled mid-poll.
	gw2, err := vsec.Open(r.dev, &vsec.Options{Clock: r.clk})
	if err != nil {
		t.Fatal(err)
	}
	other, err := icmd.Open(ctx, gw2, &icmd.Options{SemaphoreValue: 77})
	if err != nil {
		t.Fatal(err)
	}
	octx, cancel := context.WithCancel(ctx)
	r.clk.OnSleep(2, cancel)
	if _, err := other.QueryCapabilities(octx); !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned command: %v", err)
	}
	if s := r.dev.State(); !s.ICMDBusy || s.ICMDSemaphore != 0 || s.GatewaySemaphore != 0 {
		t.Fatalf("after the other process gave up: %+v, want BUSY set and both semaphores free", s)
	}
	caps, err := r.ic.QueryCapabilities(ctx)
	if err != nil || !caps.AccessRegAll {
		t.Fatalf("after waiting for the abandoned command: %+v, %v", caps, err)
	}
	r.free(t)
}

// A context cancelled in the middle of a slow command (a signal): the
// command is polled a little longer so it finishes, both semaphores are
// released, and the error says it was interrupted.
func TestCancelMidCommand(t *testing.T) {
	r := newRig(t)
	r.dev.SetFaults(emu.Faults{SlowICMD: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	r.clk.OnSleep(3, cancel)
	_, err := r.ic.QueryCapabilities(ctx)
	if !errors.Is(err, icmd.ErrTimeout) || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "finished within the grace") {
		t.Fatalf("err %v, want an interrupted command that finished in the grace period", err)
	}
	if s := r.dev.State(); s.ICMDBusy {
		t.Error("command left running")
	}
	r.released(t)

	// A context that ended before the call: nothing is taken, nothing held.
	r.rec.Reset()
	if _, err := r.ic.QueryCapabilities(ctx); err == nil {
		t.Fatal("a command ran on an ended context")
	}
	if r.rec.Count(emu.EvICMDStart) != 0 {
		t.Error("a command started on an ended context")
	}
	r.released(t)
}

// Cancelled while the ICMD semaphore is kept between commands: the next
// call fails, and the kept semaphore is released by it.
func TestCancelWhileKept(t *testing.T) {
	r := newKeepRig(t)
	if _, err := r.ic.QueryCapabilities(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.ic.QueryCapabilities(ctx); err == nil {
		t.Fatal("ran on a cancelled context")
	}
	r.released(t)
}

// Close releases what is kept and refuses later commands.
func TestClose(t *testing.T) {
	r := newKeepRig(t)
	ctx := ctxT(t)
	if _, err := r.ic.QueryCapabilities(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.ic.Close(ctx); err != nil {
		t.Fatal(err)
	}
	r.released(t)
	if _, err := r.ic.QueryCapabilities(ctx); !errors.Is(err, icmd.ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
	if err := r.ic.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// witnessRig opens a client on a shared device with its own witness file
// handle, as a separate process would.
func witnessClient(t *testing.T, dev *emu.Device, clk *clock.Manual, dir string, semValue uint32, notices *[]vsec.Notice) (*icmd.Client, *pci.Witness) {
	t.Helper()
	w, err := pci.OpenWitness(dir, "0000:03:00.0")
	if err != nil {
		t.Fatal(err)
	}
	gw, err := vsec.Open(dev, &vsec.Options{Clock: clk, Name: "0000:03:00.0", Witness: w.Slot(pci.WitnessGateway),
		Notify: func(n vsec.Notice) { *notices = append(*notices, n) }})
	if err != nil {
		t.Fatal(err)
	}
	// It keeps the semaphore between commands (the opt-in), so that a test
	// can kill it while it holds one with no command running.
	ic, err := icmd.Open(ctxT(t), gw, &icmd.Options{SemaphoreValue: semValue, Witness: w.Slot(pci.WitnessICMD), KeepIdle: icmd.DefaultKeepIdle})
	if err != nil {
		t.Fatal(err)
	}
	return ic, w
}

// A client killed while it keeps the ICMD semaphore (its witness file
// closes, as the kernel closes it at exit, and its release never runs):
// the next client finds the recorded value, releases it, says so, and
// goes on. A semaphore held by an agent with no record (mstflint, the
// emulated foreign holder) is never released.
func TestDeadHolderRecovered(t *testing.T) {
	clk := emu.NewManualClock(time.Unix(0, 0))
	dev := emu.New(emu.Config{Clock: clk})
	dir := filepath.Join(t.TempDir(), "locks")
	var notices []vsec.Notice
	ctx := ctxT(t)

	a, wa := witnessClient(t, dev, clk, dir, 1000, &notices)
	if _, err := a.QueryCapabilities(ctx); err != nil {
		t.Fatal(err)
	}
	if v := dev.State().ICMDSemaphore; v != 1000 {
		t.Fatalf("ICMD semaphore %d, want the first client's 1000", v)
	}
	wa.Close() // "killed": the lock goes, the semaphore stays

	b, _ := witnessClient(t, dev, clk, dir, 2000, &notices)
	if _, err := b.QueryCapabilities(ctx); err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
	if len(notices) != 1 || notices[0].Semaphore != "ICMD" || notices[0].Value != 1000 || notices[0].Device != "0000:03:00.0" {
		t.Fatalf("notices %+v, want one for the ICMD semaphore left with 1000", notices)
	}
	if !strings.Contains(notices[0].String(), "released the ICMD semaphore") {
		t.Errorf("notice text: %s", notices[0])
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// A foreign holder without a record stays.
	dev.SetFaults(emu.Faults{ICMDSemaphoreHeld: true})
	c, _ := witnessClient(t, dev, clk, dir, 3000, &notices)
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := c.QueryCapabilities(short); !errors.Is(err, icmd.ErrSemaphoreBusy) {
		t.Fatalf("foreign holder: %v, want ErrSemaphoreBusy", err)
	}
	if v := dev.State().ICMDSemaphore; v != emu.ForeignHolder || len(notices) != 1 {
		t.Errorf("foreign holder: semaphore %#x, %d notices: it was taken from a holder not known to be dead", v, len(notices))
	}
}

// A live client keeping the semaphore is never robbed: the other waits on
// the witness lock and gives up at its deadline, naming the process.
func TestLiveHolderNeverTaken(t *testing.T) {
	clk := emu.NewManualClock(time.Unix(0, 0))
	dev := emu.New(emu.Config{Clock: clk})
	dir := t.TempDir()
	var notices []vsec.Notice
	ctx := ctxT(t)
	a, _ := witnessClient(t, dev, clk, dir, 1000, &notices)
	if _, err := a.QueryCapabilities(ctx); err != nil {
		t.Fatal(err)
	}
	b, _ := witnessClient(t, dev, clk, dir, 2000, &notices)
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := b.QueryCapabilities(short)
	if !errors.Is(err, icmd.ErrSemaphoreBusy) || !strings.Contains(err.Error(), "another cxray process") {
		t.Fatalf("err %v, want ErrSemaphoreBusy naming the other cxray process", err)
	}
	if v := dev.State().ICMDSemaphore; v != 1000 || len(notices) != 0 {
		t.Errorf("semaphore %d, notices %v: a live holder's semaphore was touched", v, notices)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.QueryCapabilities(ctx); err != nil {
		t.Errorf("after the holder closed: %v", err)
	}
	b.Close(ctx)
	if s := dev.State(); s.ICMDSemaphore != 0 || s.GatewaySemaphore != 0 {
		t.Errorf("left held: %+v", s)
	}
}

// Goroutines share one client and keep it busy while the idle timer
// fires; every command runs under the semaphore, and it ends free.
func TestKeepConcurrent(t *testing.T) {
	r, tc := newTimerRig(t, icmd.Options{KeepIdle: time.Millisecond})
	ctx := ctxT(t)
	var cmds, timers sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 4; g++ {
		cmds.Add(1)
		go func() {
			defer cmds.Done()
			for i := 0; i < 30; i++ {
				if _, err := r.ic.QueryCapabilities(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	stop := make(chan struct{})
	timers.Add(1)
	go func() {
		defer timers.Done()
		for {
			select {
			case <-stop:
				return
			default:
				tc.fire(time.Millisecond)
				time.Sleep(50 * time.Microsecond)
			}
		}
	}()
	cmds.Wait()
	close(stop)
	timers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := r.rec.Count(emu.EvICMDDone); got != 120 {
		t.Errorf("%d commands done, want 120", got)
	}
	if r.rec.Count(emu.EvUnlocked) != 0 {
		t.Error("a transaction ran without the gateway semaphore")
	}
	r.free(t)
}

// A holder the witness does not know (mstflint writes its PID) is
// released only when DeadHolder says it is gone, and reported with why.
func TestDeadHolderByPID(t *testing.T) {
	for _, dead := range []bool{false, true} {
		clk := emu.NewManualClock(time.Unix(0, 0))
		dev := emu.New(emu.Config{Clock: clk})
		var notices []vsec.Notice
		gw, err := vsec.Open(dev, &vsec.Options{Clock: clk, Name: "0000:03:00.0", Notify: func(n vsec.Notice) { notices = append(notices, n) }})
		if err != nil {
			t.Fatal(err)
		}
		var asked []uint32
		ic, err := icmd.Open(ctxT(t), gw, &icmd.Options{DeadHolder: func(v uint32) (string, bool) {
			asked = append(asked, v)
			return "process 4242 no longer exists", dead
		}})
		if err != nil {
			t.Fatal(err)
		}
		other, _ := vsec.Open(dev, &vsec.Options{Clock: clk})
		if err := other.Write32(ctxT(t), vsec.SpaceSemaphore, 0, 4242); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err = ic.QueryCapabilities(ctx)
		cancel()
		if len(asked) != 1 || asked[0] != 4242 {
			t.Errorf("dead=%v: DeadHolder asked about %v, want once about 4242", dead, asked)
		}
		if !dead {
			if !errors.Is(err, icmd.ErrSemaphoreBusy) || dev.State().ICMDSemaphore != 4242 || len(notices) != 0 {
				t.Errorf("live holder: %v, %+v, %v", err, dev.State(), notices)
			}
			continue
		}
		if err != nil || len(notices) != 1 || notices[0].PID != 0 || !strings.Contains(notices[0].String(), "process 4242 no longer exists") {
			t.Errorf("dead holder: %v, notices %v", err, notices)
		}
		ic.Close(ctxT(t))
	}
}

// On a clock without timers (the emulator's manual clock) an idle gap
// longer than KeepIdle does not count towards KeepMax: commands a minute
// apart on that clock do not make the client yield, which would move the
// emulated time.
func TestIdleGapWithoutTimers(t *testing.T) {
	r := newKeepRig(t)
	ctx := ctxT(t)
	for i := 0; i < 3; i++ {
		before := r.clk.Now()
		if _, err := r.ic.QueryCapabilities(ctx); err != nil {
			t.Fatal(err)
		}
		if moved := r.clk.Now().Sub(before); moved != 0 {
			t.Fatalf("command %d moved the clock by %v", i, moved)
		}
		r.clk.Advance(time.Minute)
	}
	r.free(t)
}

// An Open whose QUERY_CAP a signal cuts short returns no client, so no one
// could close it: it gives back what it holds itself, at every point of
// the command the cancellation lands on.
func TestOpenCancelledLeavesNothingHeld(t *testing.T) {
	for n := 0; n <= 8; n++ {
		r := newDevice(t, emu.Identity{})
		r.dev.SetFaults(emu.Faults{SlowICMD: 50 * time.Millisecond})
		ctx, cancel := context.WithCancel(context.Background())
		if n == 0 {
			cancel() // the signal came before the open (during start-up)
		} else {
			r.clk.OnSleep(n, cancel)
		}
		ic, err := icmd.Open(ctx, r.gw, &icmd.Options{QueryCapabilities: true})
		cancel()
		if err == nil {
			ic.Close(context.Background())
		}
		if s := r.dev.State(); s.GatewaySemaphore != 0 || s.ICMDSemaphore != 0 {
			t.Errorf("cancelled at sleep %d (open error %v): semaphores left held: %+v", n, err, s)
		}
	}
}

// The zero Options hold the ICMD semaphore only while a command runs: a
// process killed between two commands leaves nothing held for mstflint's
// tools, which cannot clear it (issue 26.1). No timer has to fire for it.
func TestDefaultReleasesAfterEveryCommand(t *testing.T) {
	r, tc := newTimerRig(t, icmd.Options{})
	for i := 0; i < 3; i++ {
		if _, err := r.ic.QueryCapabilities(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		if r.ic.Held() {
			t.Fatalf("command %d: the client says it still holds the ICMD semaphore", i)
		}
		r.released(t)
	}
	if n := tc.fire(time.Second); n != 0 {
		t.Errorf("%d idle timers were armed, want none", n)
	}
	if got, rel := r.rec.Count(emu.EvICMDSemTaken), r.rec.Count(emu.EvICMDSemReleased); got != 3 || rel != 3 {
		t.Errorf("%d takes and %d releases, want 3 and 3 (one of each per command)", got, rel)
	}
}

// newKeepRig is newRig with the ICMD semaphore kept between commands (the
// opt-in), on the manual clock without timers.
func newKeepRig(t *testing.T) *rig {
	t.Helper()
	r := newDevice(t, emu.Identity{})
	ic, err := icmd.Open(ctxT(t), r.gw, &icmd.Options{KeepIdle: icmd.DefaultKeepIdle})
	if err != nil {
		t.Fatal(err)
	}
	r.ic = ic
	r.rec.Reset()
	return r
}

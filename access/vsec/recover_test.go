package vsec_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cxray/cxray/access/pci"
	"github.com/cxray/cxray/access/vsec"
	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/internal/clock"
)

// The wait for a held gateway semaphore lasts as long as the caller's
// deadline (here in virtual time), and the error names the function, the
// holder, how long it waited and the command that clears it.
func TestSemaphoreWaitFollowsDeadline(t *testing.T) {
	for _, d := range []time.Duration{300 * time.Millisecond, 7 * time.Second} {
		clk := emu.NewManualClock(time.Unix(0, 0))
		dev := emu.New(emu.Config{Clock: clk})
		gw, err := vsec.Open(dev, &vsec.Options{Clock: clk, Name: "0000:03:00.0"})
		if err != nil {
			t.Fatal(err)
		}
		dev.SetFaults(emu.Faults{GatewaySemaphoreHeld: true})
		ctx, cancel := context.WithTimeout(context.Background(), d)
		start := clk.Now()
		_, err = gw.Acquire(ctx)
		cancel()
		waited := clk.Now().Sub(start)
		if !errors.Is(err, vsec.ErrSemaphoreBusy) {
			t.Fatalf("deadline %v: %v", d, err)
		}
		if waited < d*9/10 || waited > d {
			t.Errorf("deadline %v: gave up after %v", d, waited)
		}
		for _, want := range []string{"0000:03:00.0", "gateway semaphore", "waited", "0x7e57ab1e", "mstmcra -c 0000:03:00.0"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("deadline %v: error lacks %q: %v", d, want, err)
			}
		}
		if strings.Contains(err.Error(), "`mstflint -d") {
			t.Errorf("the advice still names mstflint's clear_semaphore, which cannot clear this semaphore: %v", err)
		}
	}
}

// The backoff keeps the config accesses of a long wait low: polling every
// millisecond for 2 s would cost thousands.
func TestSemaphoreWaitBacksOff(t *testing.T) {
	r := newRig(t, vsec.Options{})
	r.dev.SetFaults(emu.Faults{GatewaySemaphoreHeld: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := r.gw.Acquire(ctx); !errors.Is(err, vsec.ErrSemaphoreBusy) {
		t.Fatal(err)
	}
	if n := r.cs.Counts().Ops(); n > 2*2000/4+10 {
		t.Errorf("%d config accesses for a 2 s wait; the backoff should cap polling at one read per 4 ms", n)
	}
}

// CTRL is read once per Gateway: later sessions rewrite the selector from
// the value last seen (its upper half is read-only status).
func TestCtrlReadOncePerGateway(t *testing.T) {
	r := newRig(t, vsec.Options{})
	ctx := ctxT(t)
	for i := 0; i < 3; i++ {
		if _, err := r.gw.Read32(ctx, vsec.SpaceCR, 0xF0014); err != nil {
			t.Fatal(err)
		}
	}
	reads := 0
	for _, e := range r.rec.Kinds(emu.EvConfigRead) {
		if e.Off == emu.GatewayOffset+4 {
			reads++
		}
	}
	// One read to learn CTRL, one to verify the space the first time.
	if reads != 2 {
		t.Errorf("%d CTRL reads over three sessions, want 2", reads)
	}
	if sel := r.rec.Count(emu.EvSpaceSelect); sel != 3 {
		t.Errorf("%d space selections, want one per session", sel)
	}
}

// witnessGateway opens a gateway on dev as a separate process would: its
// own witness file handle.
func witnessGateway(t *testing.T, dev *emu.Device, clk *clock.Manual, dir string, notices *[]vsec.Notice) (*vsec.Gateway, *pci.Witness) {
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
	return gw, w
}

// A process killed while it holds the gateway semaphore (its witness file
// closes with it; no release write ever comes): the next process finds
// its recorded ticket, releases the semaphore, says so and goes on.
func TestDeadGatewayHolderRecovered(t *testing.T) {
	clk := emu.NewManualClock(time.Unix(0, 0))
	dev := emu.New(emu.Config{Clock: clk})
	dir := t.TempDir()
	var notices []vsec.Notice
	ctx := ctxT(t)

	a, wa := witnessGateway(t, dev, clk, dir, &notices)
	if _, err := a.Acquire(ctx); err != nil { // never released
		t.Fatal(err)
	}
	held := dev.State().GatewaySemaphore
	if held == 0 {
		t.Fatal("not held")
	}
	wa.Close()

	b, _ := witnessGateway(t, dev, clk, dir, &notices)
	v, err := b.Read32(ctx, vsec.SpaceCR, 0xF0014)
	if err != nil || v != 0x218 {
		t.Fatalf("after the holder died: %#x, %v", v, err)
	}
	if len(notices) != 1 || notices[0].Semaphore != "gateway" || notices[0].Value != held {
		t.Fatalf("notices %+v, want one for ticket %#x", notices, held)
	}
	if s := dev.State(); s.GatewaySemaphore != 0 {
		t.Errorf("left held: %+v", s)
	}
}

// A live holder (another Gateway holding its witness lock) is waited for
// and never robbed; a holder without a record (mstflint, the driver, the
// emulated foreign agent) is waited for and never released either.
func TestLiveOrUnknownGatewayHolderKept(t *testing.T) {
	clk := emu.NewManualClock(time.Unix(0, 0))
	dev := emu.New(emu.Config{Clock: clk})
	dir := t.TempDir()
	var notices []vsec.Notice
	ctx := ctxT(t)

	a, _ := witnessGateway(t, dev, clk, dir, &notices)
	s, err := a.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held := dev.State().GatewaySemaphore
	b, _ := witnessGateway(t, dev, clk, dir, &notices)
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = b.Acquire(short)
	cancel()
	if !errors.Is(err, vsec.ErrSemaphoreBusy) || !strings.Contains(err.Error(), "another cxray process") {
		t.Fatalf("live holder: %v", err)
	}
	if dev.State().GatewaySemaphore != held || len(notices) != 0 {
		t.Fatalf("a live holder's semaphore was touched: %+v, %v", dev.State(), notices)
	}
	s.Release()

	dev.SetFaults(emu.Faults{GatewaySemaphoreHeld: true})
	short, cancel = context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = b.Acquire(short)
	cancel()
	if !errors.Is(err, vsec.ErrSemaphoreBusy) || dev.State().GatewaySemaphore != emu.ForeignHolder || len(notices) != 0 {
		t.Fatalf("unknown holder: %v, %+v, %v", err, dev.State(), notices)
	}
}

// Gateways with witnesses on one file stand for cooperating processes:
// the witness locks and the semaphore keep their read-modify-writes apart,
// and nothing is ever mistaken for a dead holder.
func TestConcurrentGatewaysWithWitness(t *testing.T) {
	clk := emu.NewManualClock(time.Unix(0, 0))
	dev := emu.New(emu.Config{Clock: clk})
	dir := t.TempDir()
	var notices []vsec.Notice
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	const workers, rounds = 4, 40
	errs := make(chan error, workers)
	done := make(chan struct{})
	for w := 0; w < workers; w++ {
		gw, _ := witnessGateway(t, dev, clk, dir, &notices)
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < rounds; i++ {
				err := gw.Do(ctx, func(s *vsec.Session) error {
					v, err := s.Read32(ctx, vsec.SpaceCR, 0x5000)
					if err != nil {
						return err
					}
					return s.Write32(ctx, vsec.SpaceCR, 0x5000, v+1)
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for w := 0; w < workers; w++ {
		<-done
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := dev.CR(0x5000); got != workers*rounds || len(notices) != 0 {
		t.Errorf("counter %d (want %d), notices %v", got, workers*rounds, notices)
	}
}

// BusyRetry, the one busy policy of the access layer: waits of 2, 4, 8 ...
// ms up to 100 ms, on the caller's clock, until the caller's deadline.
func TestBusyRetryPolicy(t *testing.T) {
	clk := clock.NewManual(time.Unix(0, 0))
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	r := vsec.NewBusyRetry(ctx, clk)
	var steps []time.Duration
	for last := clk.Now(); r.Again(ctx); last = clk.Now() {
		steps = append(steps, clk.Now().Sub(last))
	}
	want := []time.Duration{2, 4, 8, 16, 32, 64, 100, 100, 100}
	for i, w := range want {
		if i >= len(steps) || steps[i] != w*time.Millisecond {
			t.Fatalf("steps %v, want %v ms then 100 ms steps to the deadline", steps, want)
		}
	}
	if w := r.Waited(); w < 480*time.Millisecond || w > 500*time.Millisecond || r.Tries() != len(steps)+1 {
		t.Errorf("gave up after %v and %d tries, want at the 500 ms deadline", w, r.Tries())
	}
}

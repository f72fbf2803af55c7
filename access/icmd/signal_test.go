package icmd_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cxray/cxray/access/icmd"
	"github.com/cxray/cxray/access/pci"
	"github.com/cxray/cxray/access/vsec"
	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/internal/clock"
)

// cancelAt is a config space that cancels a context right after its n-th
// access (counting from 1) has reached the device: a signal arriving at
// that exact point.
type cancelAt struct {
	pci.ConfigSpace
	n      atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAt) after() {
	if c.n.Add(-1) == 0 {
		c.cancel()
	}
}

func (c *cancelAt) ReadAt(p []byte, off int64) (int, error) {
	defer c.after()
	return c.ConfigSpace.ReadAt(p, off)
}

func (c *cancelAt) WriteAt(p []byte, off int64) (int, error) {
	defer c.after()
	return c.ConfigSpace.WriteAt(p, off)
}

// commandLine does the device work of one cxray command line the way
// dev.OpenPCI and cmd/cxray do: gateway and ICMD client with witnesses,
// the open's capability query, one command, and the close on the way out
// (also after a failed command; a failed open closes nothing). It returns
// the step that failed ("" when none) and its error.
func commandLine(t *testing.T, ctx context.Context, cs pci.ConfigSpace, clk *clock.Manual, dir string, semValue uint32, notices *[]vsec.Notice) (string, error) {
	t.Helper()
	w, err := pci.OpenWitness(dir, "0000:03:00.0")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	notify := func(n vsec.Notice) { *notices = append(*notices, n) }
	gw, err := vsec.Open(cs, &vsec.Options{Clock: clk, Name: "0000:03:00.0", Witness: w.Slot(pci.WitnessGateway), Notify: notify})
	if err != nil {
		t.Fatal(err)
	}
	ic, err := icmd.Open(ctx, gw, &icmd.Options{QueryCapabilities: true, SemaphoreValue: semValue, Witness: w.Slot(pci.WitnessICMD)})
	if err != nil {
		return "open", err
	}
	step := ""
	if _, err = ic.QueryCapabilities(ctx); err != nil {
		step = "command"
	}
	cctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if cerr := ic.Close(cctx); cerr != nil {
		t.Errorf("close after the %s step: %v", step, cerr)
	}
	return step, err
}

// A signal can land between any two config accesses of a command line.
// Whichever access it follows, once the command line has unwound both
// semaphores are free and both witness locks are let go, so the next tool
// (mstreg, which cannot recover anything) finds the device free, and the
// next cxray has nothing to release. The ICMD semaphore is taken by a
// write and a read-back: a signal between the two once left it taken by
// the interrupted process, the client unaware of it, and mstreg failed
// after its whole retry budget (conformance
// TestKilledCommandsLeaveTheDeviceUsable, SIGHUP, under load).
func TestSignalAtEveryAccessLeavesNothingHeld(t *testing.T) {
	const self, next = 1000, 2000
	clk := emu.NewManualClock(time.Unix(0, 0))
	var notices []vsec.Notice

	// How many accesses an uninterrupted command line makes.
	dev := emu.New(emu.Config{Clock: clk})
	cs := &cancelAt{ConfigSpace: dev, cancel: func() {}}
	cs.n.Store(1 << 40)
	if step, err := commandLine(t, context.Background(), cs, clk, t.TempDir(), self, &notices); err != nil {
		t.Fatalf("uninterrupted: %s: %v", step, err)
	}
	total := 1<<40 - cs.n.Load()
	if total < 50 {
		t.Fatalf("a command line made only %d config accesses", total)
	}

	for n := int64(1); n <= total; n++ {
		dir := filepath.Join(t.TempDir(), "locks")
		dev := emu.New(emu.Config{Clock: clk})
		ctx, cancel := context.WithCancel(context.Background())
		cs := &cancelAt{ConfigSpace: dev, cancel: cancel}
		cs.n.Store(n)
		step, err := commandLine(t, ctx, cs, clk, dir, self, &notices)
		cancel()
		if s := dev.State(); s.GatewaySemaphore != 0 || s.ICMDSemaphore != 0 || s.ICMDBusy {
			t.Errorf("signal after access %d of %d (failed step %q: %v): left held: %+v", n, total, step, err, s)
			continue
		}
		notices = nil
		if step, err := commandLine(t, ctxT(t), dev, clk, dir, next, &notices); err != nil || len(notices) != 0 {
			t.Errorf("signal after access %d of %d: the next command line: %s: %v; notices %v", n, total, step, err, notices)
		}
	}
}

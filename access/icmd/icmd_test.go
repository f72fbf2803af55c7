package icmd_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/access/icmd"
	"github.com/cxray/cxray/access/pci/pcitest"
	"github.com/cxray/cxray/access/vsec"
	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/tracetest"
	"github.com/cxray/cxray/internal/clock"
)

type rig struct {
	dev *emu.Device
	clk *clock.Manual
	rec *tracetest.Recorder
	cs  *pcitest.Counting
	gw  *vsec.Gateway
	ic  *icmd.Client
}

func newDevice(t *testing.T, id emu.Identity) *rig {
	t.Helper()
	r := &rig{clk: emu.NewManualClock(time.Unix(0, 0)), rec: &tracetest.Recorder{}}
	r.dev = emu.New(emu.Config{Identity: id, Clock: r.clk})
	r.dev.SetTrace(r.rec.Record)
	r.cs = pcitest.NewCounting(r.dev)
	gw, err := vsec.Open(r.cs, &vsec.Options{Clock: r.clk})
	if err != nil {
		t.Fatal(err)
	}
	r.gw = gw
	return r
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := newDevice(t, emu.Identity{})
	ic, err := icmd.Open(ctxT(t), r.gw, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.ic = ic
	r.rec.Reset()
	return r
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// free fails the test if a semaphore is held by anyone but this client
// keeping the ICMD semaphore between commands, and then checks that
// Release gives that back too.
func (r *rig) free(t *testing.T) {
	t.Helper()
	s := r.dev.State()
	if s.GatewaySemaphore != 0 || (s.ICMDSemaphore != 0 && !(r.ic != nil && r.ic.Held() && s.ICMDSemaphore == pid())) {
		t.Errorf("semaphores left held: %+v", s)
	}
	if r.ic != nil {
		if err := r.ic.Release(ctxT(t)); err != nil {
			t.Errorf("release: %v", err)
		}
	}
	r.released(t)
}

// released fails the test unless both semaphores are free now.
func (r *rig) released(t *testing.T) {
	t.Helper()
	if s := r.dev.State(); s.GatewaySemaphore != 0 || s.ICMDSemaphore != 0 {
		t.Errorf("semaphores left held: %+v", s)
	}
}

func pid() uint32 { return uint32(os.Getpid()) }

func TestOpen(t *testing.T) {
	r := newRig(t)
	if r.ic.HardwareID() != 0x218 || r.ic.MailboxSize() != 0x340 {
		t.Errorf("hardware ID %#x mailbox %#x", r.ic.HardwareID(), r.ic.MailboxSize())
	}
	r.free(t)
}

func TestQueryCapabilities(t *testing.T) {
	r := newRig(t)
	caps, err := r.ic.QueryCapabilities(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	want := emu.ConnectX7().Caps0
	if caps.Raw[0] != want || !caps.AccessRegAll || !caps.MCAMReg || !caps.NVAccess || caps.MHSync {
		t.Errorf("caps %+v, raw want %#x", caps, want)
	}

	id := emu.ConnectX7()
	id.Caps0 = emu.CapMCAMReg
	id.Caps1 = 0x00200000
	r = newDevice(t, id)
	ic, err := icmd.Open(ctxT(t), r.gw, nil)
	if err != nil {
		t.Fatal(err)
	}
	caps, err = ic.QueryCapabilities(ctxT(t))
	if err != nil || caps.AccessRegAll || !caps.MCAMReg || caps.NumDiagnosticCounters != 0x20 {
		t.Errorf("restricted caps %+v, %v", caps, err)
	}
}

func TestFirmwareInfo(t *testing.T) {
	r := newRig(t)
	fi, err := r.ic.FirmwareInfo(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	id := emu.ConnectX7()
	bt, ok := fi.BuildTime()
	if fi.Version() != "28.39.1010" || fi.PSID != id.PSID || !ok || !bt.Equal(id.FWBuildTime) {
		t.Errorf("fw info %+v build %v %v", fi, bt, ok)
	}
	// GET_FW_INFO has no input: the mailbox must not be written.
	for _, e := range r.rec.Kinds(emu.EvWrite) {
		if e.Space == 3 && e.Addr >= 0x100000 {
			t.Fatalf("mailbox written at %#x for a command without input", e.Addr)
		}
	}
}

// One command is one gateway session: the gateway semaphore is taken once
// and encloses the ICMD semaphore and the command. By default the ICMD
// semaphore is taken and given back inside that session; a client that
// opts in to keeping it keeps it for the next command (which only reads it
// back) and releases it with Release, inside a session of its own.
func TestOneSessionPerCommand(t *testing.T) {
	for _, keep := range []bool{false, true} {
		r := newDevice(t, emu.Identity{})
		o := &icmd.Options{}
		if keep {
			o.KeepIdle = icmd.DefaultKeepIdle
		}
		ic, err := icmd.Open(ctxT(t), r.gw, o)
		if err != nil {
			t.Fatal(err)
		}
		r.ic = ic
		r.rec.Reset()
		for i := 0; i < 2; i++ {
			if _, err := r.ic.QueryCapabilities(ctxT(t)); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.ic.Release(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		var seq []emu.EventKind
		for _, e := range r.rec.Kinds(emu.EvSemTaken, emu.EvSemReleased, emu.EvICMDSemTaken, emu.EvICMDSemReleased, emu.EvICMDStart, emu.EvICMDDone) {
			seq = append(seq, e.Kind)
		}
		want := []emu.EventKind{
			emu.EvSemTaken, emu.EvICMDSemTaken, emu.EvICMDStart, emu.EvICMDDone, emu.EvICMDSemReleased, emu.EvSemReleased,
			emu.EvSemTaken, emu.EvICMDSemTaken, emu.EvICMDStart, emu.EvICMDDone, emu.EvICMDSemReleased, emu.EvSemReleased,
		}
		if keep {
			want = []emu.EventKind{
				emu.EvSemTaken, emu.EvICMDSemTaken, emu.EvICMDStart, emu.EvICMDDone, emu.EvSemReleased,
				emu.EvSemTaken, emu.EvICMDStart, emu.EvICMDDone, emu.EvSemReleased,
				emu.EvSemTaken, emu.EvICMDSemReleased, emu.EvSemReleased,
			}
		}
		if diff := cmp.Diff(want, seq); diff != "" {
			t.Fatalf("keep %v: event sequence (-want +got):\n%s", keep, diff)
		}
		if r.rec.Count(emu.EvUnlocked) != 0 {
			t.Errorf("keep %v: a transaction ran without the gateway semaphore", keep)
		}
		r.released(t)
	}
}

func TestUnknownOpcode(t *testing.T) {
	r := newRig(t)
	_, err := r.ic.Send(ctxT(t), 0x1234, []byte{0, 0, 0, 0}, 4)
	var se *icmd.StatusError
	if !errors.As(err, &se) || se.Status != 1 || se.Opcode != 0x1234 {
		t.Fatalf("err %v, want ICMD status 1", err)
	}
	r.free(t)
	if _, err := r.ic.QueryCapabilities(ctxT(t)); err != nil {
		t.Errorf("after a failed command: %v", err)
	}
}

func TestTooLarge(t *testing.T) {
	r := newRig(t)
	if _, err := r.ic.Send(ctxT(t), icmd.OpAccessReg, make([]byte, 0x344), 4); !errors.Is(err, icmd.ErrTooLarge) {
		t.Errorf("err %v, want ErrTooLarge", err)
	}
	if _, err := r.ic.Send(ctxT(t), icmd.OpAccessReg, nil, 0x341); !errors.Is(err, icmd.ErrTooLarge) {
		t.Errorf("err %v, want ErrTooLarge", err)
	}
}

func TestICMDSemaphoreHeld(t *testing.T) {
	r := newRig(t)
	ctx := ctxT(t)
	r.dev.SetFaults(emu.Faults{ICMDSemaphoreHeld: true})
	start := r.clk.Now()
	_, err := r.ic.QueryCapabilities(ctx)
	if !errors.Is(err, icmd.ErrSemaphoreBusy) {
		t.Fatalf("err %v, want ErrSemaphoreBusy", err)
	}
	if r.clk.Now().Sub(start) < icmd.DefaultSemaphoreTimeout || ctx.Err() != nil {
		t.Errorf("waited %v (ctx %v), want the full semaphore timeout within the deadline", r.clk.Now().Sub(start), ctx.Err())
	}
	if s := r.dev.State(); s.GatewaySemaphore != 0 {
		t.Error("gateway semaphore kept while waiting for the ICMD semaphore")
	}
	if r.rec.Count(emu.EvICMDStart) != 0 {
		t.Error("command started without the ICMD semaphore")
	}
	r.dev.ClearFaults()
	if _, err := r.ic.QueryCapabilities(ctx); err != nil {
		t.Errorf("after clearing: %v", err)
	}
	r.free(t)
}

func TestStuckBusy(t *testing.T) {
	r := newRig(t)
	ctx := ctxT(t)
	r.dev.SetFaults(emu.Faults{ICMDStuckBusy: true})
	_, err := r.ic.QueryCapabilities(ctx)
	if !errors.Is(err, icmd.ErrTimeout) || ctx.Err() != nil {
		t.Fatalf("err %v, want ErrTimeout before the deadline", err)
	}
	r.free(t)
	// The stuck command still occupies the engine.
	if _, err := r.ic.FirmwareInfo(ctx); !errors.Is(err, icmd.ErrBusy) {
		t.Fatalf("second command: %v, want ErrBusy", err)
	}
	r.free(t)
	r.dev.ClearFaults()
	fi, err := r.ic.FirmwareInfo(ctx)
	if err != nil || fi.PSID == "" {
		t.Fatalf("after clearing: %+v, %v", fi, err)
	}
	r.free(t)
}

func TestSlowFirmware(t *testing.T) {
	r := newRig(t)
	ctx := ctxT(t)
	r.dev.SetFaults(emu.Faults{SlowICMDPolls: 40})
	if _, err := r.ic.QueryCapabilities(ctx); err != nil {
		t.Fatalf("slow by polls: %v", err)
	}
	ctrlReads := 0
	for _, e := range r.rec.Kinds(emu.EvRead) {
		if e.Space == 3 && e.Addr == 0 {
			ctrlReads++
		}
	}
	if ctrlReads != 1+41 { // busy check + 40 busy polls + the one that sees it done
		t.Errorf("%d control reads, want 42", ctrlReads)
	}

	r.dev.SetFaults(emu.Faults{SlowICMD: 3 * time.Second})
	start := r.clk.Now()
	if _, err := r.ic.QueryCapabilities(ctx); err != nil {
		t.Fatalf("slow by 3s: %v", err)
	}
	if d := r.clk.Now().Sub(start); d < 3*time.Second || d > 3*time.Second+20*time.Millisecond {
		t.Errorf("completed after %v of clock time, want just over 3s", d)
	}

	r.dev.SetFaults(emu.Faults{SlowICMD: time.Hour})
	if _, err := r.ic.QueryCapabilities(ctx); !errors.Is(err, icmd.ErrTimeout) {
		t.Errorf("slower than the timeout: %v, want ErrTimeout", err)
	}
	r.free(t)
	r.dev.ClearFaults()
	if _, err := r.ic.QueryCapabilities(ctx); err != nil {
		t.Errorf("after clearing: %v", err)
	}
}

// A deadline in the middle of a slow command ends the wait with a typed error
// and still frees both semaphores.
func TestContextEndsWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := emu.NewManualClock(time.Unix(0, 0))
	dev := emu.New(emu.Config{Clock: clk})
	gw, err := vsec.Open(dev, &vsec.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ic, err := icmd.Open(ctx, gw, nil)
	if err != nil {
		t.Fatal(err)
	}
	dev.SetFaults(emu.Faults{SlowICMD: time.Minute})
	clk.OnSleep(3, cancel)
	_, err = ic.QueryCapabilities(ctx)
	if !errors.Is(err, icmd.ErrTimeout) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want ErrTimeout wrapping context.Canceled", err)
	}
	if s := dev.State(); s.GatewaySemaphore != 0 || s.ICMDSemaphore != 0 {
		t.Errorf("semaphores left held after cancellation: %+v", s)
	}
}

func TestNotReadyAndUnsupported(t *testing.T) {
	r := newDevice(t, emu.Identity{})
	ctx := ctxT(t)
	r.dev.SetCR(0xB5F04, 1<<31)
	if _, err := icmd.Open(ctx, r.gw, nil); !errors.Is(err, icmd.ErrNotReady) {
		t.Errorf("static config not done: %v, want ErrNotReady", err)
	}
	r.dev.SetCR(0xB5F04, 0)
	if _, err := icmd.Open(ctx, r.gw, nil); err != nil {
		t.Errorf("after static config: %v", err)
	}
	r.dev.SetCR(0xF0014, 0x1f5) // ConnectX-3: no ICMD over the gateway
	if _, err := icmd.Open(ctx, r.gw, nil); !errors.Is(err, icmd.ErrNotSupported) {
		t.Errorf("ConnectX-3 hardware ID: %v, want ErrNotSupported", err)
	}

	id := emu.ConnectX7()
	id.DeviceID = 0x218 // live-fish: PCI device ID = hardware ID
	r = newDevice(t, id)
	if _, err := icmd.Open(ctx, r.gw, nil); !errors.Is(err, icmd.ErrNotSupported) {
		t.Errorf("live-fish: %v, want ErrNotSupported", err)
	}
	r.free(t)
}

// After a failed command the static-configuration flag is read again, so a
// firmware reset in between is reported as "not ready" rather than garbage.
func TestReadyRecheckedAfterFailure(t *testing.T) {
	r := newRig(t)
	ctx := ctxT(t)
	r.dev.SetFaults(emu.Faults{Removed: true})
	if _, err := r.ic.QueryCapabilities(ctx); !errors.Is(err, vsec.ErrDeviceGone) {
		t.Fatalf("removed: %v, want ErrDeviceGone", err)
	}
	r.dev.ClearFaults()
	r.dev.SetCR(0xB5F04, 1<<31) // firmware still booting after the re-plug
	if _, err := r.ic.QueryCapabilities(ctx); !errors.Is(err, icmd.ErrNotReady) {
		t.Fatalf("booting: %v, want ErrNotReady", err)
	}
	r.free(t)
	r.dev.SetCR(0xB5F04, 0)
	if _, err := r.ic.QueryCapabilities(ctx); err != nil {
		t.Errorf("ready again: %v", err)
	}
}

func TestBuildTimeRejectsNonBCD(t *testing.T) {
	b := make([]byte, 0x24)
	b[12], b[13], b[14], b[15] = 0x07, 0xE7, 0x0A, 0x05 // binary 2023, not BCD
	fi, err := icmd.ParseFirmwareInfo(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fi.BuildTime(); ok {
		t.Error("binary year accepted as BCD")
	}
	if _, err := icmd.ParseFirmwareInfo(b[:0x20]); err == nil {
		t.Error("short reply accepted")
	}
}

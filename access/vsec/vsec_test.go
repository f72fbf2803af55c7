package vsec_test

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cxray/cxray/access/pci"
	"github.com/cxray/cxray/access/pci/pcitest"
	"github.com/cxray/cxray/access/vsec"
	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/tracetest"
	"github.com/cxray/cxray/internal/clock"
)

// The emulator is a pci.ConfigSpace without either package importing the other.
var _ pci.ConfigSpace = (*emu.Device)(nil)

type rig struct {
	dev *emu.Device
	clk *clock.Manual
	rec *tracetest.Recorder
	cs  *pcitest.Counting
	gw  *vsec.Gateway
}

func newRig(t *testing.T, opts vsec.Options) *rig {
	t.Helper()
	r := &rig{clk: emu.NewManualClock(time.Unix(0, 0)), rec: &tracetest.Recorder{}}
	r.dev = emu.New(emu.Config{Clock: r.clk})
	r.dev.SetTrace(r.rec.Record)
	r.cs = pcitest.NewCounting(r.dev)
	opts.Clock = r.clk
	gw, err := vsec.Open(r.cs, &opts)
	if err != nil {
		t.Fatal(err)
	}
	r.gw = gw
	r.rec.Reset()
	r.cs.Reset()
	return r
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// configWrites returns the values written to config offset off.
func (r *rig) configWrites(off int64) []uint32 {
	var v []uint32
	for _, e := range r.rec.Kinds(emu.EvConfigWrite) {
		if e.Off == off {
			v = append(v, e.Value)
		}
	}
	return v
}

func TestOpenFindsGateway(t *testing.T) {
	r := newRig(t, vsec.Options{})
	if r.gw.Offset() != emu.GatewayOffset || r.gw.DeviceID() != 0x1021 || r.gw.VendorID() != 0x15b3 || r.gw.CapType() != 0 {
		t.Errorf("offset %#x device %#x vendor %#x type %d", r.gw.Offset(), r.gw.DeviceID(), r.gw.VendorID(), r.gw.CapType())
	}
}

// fakeConfig is a plain 256-byte config space for capability-walk tests.
type fakeConfig struct {
	b     [256]byte
	reads int
}

func (f *fakeConfig) ReadAt(p []byte, off int64) (int, error) {
	f.reads++
	return copy(p, f.b[off:]), nil
}
func (f *fakeConfig) WriteAt(p []byte, off int64) (int, error) { return len(p), nil }

func newFake(vendor uint16, caps ...[2]byte) *fakeConfig {
	f := &fakeConfig{}
	binary.LittleEndian.PutUint16(f.b[0:], vendor)
	binary.LittleEndian.PutUint16(f.b[2:], 0x1021)
	if len(caps) > 0 {
		f.b[0x34] = caps[0][0]
	}
	for i, c := range caps { // c = {at, id}; each points to the next
		next := byte(0)
		if i+1 < len(caps) {
			next = caps[i+1][0]
		}
		f.b[c[0]], f.b[c[0]+1] = c[1], next
	}
	return f
}

func TestOpenErrors(t *testing.T) {
	if _, err := vsec.Open(newFake(0x8086, [2]byte{0x40, 9}), nil); !errors.Is(err, vsec.ErrNotMellanox) {
		t.Errorf("Intel device: %v, want ErrNotMellanox", err)
	}
	if _, err := vsec.Open(newFake(0x15b3, [2]byte{0x40, 1}, [2]byte{0x50, 0x10}), nil); !errors.Is(err, vsec.ErrNoCapability) {
		t.Errorf("no cap 9: %v, want ErrNoCapability", err)
	}
	loop := newFake(0x15b3, [2]byte{0x40, 1}, [2]byte{0x50, 0x10})
	loop.b[0x51] = 0x40 // 0x50 points back to 0x40
	if _, err := vsec.Open(loop, nil); !errors.Is(err, vsec.ErrNoCapability) || loop.reads > 3 {
		t.Errorf("looping list: %v after %d reads, want ErrNoCapability after 3", err, loop.reads)
	}
	low := newFake(0x15b3, [2]byte{0x10, 9}) // pointer into the header: invalid
	if _, err := vsec.Open(low, nil); !errors.Is(err, vsec.ErrNoCapability) {
		t.Errorf("pointer below 0x40: %v", err)
	}
	var gone fakeConfig
	for i := range gone.b {
		gone.b[i] = 0xFF
	}
	if _, err := vsec.Open(&gone, nil); !errors.Is(err, vsec.ErrDeviceGone) {
		t.Errorf("all-ones device: %v, want ErrDeviceGone", err)
	}
}

// One session takes the semaphore once, however many dwords it moves, and
// releases it; no transaction runs without it.
func TestSessionHoldsSemaphoreOnce(t *testing.T) {
	r := newRig(t, vsec.Options{})
	ctx := ctxT(t)
	src := []uint32{1, 2, 3, 4, 5, 6, 7, 8}
	dst := make([]uint32, len(src))
	err := r.gw.Do(ctx, func(s *vsec.Session) error {
		if err := s.WriteBlock(ctx, vsec.SpaceCR, 0x2000, src); err != nil {
			return err
		}
		if err := s.ReadBlock(ctx, vsec.SpaceCR, 0x2000, dst); err != nil {
			return err
		}
		_, err := s.Read32(ctx, vsec.SpaceSemaphore, 0x10)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range src {
		if dst[i] != src[i] {
			t.Fatalf("read back %v, want %v", dst, src)
		}
	}
	ev := r.rec.Events()
	var kinds []emu.EventKind
	for _, e := range ev {
		if e.Kind == emu.EvSemTaken || e.Kind == emu.EvSemReleased {
			kinds = append(kinds, e.Kind)
		}
	}
	if len(kinds) != 2 || kinds[0] != emu.EvSemTaken || kinds[1] != emu.EvSemReleased {
		t.Fatalf("semaphore events %v, want one take and one release", kinds)
	}
	if r.rec.Count(emu.EvUnlocked) != 0 {
		t.Error("a transaction ran without the semaphore")
	}
	if n := r.rec.Count(emu.EvRead) + r.rec.Count(emu.EvWrite); n != 17 {
		t.Errorf("%d transactions, want 17", n)
	}
	// Space switches only when the space changes: CR once, semaphore once.
	if sel := r.rec.Kinds(emu.EvSpaceSelect); len(sel) != 2 || sel[0].Space != 2 || sel[1].Space != 0xA {
		t.Errorf("space selections %v, want CR then SEMAPHORE", sel)
	}
	if s := r.dev.State(); s.GatewaySemaphore != 0 {
		t.Errorf("semaphore left held: %+v", s)
	}
}

// Reads write ADDRESS with FLAG clear and wait for it to be set; writes load
// DATA first, then write ADDRESS with FLAG set and wait for it to clear.
func TestFlagPolarity(t *testing.T) {
	r := newRig(t, vsec.Options{})
	ctx := ctxT(t)
	if err := r.gw.Write32(ctx, vsec.SpaceCR, 0x3000, 0xDEADBEEF); err != nil {
		t.Fatal(err)
	}
	v, err := r.gw.Read32(ctx, vsec.SpaceCR, 0x3000)
	if err != nil || v != 0xDEADBEEF {
		t.Fatalf("read %#x, %v", v, err)
	}
	addrOff, dataOff := int64(emu.GatewayOffset+0x10), int64(emu.GatewayOffset+0x14)
	var seq []string
	for _, e := range r.rec.Kinds(emu.EvConfigWrite) {
		switch e.Off {
		case dataOff:
			seq = append(seq, "data")
		case addrOff:
			if e.Value == 0x3000|1<<31 {
				seq = append(seq, "addr+flag")
			} else if e.Value == 0x3000 {
				seq = append(seq, "addr")
			}
		}
	}
	if len(seq) != 3 || seq[0] != "data" || seq[1] != "addr+flag" || seq[2] != "addr" {
		t.Errorf("gateway writes %v, want [data addr+flag addr]", seq)
	}
}

// hideFlag wraps a device so ADDRESS never shows FLAG: reads never complete.
type hideFlag struct{ pci.ConfigSpace }

func (h hideFlag) ReadAt(p []byte, off int64) (int, error) {
	n, err := h.ConfigSpace.ReadAt(p, off)
	if flagByte := int64(emu.GatewayOffset + 0x13); off <= flagByte && flagByte < off+int64(n) {
		p[flagByte-off] &^= 0x80
	}
	return n, err
}

func TestPollLimit(t *testing.T) {
	clk := emu.NewManualClock(time.Unix(0, 0))
	dev := emu.New(emu.Config{Clock: clk})
	cs := pcitest.NewCounting(hideFlag{dev})
	gw, err := vsec.Open(cs, &vsec.Options{Clock: clk, PollLimit: 64})
	if err != nil {
		t.Fatal(err)
	}
	cs.Reset()
	_, err = gw.Read32(ctxT(t), vsec.SpaceCR, 0xF0014)
	if !errors.Is(err, vsec.ErrTimeout) {
		t.Fatalf("err %v, want ErrTimeout", err)
	}
	// 3 semaphore + 3 space select + 64 polls = 70 reads+writes before the release write.
	if c := cs.Counts(); c.Reads > 3+64+2 {
		t.Errorf("%v: polling was not bounded by PollLimit", c)
	}
	if dev.State().GatewaySemaphore != 0 {
		t.Error("semaphore left held after a timeout")
	}
}

// CTRL is written read-modify-write: [31:16] as last read, [15:0] the space.
// Status bits are checked, and an unsupported space is a typed error that
// leaves the session usable.
func TestSpaceSelection(t *testing.T) {
	r := newRig(t, vsec.Options{})
	ctx := ctxT(t)
	err := r.gw.Do(ctx, func(s *vsec.Session) error {
		if _, err := s.Read32(ctx, vsec.SpaceCR, 0); err != nil {
			return err
		}
		if _, err := s.Read32(ctx, vsec.SpaceICMD, 0x1000); err != nil {
			return err
		}
		_, err := s.Read32(ctx, vsec.SpaceScanCR, 0)
		if !errors.Is(err, vsec.ErrSpaceNotSupported) {
			t.Errorf("space 7: %v, want ErrSpaceNotSupported", err)
		}
		v, err := s.Read32(ctx, vsec.SpaceCR, 0xF0014)
		if err != nil || v != 0x218 {
			t.Errorf("CR read after a failed selection: %#x, %v", v, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctrl := r.configWrites(emu.GatewayOffset + 4)
	want := []uint32{0x00000002, 0x20000003, 0x20000007, 0x00000002}
	if len(ctrl) != len(want) {
		t.Fatalf("CTRL writes %#x, want %#x", ctrl, want)
	}
	for i := range want {
		if ctrl[i] != want[i] {
			t.Fatalf("CTRL writes %#x, want %#x (status bits written back as read)", ctrl, want)
		}
	}
}

func TestSyndrome(t *testing.T) {
	r := newRig(t, vsec.Options{})
	ctx := ctxT(t)
	_, err := r.gw.Read32(ctx, vsec.SpaceCR, 0x1000000)
	var ve *vsec.Error
	if !errors.As(err, &ve) || !errors.Is(err, vsec.ErrSyndrome) || ve.Value != vsec.SyndromeAddressOutOfRange || ve.Addr != 0x1000000 {
		t.Fatalf("err %v, want a syndrome error with code 3 at 0x1000000", err)
	}
	if err := r.gw.Write32(ctx, vsec.SpaceSemaphore, 0x100, 1); !errors.Is(err, vsec.ErrSyndrome) {
		t.Errorf("write out of range: %v", err)
	}
	if v, err := r.gw.Read32(ctx, vsec.SpaceCR, 0xF0014); err != nil || v != 0x218 {
		t.Errorf("after syndrome: %#x, %v", v, err)
	}
	if _, err := r.gw.Read32(ctx, vsec.SpaceCR, 0x1002); !errors.Is(err, vsec.ErrBadAddress) {
		t.Errorf("unaligned: %v, want ErrBadAddress", err)
	}
}

func TestSemaphoreHeldByAnotherAgent(t *testing.T) {
	r := newRig(t, vsec.Options{})
	ctx := ctxT(t)
	r.dev.SetFaults(emu.Faults{GatewaySemaphoreHeld: true})
	start := r.clk.Now()
	_, err := r.gw.Acquire(ctx)
	var ve *vsec.Error
	if !errors.Is(err, vsec.ErrSemaphoreBusy) || !errors.As(err, &ve) || ve.Value != emu.ForeignHolder {
		t.Fatalf("err %v, want ErrSemaphoreBusy naming the holder", err)
	}
	if waited := r.clk.Now().Sub(start); waited < 9*time.Second {
		t.Errorf("gave up after %v, want the whole 10 s deadline", waited)
	}
	if ctx.Err() != nil {
		t.Error("the error came only after the context deadline")
	}
	r.dev.ClearFaults()
	if _, err := r.gw.Read32(ctx, vsec.SpaceCR, 0xF0014); err != nil {
		t.Errorf("after clearing: %v", err)
	}
}

func TestSemaphoreWaitEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := emu.NewManualClock(time.Unix(0, 0))
	clk.OnSleep(5, cancel)
	dev := emu.New(emu.Config{Clock: clk})
	gw, err := vsec.Open(dev, &vsec.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	dev.SetFaults(emu.Faults{GatewaySemaphoreHeld: true})
	_, err = gw.Acquire(ctx)
	if !errors.Is(err, vsec.ErrSemaphoreBusy) || !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want ErrSemaphoreBusy wrapping context.Canceled", err)
	}
}

func TestSurpriseRemoval(t *testing.T) {
	r := newRig(t, vsec.Options{})
	ctx := ctxT(t)
	r.dev.SetFaults(emu.Faults{Removed: true})
	if _, err := r.gw.Read32(ctx, vsec.SpaceCR, 0xF0014); !errors.Is(err, vsec.ErrDeviceGone) {
		t.Fatalf("err %v, want ErrDeviceGone", err)
	}
	r.dev.ClearFaults()
	// Removed in the middle of a session.
	err := r.gw.Do(ctx, func(s *vsec.Session) error {
		if _, err := s.Read32(ctx, vsec.SpaceCR, 0xF0014); err != nil {
			return err
		}
		r.dev.SetFaults(emu.Faults{Removed: true})
		_, err := s.Read32(ctx, vsec.SpaceCR, 0xF0014)
		return err
	})
	if !errors.Is(err, vsec.ErrDeviceGone) {
		t.Fatalf("mid-session: %v, want ErrDeviceGone", err)
	}
	r.dev.ClearFaults()
	if v, err := r.gw.Read32(ctx, vsec.SpaceCR, 0xF0014); err != nil || v != 0x218 {
		t.Errorf("after re-plug: %#x, %v", v, err)
	}
}

// Paired reads save one config read per dword and return the same values.
func TestPairedReads(t *testing.T) {
	ctx := ctxT(t)
	counts := map[bool]pcitest.Counts{}
	for _, single := range []bool{false, true} {
		r := newRig(t, vsec.Options{SingleDwordReads: single})
		dst := make([]uint32, 16)
		if err := r.gw.Do(ctx, func(s *vsec.Session) error {
			if err := s.WriteBlock(ctx, vsec.SpaceCR, 0x100, []uint32{7, 8, 9}); err != nil {
				return err
			}
			return s.ReadBlock(ctx, vsec.SpaceCR, 0x100, dst)
		}); err != nil {
			t.Fatal(err)
		}
		if dst[0] != 7 || dst[2] != 9 || dst[3] != 0 {
			t.Errorf("single=%v: read %v", single, dst)
		}
		counts[single] = r.cs.Counts()
	}
	if counts[true].Reads-counts[false].Reads != 16 || counts[true].Writes != counts[false].Writes {
		t.Errorf("paired %v vs single %v: want exactly 16 fewer reads", counts[false], counts[true])
	}
}

// Goroutines with their own Gateway stand for separate processes: the
// device semaphore must keep their read-modify-write sequences apart.
func TestConcurrentGateways(t *testing.T) {
	clk := emu.NewManualClock(time.Unix(0, 0))
	dev := emu.New(emu.Config{Clock: clk})
	rec := &tracetest.Recorder{}
	dev.SetTrace(func(e emu.Event) {
		if e.Kind == emu.EvUnlocked {
			rec.Record(e)
		}
	})
	// A long deadline: with virtual clocks, a waiter's backoff sleeps
	// advance its clock at once, so a short budget would depend on
	// goroutine scheduling.
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	const workers, rounds = 6, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers*2)
	for w := 0; w < workers; w++ {
		gw, err := vsec.Open(dev, &vsec.Options{Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		for g := 0; g < 2; g++ { // two goroutines per "process" share a Gateway
			wg.Add(1)
			go func() {
				defer wg.Done()
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
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := dev.CR(0x5000); got != workers*2*rounds {
		t.Errorf("counter %d, want %d: increments were lost", got, workers*2*rounds)
	}
	if s := dev.State(); s.GatewaySemaphore != 0 || rec.Count(emu.EvUnlocked) != 0 {
		t.Errorf("state %+v, %d unlocked transactions", s, rec.Count(emu.EvUnlocked))
	}
}

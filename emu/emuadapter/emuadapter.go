// Package emuadapter opens the built-in emulator's functions as adapters:
// the register path over the emulated config space (the same code as
// hardware), with the emulator's OS view (the scenario's interfaces and
// MACs, its RDMA counter model) and its clock injected, so the adapter
// layer and the features above it never import the emulator. The command
// layer and tests use it; it implements adapter.Emulator.
package emuadapter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cxray/cxray/access/fwctl"
	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/emu/cmdif"
	"github.com/cxray/cxray/emu/nvstore"
	"github.com/cxray/cxray/emu/rdma"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/emu/state"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/cmdb"
)

// EnvState names the directory the emulator keeps its devices' state in
// between commands (emu/state: default $XDG_STATE_HOME/cxray/emu); "off"
// keeps none, so every command gets a freshly powered-on emulator.
const EnvState = state.EnvDir

// Emulator opens emulated functions. The zero value is ready: it keeps
// each profile's or scenario file's state between commands (OpenState).
type Emulator struct {
	// Stack tunes the gateway path (tests shorten waits).
	Stack dev.StackOptions
	// Build tunes scenario building. A Build.Clock (a test's manual
	// clock) owns time, so it gets a freshly powered-on emulator that
	// keeps no state.
	Build scenario.Options
	// Fresh keeps no state: every open powers on a new emulator.
	Fresh bool
	// Loaded, when set, sees every emulation opened (tests drive its
	// clock and faults).
	Loaded func(*scenario.Emulation)
}

// KeepsState says whether emulator names keep their state here (not when
// EnvState is "off").
func KeepsState() bool {
	d, err := state.Dir()
	return d != "" || err != nil
}

// OpenState opens the kept state of an emulator name (emu, emu:PROFILE,
// emu:FILE.yaml): the one `-d emu`, `emu run` and `emu serve` share for
// the same profile or scenario file. Close it when done.
func OpenState(name string, b scenario.Options) (*state.State, error) {
	return state.Open(name, state.Options{DB: b.DB, Strict: b.Strict})
}

// SplitName separates "emu:lab.yaml@0000:03:00.1" into the scenario name
// and the function it picks ("" for the first).
func SplitName(n devname.Name) (string, string) {
	name := "emu"
	if n.Emu != "" {
		name = "emu:" + n.Emu
	}
	if i := strings.LastIndexByte(name, '@'); i > 0 {
		return name[:i], name[i+1:]
	}
	return name, ""
}

// OpenEmulated implements adapter.Emulator.
func (e *Emulator) OpenEmulated(ctx context.Context, n devname.Name, all bool, o adapter.Options) ([]*adapter.Adapter, error) {
	name, pick := SplitName(n)
	if all && pick != "" {
		return nil, &adapter.UsageError{Err: fmt.Errorf("-d %s names one function; leave out --all, or the @%s", n.Given, pick)}
	}
	// The emulated firmware answers from its own register database (the
	// built-in one), whatever database the user decodes with: a real
	// adapter does not change with --adb either.
	var (
		em   *scenario.Emulation
		st   *state.State
		err  error
		save func() error
	)
	if e.Fresh || e.Build.Clock != nil || !KeepsState() {
		em, err = scenario.Resolve(name, e.Build)
	} else if st, err = OpenState(name, e.Build); err == nil {
		em = st.Emulation()
		save = func() error {
			err := st.Close()
			if serr := st.Err(); serr != nil {
				return serr
			}
			return err
		}
	}
	if err != nil {
		var se *state.Error
		if errors.As(err, &se) {
			return nil, err // the kept state, not the name: a device error
		}
		return nil, &adapter.UsageError{Err: err}
	}
	if err := installNV(em); err != nil {
		if st != nil {
			st.Close()
		}
		return nil, &adapter.UsageError{Err: err}
	}
	if e.Loaded != nil {
		e.Loaded(em)
	}
	funcs := em.Functions()
	switch {
	case pick != "":
		f, err := em.Function(pick)
		if err != nil {
			return nil, &adapter.NotFoundError{Err: err}
		}
		funcs = []*scenario.Function{f}
	case !all:
		funcs = funcs[:1]
	}
	label := name
	if !all {
		label = n.Given
	}
	var do func(func() error) error
	if st != nil {
		do = st.Do
	}
	return e.open(ctx, em, do, funcs, label, all, save, o)
}

// Open opens functions of an already built emulation as adapters. name
// labels them ("emu:lab.yaml"); with several (or all) each label gets
// "@BDF". save, when set, runs when the last of them closes.
func (e *Emulator) Open(ctx context.Context, em *scenario.Emulation, funcs []*scenario.Function, name string, all bool, save func() error, o adapter.Options) ([]*adapter.Adapter, error) {
	return e.open(ctx, em, nil, funcs, name, all, save, o)
}

// OpenKept opens functions of a kept state as adapters, like Open; their
// OS view reads the device up to date (state.State.Do). The caller closes
// the state.
func (e *Emulator) OpenKept(ctx context.Context, st *state.State, funcs []*scenario.Function, name string, all bool, o adapter.Options) ([]*adapter.Adapter, error) {
	return e.open(ctx, st.Emulation(), st.Do, funcs, name, all, nil, o)
}

func (e *Emulator) open(ctx context.Context, em *scenario.Emulation, do func(func() error) error, funcs []*scenario.Function, name string, all bool, save func() error, o adapter.Options) ([]*adapter.Adapter, error) {
	// Waits for held semaphores last as long as the caller's deadline, as
	// on hardware (dev.StackOptions.SemaphoreTimeout).
	stack := e.Stack
	stack.ReadOnly = o.ReadOnly
	if do == nil {
		do = func(fn func() error) error { return fn() }
	}
	// On a manual clock the client waits on the same clock as the device,
	// so its polls move emulated time and slow-firmware faults end.
	if em.Manual != nil && stack.Clock == nil {
		stack.Clock = em.Manual
	}
	models := newRDMAModels(em)
	clk := emuClock(em)
	var out []*adapter.Adapter
	for i, f := range funcs {
		f := f
		label := name
		if len(funcs) > 1 || all {
			label = name + "@" + f.BDF
		}
		cmds := &commands{em: em, f: f, models: models, do: do}
		var fellBack error // the gateway refusal auto fell back on
		openFwctl := func() (*dev.Device, error) {
			c, err := cmds.client(clk)
			if err != nil {
				return nil, err
			}
			var acc dev.Accessor = fwctl.NewRegisters(c)
			if o.ReadOnly {
				acc = dev.ReadOnly(acc)
			}
			d := dev.New(label, f.BDF, dev.BackendFwctl, o.DB, acc, nil)
			d.AttachCommander(c)
			return d, nil
		}
		open := func(ctx context.Context) (*dev.Device, error) {
			if o.Via == adapter.ViaFwctl {
				return openFwctl()
			}
			// f.Config refuses writes on a lockdown: true device, as a
			// locked-down kernel refuses them.
			d, _, err := dev.OpenConfigSpace(ctx, label, f.BDF, dev.BackendEmulator, o.DB, f.Config, stack)
			if err != nil {
				if (o.Via == "" || o.Via == adapter.ViaAuto) && adapter.GatewayRefused(err) {
					fellBack = err
					return openFwctl()
				}
				if o.Via == adapter.ViaVSEC && adapter.GatewayRefused(err) {
					return nil, &adapter.RefusedError{Err: err}
				}
				return nil, err
			}
			// Commands go through the function's command interface (fwctl
			// on a host), beside the gateway.
			if c, err := cmds.client(clk); err == nil {
				d.AttachCommander(c)
			}
			return d, nil
		}
		// A function whose gateway is held (or gone) at open is still
		// opened, as on every backend (adapter.TryOpen): its register
		// path opens on first use.
		d, err := adapter.TryOpen(ctx, open)
		if err != nil {
			if ctx.Err() != nil {
				adapter.CloseAll(out)
				return nil, err
			}
			d = nil
		}
		c := adapter.Config{Name: label, BDF: f.BDF, Backend: dev.BackendEmulator, DB: o.DB, Registers: d, Reopen: open,
			OSView: &osView{f: f, models: models, do: do}, Clock: clk, PCIe: pcieHost{f: f, do: do}}
		if fellBack != nil {
			c.Notes = append(c.Notes, adapter.LockdownNote(fellBack))
		}
		// The last adapter to close saves the NV state of the emulation.
		if i == len(funcs)-1 && save != nil {
			c.Close = save
		}
		out = append(out, adapter.New(c))
	}
	return out, nil
}

// emuClock is the emulation's clock as adapters use it: the manual clock
// itself (sleeping advances it), or the scenario's offset clock with real
// waits.
func emuClock(em *scenario.Emulation) clock.Clock {
	if em.Manual != nil {
		return em.Manual
	}
	return nowClock{em.Clock.Now}
}

type nowClock struct{ now func() time.Time }

func (c nowClock) Now() time.Time { return c.now() }
func (c nowClock) Sleep(ctx context.Context, d time.Duration) error {
	return clock.Real{}.Sleep(ctx, d)
}

// osView is what a host's kernel would show for an emulated function.
// Its reads run through do, so a kept device is read up to date.
type osView struct {
	f      *scenario.Function
	models *rdmaModels
	do     func(func() error) error
}

func (v *osView) OS(ctx context.Context) (*adapter.OS, error) {
	o := &adapter.OS{NUMANode: NUMANode(v.f, 0), Driver: "mlx5_core", Netdevs: []adapter.Netdev{}, RDMA: []string{}}
	if v.f.RDMA != "" {
		o.RDMA = append(o.RDMA, v.f.RDMA)
	}
	if v.f.Netdev != "" {
		nd := adapter.Netdev{Name: v.f.Netdev, Address: OSMAC(v.f), PermanentAddress: PermanentMAC(v.f), OperState: "down"}
		if InfiniBand(v.f) {
			nd.PermanentAddress = "" // IPoIB has no burnt-in address
		}
		err := v.do(func() error {
			if OperUp(v.f) {
				nd.OperState = "up"
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		o.Netdevs = append(o.Netdevs, nd)
	}
	return o, nil
}

// OperUp says whether a function's own port (its local port 1) has link.
func OperUp(f *scenario.Function) bool {
	ps := f.Adapter.Firmware.Ports()
	own := f.View.Ports()
	return len(own) > 0 && own[0] >= 1 && own[0] <= len(ps) && ps[own[0]-1].OperUp
}

func (v *osView) RDMACounters(ctx context.Context, port int) (map[string]uint64, error) {
	if v.f.RDMA == "" {
		return nil, &adapter.UnsupportedError{What: "RDMA hw_counters", Backend: dev.BackendEmulator, Why: "the scenario gives this function no RDMA device"}
	}
	var out map[string]uint64
	err := v.do(func() error {
		var err error
		out, err = v.models.counters(v.f, port)
		return err
	})
	return out, err
}

// RDMAObjects lists the emulated driver's QPs and memory keys (cmdif's
// objects), as a host kernel lists them; a function without an RDMA device
// has none. It implements adapter.ObjectLister.
func (v *osView) RDMAObjects(ctx context.Context, kind kernel.ResKind) ([]uint32, error) {
	if v.f.RDMA == "" {
		return nil, nil
	}
	switch kind {
	case kernel.ResQP:
		return cmdif.QPNs(), nil
	case kernel.ResMR:
		return cmdif.MKeys(), nil
	}
	return nil, &adapter.UnsupportedError{What: "listing " + kind.String() + "s", Backend: dev.BackendEmulator, Why: "the emulated driver has QPs and memory keys only"}
}

// PermanentMAC is the function's burnt-in MAC: the adapter's base MAC
// plus the function number, as the driver assigns.
func PermanentMAC(f *scenario.Function) string {
	base := f.Adapter.Spec.Spec.BaseMAC
	if base == 0 {
		return ""
	}
	return prm.FormatMAC(base + uint64(dev.PCIFunction(f.BDF)))
}

// OSMAC is the address the emulated interface uses: the scenario's
// override, or the permanent one.
func OSMAC(f *scenario.Function) string {
	if InfiniBand(f) {
		return IPoIBAddress(f)
	}
	if f.MAC != 0 {
		return prm.FormatMAC(f.MAC)
	}
	return PermanentMAC(f)
}

// rdmaModels builds the RDMA counter model of each adapter of an
// emulation, on the path its scenario gives (emu/rdma).
type rdmaModels struct {
	e *scenario.Emulation
	m map[*scenario.Adapter]*rdma.Model
}

func newRDMAModels(e *scenario.Emulation) *rdmaModels {
	return &rdmaModels{e: e, m: map[*scenario.Adapter]*rdma.Model{}}
}

func rdmaConfig(s scenario.RDMASpec) rdma.Config {
	return rdma.Config{Loss: s.Loss, RTT: s.RTT, LogWindow: s.LogWindow, Share: s.Share, Priority: s.Priority}
}

func (r *rdmaModels) model(a *scenario.Adapter) (*rdma.Model, error) {
	if m := r.m[a]; m != nil {
		return m, nil
	}
	var cfg rdma.Config
	if a.Spec != nil {
		cfg = rdmaConfig(a.Spec.RDMA)
	}
	m, err := rdma.New(a, r.e.Clock, cfg)
	if err != nil {
		return nil, err
	}
	if a.Spec != nil {
		for port, ps := range a.Spec.PortRDMA {
			c := rdmaConfig(ps)
			if c.LogWindow == 0 {
				c.LogWindow = cfg.LogWindow
			}
			if err := m.SetPortConfig(port, c); err != nil {
				return nil, err
			}
		}
	}
	r.m[a] = m
	return m, nil
}

// counters reads a function's local port through its adapter's model.
func (r *rdmaModels) counters(f *scenario.Function, port int) (map[string]uint64, error) {
	m, err := r.model(f.Adapter)
	if err != nil {
		return nil, err
	}
	ports := f.View.Ports()
	if port < 1 || port > len(ports) {
		return nil, fmt.Errorf("no local port %d on %s", port, f.BDF)
	}
	return m.Counters(ports[port-1], r.e.Clock.Now())
}

// installNV gives every adapter of the emulation its NV store (profile
// defaults; idempotent where the scenario installed one).
func installNV(e *scenario.Emulation) error {
	for _, ad := range e.Adapters {
		if _, err := nvstore.InstallProfile(ad.Firmware, ad.Profile); err != nil {
			return fmt.Errorf("emulated adapter %s: %w", ad.Name, err)
		}
	}
	return nil
}

// commands is an emulated function's command interface, built on first
// use and kept, so its objects and cleared counters last as long as the
// adapter.
type commands struct {
	em     *scenario.Emulation
	f      *scenario.Function
	models *rdmaModels
	do     func(func() error) error

	mu sync.Mutex
	c  *fwctl.Client
}

func (c *commands) client(clk clock.Clock) (*fwctl.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c != nil {
		return c.c, nil
	}
	var ep *cmdif.Endpoint
	err := c.do(func() error {
		m, err := c.models.model(c.f.Adapter)
		if err != nil {
			return err
		}
		ep, err = cmdif.New(c.em, c.f, cmdif.Options{RDMA: m})
		return err
	})
	if err != nil {
		return nil, err
	}
	cl, err := fwctl.NewClient(lockedRPC{ep: ep, do: c.do}, fwctl.Options{Clock: clk})
	if err != nil {
		return nil, err
	}
	c.c = cl
	return cl, nil
}

// lockedRPC runs commands with a kept state locked and up to date, except
// ACCESS_REG, whose register access locks the state itself (state.Do).
type lockedRPC struct {
	ep *cmdif.Endpoint
	do func(func() error) error
}

func (r lockedRPC) RPC(ctx context.Context, scope cmdb.Scope, in []byte, outLen int) ([]byte, error) {
	if len(in) >= cmdb.HeaderBytes && cmdb.Opcode(in) == fwctl.OpAccessReg {
		return r.ep.RPC(ctx, scope, in, outLen)
	}
	var out []byte
	err := r.do(func() error {
		var err error
		out, err = r.ep.RPC(ctx, scope, in, outLen)
		return err
	})
	return out, err
}

package adapter

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/optics"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/regpath"
)

// ErrUnsupported is errors.ErrUnsupported, which the error of a method the
// backend cannot answer matches; commands show "not available on this
// backend".
//
// Deprecated: match errors.ErrUnsupported, the one name of the kind (kept
// for callers written against this alias).
var ErrUnsupported = errors.ErrUnsupported

// UnsupportedError says what a backend cannot answer, and why.
type UnsupportedError struct {
	What    string // "register access", "module EEPROM"
	Backend dev.Backend
	Why     string
}

func (e *UnsupportedError) Error() string {
	s := fmt.Sprintf("%s is not available on the %s backend", e.What, e.Backend)
	if e.Why != "" {
		s += ": " + e.Why
	}
	return s
}

// Is makes errors.Is(err, errors.ErrUnsupported) true.
func (e *UnsupportedError) Is(target error) bool { return target == errors.ErrUnsupported }

// PartialError is a part of an answer the backend could not give, while
// the rest is good: worth a note, not a failure.
type PartialError struct {
	What string
	Err  error
}

func (e *PartialError) Error() string { return fmt.Sprintf("%s is unknown: %v", e.What, e.Err) }
func (e *PartialError) Unwrap() error { return e.Err }

// IsPartial says err only notes parts that could not be read.
func IsPartial(err error) bool {
	var pe *PartialError
	return err != nil && errors.As(err, &pe)
}

// OSView is the operating system's side of a function: its interfaces
// and the RDMA device's counters. The kernel backend provides one for
// functions of this machine; the command layer injects the emulator's.
type OSView interface {
	OS(ctx context.Context) (*OS, error)
	// RDMACounters reads the RDMA hw_counters of the function's port
	// (its own numbering, from 1).
	RDMACounters(ctx context.Context, port int) (map[string]uint64, error)
}

// Config builds an Adapter. Exactly one of Registers and Kernel-only
// reading applies: with Registers the adapter reads the PRM registers and
// takes only the OS view from Kernel (or OSView); without, it reads
// everything the kernel offers.
type Config struct {
	// Name is what the user gave (-d); BDF the PCI address.
	Name    string
	BDF     string
	Backend dev.Backend
	DB      *prm.DB
	// Registers is the register path (nil: the kernel backend).
	Registers *dev.Device
	// Reopen, when set, opens the register path again after a transport
	// failure (a device that went away and came back is freshly reset).
	Reopen func(ctx context.Context) (*dev.Device, error)
	// Kernel is the kernel's view of the same function (nil: none).
	Kernel *kernel.Device
	// OSView replaces the kernel's OS view (the emulator's).
	OSView OSView
	// PCIe is the host's view of the PCIe link: the function's sysfs
	// (Open sets it), or the emulator's; nil: none.
	PCIe PCIeHost
	// Clock is the device's time (the emulator's manual clock); nil: the
	// wall clock.
	Clock clock.Clock
	// Notes say how the function is reached, for health's access check
	// ("kernel lockdown: using fwctl").
	Notes []string
	// Close runs on Close, after the register path is closed.
	Close func() error
}

// Adapter is one ConnectX PCI function, whatever the backend. It is safe
// for concurrent use.
type Adapter struct {
	c  Config
	os OSView

	mu   sync.Mutex
	regs *dev.Device
	// stuck: the register path did not open at the last try (TryOpen
	// gave up, a reopen failed, a transport failure dropped it), so the
	// next open is mostly a wait for a held semaphore or a device to come
	// back, which within Each gives its turn to the functions that read.
	stuck bool
	// Cached, static while the adapter is open.
	ports   []Port
	sensors []int
	part    *string
	// id is the identity, read once; mgir the MGIR reading it came from
	// (its firmware, port count and build date do not change while the
	// function is open), mgirAt when it was read on the device's clock.
	// A dropped register path forgets both: the device may come back
	// with other firmware.
	id     *Identity
	mgir   *dev.Reading
	mgirAt time.Time
	// static keeps each cage's static module pages between reads.
	static map[int]*optics.StaticPages
	// phy keeps the PDDR operational page Ports read for each port's link
	// layer, for the first reader of the page that comes while it is
	// fresh (OperationalPage).
	phy map[int]kept
}

// kept is a reading and when it was made, on the adapter's clock.
type kept struct {
	r  *dev.Reading
	at time.Time
}

// New builds an adapter from its parts.
func New(c Config) *Adapter {
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Registers != nil && c.Registers.Reference == nil {
		c.Registers.Reference = Reference()
	}
	a := &Adapter{c: c, regs: c.Registers, os: c.OSView, stuck: c.Registers == nil && c.Reopen != nil}
	if a.os == nil && c.Kernel != nil {
		a.os = kernelOS{c.Kernel}
	}
	return a
}

// Name is what the user gave to open the function.
func (a *Adapter) Name() string { return a.c.Name }

// BDF is the PCI address ("" when unknown).
func (a *Adapter) BDF() string { return a.c.BDF }

// Backend says how the function is reached.
func (a *Adapter) Backend() dev.Backend { return a.c.Backend }

// DB is the register database the adapter decodes with.
func (a *Adapter) DB() *prm.DB { return a.c.DB }

// Notes say how the function is reached beyond its backend.
func (a *Adapter) Notes() []string { return a.c.Notes }

// Clock is the device's time: the emulator's manual clock, or the wall
// clock.
func (a *Adapter) Clock() clock.Clock { return a.c.Clock }

// Sleep waits d on the device's clock (instantly on a manual one, which
// it advances). Within Each, the call gives its turn to another function
// while it waits.
func (a *Adapter) Sleep(ctx context.Context, d time.Duration) error {
	return pause(ctx, func() error { return a.c.Clock.Sleep(ctx, d) })
}

// Kernel is the kernel's view of the function, nil when there is none.
func (a *Adapter) Kernel() *kernel.Device { return a.c.Kernel }

// Registers is the register path, or an error matching errors.ErrUnsupported on
// the kernel backend.
func (a *Adapter) Registers(ctx context.Context) (*dev.Device, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.regs != nil {
		return a.regs, nil
	}
	if a.c.Reopen == nil {
		return nil, &UnsupportedError{What: "register access", Backend: a.c.Backend,
			Why: fmt.Sprintf("it reads sysfs, hwmon, devlink and ethtool netlink; use direct access (-d %s as root) for registers", a.bdfOr())}
	}
	var d *dev.Device
	var err error
	open := func() error { d, err = a.c.Reopen(ctx); return nil }
	if a.stuck {
		// A held semaphore costs this function its own deadline only;
		// the others read meanwhile (EachLimit's turns).
		if perr := pause(ctx, open); perr != nil && err == nil {
			if d != nil {
				d.Close()
			}
			return nil, perr
		}
	} else {
		open()
	}
	if err != nil {
		a.stuck = true
		return nil, err
	}
	if d.Reference == nil {
		d.Reference = Reference()
	}
	a.regs, a.stuck = d, false
	return d, nil
}

func (a *Adapter) bdfOr() string {
	if a.c.BDF != "" {
		return a.c.BDF
	}
	return "0000:03:00.0"
}

// HasRegisters says whether the backend reads registers.
func (a *Adapter) HasRegisters() bool { return a.c.Registers != nil || a.c.Reopen != nil }

// drop forgets the register path after err, unless err is the firmware's
// own answer: the transport may be mid-transaction or the device gone, and
// the next read reopens it (when the adapter can).
func (a *Adapter) drop(err error) error {
	if err == nil || a.c.Reopen == nil {
		return err
	}
	if _, ok := dev.StatusOf(err); ok {
		return err
	}
	var fe *prm.FieldError
	if errors.As(err, &fe) {
		return err
	}
	a.mu.Lock()
	a.id, a.mgir, a.phy = nil, nil, nil
	if a.regs != nil {
		// Whoever still holds this path (an NV session) gets err as the
		// cause of its next failure, not a closed client (issue 26.10).
		a.regs.CloseAfter(err)
		a.regs = nil
	}
	a.stuck = true
	a.mu.Unlock()
	return err
}

// Close releases the register path and whatever the backend holds.
func (a *Adapter) Close() error {
	a.mu.Lock()
	d := a.regs
	a.regs = nil
	a.mu.Unlock()
	var errs []error
	if d != nil {
		errs = append(errs, d.Close())
	}
	if a.c.Close != nil {
		errs = append(errs, a.c.Close())
	}
	return errors.Join(errs...)
}

// OS is the operating system's view of the function.
func (a *Adapter) OS(ctx context.Context) (*OS, error) {
	if a.os == nil {
		return nil, &UnsupportedError{What: "the operating system's view", Backend: a.c.Backend, Why: "no kernel driver view of this function"}
	}
	return a.os.OS(ctx)
}

// Identity reads what identifies the function and its firmware. Read
// once (as Ports is): every later call returns a copy of the first
// answer.
func (a *Adapter) Identity(ctx context.Context) (*Identity, error) {
	a.mu.Lock()
	id := a.id
	a.mu.Unlock()
	if id != nil {
		c := *id
		return &c, nil
	}
	var err error
	if !a.HasRegisters() {
		id, err = a.kernelIdentity(ctx)
	} else {
		id, err = a.registerIdentity(ctx)
	}
	if err != nil {
		// Not kept: a partial answer (no devlink) is given with its
		// note each time.
		return id, err
	}
	a.mu.Lock()
	a.id = id
	a.mu.Unlock()
	c := *id
	return &c, nil
}

// ReadIdentity reads the identity afresh and keeps it for Identity: for
// a reader that outlives firmware changes (the exporter, whose adapters
// stay open while new firmware is burnt and activated).
func (a *Adapter) ReadIdentity(ctx context.Context) (*Identity, error) {
	a.mu.Lock()
	a.id, a.mgir = nil, nil
	a.mu.Unlock()
	return a.Identity(ctx)
}

// Ports lists the ports this function owns, with their modules: the one
// topology every feature uses. Read once; it does not change while the
// function is open.
func (a *Adapter) Ports(ctx context.Context) ([]Port, error) {
	a.mu.Lock()
	ps := a.ports
	a.mu.Unlock()
	if ps != nil {
		return ps, nil
	}
	var err error
	if a.HasRegisters() {
		ps, err = a.registerPorts(ctx)
	} else {
		ps, err = a.kernelPorts(ctx)
	}
	if err != nil {
		return nil, err
	}
	a.nameNetdevs(ctx, ps)
	a.mu.Lock()
	a.ports = ps
	a.mu.Unlock()
	return ps, nil
}

// Port returns one owned port by its local number, or an error that says
// which ports the function has.
func (a *Adapter) Port(ctx context.Context, local int) (Port, error) {
	ps, err := a.Ports(ctx)
	if err != nil {
		return Port{}, err
	}
	for _, p := range ps {
		if p.Local == local {
			return p, nil
		}
	}
	return Port{}, &NoPortError{Port: local, Have: ps}
}

// NoPortError is a port the function does not own.
type NoPortError struct {
	Port int
	Have []Port
}

func (e *NoPortError) Error() string {
	have := make([]string, len(e.Have))
	for i, p := range e.Have {
		have[i] = fmt.Sprint(p.Local)
		if p.Netdev != "" {
			have[i] += " (" + p.Netdev + ")"
		}
	}
	return fmt.Sprintf("this function has no local port %d (it owns port %s; one port per PCI function is the usual wiring, the other ports are other functions')",
		e.Port, joinOr(have))
}

// Is makes a port the function does not have an input error (prm.ErrInput).
func (e *NoPortError) Is(target error) bool { return target == prm.ErrInput }

func joinOr(xs []string) string {
	switch len(xs) {
	case 0:
		return "none"
	case 1:
		return xs[0]
	}
	return fmt.Sprintf("%s and %s", joinComma(xs[:len(xs)-1]), xs[len(xs)-1])
}

func joinComma(xs []string) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		s += x
	}
	return s
}

// nameNetdevs gives each port its interface: the kernel's mapping when it
// has one, else, for a function with one port, its one uplink interface.
func (a *Adapter) nameNetdevs(ctx context.Context, ps []Port) {
	if a.os == nil {
		return
	}
	os, err := a.os.OS(ctx)
	if err != nil {
		return
	}
	var up []string
	for _, n := range os.Netdevs {
		if !n.Representor {
			up = append(up, n.Name)
		}
	}
	if len(ps) == 1 && len(up) >= 1 && ps[0].Netdev == "" {
		ps[0].Netdev = up[0]
		return
	}
	// Several ports: the interfaces in order, when there are as many.
	if len(up) == len(ps) {
		sort.Strings(up)
		for i := range ps {
			if ps[i].Netdev == "" {
				ps[i].Netdev = up[i]
			}
		}
	}
}

// Links reads the link state of every owned port.
func (a *Adapter) Links(ctx context.Context) ([]Link, error) {
	ls, _, err := a.LinkReadings(ctx)
	return ls, err
}

// LinkReadings is Links with the PAOS and PTYS readings it decoded, by
// local port (none on the kernel backend), for features that decode more
// of them (feature/link) without reading them again.
func (a *Adapter) LinkReadings(ctx context.Context) ([]Link, map[int]*LinkRegisters, error) {
	ps, err := a.Ports(ctx)
	if err != nil {
		return nil, nil, err
	}
	regs := map[int]*LinkRegisters{}
	if !a.HasRegisters() {
		ls, err := a.kernelLinks(ctx, ps)
		return ls, regs, err
	}
	ls, err := a.registerLinks(ctx, ps, regs)
	return ls, regs, err
}

// Temperatures reads the ASIC sensors and the sensors of the owned ports'
// modules.
func (a *Adapter) Temperatures(ctx context.Context) ([]Temperature, error) {
	if !a.HasRegisters() {
		return a.kernelTemperatures(ctx)
	}
	ps, err := a.Ports(ctx)
	if err != nil {
		return nil, err
	}
	return a.registerTemperatures(ctx, ps)
}

// Uptime is the device's own clock: the time since its firmware started
// (MGIR hw_info.uptime, in whole seconds). Checks that compare two
// readings over an interval use it to tell a device whose time stood
// still (an emulator on a manual clock) from one whose readings stopped.
// The kernel backend has no such clock (ErrUnsupported).
func (a *Adapter) Uptime(ctx context.Context) (time.Duration, error) {
	if !a.HasRegisters() {
		return 0, &UnsupportedError{What: "the firmware's uptime", Backend: a.Backend()}
	}
	r, err := a.readMGIR(ctx)
	if err != nil {
		return 0, err
	}
	v, ok := uintOf(r.Decoded, regpath.MGIRUptime)
	if !ok {
		return 0, &UnsupportedError{What: "MGIR hw_info.uptime", Backend: a.Backend(), Why: "this register database has no such field"}
	}
	return time.Duration(v) * time.Second, nil
}

// Module reads the module of an owned port.
func (a *Adapter) Module(ctx context.Context, local int, o ModuleOptions) (*ModuleReading, error) {
	p, err := a.Port(ctx, local)
	if err != nil {
		return nil, err
	}
	if !a.HasRegisters() {
		return a.kernelModule(ctx, p, o)
	}
	return a.registerModule(ctx, p, o)
}

// Modules reads the module of every owned port. A port whose module could
// not be read has its reason in the reading; only a device error (or the
// context) fails the whole call.
func (a *Adapter) Modules(ctx context.Context, o ModuleOptions) ([]*ModuleReading, error) {
	ps, err := a.Ports(ctx)
	if err != nil {
		return nil, err
	}
	var out []*ModuleReading
	for _, p := range ps {
		var m *ModuleReading
		if a.HasRegisters() {
			m, err = a.registerModule(ctx, p, o)
		} else {
			m, err = a.kernelModule(ctx, p, o)
		}
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, nil
}

// PortCounters reads every owned port's traffic and error counters: the
// PPCNT groups over registers, the IB PMA counters over the kernel.
func (a *Adapter) PortCounters(ctx context.Context) ([]CounterSet, error) {
	cs, _, err := a.PortCounterReadings(ctx)
	return cs, err
}

// CounterKey names one PPCNT reading: a local port and a counter group
// (the PRM's grp value).
type CounterKey struct {
	Port  int
	Group uint64
}

// PortCounterReadings is PortCounters with the PPCNT readings it decoded
// (none on the kernel backend), for features that decode more of them
// (feature/link) without reading them again.
func (a *Adapter) PortCounterReadings(ctx context.Context) ([]CounterSet, map[CounterKey]*prm.Decoded, error) {
	ps, err := a.Ports(ctx)
	if err != nil {
		return nil, nil, err
	}
	regs := map[CounterKey]*prm.Decoded{}
	if !a.HasRegisters() {
		cs, err := a.kernelCounters(ctx, "ib")
		return cs, regs, err
	}
	cs, err := a.registerCounters(ctx, ps, regs)
	return cs, regs, err
}

// RDMACounters reads the RDMA hw_counters of every owned port, from the
// OS view: the kernel's sysfs for functions of this machine, the
// emulator's model for emulated ones.
func (a *Adapter) RDMACounters(ctx context.Context) ([]CounterSet, error) {
	if a.os == nil {
		return nil, &UnsupportedError{What: "RDMA hw_counters", Backend: a.c.Backend, Why: "they come from the kernel's RDMA driver (mlx5_ib), which has no view of this function"}
	}
	ps, err := a.Ports(ctx)
	if err != nil {
		return nil, err
	}
	var out []CounterSet
	var errs []error
	for _, p := range ps {
		m, err := a.os.RDMACounters(ctx, p.Local)
		if err != nil {
			if ctx.Err() != nil {
				return out, err
			}
			errs = append(errs, fmt.Errorf("port %d: %w", p.Local, err))
			continue
		}
		out = append(out, CounterSet{Port: p.Local, Kind: "rdma", Values: m})
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, errors.Join(errs...)
}

// staticPages is the cache of module's static pages.
func (a *Adapter) staticPages(module int) *optics.StaticPages {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.static == nil {
		a.static = map[int]*optics.StaticPages{}
	}
	c := a.static[module]
	if c == nil {
		c = &optics.StaticPages{}
		a.static[module] = c
	}
	return c
}

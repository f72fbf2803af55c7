package adapter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/prm"
)

// Options say how Open reaches devices.
type Options struct {
	// DB decodes registers.
	DB *prm.DB
	// Sys is the sysfs tree names resolve in; the zero value is /sys.
	Sys devname.Sys
	// Kernel tunes the kernel backend (its Root defaults to Sys.Root).
	Kernel kernel.Options
	// ReadOnly refuses every register write below the features (the
	// exporter).
	ReadOnly bool
	// Fallback reads a function of this machine through the kernel
	// backend when direct access is blocked (not root, kernel lockdown),
	// instead of failing.
	Fallback bool
	// Stack tunes the gateway path of direct access.
	Stack dev.StackOptions
	// Emulator opens emu names. The command layer provides it, so this
	// package never imports the emulator; nil refuses emu names.
	Emulator Emulator
	// Via is the path to registers and commands ("" is ViaAuto).
	Via Via
}

// Emulator opens the functions of an emulated scenario as adapters.
type Emulator interface {
	// OpenEmulated opens the function n names (the first when it names
	// none), or with all every function of its scenario.
	OpenEmulated(ctx context.Context, n devname.Name, all bool, o Options) ([]*Adapter, error)
}

// UsageError is a device name or option the user has to correct (exit 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Is makes a device name that cannot mean a device an input error
// (prm.ErrInput).
func (e *UsageError) Is(target error) bool { return target == prm.ErrInput }

// NotFoundError is a device that is not there (exit 3).
type NotFoundError struct{ Err error }

func (e *NotFoundError) Error() string { return e.Err.Error() }
func (e *NotFoundError) Unwrap() error { return e.Err }

func (o *Options) sys() devname.Sys {
	if o.Sys.Root == "" {
		return devname.Default
	}
	return o.Sys
}

func (o *Options) kernelOptions() kernel.Options {
	k := o.Kernel
	if k.Root == "" {
		k.Root = o.sys().Root
	}
	return k
}

// Parse resolves a device name.
func (o Options) Parse(given string) (devname.Name, error) {
	if strings.TrimSpace(given) == "" {
		return devname.Name{}, &UsageError{errors.New("no device given; add -d DEV (a PCI address such as 0000:03:00.0, mlx5_0, an interface name, or emu for the emulator; 'cxray status' lists them)")}
	}
	n, err := o.sys().Parse(given)
	if err != nil {
		var nf *devname.NotFoundError
		if errors.As(err, &nf) {
			return n, &NotFoundError{err}
		}
		return n, &UsageError{err}
	}
	return n, nil
}

// Open opens the one function -d names, whatever its form.
func Open(ctx context.Context, given string, o Options) (*Adapter, error) {
	n, err := o.Parse(given)
	if err != nil {
		return nil, err
	}
	switch n.Kind {
	case devname.Emu:
		as, err := o.openEmulated(ctx, n, false)
		if err != nil {
			return nil, err
		}
		return as[0], nil
	case devname.Kernel:
		return o.openKernel(ctx, n)
	}
	f, err := o.function(n.BDF)
	if err != nil {
		return nil, err
	}
	return o.openPCI(ctx, given, f)
}

// OpenTargets is how every command opens what it reads: the function given
// names, or with all every function of this machine (given "": physical
// functions that no other driver holds) or of the emulated scenario given
// names. Every backend's register path opens the same way (TryOpen): a
// function whose path does not open now (a held semaphore, a device that
// went away) is opened anyway and its path opened on first use, so one
// stuck function never takes the others down. With all, a function that
// cannot be opened at all (no root, lockdown without a way around it) is
// an adapter whose every read says why; only when none of them opens is
// that an error.
func OpenTargets(ctx context.Context, given string, all bool, o Options) ([]*Adapter, error) {
	if !all {
		if strings.TrimSpace(given) == "" {
			return nil, &UsageError{errors.New("add -d DEV, or --all for every adapter ('cxray status' lists them; -d emu tries the emulator)")}
		}
		a, err := Open(ctx, given, o)
		if err != nil {
			return nil, err
		}
		return []*Adapter{a}, nil
	}
	if given != "" {
		n, err := o.Parse(given)
		if err != nil {
			return nil, err
		}
		if n.Kind != devname.Emu {
			return nil, &UsageError{errors.New("--all with -d works for emulated scenarios (emu:FILE.yaml); for this machine's adapters leave out -d")}
		}
		return o.openEmulated(ctx, n, true)
	}
	fns, err := o.sys().List()
	if err != nil {
		return nil, err
	}
	var pfs []devname.Function
	for _, f := range fns {
		// A function another driver holds (vfio-pci: passed through to a
		// guest) is not this host's to drive; an unbound one is, as for
		// mstflint (a driver that failed to load).
		if f.VF || f.Driver != "" && f.Driver != "mlx5_core" {
			continue
		}
		pfs = append(pfs, f)
	}
	if len(pfs) == 0 {
		return nil, &NotFoundError{errors.New("no ConnectX adapters found on this machine; use -d emu for the emulator")}
	}
	out := make([]*Adapter, len(pfs))
	errs := make([]error, len(pfs))
	// Each open tries its register path briefly (TryOpen); the functions
	// are opened side by side, so a held one costs that try once.
	Each(ctx, len(pfs), func(ctx context.Context, i int) {
		out[i], errs[i] = o.openPCI(ctx, pfs[i].BDF, pfs[i])
	})
	if err := ctx.Err(); err != nil {
		closeSome(out)
		return nil, err
	}
	failed := 0
	for i, err := range errs {
		if err != nil {
			failed++
			out[i] = Failed(Config{Name: pfs[i].BDF, BDF: pfs[i].BDF, Backend: dev.BackendDirect, DB: o.DB}, err)
		}
	}
	if failed == len(out) {
		closeSome(out)
		return nil, errs[0]
	}
	return out, nil
}

func closeSome(as []*Adapter) {
	for _, a := range as {
		if a != nil {
			a.Close()
		}
	}
}

// Failed is a function that could not be opened: every read returns err,
// so a command over many functions reports it beside the others.
func Failed(c Config, err error) *Adapter {
	c.Registers = nil
	c.Reopen = func(context.Context) (*dev.Device, error) { return nil, err }
	return New(c)
}

// EagerOpenWait bounds the first try to open a register path (TryOpen).
const EagerOpenWait = 250 * time.Millisecond

// TryOpen tries to open a register path now, for at most EagerOpenWait.
// On an error the caller builds the adapter anyway, with open as its
// Config.Reopen: the path is then opened on first use, where the wait for
// a held semaphore lasts the command's deadline and its error tells the
// whole wait. The error matters to the caller only for its fallbacks (a
// refused gateway, a refused permission) and when ctx itself ended.
func TryOpen(ctx context.Context, open func(context.Context) (*dev.Device, error)) (*dev.Device, error) {
	eager, cancel := context.WithTimeout(ctx, EagerOpenWait)
	defer cancel()
	return open(eager)
}

// CloseAll closes every adapter.
func CloseAll(as []*Adapter) {
	for _, a := range as {
		a.Close()
	}
}

func (o *Options) openEmulated(ctx context.Context, n devname.Name, all bool) ([]*Adapter, error) {
	if o.Emulator == nil {
		return nil, &UsageError{fmt.Errorf("-d %s: the emulator is not available in this program", n.Given)}
	}
	as, err := o.Emulator.OpenEmulated(ctx, n, all, *o)
	if err != nil {
		return nil, err
	}
	if len(as) == 0 {
		return nil, &NotFoundError{fmt.Errorf("-d %s: no emulated function", n.Given)}
	}
	return as, nil
}

func (o *Options) openKernel(ctx context.Context, n devname.Name) (*Adapter, error) {
	f, err := o.function(n.BDF)
	if err != nil {
		return nil, err
	}
	return o.openKernelFunction(ctx, n.Given, n.RDMA, f)
}

func (o *Options) openKernelFunction(ctx context.Context, given, rdma string, f devname.Function) (*Adapter, error) {
	kd, err := kernel.OpenFunction(ctx, rdma, f, o.kernelOptions())
	if err != nil {
		var nf *kernel.NotFoundError
		if errors.As(err, &nf) {
			return nil, &NotFoundError{err}
		}
		return nil, err
	}
	return New(Config{Name: given, BDF: kd.BDF, Backend: dev.BackendKernel, DB: o.DB, Kernel: kd, Close: kd.Close,
		PCIe: sysPCIe{root: kd.Root(), bdf: kd.BDF, noConfig: true}}), nil
}

// function reads a function's sysfs identity, once per open.
func (o *Options) function(bdf string) (devname.Function, error) {
	f, err := o.sys().Function(bdf)
	if err != nil {
		var nf *devname.NotFoundError
		if errors.As(err, &nf) {
			return f, &NotFoundError{err}
		}
		return f, err
	}
	return f, nil
}

// DirectBlocked says why direct register access cannot work on this
// machine ("" when it can): it needs root (the config space is written to
// reach the gateway), and kernel lockdown blocks config-space writes even
// for root.
func (o *Options) DirectBlocked() string {
	if os.Geteuid() != 0 {
		return "direct register access needs root"
	}
	b, err := os.ReadFile(filepath.Join(o.sys().Root, "kernel/security/lockdown"))
	if err == nil {
		s := string(b)
		if i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']'); i >= 0 && j > i && s[i+1:j] != "none" {
			return "kernel lockdown (" + s[i+1:j] + ") blocks PCI config-space writes"
		}
	}
	return ""
}

// openPCI opens a function of this machine directly, composed with the
// kernel's view of it (interfaces, RDMA counters) when mlx5_core drives
// it. f is the function's sysfs entry, read once by the caller.
func (o *Options) openPCI(ctx context.Context, given string, f devname.Function) (*Adapter, error) {
	sys := o.sys()
	bdf := f.BDF
	kd, _ := kernel.OpenFunction(ctx, "", f, o.kernelOptions())
	root := sys.Root
	if root == "" {
		root = "/sys"
	}
	via := o.via()
	// Every register path of this function reads its PCIe link from
	// sysfs beside it.
	withKernel := func(c Config) Config {
		c.PCIe = sysPCIe{root: root, bdf: bdf}
		if kd != nil {
			c.Kernel = kd
		}
		return c
	}
	openFw := func(ctx context.Context) (*dev.Device, error) { return openFwctl(root, given, bdf, o.DB, o.ReadOnly) }
	fw := func() (*Adapter, error) {
		d, err := openFw(ctx)
		if err != nil {
			return nil, err
		}
		return New(withKernel(Config{Name: given, BDF: bdf, Backend: dev.BackendFwctl, DB: o.DB, Registers: d, Reopen: openFw})), nil
	}
	if via == ViaFwctl {
		return fw()
	}
	// Under lockdown (or without root) the gateway cannot work; fwctl
	// can, where the kernel has it.
	tryFwctl := func(cause string) (*Adapter, bool) {
		if via != ViaAuto {
			return nil, false
		}
		a, err := fw()
		if err != nil {
			return nil, false
		}
		a.c.Notes = append(a.c.Notes, LockdownNote(errors.New(cause)))
		return a, true
	}
	fallback := func(note string) (*Adapter, error) {
		a, err := o.openKernelFunction(ctx, given, "", f)
		if err == nil {
			a.c.Notes = append(a.c.Notes, note)
		}
		return a, err
	}
	if why := o.DirectBlocked(); why != "" {
		if a, ok := tryFwctl(why); ok {
			return a, nil
		}
		if o.Fallback && kd != nil {
			return fallback(why + ": reading through the kernel backend")
		}
		return nil, fmt.Errorf("device %s: %s (it opens the PCI config space for writing); run with sudo, read it through the kernel with -d kernel:%s, use --via fwctl on Linux 6.15+ with mlx5_fwctl, or use -d emu to try cxray on the emulator", given, why, bdf)
	}
	stack := o.Stack
	stack.ReadOnly = o.ReadOnly
	open := func(ctx context.Context) (*dev.Device, error) {
		d, _, err := dev.OpenPCI(ctx, sys, given, bdf, o.DB, stack)
		if err != nil {
			if via == ViaVSEC && GatewayRefused(err) {
				return nil, &RefusedError{Err: err}
			}
			return nil, err
		}
		attachCommands(root, d)
		return d, nil
	}
	d, err := TryOpen(ctx, open)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		if GatewayRefused(err) {
			if a, ok := tryFwctl(err.Error()); ok {
				return a, nil
			}
		}
		if (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EPERM)) && o.Fallback && kd != nil {
			return fallback(fmt.Sprintf("direct access to %s was refused (%v): reading through the kernel backend", bdf, err))
		}
		// Anything else (a held semaphore, a device gone for now) is
		// tried again on first use, with the command's whole deadline.
		d = nil
	}
	return New(withKernel(Config{Name: given, BDF: bdf, Backend: dev.BackendDirect, DB: o.DB, Registers: d, Reopen: open})), nil
}

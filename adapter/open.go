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
		return o.openKernel(ctx, n.Given, n.Kernel)
	}
	return o.openPCI(ctx, given, n.BDF)
}

// OpenAll opens every function of this machine (given ""; physical
// functions only), or every function of the emulated scenario given names.
func OpenAll(ctx context.Context, given string, o Options) ([]*Adapter, error) {
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
	var out []*Adapter
	for _, f := range fns {
		// A function another driver holds (vfio-pci: passed through to a
		// guest) is not this host's to drive; an unbound one is, as for
		// mstflint (a driver that failed to load).
		if f.VF || f.Driver != "" && f.Driver != "mlx5_core" {
			continue
		}
		a, err := o.openPCI(ctx, f.BDF, f.BDF)
		if err != nil {
			CloseAll(out)
			return nil, err
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, &NotFoundError{errors.New("no ConnectX adapters found on this machine; use -d emu for the emulator")}
	}
	return out, nil
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

func (o *Options) openKernel(ctx context.Context, given, name string) (*Adapter, error) {
	kd, err := kernel.Open(ctx, name, o.kernelOptions())
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
// it. The function is checked (present, Mellanox's) before root is, so the
// first error is about the device the user named.
func (o *Options) openPCI(ctx context.Context, given, bdf string) (*Adapter, error) {
	sys := o.sys()
	if _, err := sys.Function(bdf); err != nil {
		var nf *devname.NotFoundError
		if errors.As(err, &nf) {
			return nil, &NotFoundError{err}
		}
		return nil, err
	}
	kd, _ := kernel.Open(ctx, bdf, o.kernelOptions())
	root := sys.Root
	if root == "" {
		root = "/sys"
	}
	via := o.via()
	fw := func() (*Adapter, error) {
		open := func(ctx context.Context) (*dev.Device, error) { return openFwctl(root, given, bdf, o.DB, o.ReadOnly) }
		d, err := open(ctx)
		if err != nil {
			return nil, err
		}
		c := Config{Name: given, BDF: bdf, Backend: dev.BackendFwctl, DB: o.DB, Registers: d, Reopen: open, PCIe: sysPCIe{root: root, bdf: bdf}}
		if kd != nil {
			c.Kernel = kd
		}
		return New(c), nil
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
	if why := o.DirectBlocked(); why != "" {
		if a, ok := tryFwctl(why); ok {
			return a, nil
		}
		if o.Fallback && kd != nil {
			a, err := o.openKernel(ctx, given, bdf)
			if err == nil {
				a.c.Notes = append(a.c.Notes, why+": reading through the kernel backend")
			}
			return a, err
		}
		return nil, fmt.Errorf("device %s: %s (it opens the PCI config space for writing); run with sudo, read it through the kernel with -d kernel:%s, use --via fwctl on Linux 6.15+ with mlx5_fwctl, or use -d emu to try cxray on the emulator", given, why, bdf)
	}
	open := func(ctx context.Context) (*dev.Device, error) {
		d, st, err := dev.OpenPCI(ctx, sys, given, bdf, o.DB)
		if err != nil {
			return nil, err
		}
		acc := dev.Accessor(st.Regs)
		if o.ReadOnly {
			acc = dev.ReadOnly(st.Regs)
			d = dev.New(d.Name, d.BDF, d.Backend, o.DB, acc, d.Close)
		}
		return withCommands(root, d, acc, o.DB), nil
	}
	d, err := open(ctx)
	if err != nil {
		if GatewayRefused(err) {
			if a, ok := tryFwctl(err.Error()); ok {
				return a, nil
			}
			if via == ViaVSEC {
				err = &RefusedError{Err: err}
			}
		}
		if (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EPERM)) && o.Fallback && kd != nil {
			a, kerr := o.openKernel(ctx, given, bdf)
			if kerr == nil {
				a.c.Notes = append(a.c.Notes, fmt.Sprintf("direct access to %s was refused (%v): reading through the kernel backend", bdf, err))
			}
			return a, kerr
		}
		return nil, err
	}
	c := Config{Name: given, BDF: bdf, Backend: dev.BackendDirect, DB: o.DB, Registers: d, Reopen: open, PCIe: sysPCIe{root: root, bdf: bdf}}
	if kd != nil {
		c.Kernel = kd
	}
	return New(c), nil
}

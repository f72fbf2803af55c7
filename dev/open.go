package dev

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cxray/cxray/access/icmd"
	"github.com/cxray/cxray/access/regaccess"
	"github.com/cxray/cxray/access/vsec"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/pci"
	"github.com/cxray/cxray/prm"
)

// Stack is the access path over one config space: gateway, ICMD, access
// registers. The same code drives hardware and the emulator.
type Stack struct {
	Gateway *vsec.Gateway
	ICMD    *icmd.Client
	Regs    *regaccess.Client
}

// StackOptions tune OpenStack; the zero value is right for hardware.
type StackOptions struct {
	Clock clock.Clock // nil: the wall clock
	// SemaphoreTimeout bounds waits for semaphores other agents hold.
	SemaphoreTimeout time.Duration
}

// OpenStack builds the access path over cs.
func OpenStack(ctx context.Context, cs pci.ConfigSpace, o StackOptions) (*Stack, error) {
	gwWait, icWait := o.SemaphoreTimeout, o.SemaphoreTimeout
	if gwWait == 0 {
		gwWait, icWait = vsec.DefaultSemaphoreTimeout, icmd.DefaultSemaphoreTimeout
	}
	// Give up on a held semaphore before the caller's deadline, so the
	// error names the holder instead of saying "deadline exceeded".
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl) * 8 / 10; left > 0 {
			gwWait, icWait = min(gwWait, left), min(icWait, left)
		}
	}
	gw, err := vsec.Open(cs, &vsec.Options{Clock: o.Clock, SemaphoreTimeout: gwWait})
	if err != nil {
		return nil, err
	}
	ic, err := icmd.Open(ctx, gw, &icmd.Options{SemaphoreTimeout: icWait})
	if err != nil {
		return nil, err
	}
	return &Stack{Gateway: gw, ICMD: ic, Regs: regaccess.New(ic)}, nil
}

// OpenConfigSpace opens a device over an already-open config space (the
// emulator's, in tests and for -d emu).
func OpenConfigSpace(ctx context.Context, name, bdf string, backend Backend, db *prm.DB, cs pci.ConfigSpace, o StackOptions) (*Device, *Stack, error) {
	st, err := OpenStack(ctx, cs, o)
	if err != nil {
		return nil, nil, &OpenError{Name: name, Err: err}
	}
	return New(name, bdf, backend, db, st.Regs, nil), st, nil
}

// OpenError wraps a failure to open a device.
type OpenError struct {
	Name string
	Err  error
}

func (e *OpenError) Error() string { return fmt.Sprintf("device %s: %v", e.Name, e.Err) }
func (e *OpenError) Unwrap() error { return e.Err }

// OpenPCI opens a PCI function for direct access: it checks that the
// function is Mellanox's, opens its sysfs config file (root only), and takes
// mstflint's lock file around every config access so cxray and mstflint tools
// can share the adapter.
func OpenPCI(ctx context.Context, sys devname.Sys, name, bdf string, db *prm.DB) (*Device, *Stack, error) {
	if _, err := sys.Function(bdf); err != nil {
		return nil, nil, &OpenError{Name: name, Err: err}
	}
	path := filepath.Join(sys.Root, "bus/pci/devices", bdf, "config")
	cfg, err := pci.OpenConfig(path)
	if err != nil {
		return nil, nil, &OpenError{Name: name, Err: err}
	}
	lock, err := pci.OpenLock(pci.LockDir, bdf)
	if err != nil {
		cfg.Close()
		return nil, nil, &OpenError{Name: name, Err: err}
	}
	cs := pci.WithLock(cfg, lock, time.Second)
	st, err := OpenStack(ctx, cs, StackOptions{})
	if err != nil {
		lock.Close()
		cfg.Close()
		return nil, nil, &OpenError{Name: name, Err: err}
	}
	d := New(name, bdf, BackendDirect, db, st.Regs, func() error {
		lock.Close()
		return cfg.Close()
	})
	return d, st, nil
}

// IsRoot says whether direct access can work at all.
func IsRoot() bool { return os.Geteuid() == 0 }

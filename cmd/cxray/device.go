package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/internal/emuadapter"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/prm"
)

// deviceFlags are the flags of commands that talk to a device.
type deviceFlags struct {
	name    string
	timeout time.Duration
	via     string
}

func (f *deviceFlags) add(c *cobra.Command) {
	c.Flags().StringVarP(&f.name, "device", "d", "", "device: PCI address (0000:03:00.0), RDMA name (mlx5_0), interface (eth2), kernel:mlx5_0, emu, emu:PROFILE, emu:FILE.yaml")
	c.Flags().DurationVar(&f.timeout, "timeout", 10*time.Second, "give up on the device after this long")
	addViaFlag(c, &f.via)
}

// addViaFlag adds --via, which adapterOptions reads from the running
// command.
func addViaFlag(c *cobra.Command, p *string) {
	c.Flags().StringVar(p, "via", "auto", "path to registers and commands: auto (the config-space gateway, fwctl when the kernel refuses it), vsec or fwctl")
}

// via is the running command's --via (auto when it has none); the root
// command checked its value.
func (a *app) via() adapter.Via {
	if a.cmd == nil {
		return adapter.ViaAuto
	}
	fl := a.cmd.Flags().Lookup("via")
	if fl == nil {
		return adapter.ViaAuto
	}
	v, _ := adapter.ParseVia(fl.Value.String())
	return v
}

// sys is the sysfs tree device names resolve in; tests replace it.
var sys = devname.Default

// kernelOptions says where the kernel backend reads: the sysfs tree device
// names resolve in, and the machine's netlink. Tests replace it to add fake
// netlink connections.
var kernelOptions = func() kernel.Options { return kernel.Options{Root: sys.Root} }

// emulator opens -d emu names: the only place the command layer hands the
// emulator to the adapter layer. Tests tune it.
var emulator = &emuadapter.Emulator{}

// adapterOptions is how every command opens devices.
func (a *app) adapterOptions(db *prm.DB) adapter.Options {
	return adapter.Options{DB: db, Sys: sys, Kernel: kernelOptions(), Emulator: emulator, Via: a.via()}
}

// open opens the one function -d names.
func (a *app) open(ctx context.Context, given string, db *prm.DB) (*adapter.Adapter, error) {
	ad, err := adapter.Open(ctx, given, a.adapterOptions(db))
	if err != nil {
		return nil, classify(err)
	}
	return ad, nil
}

// openTargets opens the function -d names, or with all every function (of
// the machine, or of the emulated scenario -d names).
func (a *app) openTargets(ctx context.Context, given string, all bool, db *prm.DB) ([]*adapter.Adapter, error) {
	if !all {
		if given == "" {
			return nil, usageErr("add -d DEV, or --all for every adapter ('cxray status' lists them; -d emu tries the emulator)")
		}
		ad, err := a.open(ctx, given, db)
		if err != nil {
			return nil, err
		}
		return []*adapter.Adapter{ad}, nil
	}
	as, err := adapter.OpenAll(ctx, given, a.adapterOptions(db))
	if err != nil {
		return nil, classify(err)
	}
	return as, nil
}

// registers is the register path of an adapter, or the reason this
// backend has none (exit 3).
func registers(ctx context.Context, ad *adapter.Adapter) (*dev.Device, error) {
	d, err := ad.Registers(ctx)
	if err != nil {
		return nil, classify(err)
	}
	return d, nil
}

// deviceErr marks an error as a device or access error (exit 3).
func deviceErr(err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{exitDevice, err}
}

// classify maps errors to exit codes: bad names and values are usage
// errors (2), the rest device errors (3).
func classify(err error) error {
	if err == nil {
		return nil
	}
	var (
		ie *dev.IndexError
		fe *prm.FieldError
		nf *prm.NotFoundError
		ro *dev.ROError
		en *dev.EnumError
		ue *adapter.UsageError
		np *adapter.NoPortError
		ve *nvconf.ValidationError
		ne *nvconf.NameError
		va *nvconf.ValueError
		fl *nvconf.FileError
		ee *exitError
	)
	switch {
	case errors.As(err, &ee):
		return err
	case errors.As(err, &ie), errors.As(err, &fe), errors.As(err, &nf), errors.As(err, &ro), errors.As(err, &en), errors.As(err, &ue), errors.As(err, &np),
		errors.As(err, &ve), errors.As(err, &ne), errors.As(err, &va), errors.As(err, &fl):
		return usageWrap(err)
	}
	return deviceErr(err)
}

func (f *deviceFlags) context(a *app) (context.Context, context.CancelFunc) {
	return context.WithTimeout(a.ctx, f.timeout)
}

// describe names an adapter in messages: the name given, with its PCI
// address when that differs.
func describe(ad *adapter.Adapter) string {
	s := ad.Name()
	if ad.BDF() != "" && ad.BDF() != s {
		s += " (" + ad.BDF() + ")"
	}
	return s
}

// unsupportedNote is what a command prints for a part the backend cannot
// serve.
func unsupportedNote(err error) string {
	if errors.Is(err, adapter.ErrUnsupported) {
		return "not available on this backend (" + err.Error() + ")"
	}
	return fmt.Sprint(err)
}

package cmdutil

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/prm"
)

// DeviceFlags are the flags of commands that talk to a device.
type DeviceFlags struct {
	Name    string
	Timeout time.Duration
	Via     string
}

// Add adds -d, --timeout and --via to c.
func (f *DeviceFlags) Add(c *cobra.Command) {
	c.Flags().StringVarP(&f.Name, "device", "d", "", "device: PCI address (0000:03:00.0), RDMA name (mlx5_0), interface (eth2), kernel:mlx5_0, emu, emu:PROFILE, emu:FILE.yaml")
	c.Flags().DurationVar(&f.Timeout, "timeout", 10*time.Second, "give up on the device after this long")
	AddViaFlag(c, &f.Via)
}

// Context bounds one command's device work by --timeout.
func (f *DeviceFlags) Context(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, f.Timeout)
}

// AddViaFlag adds --via, which AdapterOptions reads from the running
// command.
func AddViaFlag(c *cobra.Command, p *string) {
	c.Flags().StringVar(p, "via", "auto", "path to registers and commands: auto (the config-space gateway, fwctl when the kernel refuses it), vsec or fwctl")
}

// ViaExtended marks a --via flag whose command takes more values than the
// access paths (fw update and fw reset also take devlink and mcc) and
// checks them itself; the root command leaves it alone.
const ViaExtended = "cxray_via_extended"

// ExtendVia marks c's --via as ViaExtended, with its own usage text.
func ExtendVia(c *cobra.Command, usage string) {
	fl := c.Flags().Lookup("via")
	fl.Usage = usage
	_ = c.Flags().SetAnnotation("via", ViaExtended, []string{"true"})
}

// Via is the running command's --via (auto when it has none); the root
// command checked its value.
func (a *App) Via() adapter.Via {
	if a.Cmd == nil {
		return adapter.ViaAuto
	}
	fl := a.Cmd.Flags().Lookup("via")
	if fl == nil {
		return adapter.ViaAuto
	}
	v, _ := adapter.ParseVia(fl.Value.String())
	return v
}

// AdapterOptions is how every command opens devices.
func (a *App) AdapterOptions(db *prm.DB) adapter.Options {
	k := a.Kernel
	if k.Root == "" {
		k.Root = a.Sys.Root
	}
	return adapter.Options{DB: db, Sys: a.Sys, Kernel: k, Emulator: a.Emulator, Via: a.Via()}
}

// Open opens the one function -d names.
func (a *App) Open(ctx context.Context, given string, db *prm.DB) (*adapter.Adapter, error) {
	ad, err := adapter.Open(ctx, given, a.AdapterOptions(db))
	if err != nil {
		return nil, Classify(err)
	}
	return ad, nil
}

// OpenTargets opens the function -d names, or with all every function (of
// the machine, or of the emulated scenario -d names): adapter.OpenTargets,
// the one opener.
func (a *App) OpenTargets(ctx context.Context, given string, all bool, db *prm.DB) ([]*adapter.Adapter, error) {
	return a.OpenTargetsWith(ctx, given, all, a.AdapterOptions(db))
}

// OpenTargetsWith is OpenTargets with options a command changed (the
// kernel fallback of status and the exporter, read-only devices).
func (a *App) OpenTargetsWith(ctx context.Context, given string, all bool, o adapter.Options) ([]*adapter.Adapter, error) {
	as, err := adapter.OpenTargets(ctx, given, all, o)
	if err != nil {
		return nil, Classify(err)
	}
	return as, nil
}

// Registers is the register path of an adapter, or the reason this
// backend has none (exit 3).
func Registers(ctx context.Context, ad *adapter.Adapter) (*dev.Device, error) {
	d, err := ad.Registers(ctx)
	if err != nil {
		return nil, Classify(err)
	}
	return d, nil
}

// Describe names an adapter in messages: the name given, with its PCI
// address when that differs.
func Describe(ad *adapter.Adapter) string {
	s := ad.Name()
	if ad.BDF() != "" && ad.BDF() != s {
		s += " (" + ad.BDF() + ")"
	}
	return s
}

// OpenRegisters opens the function given names with its register path;
// the caller closes the adapter.
func (a *App) OpenRegisters(ctx context.Context, given string, db *prm.DB) (*adapter.Adapter, *dev.Device, error) {
	ad, err := a.Open(ctx, given, db)
	if err != nil {
		return nil, nil, err
	}
	d, err := Registers(ctx, ad)
	if err != nil {
		ad.Close()
		return nil, nil, err
	}
	return ad, d, nil
}

// EachTarget reads every target side by side (adapter.Each; one after the
// other on the emulator's manual clock, adapter.Parallel), each within its
// own deadline of timeout, so one slow or stuck function costs its own
// time only. It returns when every call has returned; the caller checks
// ctx for a signal.
func EachTarget(ctx context.Context, targets []*adapter.Adapter, timeout time.Duration, fn func(ctx context.Context, i int, ad *adapter.Adapter)) {
	adapter.EachLimit(ctx, len(targets), adapter.Parallel(targets), func(ctx context.Context, i int) {
		fctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		fn(fctx, i, targets[i])
	})
}

// FirstRead reads what the commands read first, the port topology (the
// adapter keeps it, so nothing is read twice), within --timeout. Commands
// that wait an --interval between two samples give their context
// --timeout plus that interval: with FirstRead first, a device that does
// not answer ends the command at --timeout, never after an interval.
func FirstRead(ctx context.Context, ad *adapter.Adapter, timeout time.Duration) error {
	first, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := ad.Ports(first); err != nil {
		if ctx.Err() != nil {
			return Stopped(ctx, err)
		}
		return Classify(err)
	}
	return nil
}

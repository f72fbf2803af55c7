package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/prm"
)

// deviceFlags are the flags of commands that talk to a device.
type deviceFlags struct {
	name    string
	timeout time.Duration
}

func (f *deviceFlags) add(c *cobra.Command) {
	c.Flags().StringVarP(&f.name, "device", "d", "", "device: PCI address (0000:03:00.0), RDMA name (mlx5_0), interface (eth2), emu, emu:PROFILE, emu:FILE.yaml")
	c.Flags().DurationVar(&f.timeout, "timeout", 10*time.Second, "give up on the device after this long")
}

// opened is a device with what the CLI needs to say about it.
type opened struct {
	dev  *dev.Device
	name devname.Name
	// emu is the emulation behind an emulated device (its clock, its
	// other functions).
	emu     *scenario.Emulation
	kernel  *kernel.Device
	closeFn func()
}

func (o *opened) Close() {
	if o.dev != nil {
		o.dev.Close()
	}
	if o.closeFn != nil {
		o.closeFn()
	}
}

// sys is the sysfs tree device names resolve in; tests replace it.
var sys = devname.Default

// openDevice resolves -d and opens the device.
func (a *app) openDevice(ctx context.Context, given string, db *prm.DB) (*opened, error) {
	if given == "" {
		return nil, usageErr("no device given; add -d DEV (a PCI address such as 0000:03:00.0, mlx5_0, an interface name, or emu for the emulator; 'cxray status' lists them)")
	}
	n, err := sys.Parse(given)
	if err != nil {
		var nf *devname.NotFoundError
		if errors.As(err, &nf) {
			return nil, deviceErr(err)
		}
		return nil, usageWrap(err)
	}
	switch n.Kind {
	case devname.Emu:
		return a.openEmu(ctx, n, db)
	case devname.Kernel:
		return a.openKernel(ctx, n, db)
	}
	if !dev.IsRoot() {
		return nil, deviceErr(fmt.Errorf("device %s: direct access to %s needs root (it opens the PCI config space for writing); run with sudo, or use -d emu to try cxray on the emulator", given, n.BDF))
	}
	d, _, err := dev.OpenPCI(ctx, sys, given, n.BDF, db)
	if err != nil {
		return nil, deviceErr(err)
	}
	return &opened{dev: d, name: n}, nil
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

// classify maps errors from dev to exit codes: bad names and values are
// usage errors, the rest device errors.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var (
		ie *dev.IndexError
		fe *prm.FieldError
		nf *prm.NotFoundError
		ro *dev.ROError
		ee *exitError
	)
	switch {
	case errors.As(err, &ee):
		return err
	case errors.As(err, &ie), errors.As(err, &fe), errors.As(err, &nf), errors.As(err, &ro):
		return usageWrap(err)
	}
	return deviceErr(err)
}

func (f *deviceFlags) context() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), f.timeout)
}

package adapter

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/cxray/cxray/access/fwctl"
	"github.com/cxray/cxray/access/vsec"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/prm"
)

// Via is the path registers and commands take to a function.
type Via string

// The paths: the config-space gateway (VSEC), the kernel's fwctl device,
// or auto: the gateway, falling back to fwctl when config-space writes
// are refused (kernel lockdown) or the gateway is absent.
const (
	ViaAuto  Via = "auto"
	ViaVSEC  Via = "vsec"
	ViaFwctl Via = "fwctl"
)

// ParseVia reads a --via value ("" is auto).
func ParseVia(s string) (Via, error) {
	switch Via(s) {
	case "", ViaAuto:
		return ViaAuto, nil
	case ViaVSEC, ViaFwctl:
		return Via(s), nil
	}
	return "", &UsageError{fmt.Errorf("--via %q: use auto (the gateway, fwctl when the gateway is refused), vsec (the config-space gateway only) or fwctl (the kernel's fwctl device only)", s)}
}

func (o *Options) via() Via {
	if o.Via == "" {
		return ViaAuto
	}
	return o.Via
}

// GatewayRefused says whether err, from opening the config-space gateway,
// is one fwctl gets around: a refused config-space write (kernel
// lockdown: EPERM) or a function without the gateway capability.
func GatewayRefused(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, fs.ErrPermission) || errors.Is(err, vsec.ErrNoCapability)
}

// LockdownNote is what status and health say when auto took fwctl.
func LockdownNote(cause error) string {
	return fmt.Sprintf("kernel lockdown: using fwctl (the config-space gateway was refused: %v)", cause)
}

// openFwctl opens a function of this machine through its fwctl device.
func openFwctl(sysRoot, name, bdf string, db *prm.DB, readOnly bool) (*dev.Device, error) {
	c, fd, err := fwctl.Open(sysRoot, bdf, fwctl.Options{})
	if err != nil {
		return nil, &dev.OpenError{Name: name, Err: err}
	}
	var acc dev.Accessor = fwctl.NewRegisters(c)
	if readOnly {
		acc = dev.ReadOnly(acc)
	}
	d := dev.New(name, bdf, dev.BackendFwctl, db, acc, fd.Close)
	d.AttachCommander(c)
	return d, nil
}

// attachCommands attaches the function's fwctl command interface, when it
// has one, to a device opened through the gateway: commands (caps, esw,
// qp ...) only go through fwctl.
func attachCommands(sysRoot string, d *dev.Device) {
	c, fd, err := fwctl.Open(sysRoot, d.BDF, fwctl.Options{})
	if err != nil {
		return
	}
	d.AttachCommands(c, fd.Close)
}

// RefusedError is a gateway refusal under --via vsec: it says why and
// what works instead.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%v; the kernel refuses config-space writes (lockdown, with Secure Boot) or the function has no gateway: use --via auto or --via fwctl (Linux 6.15+ with mlx5_fwctl), or -d kernel:NAME", e.Err)
}
func (e *RefusedError) Unwrap() error { return e.Err }

// Path is the backend the register path goes through once it is open
// (dev.BackendFwctl when auto fell back, or --via fwctl), "" before.
func (a *Adapter) Path() dev.Backend {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.regs != nil {
		return a.regs.Backend
	}
	if a.c.Registers != nil {
		return a.c.Registers.Backend
	}
	return ""
}

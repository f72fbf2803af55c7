package kernel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"

	"github.com/cxray/cxray/access/regaccess"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/internal/lazyre"
)

// Options say where the backend reads from. The zero value reads the
// machine's /sys and the kernel's netlink sockets.
type Options struct {
	// Root is the sysfs mount point; "" means /sys.
	Root string
	// DialGeneric opens a generic netlink connection (devlink, ethtool).
	// nil dials the kernel. Tests inject genltest connections.
	DialGeneric func() (*genetlink.Conn, error)
	// DialRoute opens an rtnetlink connection. nil dials the kernel. Tests
	// inject nltest connections.
	DialRoute func() (*netlink.Conn, error)
	// DialRDMA opens an RDMA netlink connection (raw QP and MR contexts).
	// nil dials the kernel. Tests inject nltest connections.
	DialRDMA func() (*netlink.Conn, error)
	// Ethtool performs SIOCETHTOOL requests (driver statistics). nil is
	// the kernel's ioctl; tests inject kerneltest's.
	Ethtool EthtoolIoctl
	// Log returns the kernel log's text (dmesg's); nil reads the
	// machine's (Device.Log). Tests inject a fixture's.
	Log func(ctx context.Context) ([]byte, error)
	// FirmwareDir is where the kernel's firmware loader finds the files
	// `devlink dev flash` names; "" means /lib/firmware. Tests give a
	// temporary folder their fake kernel reads.
	FirmwareDir string
}

func (o Options) root() string {
	if o.Root == "" {
		return "/sys"
	}
	return o.Root
}

// Device is one ConnectX PCI function as the kernel drivers show it.
type Device struct {
	opts Options
	// Given is the name Open was called with, without "kernel:".
	Given string
	// RDMA is the RDMA device (mlx5_0), "" when mlx5_ib has none for this
	// function (Ethernet-only hosts without the RDMA driver).
	RDMA string
	// BDF is the PCI function (0000:c1:00.0).
	BDF string
	// pciDir is the function's sysfs directory, symlinks resolved so that
	// hwmon's device links can be compared with it.
	pciDir string
}

// NotFoundError is a name that matches nothing the kernel exposes.
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

// ErrReadOnly is matched (errors.Is) by every refusal to write.
var ErrReadOnly = errors.New("kernel: the kernel backend is read-only; use direct access (-d 0000:03:00.0 as root) to write registers")

// ReadOnlyError refuses a write. Callers surface it as is: the message says
// what to do instead.
type ReadOnlyError struct {
	// BDF names the function in the advice; "" keeps the example address.
	BDF string
	// What was refused ("register PAOS", "hw_counters/lifespan").
	What string
}

func (e *ReadOnlyError) Error() string {
	bdf := e.BDF
	if bdf == "" {
		bdf = "0000:03:00.0"
	}
	msg := fmt.Sprintf("kernel: the kernel backend is read-only; use direct access (-d %s as root) to write registers", bdf)
	if e.What != "" {
		msg = fmt.Sprintf("%s (refused: write %s)", msg, e.What)
	}
	return msg
}

// Is makes errors.Is(err, ErrReadOnly) true.
func (e *ReadOnlyError) Is(target error) bool { return target == ErrReadOnly }

// ErrNoRegisters is matched by register reads through this backend.
var ErrNoRegisters = errors.New("kernel: the kernel backend reads no registers")

// NoRegistersError refuses a register read: the kernel backend reads sysfs,
// hwmon, devlink and ethtool netlink, never the PRM registers.
type NoRegistersError struct {
	BDF string
	ID  uint16
}

func (e *NoRegistersError) Error() string {
	bdf := e.BDF
	if bdf == "" {
		bdf = "0000:03:00.0"
	}
	return fmt.Sprintf("kernel: the kernel backend reads no registers (register 0x%04x); it reads sysfs, hwmon, devlink and ethtool netlink: use direct access (-d %s as root) for registers", e.ID, bdf)
}

// Is makes errors.Is(err, ErrNoRegisters) true.
func (e *NoRegistersError) Is(target error) bool { return target == ErrNoRegisters }

// Write refuses any write through the kernel backend. It exists so that
// callers holding a kernel Device have one call, and one error, for "the
// user asked to change something".
func (d *Device) Write(ctx context.Context, what string) error {
	return &ReadOnlyError{BDF: d.BDF, What: what}
}

// Access lets a Device stand where a register accessor is expected (the
// dev package's Accessor): a query is refused with NoRegistersError, a write
// with ReadOnlyError, so `reg get/set -d kernel:...` fail with advice rather
// than a generic error.
func (d *Device) Access(ctx context.Context, method regaccess.Method, id uint16, data []byte) ([]byte, error) {
	if method == regaccess.Get {
		return nil, &NoRegistersError{BDF: d.BDF, ID: id}
	}
	return nil, &ReadOnlyError{BDF: d.BDF, What: fmt.Sprintf("register 0x%04x", id)}
}

// Close releases nothing today (connections are per call); it is there so
// callers can treat a Device like the other backends.
func (d *Device) Close() error { return nil }

// Root is the sysfs tree the device was opened in.
func (d *Device) Root() string { return d.opts.root() }

// bdfRE is a full PCI address as sysfs names devices.
var bdfRE = lazyre.New(`^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)

// Open finds a ConnectX function by an RDMA device name (mlx5_0), a network
// interface (ens1f0np0) or a PCI address (0000:c1:00.0 or c1:00.0); a
// "kernel:" prefix is accepted and dropped. The name is resolved by
// dev/devname, as every -d name is; it reads sysfs links and the PCI
// identity only, so it is cheap; the reads happen in the methods.
func Open(ctx context.Context, given string, opts Options) (*Device, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(given), "kernel:"))
	if name == "" {
		return nil, errors.New("kernel: no device name; give an RDMA device (kernel:mlx5_0), an interface or a PCI address")
	}
	if strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil, fmt.Errorf("kernel: %q is not a device name; give an RDMA device (kernel:mlx5_0), an interface or a PCI address", name)
	}
	if err := hostCheck(opts); err != nil {
		return nil, err
	}
	sys := devname.Sys{Root: opts.root()}
	n, err := sys.Parse("kernel:" + name)
	if err != nil {
		return nil, notFound(err)
	}
	f, err := sys.Function(n.BDF)
	if err != nil {
		return nil, notFound(err)
	}
	d, err := OpenFunction(ctx, n.RDMA, f, opts)
	if err != nil {
		return nil, err
	}
	d.Given = name
	return d, nil
}

// notFound keeps devname's "no such device here" as this package's
// NotFoundError.
func notFound(err error) error {
	var nf *devname.NotFoundError
	if errors.As(err, &nf) {
		return &NotFoundError{"kernel: " + nf.Msg}
	}
	return fmt.Errorf("kernel: %w", err)
}

// OpenFunction opens a function already found in sysfs (devname.Sys's
// Function), without reading its identity again; rdma is the RDMA device
// the user named ("" for the function's first one).
func OpenFunction(ctx context.Context, rdma string, f devname.Function, opts Options) (*Device, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := hostCheck(opts); err != nil {
		return nil, err
	}
	root := opts.root()
	real, err := filepath.EvalSymlinks(filepath.Join(root, "bus/pci/devices", f.BDF))
	if err != nil {
		return nil, &NotFoundError{fmt.Sprintf("kernel: no PCI function %s in %s; 'cxray status' lists the adapters", f.BDF, root)}
	}
	if drv := f.Driver; drv != "mlx5_core" {
		if drv == "" {
			drv = "no driver"
		}
		return nil, fmt.Errorf("kernel: %s is bound to %s, not mlx5_core, so the kernel exposes nothing about it; load the driver (modprobe mlx5_core), or use direct access (-d %s as root)", f.BDF, drv, f.BDF)
	}
	d := &Device{opts: opts, Given: f.BDF, RDMA: rdma, BDF: f.BDF, pciDir: real}
	if rdma != "" {
		d.Given = rdma
	}
	if d.RDMA == "" && len(f.RDMA) > 0 {
		d.RDMA = f.RDMA[0]
	}
	return d, nil
}

// List names every function mlx5_core drives, by RDMA device where mlx5_ib
// made one, else by PCI address; each name can be given to Open.
func List(ctx context.Context, opts Options) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := hostCheck(opts); err != nil {
		return nil, err
	}
	fs, err := devname.Sys{Root: opts.root()}.List()
	if err != nil {
		return nil, fmt.Errorf("kernel: listing PCI functions: %v", err)
	}
	var out []string
	for _, f := range fs {
		if f.Driver != "mlx5_core" {
			continue
		}
		if len(f.RDMA) > 0 {
			out = append(out, f.RDMA...)
		} else {
			out = append(out, f.BDF)
		}
	}
	sort.Strings(out)
	return out, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

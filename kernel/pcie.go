package kernel

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cxray/cxray/pcie"
)

// PCIe reads the function's PCI Express link and AER counters from sysfs
// (ReadPCIe).
func (d *Device) PCIe(ctx context.Context) (fn, bridge *pcie.HostView, err error) {
	return ReadPCIe(ctx, d.opts.root(), d.BDF)
}

// ReadPCIe reads a PCI function's link from sysfs: current_link_speed,
// current_link_width, max_link_speed, max_link_width and the aer_dev_*
// counters of <root>/bus/pci/devices/<bdf>, and the same link attributes
// of its upstream bridge (the slot's port: the PCI device whose directory
// holds the function's), nil when the function has none there (a
// function on a root bus, a virtual one). It needs no privilege and reads
// no config space. A missing attribute is listed in the view, not an
// error: kernels before 4.13 have no link attributes, before 5.1 no AER
// counters.
func ReadPCIe(ctx context.Context, root, bdf string) (fn, bridge *pcie.HostView, err error) {
	dir := filepath.Join(root, "bus/pci/devices", bdf)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, nil, &NotFoundError{"kernel: no PCI function " + bdf + " in " + root + "; 'cxray status' lists the adapters"}
	}
	fn, err = readHostView(ctx, real, bdf)
	if err != nil {
		return nil, nil, err
	}
	parent := filepath.Dir(real)
	if name := filepath.Base(parent); bdfRE.MatchString(name) && exists(filepath.Join(parent, pcie.AttrMaxSpeed)) {
		bridge, err = readHostView(ctx, parent, name)
		if err != nil {
			return fn, nil, err
		}
	}
	return fn, bridge, nil
}

func readHostView(ctx context.Context, dir, bdf string) (*pcie.HostView, error) {
	var ctxErr error
	var refused []string
	v := pcie.ParseHostView(bdf, func(name string) (string, bool) {
		if ctxErr != nil {
			return "", false
		}
		s, err := readAttr(ctx, filepath.Join(dir, name))
		switch {
		case err == nil:
			return s + "\n", true
		case ctx.Err() != nil:
			ctxErr = err
		case !errors.Is(err, fs.ErrNotExist):
			// The kernel refused the attribute (EIO, EINVAL for a link it
			// cannot read): said, and read as absent.
			refused = append(refused, fmt.Sprintf("%s: %v", name, errnoOf(err)))
		}
		return "", false
	})
	if ctxErr != nil {
		return nil, ctxErr
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, &GoneError{Name: bdf}
	}
	v.Problems = append(v.Problems, refused...)
	return v, nil
}

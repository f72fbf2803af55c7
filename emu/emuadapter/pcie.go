package emuadapter

import (
	"context"
	"fmt"

	"github.com/cxray/cxray/emu/hostlink"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/emu/sysfs"
	"github.com/cxray/cxray/pcie"
)

// pcieAttrs are a function's PCI Express attributes as the kernel's sysfs
// writes them (drivers/pci/pci-sysfs.c, drivers/pci/pcie/aer.c): the
// link's current and maximum speed and width, and the AER counters, read
// through do so that the clock (steady errors) is up to date.
func pcieAttrs(f *scenario.Function, do func(func() error) error) map[string]sysfs.Attr {
	m := f.Adapter.Link
	if m == nil {
		return nil
	}
	fn := functionIndex(f)
	link := func(get func(hostlink.Spec) string) sysfs.Attr {
		return func() (string, error) {
			if err := gone(f); err != nil {
				return "", err
			}
			var s string
			err := do(func() error { s = get(m.Spec()); return nil })
			return s + "\n", err
		}
	}
	counts := func(pick func(hostlink.Counts) map[int]uint64, names map[int]string, total string) sysfs.Attr {
		return func() (string, error) {
			if err := gone(f); err != nil {
				return "", err
			}
			var s string
			err := do(func() error {
				c, err := m.Counts(fn)
				if err != nil {
					return err
				}
				s = pcie.FormatAERCounts(pick(c), names, total)
				return nil
			})
			return s, err
		}
	}
	return map[string]sysfs.Attr{
		pcie.AttrCurrentSpeed: link(func(s hostlink.Spec) string { return s.Trained.Speed.String() }),
		pcie.AttrCurrentWidth: link(func(s hostlink.Spec) string { return fmt.Sprint(s.Trained.Width) }),
		pcie.AttrMaxSpeed:     link(func(s hostlink.Spec) string { return s.Card.Speed.String() }),
		pcie.AttrMaxWidth:     link(func(s hostlink.Spec) string { return fmt.Sprint(s.Card.Width) }),
		pcie.AttrAERCor: counts(func(c hostlink.Counts) map[int]uint64 { return c.Correctable },
			pcie.CorrectableNames, "TOTAL_ERR_COR"),
		pcie.AttrAERNonFatal: counts(func(c hostlink.Counts) map[int]uint64 { return c.NonFatal },
			pcie.UncorrectableNames, "TOTAL_ERR_NONFATAL"),
		pcie.AttrAERFatal: counts(func(c hostlink.Counts) map[int]uint64 { return c.Fatal },
			pcie.UncorrectableNames, "TOTAL_ERR_FATAL"),
	}
}

// gone is the error of an attribute of a removed function: its link
// cannot be read (a host's sysfs reads the dead config space).
func gone(f *scenario.Function) error {
	if f.Device.Faults().Removed {
		return fmt.Errorf("function %s is gone (removed)", f.BDF)
	}
	return nil
}

// bridgeAttrs are the link attributes of the slot's port: the same link's
// current speed and width, and the port's own maximum.
func bridgeAttrs(m *hostlink.Model, do func(func() error) error) map[string]sysfs.Attr {
	link := func(get func(hostlink.Spec) string) sysfs.Attr {
		return func() (string, error) {
			var s string
			err := do(func() error { s = get(m.Spec()); return nil })
			return s + "\n", err
		}
	}
	return map[string]sysfs.Attr{
		pcie.AttrCurrentSpeed: link(func(s hostlink.Spec) string { return s.Trained.Speed.String() }),
		pcie.AttrCurrentWidth: link(func(s hostlink.Spec) string { return fmt.Sprint(s.Trained.Width) }),
		pcie.AttrMaxSpeed:     link(func(s hostlink.Spec) string { return s.Slot.Speed.String() }),
		pcie.AttrMaxWidth:     link(func(s hostlink.Spec) string { return fmt.Sprint(s.Slot.Width) }),
	}
}

// The emulated root port's IDs: a vendor no ConnectX tool takes for an
// adapter, and a device ID of 0 (it names no real product).
const (
	BridgeVendor = 0x8086
	BridgeDevice = 0x0000
)

// BridgeBDF is the address of the root port an emulated function sits
// behind: device (bus mod 32) of bus 0 of its domain, one port per bus.
// "" when the scenario gives no slot (the bridge is not served then) or
// the address would be a function's own.
func BridgeBDF(f *scenario.Function) string {
	if f.Adapter == nil || f.Adapter.Spec == nil || f.Adapter.Spec.PCIe.Slot == (pcie.Link{}) {
		return ""
	}
	b, err := scenario.ParseBDF(f.BDF)
	if err != nil || b.Bus == 0 {
		return ""
	}
	br := scenario.BDF{Domain: b.Domain, Bus: 0, Device: b.Bus & 0x1f}
	return br.String()
}

// functionIndex is a function's place in its adapter.
func functionIndex(f *scenario.Function) int {
	for i, g := range f.Adapter.Functions {
		if g == f {
			return i
		}
	}
	return -1
}

// hostView is what the kernel's sysfs would say of a function and its
// bridge, read through the same attribute texts `emu run` serves and the
// parser the kernel backend uses.
func hostView(f *scenario.Function, do func(func() error) error) (fn, bridge *pcie.HostView, err error) {
	read := func(attrs map[string]sysfs.Attr) func(string) (string, bool) {
		return func(name string) (string, bool) {
			a, ok := attrs[name]
			if !ok {
				return "", false
			}
			s, e := a()
			if e != nil {
				if err == nil {
					err = e
				}
				return "", false
			}
			return s, true
		}
	}
	attrs := pcieAttrs(f, do)
	if attrs == nil {
		return nil, nil, fmt.Errorf("function %s has no PCIe link model", f.BDF)
	}
	fn = pcie.ParseHostView(f.BDF, read(attrs))
	if b := BridgeBDF(f); b != "" {
		bridge = pcie.ParseHostView(b, read(bridgeAttrs(f.Adapter.Link, do)))
	}
	return fn, bridge, err
}

// pcieHost is an emulated function's adapter.PCIeHost: its config space
// and the sysfs view `emu run` would serve, both read up to date (do).
type pcieHost struct {
	f  *scenario.Function
	do func(func() error) error
}

func (h pcieHost) Config(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var img []byte
	err := h.do(func() error {
		var err error
		img, err = pcie.ReadConfig(h.f.Config)
		return err
	})
	return img, err
}

func (h pcieHost) Sysfs(ctx context.Context) (*pcie.HostView, *pcie.HostView, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return hostView(h.f, h.do)
}

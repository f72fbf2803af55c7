package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/emu/rdma"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/prm"
)

// The in-process emulator. The CLI is the only layer that imports it; the
// device is then reached through the same access path as hardware.

// splitEmuName separates "emu:lab.yaml@0000:03:00.1" into the scenario name
// and the function to use (first function when none is given).
func splitEmuName(n devname.Name) (string, string) {
	name := "emu"
	if n.Emu != "" {
		name = "emu:" + n.Emu
	}
	if i := strings.LastIndexByte(name, '@'); i > 0 {
		return name[:i], name[i+1:]
	}
	return name, ""
}

func (a *app) buildEmulation(n devname.Name, db *prm.DB) (*scenario.Emulation, string, error) {
	name, fn := splitEmuName(n)
	// The emulated firmware answers from its own register database (the
	// built-in one), whatever database the user decodes with: a real
	// adapter does not change with --adb either.
	e, err := scenario.Resolve(name, scenario.Options{})
	if err != nil {
		return nil, "", usageWrap(err)
	}
	return e, fn, nil
}

// emuStackOptions keep the emulator quick to give up on held semaphores,
// so fault demonstrations finish within the command's timeout.
var emuStackOptions = dev.StackOptions{SemaphoreTimeout: 2 * time.Second}

func (a *app) openEmu(ctx context.Context, n devname.Name, db *prm.DB) (*opened, error) {
	e, fn, err := a.buildEmulation(n, db)
	if err != nil {
		return nil, err
	}
	f := e.Functions()[0]
	if fn != "" {
		if f, err = e.Function(fn); err != nil {
			return nil, usageWrap(err)
		}
	}
	d, _, err := dev.OpenConfigSpace(ctx, n.Given, f.BDF, "emulator", db, f.Device, emuStackOptions)
	if err != nil {
		return nil, deviceErr(err)
	}
	return &opened{dev: d, name: n, emu: e}, nil
}

func (a *app) emuStatus(ctx context.Context, n devname.Name, db *prm.DB) ([]statusEntry, error) {
	e, fn, err := a.buildEmulation(n, db)
	if err != nil {
		return nil, err
	}
	var out []statusEntry
	for _, f := range e.Functions() {
		if fn != "" && f.BDF != fn && f.Netdev != fn && f.RDMA != fn {
			continue
		}
		id := f.Device.Identity()
		model, _ := devname.Model(id.DeviceID)
		en := statusEntry{BDF: f.BDF, Device: n.Given + "@" + f.BDF, Model: model, DeviceID: id.DeviceID, Backend: "emulator",
			Netdevs: []string{}, RDMA: []string{}, NUMANode: 0, OSMACs: map[string]string{}}
		if f.Netdev != "" {
			en.Netdevs = append(en.Netdevs, f.Netdev)
		}
		if f.RDMA != "" {
			en.RDMA = append(en.RDMA, f.RDMA)
		}
		if mac := emuOSMAC(f); mac != "" && f.Netdev != "" {
			en.OSMACs[f.Netdev] = mac
		}
		d, _, err := dev.OpenConfigSpace(ctx, en.Device, f.BDF, "emulator", db, f.Device, emuStackOptions)
		if err != nil {
			en.Error = err.Error()
		} else {
			fillFromFirmware(ctx, d, &en)
		}
		out = append(out, en)
	}
	if len(out) == 0 {
		return nil, usageErr("no emulated function %q in %s", fn, n.Given)
	}
	return out, nil
}

// emuOSMAC is the address the emulated netdev uses (what sysfs would show):
// the scenario's override, or the adapter's base MAC plus the function
// number, as the driver assigns.
func emuOSMAC(f *scenario.Function) string {
	if f.MAC != 0 {
		return prm.FormatMAC(f.MAC)
	}
	base := f.Adapter.Spec.Spec.BaseMAC
	if base == 0 {
		return ""
	}
	return prm.FormatMAC(base + uint64(dev.PCIFunction(f.BDF)))
}

// rdmaModels builds the RDMA counter model of each adapter of an emulation,
// on the path its scenario gives (emu/rdma).
type rdmaModels struct {
	e *scenario.Emulation
	m map[*scenario.Adapter]*rdma.Model
}

func newRDMAModels(e *scenario.Emulation) *rdmaModels {
	return &rdmaModels{e: e, m: map[*scenario.Adapter]*rdma.Model{}}
}

func rdmaConfig(s scenario.RDMASpec) rdma.Config {
	return rdma.Config{Loss: s.Loss, RTT: s.RTT, LogWindow: s.LogWindow, Share: s.Share, Priority: s.Priority}
}

// model returns the adapter's model, building it on first use.
func (r *rdmaModels) model(a *scenario.Adapter) (*rdma.Model, error) {
	if m := r.m[a]; m != nil {
		return m, nil
	}
	var cfg rdma.Config
	if a.Spec != nil {
		cfg = rdmaConfig(a.Spec.RDMA)
	}
	m, err := rdma.New(a, r.e.Clock, cfg)
	if err != nil {
		return nil, err
	}
	if a.Spec != nil {
		for port, ps := range a.Spec.PortRDMA {
			c := rdmaConfig(ps)
			if c.LogWindow == 0 {
				c.LogWindow = cfg.LogWindow
			}
			if err := m.SetPortConfig(port, c); err != nil {
				return nil, err
			}
		}
	}
	r.m[a] = m
	return m, nil
}

// counters reads a function's local port through its adapter's model.
func (r *rdmaModels) counters(f *scenario.Function, port int) (map[string]uint64, error) {
	m, err := r.model(f.Adapter)
	if err != nil {
		return nil, err
	}
	ports := f.View.Ports()
	if port < 1 || port > len(ports) {
		return nil, fmt.Errorf("no local port %d on %s", port, f.BDF)
	}
	return m.Counters(ports[port-1], r.e.Clock.Now())
}

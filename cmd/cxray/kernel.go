package main

import (
	"context"
	"sort"
	"strings"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/prm"
)

// kernelOptions says where the kernel backend reads: the sysfs tree device
// names resolve in, and the machine's netlink. Tests replace it to add fake
// netlink connections.
var kernelOptions = func() kernel.Options { return kernel.Options{Root: sys.Root} }

// kernelStatus answers `cxray status -d kernel:NAME` from the read-only
// kernel backend: sysfs, devlink and rtnetlink, none of which needs root.
func (a *app) kernelStatus(ctx context.Context, name devname.Name) ([]statusEntry, error) {
	d, err := kernel.Open(ctx, name.Kernel, kernelOptions())
	if err != nil {
		return nil, deviceErr(err)
	}
	s, err := d.Snapshot(ctx, kernel.SnapshotOptions{Devlink: true, Links: true})
	if err != nil {
		return nil, deviceErr(err)
	}
	return []statusEntry{kernelEntry(s)}, nil
}

// kernelEntry fills a status line from a kernel snapshot. Firmware and
// PSID come from sysfs (what mlx5_ib shows), else from devlink; the
// permanent MAC is the kernel's (IFLA_PERM_ADDRESS) for the first
// interface.
func kernelEntry(s *kernel.Snapshot) statusEntry {
	id := s.Identity
	if id == nil { // its failure is in s.Errors
		id = &kernel.Identity{NUMANode: -1}
	}
	e := statusEntry{BDF: s.BDF, Device: "kernel:" + s.Name, Model: id.Model, DeviceID: id.DeviceID, Backend: "kernel",
		PSID: id.BoardID, Firmware: id.FirmwareVersion, Ports: len(s.Ports), Netdevs: id.Netdevs, RDMA: []string{},
		NUMANode: id.NUMANode, NodeGUID: id.NodeGUID, OSMACs: map[string]string{}}
	if id.RDMA != "" {
		e.RDMA = []string{id.RDMA}
	}
	if e.Netdevs == nil {
		e.Netdevs = []string{}
	}
	if s.Devlink != nil {
		if e.PSID == "" {
			e.PSID = s.Devlink.PSID()
		}
		if e.Firmware == "" {
			e.Firmware = s.Devlink.FirmwareRunning()
		}
	}
	for i, n := range s.Netdevs {
		if n.Address != "" {
			e.OSMACs[n.Name] = n.Address
		}
		if i == 0 {
			e.PermanentMAC = n.PermanentAddress
		}
		if n.MACDrift {
			e.MACDrift = true
		}
	}
	// Parts that failed (no devlink, netlink refused) are worth a note;
	// the rest of the line is still good.
	var notes []string
	for _, part := range sortedKeys(s.Errors) {
		notes = append(notes, s.Errors[part])
	}
	e.Error = strings.Join(notes, "; ")
	return e
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// openKernel opens -d kernel:NAME as a register device that refuses every
// access with advice: the kernel backend reads no registers and writes
// nothing, so `reg get/set` say to use direct access instead.
func (a *app) openKernel(ctx context.Context, n devname.Name, db *prm.DB) (*opened, error) {
	d, err := kernel.Open(ctx, n.Kernel, kernelOptions())
	if err != nil {
		return nil, deviceErr(err)
	}
	return &opened{dev: dev.New(n.Given, d.BDF, "kernel", db, d, d.Close), name: n, kernel: d}, nil
}

// kernelRDMA reads a port's hw_counters through the kernel backend.
func kernelRDMA(o *opened) func(ctx context.Context, port int) (map[string]uint64, error) {
	if o.kernel == nil {
		return nil
	}
	return func(ctx context.Context, port int) (map[string]uint64, error) {
		p, err := o.kernel.Port(ctx, port)
		if err != nil {
			return nil, err
		}
		return p.HWCounters, nil
	}
}

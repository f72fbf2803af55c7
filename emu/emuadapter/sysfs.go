package emuadapter

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/cxray/cxray/access/fwctl"
	"github.com/cxray/cxray/emu/cmdif"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/rdma"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/emu/sysfs"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/cmdb"
)

// SysfsEntries are an emulation's functions as `emu run` and `emu serve`
// serve them (emu/sysfs): the PCI function, and its interface and RDMA
// device as /sys/class/net and /sys/class/infiniband show them on a host
// with mlx5_core and mlx5_ib loaded, so names (-d mlx5_0, -d ens1f0np0)
// and the kernel backend (-d kernel:mlx5_0) work inside. Attributes that
// change (link state, counters) are read through do, so they are up to
// date with the kept state (state.State.Do; nil reads the model as it
// is). The PCI Express link is there too (current_link_speed, aer_dev_*,
// and the slot's port as the function's parent when the scenario gives a
// slot: pcie.go).
func SysfsEntries(e *scenario.Emulation, do func(func() error) error) []sysfs.DeviceEntry {
	if do == nil {
		do = func(fn func() error) error { return fn() }
	}
	models := newRDMAModels(e)
	host, _ := os.Hostname()
	if host == "" {
		host = "cxray-emu"
	}
	var out []sysfs.DeviceEntry
	for i, f := range e.Functions() {
		// The IDs come from the identity, as enumeration saw them: a
		// function removed later (or at power-on) keeps its sysfs IDs.
		id := f.Device.Identity()
		// Config, not Device: on a lockdown: true device the config file
		// refuses writes with EPERM for every client, as a locked-down
		// kernel's sysfs config file does.
		d := sysfs.DeviceEntry{BDF: f.BDF, Dev: f.Config, NUMANode: NUMANode(f, -1), Driver: "mlx5_core",
			Vendor: id.VendorID, Device: id.DeviceID, SubVendor: id.SubsystemVendorID, SubDevice: id.SubsystemID,
			Class: id.ClassCode, Revision: id.Revision, ClassAttrs: map[string]map[string]sysfs.Attr{}}
		d.Attrs = pcieAttrs(f, do)
		if b := BridgeBDF(f); b != "" && f.Adapter.Link != nil {
			d.Upstream = &sysfs.Bridge{BDF: b, Vendor: BridgeVendor, Device: BridgeDevice, Attrs: bridgeAttrs(f.Adapter.Link, do)}
		}
		if f.Netdev != "" {
			d.Netdevs = []string{f.Netdev}
			d.ClassAttrs[f.Netdev] = netdevAttrs(f, do)
		}
		if f.RDMA != "" {
			d.RDMA = []string{f.RDMA}
			d.ClassAttrs[f.RDMA] = rdmaAttrs(f, do, models, host)
		}
		d.Fwctl = fwctlDevice(e, f, models, do, i)
		out = append(out, d)
	}
	return out
}

// fwctlDevice is the function's command interface as mlx5_fwctl offers
// it on a host (Linux 6.15+): the same endpoint (emu/cmdif) the
// in-process emulator's fwctl client talks to, behind the device file.
// It is what a locked-down host leaves open, so --via auto falls back to
// it inside emu run as it does on such a host. The device data is struct
// fwctl_info_mlx5 (include/uapi/fwctl/mlx5.h): the user context's uid
// (one per function here) and its capabilities (none).
func fwctlDevice(e *scenario.Emulation, f *scenario.Function, models *rdmaModels, do func(func() error) error, i int) *sysfs.Fwctl {
	var (
		once sync.Once
		rpc  lockedRPC
		err  error
	)
	data := make([]byte, 8)
	binary.NativeEndian.PutUint32(data, uint32(i+1))
	return &sysfs.Fwctl{DeviceType: fwctl.DeviceTypeMLX5, DeviceData: data,
		RPC: func(ctx context.Context, scope uint32, in []byte, outLen int) ([]byte, error) {
			// Built on first use: a run that never asks pays nothing.
			once.Do(func() {
				var ep *cmdif.Endpoint
				err = do(func() error {
					m, err := models.model(f.Adapter)
					if err != nil {
						return err
					}
					ep, err = cmdif.New(e, f, cmdif.Options{RDMA: m})
					return err
				})
				rpc = lockedRPC{ep: ep, do: do}
			})
			if err != nil {
				return nil, err
			}
			return rpc.RPC(ctx, cmdb.Scope(scope), in, outLen)
		}}
}

func text(s string) sysfs.Attr { return func() (string, error) { return s + "\n", nil } }

// ownPort is the status of the function's own port (its local port 1).
func ownPort(f *scenario.Function) (fw.PortStatus, bool) { return localPort(f, 1) }

// localPort is the status of the function's local port n (1-based).
func localPort(f *scenario.Function, n int) (fw.PortStatus, bool) {
	ps := f.Adapter.Firmware.Ports()
	own := f.View.Ports()
	if n < 1 || n > len(own) || own[n-1] < 1 || own[n-1] > len(ps) {
		return fw.PortStatus{}, false
	}
	return ps[own[n-1]-1], true
}

// portAttr reads the function's port (up to date) and formats it.
func portAttr(f *scenario.Function, do func(func() error) error, format func(fw.PortStatus) string) sysfs.Attr {
	return localPortAttr(f, 1, do, format)
}

// localPortAttr is portAttr for local port n.
func localPortAttr(f *scenario.Function, n int, do func(func() error) error, format func(fw.PortStatus) string) sysfs.Attr {
	return func() (string, error) {
		var s string
		err := do(func() error {
			p, ok := localPort(f, n)
			if !ok {
				return fmt.Errorf("function %s has no port", f.BDF)
			}
			s = format(p)
			return nil
		})
		return s + "\n", err
	}
}

func netdevAttrs(f *scenario.Function, do func(func() error) error) map[string]sysfs.Attr {
	assign := "0" // NET_ADDR_PERM
	if OSMAC(f) != PermanentMAC(f) {
		assign = "3" // NET_ADDR_SET: an administrator's address
	}
	typ := "1" // ARPHRD_ETHER
	if InfiniBand(f) {
		typ = "32" // ARPHRD_INFINIBAND: IPoIB
	}
	return map[string]sysfs.Attr{
		"address":          text(OSMAC(f)),
		"addr_assign_type": text(assign),
		"type":             text(typ),
		"operstate": portAttr(f, do, func(p fw.PortStatus) string {
			if p.OperUp {
				return "up"
			}
			return "down"
		}),
	}
}

func rdmaAttrs(f *scenario.Function, do func(func() error) error, models *rdmaModels, host string) map[string]sysfs.Attr {
	spec := f.Adapter.Firmware.Spec()
	id := f.Device.Identity()
	a := map[string]sysfs.Attr{
		"fw_ver":    text(fmt.Sprintf("%d.%d.%d", spec.FW.Major, spec.FW.Minor, spec.FW.SubMinor)),
		"board_id":  text(spec.PSID),
		"hca_type":  text("MT" + strconv.Itoa(int(id.DeviceID))),
		"hw_rev":    text(fmt.Sprintf("0x%x", id.Revision)),
		"node_type": text("1: CA"),
		"node_desc": text(host + " " + f.RDMA),
	}
	if spec.BaseGUID != 0 {
		// As PGUID answers through this function: its own node GUID,
		// and the system image GUID its adapter's PFs share.
		a["node_guid"] = text(prm.FormatGUID(spec.NodeGUID(f.Port)))
		a["sys_image_guid"] = text(prm.FormatGUID(spec.BaseGUID))
	}
	// One RDMA port per local port the function owns, as mlx5_ib
	// registers them (a function owning both ports has ports/1 and 2).
	for n := 1; n <= max(len(f.View.Ports()), 1); n++ {
		port := fmt.Sprintf("ports/%d/", n)
		st, _ := localPort(f, n)
		if st.LinkType == fw.LinkInfiniBand {
			ibPortAttrs(f, n, do, port, a)
			continue
		}
		a[port+"link_layer"] = text("Ethernet")
		a[port+"lid"] = text("0x0")
		a[port+"sm_lid"] = text("0x0")
		a[port+"state"] = localPortAttr(f, n, do, func(p fw.PortStatus) string {
			if p.OperUp {
				return "4: ACTIVE"
			}
			return "1: DOWN"
		})
		a[port+"phys_state"] = localPortAttr(f, n, do, physState)
		a[port+"rate"] = localPortAttr(f, n, do, rateText)
		if f.Netdev != "" && n == 1 {
			a[port+"gid_attrs/ndevs/0"] = text(f.Netdev)
		}
	}
	for n := 1; n <= max(len(f.View.Ports()), 1); n++ {
		port := fmt.Sprintf("ports/%d/", n)
		a[port+"hw_counters/lifespan"] = text("10")
		for _, name := range rdma.Names() {
			name, n := name, n
			a[port+"hw_counters/"+name] = func() (string, error) {
				var v uint64
				err := do(func() error {
					c, err := models.counters(f, n)
					v = c[name]
					return err
				})
				return strconv.FormatUint(v, 10) + "\n", err
			}
		}
	}
	return a
}

// physState is the port's physical state as the kernel prints it.
func physState(p fw.PortStatus) string {
	switch {
	case p.OperUp:
		return "5: LinkUp"
	case !p.AdminUp:
		return "3: Disabled"
	}
	return "2: Polling"
}

// rateText is the rate attribute mlx5_ib derives from the Ethernet
// protocol: lanes as the IB width, the per-lane speed as the IB speed
// class (25G lanes EDR, 50G HDR, 100G NDR, ...). A port without link
// reports the slowest rate, 1X SDR.
func rateText(p fw.PortStatus) string {
	if !p.OperUp || p.Protocol == "" {
		return "2.5 Gb/sec (1X)"
	}
	proto, err := fw.LookupEthProtocol(p.Protocol)
	if err != nil || proto.Lanes < 1 {
		return "2.5 Gb/sec (1X)"
	}
	lane := float64(proto.Gbps) / float64(proto.Lanes)
	speeds := []struct {
		gbps float64
		name string
	}{{200, "XDR"}, {100, "NDR"}, {50, "HDR"}, {25, "EDR"}, {14, "FDR"}, {10, "QDR"}, {5, "DDR"}}
	for _, s := range speeds {
		if lane >= s.gbps {
			return fmt.Sprintf("%g Gb/sec (%dX %s)", s.gbps*float64(proto.Lanes), proto.Lanes, s.name)
		}
	}
	return fmt.Sprintf("%g Gb/sec (%dX)", 2.5*float64(proto.Lanes), proto.Lanes)
}

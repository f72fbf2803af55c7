package emuadapter

import (
	"fmt"
	"strconv"

	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/emu/sysfs"
)

// InfiniBand says whether a function's own port runs InfiniBand: its
// interface is then an IPoIB one and its RDMA port an IB port.
func InfiniBand(f *scenario.Function) bool {
	st, ok := ownPort(f)
	return ok && st.LinkType == fw.LinkInfiniBand
}

// NUMANode is the NUMA node of the function's slot as its scenario gives
// it, or def when it gives none.
func NUMANode(f *scenario.Function, def int) int {
	if f.Adapter != nil && f.Adapter.Spec != nil && f.Adapter.Spec.NUMANode != nil {
		return *f.Adapter.Spec.NUMANode
	}
	return def
}

// ipoibQPN is the queue pair of the emulated IPoIB interfaces (the first
// four bytes of the address: flags and QPN; the driver allocates it).
const ipoibQPN = 0x001049

// IPoIBAddress is the 20-byte hardware address of an IPoIB interface: the
// QPN, then the port GID fe80::<port GUID> (the PF's port GUID,
// fw.Spec.NodeGUID; Documentation/networking/ipoib.rst describes the form).
func IPoIBAddress(f *scenario.Function) string {
	q := uint32(ipoibQPN)
	b := []byte{0, byte(q >> 16), byte(q >> 8), byte(q), 0xfe, 0x80, 0, 0, 0, 0, 0, 0}
	g := f.Adapter.Spec.Spec.NodeGUID(f.Port)
	for i := 7; i >= 0; i-- {
		b = append(b, byte(g>>(8*i)))
	}
	s := ""
	for i, x := range b {
		if i > 0 {
			s += ":"
		}
		s += fmt.Sprintf("%02x", x)
	}
	return s
}

// ibStateNames are the kernel's words for the IB logical states
// (drivers/infiniband/core/sysfs.c state_show).
var ibStateNames = map[int]string{1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}

// ibPortAttrs are an InfiniBand port's sysfs attributes: its logical and
// physical states, rate, LIDs and the PMA PortCounters (counters/), in the
// kernel's formats (Documentation/ABI/stable/sysfs-class-infiniband).
func ibPortAttrs(f *scenario.Function, n int, do func(func() error) error, port string, a map[string]sysfs.Attr) {
	a[port+"link_layer"] = text("InfiniBand")
	a[port+"state"] = localPortAttr(f, n, do, func(p fw.PortStatus) string {
		return fmt.Sprintf("%d: %s", p.IBStateID, ibStateNames[p.IBStateID])
	})
	a[port+"phys_state"] = localPortAttr(f, n, do, physState)
	a[port+"rate"] = localPortAttr(f, n, do, ibRateText)
	a[port+"lid"] = localPortAttr(f, n, do, func(p fw.PortStatus) string { return fmt.Sprintf("0x%x", p.LID) })
	a[port+"sm_lid"] = localPortAttr(f, n, do, func(p fw.PortStatus) string { return fmt.Sprintf("0x%x", p.SMLID) })
	a[port+"lid_mask_count"] = text("0")
	a[port+"sm_sl"] = text("0")
	for _, name := range ibCounterNames {
		name := name
		a[port+"counters/"+name] = func() (string, error) {
			var v uint64
			err := do(func() error {
				own := f.View.Ports()
				if n < 1 || n > len(own) {
					return fmt.Errorf("function %s has no port %d", f.BDF, n)
				}
				c, err := f.Adapter.Firmware.IBCounters(own[n-1])
				v = c[name]
				return err
			})
			return strconv.FormatUint(v, 10) + "\n", err
		}
	}
}

// ibCounterNames are the files of counters/ on an mlx5 IB port.
var ibCounterNames = []string{"symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
	"port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors", "port_xmit_discards", "port_xmit_constraint_errors",
	"port_rcv_constraint_errors", "local_link_integrity_errors", "excessive_buffer_overrun_errors", "VL15_dropped",
	"port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets", "port_xmit_wait",
	"unicast_xmit_packets", "unicast_rcv_packets", "multicast_xmit_packets", "multicast_rcv_packets"}

// ibRateText is an IB port's rate attribute: the lane rate times the
// width and the speed's name. A port without link shows what mlx5_ib
// reports for it: width and speed unknown, printed as 4X SDR.
func ibRateText(p fw.PortStatus) string {
	if !p.OperUp || p.Width == 0 {
		return "10 Gb/sec (4X SDR)"
	}
	return fmt.Sprintf("%g Gb/sec (%dX %s)", p.LaneGbps*float64(p.Width), p.Width, p.Protocol)
}

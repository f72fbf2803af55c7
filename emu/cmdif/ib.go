package cmdif

import (
	"errors"

	"github.com/cxray/cxray/emu/fw"
)

var errNoPort = errors.New("QUERY_HCA_VPORT_CONTEXT: the function's port is not on its adapter")

// portType is the general capability's port_type of the function's port:
// what the Linux driver reads to register an InfiniBand or an Ethernet
// (RoCE) port (MLX5_CAP_GEN(mdev, port_type)).
func (ep *Endpoint) portType() string {
	ps := ep.a.Firmware.Spec().Ports
	if p := ep.f.Port; p >= 1 && p <= len(ps) && ps[p-1].LinkType == fw.LinkInfiniBand {
		return "IB"
	}
	return "ETHERNET"
}

// Physical port states of the PortInfo attribute (the kernel's
// IB_PORT_PHYS_STATE_*): what hca_vport_context.port_physical_state holds.
const (
	physPolling  = 2
	physDisabled = 3
	physLinkUp   = 5
)

// queryHCAVportContext answers QUERY_HCA_VPORT_CONTEXT for the function's
// own vport on its InfiniBand port: the logical state the subnet manager
// left the port in, the physical state, the LID and the SM's LID, as
// mlx5_ib reads them for ib_query_port (drivers/infiniband/hw/mlx5/main.c,
// mlx5_query_hca_port). Another vport is not emulated; an Ethernet port
// has no HCA vport context (the driver asks only on IB ports).
func (c *call) queryHCAVportContext() {
	if c.get("other_vport") == 1 && c.get("vport_number") != 0 {
		c.fail(statusBadParam, syndNoVport)
		return
	}
	if c.ep.portType() != "IB" {
		c.fail(statusBadParam, syndNotIB)
		return
	}
	ps := c.ep.a.Firmware.Ports()
	p := c.ep.f.Port
	if p < 1 || p > len(ps) {
		c.internal(errNoPort)
		return
	}
	st := ps[p-1]
	phys := physPolling
	switch {
	case st.OperUp:
		phys = physLinkUp
	case !st.AdminUp:
		phys = physDisabled
	}
	// The PF's node GUID is its port's GUID; the system image GUID is the
	// adapter's (fw.Spec.NodeGUID).
	spec := c.ep.a.Firmware.Spec()
	guid := spec.NodeGUID(p)
	const pre = "hca_vport_context."
	c.set(kv(pre+"port_state", st.IBStateID), kv(pre+"vport_state", st.IBStateID), kv(pre+"port_physical_state", phys),
		kv(pre+"lid", st.LID), kv(pre+"sm_lid", st.SMLID), kv(pre+"node_guid", guid), kv(pre+"port_guid", guid),
		kv(pre+"system_image_guid", spec.BaseGUID), kv(pre+"has_smi", 1))
}

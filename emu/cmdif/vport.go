package cmdif

import "github.com/cxray/cxray/emu/scenario"

// Vport numbering of an e-switch (the Linux driver's): 0 the manager's own
// function, 1..N its VFs, the uplink apart (op_mod UPLINK).
const (
	vportOpVNIC   = 0 // MLX5_VPORT_STATE_OP_MOD_VNIC_VPORT
	vportOpESW    = 1 // MLX5_VPORT_STATE_OP_MOD_ESW_VPORT
	vportOpUplink = 2 // MLX5_VPORT_STATE_OP_MOD_UPLINK

	vportStateDown = 0
	vportStateUp   = 1
	adminStateAuto = 2 // MLX5_VPORT_ADMIN_STATE_AUTO: follows the uplink
)

// queryESWFunctions answers QUERY_ESW_FUNCTIONS: the host PF (this adapter
// is in a host, so host number 0, the PF present and enabled) and its VFs
// as the NV configuration gives them, and the PF's PCI location.
func (c *call) queryESWFunctions() {
	if !c.ep.eswitchManager() {
		c.fail(statusBadParam, syndNotManager)
		return
	}
	_, num, total := c.ep.vfs()
	b, err := scenario.ParseBDF(c.ep.f.BDF)
	if err != nil {
		c.internal(err)
		return
	}
	c.set(kv("host_params_context.host_number", 0), kv("host_params_context.host_pf_not_exist", 0),
		kv("host_params_context.host_pf_disabled", 0), kv("host_params_context.host_num_of_vfs", num),
		kv("host_params_context.host_total_vfs", total), kv("host_params_context.host_pci_bus", b.Bus),
		kv("host_params_context.host_pci_device", b.Device), kv("host_params_context.host_pci_function", b.Function))
}

// queryVportState answers QUERY_VPORT_STATE. A function's own vport and the
// uplink follow its port's link; VF vports are down (no VF driver is bound
// in the emulation) with the administrative state AUTO. Only the e-switch
// manager may ask for another vport.
func (c *call) queryVportState() {
	other, vport := c.get("other_vport") == 1, c.get("vport_number")
	up := c.ep.portUp(c.ep.f.Port)
	switch {
	case c.opMod == vportOpUplink:
	case !other || vport == 0:
	case !c.ep.eswitchManager():
		c.fail(statusBadParam, syndNotManager)
		return
	default:
		_, num, _ := c.ep.vfs()
		if vport > uint64(num) {
			c.fail(statusBadParam, syndNoVport)
			return
		}
		up = false
	}
	state := vportStateDown
	if up {
		state = vportStateUp
	}
	c.set(kv("state", state), kv("admin_state", adminStateAuto))
}

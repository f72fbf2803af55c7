package cmdif

import (
	"fmt"
	"strconv"

	"github.com/cxray/cxray/emu/nvstore"
	"github.com/cxray/cxray/prm"
)

// Capability types the emulator answers (prm/cmdb capability types).
const (
	capGeneral = 0x0
	capRoCE    = 0x4
	capESwitch = 0x9
	capNVMF    = 0xe
)

// eswitchManager: every function of a scenario is a PF, and on a host
// adapter each PF manages its own e-switch (its VFs and its uplink; the
// driver's MLX5_ESWITCH_MANAGER holds on each PF). A host adapter has no
// embedded CPU, so no ECPF takes the role away from them. (The checks
// that refuse a non-manager are the firmware's rule for a VF, which the
// scenarios do not model as functions of their own.)
func (ep *Endpoint) eswitchManager() bool { return true }

// buildPages lays out the capability pages by field name through the
// command database's layouts: [0] the maximum, [1] the current values.
func (ep *Endpoint) buildPages() error {
	ep.pages = map[uint16][2][]byte{}
	spec := ep.a.Firmware.Spec()
	mgr := ep.eswitchManager()
	roceAccl := len(spec.RoCE.Supported) > 0
	general := func(cur bool) []prm.Assignment {
		logQP, csum := 24, "ENABLED"
		if cur {
			// What the Linux driver sets through SET_HCA_CAP at load time
			// (its default profile): fewer QPs, no command checksums.
			logQP, csum = 18, "DISABLED"
		}
		return []prm.Assignment{
			kv("port_type", ep.portType()), kv("num_ports", 1), kv("vhca_id", ep.index),
			kv("vport_group_manager", b2i(mgr)), kv("eswitch_manager", b2i(mgr)), kv("nic_flow_table", 1),
			kv("roce", 1), kv("roce_accl", b2i(roceAccl)), kv("atomic", 1), kv("rc", 1), kv("uc", 1), kv("ud", 1), kv("xrc", 1),
			kv("out_of_seq_cnt", 1), kv("retransmission_q_counters", 1), kv("enhanced_error_q_counters", 1), kv("vport_counters", 1),
			kv("mcam_reg", 1), kv("pcam_reg", 1), kv("qcam_reg", 1),
			kv("port_module_event", 1), kv("temp_warn_event", 1), kv("general_notification_event", 1), kv("event_cap", 1),
			kv("log_max_qp", logQP), kv("log_max_cq", 24), kv("log_max_eq", 7), kv("log_max_mkey", 24), kv("log_max_pd", 24),
			kv("log_max_srq", 23), kv("log_max_msg", 30), kv("max_tc", 8), kv("cqe_version", 1), kv("uar_4k", 1),
			kv("cmdif_checksum", csum), kv("nvmf_target_offload", b2i(ep.nvmf.Offload)),
		}
	}
	eswitch := func(cur bool) []prm.Assignment {
		if !mgr {
			return nil // only the manager has an e-switch to describe
		}
		sfs := 11
		if cur {
			sfs = 8
		}
		return []prm.Assignment{
			kv("vport_svlan_strip", 1), kv("vport_cvlan_strip", 1), kv("vport_svlan_insert", 1),
			kv("vport_cvlan_insert_if_not_exist", 1), kv("vport_cvlan_insert_overwrite", 1),
			kv("esw_functions_changed", 1), kv("ecpf_vport_exists", 0), kv("merged_eswitch", 1),
			kv("counter_eswitch_affinity", 1), kv("vxlan_encap_decap", 1), kv("log_max_esw_sf", sfs), kv("esw_sf_base_id", sfBaseID),
		}
	}
	roce := func(bool) []prm.Assignment {
		return []prm.Assignment{
			// RoCE v1 and v2 (MLX5_ROCE_VERSION_*_CAP), over IPv4 and IPv6
			// (MLX5_ROCE_L3_TYPE_*_CAP), the IANA RoCEv2 port.
			kv("roce_version", 1<<0|1<<2), kv("l3_type", 1<<1|1<<2), kv("sw_r_roce_src_udp_port", 1),
			kv("fl_rc_qp_when_roce_enabled", 1), kv("r_roce_dest_udp_port", 4791),
			kv("r_roce_min_src_udp_port", 0xc000), kv("r_roce_max_src_udp_port", 0xffff), kv("roce_address_table_size", 256),
		}
	}
	nvmf := func(bool) []prm.Assignment {
		return []prm.Assignment{
			kv("log_max_frontend_nsid", 16), kv("log_min_cmd_timeout", 8), kv("log_max_cmd_timeout", 20),
			kv("log_max_namespace_per_xrq", 5), kv("frontend_namespace_context", 1), kv("cmd_unknown_namespace_cnt", 1),
			kv("write_offload_rc", 1), kv("read_offload_rc", 1), kv("read_write_offload_rc", 1), kv("read_write_flush_offload_rc", 1),
			kv("write_offload_dc", 1), kv("read_offload_dc", 1), kv("read_write_offload_dc", 1), kv("read_write_flush_offload_dc", 1),
			kv("log_max_staging_buffer_size", 24), kv("log_min_staging_buffer_size", 12), kv("log_max_io_size", 17),
			kv("log_max_backend_controller", 10), kv("log_max_backend_controller_per_xrq", 4), kv("max_icdoff", 0xff),
			kv("log_max_queue_size", 16), kv("log_min_queue_size", 4), kv("min_ioccsz", 4), kv("max_ioccsz", 260),
		}
	}
	builders := map[uint16]func(bool) []prm.Assignment{capGeneral: general, capESwitch: eswitch, capRoCE: roce}
	if ep.nvmf.Offload {
		builders[capNVMF] = nvmf
	}
	for t, build := range builders {
		ct, err := ep.db.CapType(strconv.Itoa(int(t)))
		if err != nil {
			return err
		}
		p, err := ep.db.Plan(ct.Node)
		if err != nil {
			return err
		}
		var pages [2][]byte
		for i := range pages {
			pages[i] = p.NewBuffer()
			if err := p.Encode(pages[i], build(i == 1)); err != nil {
				return fmt.Errorf("capability page %s: %w", ct.Node, err)
			}
		}
		ep.pages[t] = pages
	}
	return nil
}

// sfBaseID is the first vport number of the e-switch's sub-functions.
const sfBaseID = 0x8000

// queryHCACap answers QUERY_HCA_CAP: op_mod is the type times two, plus
// one for the current values. other_function with another function's
// vhca_id is not emulated.
func (c *call) queryHCACap() {
	if c.get("other_function") == 1 && c.get("function_id") != uint64(c.ep.index) {
		c.fail(statusBadParam, syndOtherFunction)
		return
	}
	typ, cur := c.opMod>>1, c.opMod&1
	pages, ok := c.ep.pages[typ]
	if !ok {
		c.fail(statusBadParam, syndCapType)
		return
	}
	c.put("capability", pages[cur])
}

// queryAdapter answers QUERY_ADAPTER from the firmware spec: Mellanox's
// IEEE OUI, the PCI vendor as the VSD vendor, the device VSD and the PSID.
func (c *call) queryAdapter() {
	spec := c.ep.a.Firmware.Spec()
	c.set(kv("query_adapter_struct.ieee_vendor_id", 0x0002c9), kv("query_adapter_struct.vsd_vendor_id", 0x15b3))
	if spec.DeviceVSD != "" {
		c.set(kv("query_adapter_struct.vsd", spec.DeviceVSD))
	}
	c.set(kv("query_adapter_struct.vsd_contd_psid", spec.PSID))
}

// vfs is the adapter's VF count as the NV configuration gives it (what
// the host sees after a reset): NUM_OF_VFS when SRIOV_EN is on.
func (ep *Endpoint) vfs() (enabled bool, num, total int) {
	d, _ := nvstore.ProfileDefaults(ep.a.Profile)
	if ep.a.Spec != nil {
		d = d.Merge(ep.a.Spec.NV)
	}
	val := func(name string) string {
		for _, src := range []map[string]string{d.Configured, d.Factory} {
			if v, ok := src[name]; ok {
				return v
			}
		}
		return ""
	}
	total = 127
	if n, err := strconv.Atoi(val("NUM_OF_VFS")); err == nil && n >= 0 {
		num = n
	}
	switch val("SRIOV_EN") {
	case "True", "true", "1":
		enabled = true
	}
	if !enabled {
		num = 0
	}
	return enabled, num, total
}

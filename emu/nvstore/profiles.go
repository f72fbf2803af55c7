package nvstore

import (
	"maps"
	"slices"
	"sort"
	"strings"
)

// notOnAdapters are TLVs of the host database that a ConnectX network
// adapter's firmware does not store: BlueField (internal CPU, emulated
// devices, ECPF, host privileges), FPGA, PCIe-switch, host-chaining and
// signed-configuration items. The profiles report them unsupported, as such
// firmware does, so a query lists what a real adapter lists.
var notOnAdapters = []string{
	"nv_internal_cpu_conf", "nv_internal_cpu_cap", "nv_ecpu_boot_option",
	"nv_emulation_nvme_conf", "nv_emulation_nvme_cap", "nv_emulation_pci_switch_conf", "nv_emulation_pci_switch_cap",
	"nv_emulation_virtio_net_conf", "nv_emulation_virtio_net_cap", "nv_emulation_virtio_blk_conf", "nv_emulation_virtio_blk_cap",
	"nv_emulation_virtio_fs_conf", "nv_emulation_virtio_fs_cap",
	"nv_ecpf_conf", "nv_ecpf_cap", "nv_host_priv_conf", "nv_host_priv_cap", "nv_secure_host",
	"nv_fpga_conf", "nv_fpga_cap", "nv_fpga_data",
	"nv_pci_switch_evb_conf", "nv_pci_switch_evb_cap", "nv_global_pci_conf_3", "nv_global_pci_cap_3",
	"nv_host_chaining_conf", "nv_host_chaining_cap", "nv_internal_hairpin_conf", "nv_internal_hairpin_cap",
	"nv_flex_parser_conf", "nv_flex_parser_cap", "nv_roce_1_5_conf", "nv_host_to_bmc", "nv_kdnet_data",
	"nv_host_sync_conf", "nv_vts_bank_a", "nv_vts_bank_b", "nv_forbidden_versions", "nv_file_id_mlnx", "nv_file_id_vendor",
	"nv_global_mask", "nv_hpcc_int", "nv_hpcc_int_cap", "nv_nvmf_target_conf", "nv_nvmf_target_cap",
	"nv_sw_accelerate_conf", "nv_crypto_conf", "nv_current_configurator", "nv_invalidate_all_timestamp",
	"nv_module_feature_cap", "nv_module_split", "nv_module_power",
}

// common is what both profiles' firmware reports: capabilities and defaults
// of a dual-port Ethernet adapter with SR-IOV.
func common() Defaults {
	return Defaults{
		Factory: map[string]string{
			// SR-IOV and PCI capabilities (limits for NUM_OF_VFS & co).
			"nv_global_pci_cap.sriov_support":           "1",
			"nv_global_pci_cap.max_vfs_per_pf_valid":    "1",
			"nv_global_pci_cap.max_vfs_per_pf":          "127",
			"nv_global_pci_cap.max_num_pfs":             "2",
			"nv_global_pci_cap.num_pfs_supported":       "1",
			"nv_global_pci_cap.fpp_support":             "1",
			"nv_global_pci_cap.pf_bar_size_supported":   "1",
			"nv_global_pci_cap.vf_bar_size_supported":   "1",
			"nv_global_pci_cap.max_log_pf_uar_bar_size": "8",
			"nv_global_pci_cap.max_log_vf_uar_bar_size": "4",
			"nv_global_pci_cap.num_pf_msix_supported":   "1",
			"nv_global_pci_cap.num_vf_msix_supported":   "1",
			"nv_global_pci_cap.max_num_pf_msix":         "127",
			"nv_global_pci_cap.max_num_vf_msix":         "127",
			// The firmware's defaults for them.
			"SRIOV_EN":        "False",
			"NUM_OF_VFS":      "0",
			"NUM_OF_PF":       "2",
			"FPP_EN":          "True",
			"PF_LOG_BAR_SIZE": "5",
			"VF_LOG_BAR_SIZE": "1",
			"NUM_PF_MSIX":     "63",
			"NUM_VF_MSIX":     "11",
			// Offloads, including the RoCE transmit PSN window.
			"nv_sw_offload_cap.tx_psn_win_supported":          "1",
			"nv_sw_offload_cap.ar_enable_supported":           "1",
			"nv_sw_offload_cap.sr_enable_supported":           "1",
			"nv_sw_offload_cap.uctx_supported":                "1",
			"nv_sw_offload_cap.ptp_cyc2realtime_supported":    "1",
			"nv_sw_offload_cap.max_outstanding_wqe_supported": "1",
			"nv_sw_offload_cap.prio_tag_required_supported":   "1",
			"CQE_COMPRESSION":                                 "BALANCED",
			"PCI_ATOMIC_MODE":                                 "PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED",
			"UCTX_EN":                                         "True",
			"LOG_MAX_OUTSTANDING_WQE":                         "7",
			// Ports.
			"LINK_TYPE":                      "ETH",
			"KEEP_ETH_LINK_UP":               "True",
			"nv_qos_cap.max_num_of_vl":       "_4_VLs",
			"nv_qos_cap.max_num_of_tc":       "8",
			"nv_qos_cap.max_num_pfc":         "8",
			"NUM_OF_VL":                      "_4_VLs",
			"NUM_OF_TC":                      "_8_TCs",
			"NUM_OF_PFC":                     "8",
			"nv_lldp_nb_cap.lldp_nb_rx_cap":  "ALL",
			"nv_lldp_nb_cap.lldp_nb_tx_cap":  "ALL",
			"nv_lldp_nb_cap.lldp_nb_dcbx_en": "1",
			"LLDP_NB_RX_MODE":                "ALL",
			"LLDP_NB_TX_MODE":                "ALL",
			"DCBX_IEEE":                      "True",
			"DCBX_CEE":                       "True",
			"DCBX_WILLING":                   "True",
			"ROCE_CC_PRIO_MASK":              "255",
			// Host function and PCI.
			"nv_hca_cap.roce_ctrl_supported":            "1",
			"nv_hca_cap.pci_data_wr_ordering_supported": "1",
			"ROCE_CONTROL":                               "ROCE_ENABLE",
			"nv_pci_cap.ats_supported":                   "1",
			"nv_pci_cap.exp_rom_pxe_supported":           "1",
			"nv_pci_cap.exp_rom_uefi_x86_supported":      "1",
			"nv_pci_cap.advanced_pci_settings_supported": "1",
			"EXP_ROM_PXE_ENABLE":                         "True",
			"EXP_ROM_UEFI_x86_ENABLE":                    "True",
			"nv_wol_cap.en_wol_magic":                    "1",
			"PORT_OWNER":                                 "True",
			"ALLOW_RD_COUNTERS":                          "True",
			"LEGACY_BOOT_PROTOCOL":                       "PXE",
			"BOOT_RETRY_CNT":                             "NONE",
		},
		Unsupported: slices.Clone(notOnAdapters),
	}
}

// Profile defaults. Each profile is a ConnectX as an operator finds it: the
// factory defaults, plus SR-IOV set up (written to NV and in effect).
func profiles() map[string]Defaults {
	cx7 := common()
	cx7.Factory["LOG_TX_PSN_WINDOW"] = "9" // 512 packets
	cx7.Factory["ROCE_ADAPTIVE_ROUTING_EN"] = "False"
	cx7.Factory["RDMA_SELECTIVE_REPEAT_EN"] = "False"
	cx7.Configured = map[string]string{"SRIOV_EN": "True", "NUM_OF_VFS": "8"}
	cx7.Versions = map[string]int{"nv_keep_link_up": 3}

	cx6 := common()
	cx6.Factory["LOG_TX_PSN_WINDOW"] = "7" // 128 packets
	cx6.Factory["nv_global_pci_cap.max_vfs_per_pf"] = "127"
	cx6.Factory["nv_sw_offload_cap.sr_enable_supported"] = "0"
	cx6.Configured = map[string]string{"SRIOV_EN": "True", "NUM_OF_VFS": "4"}
	// Older firmware: keep-link-up version 2, so AUTO_POWER_SAVE_LINK_DOWN
	// (from version 3) is hidden.
	cx6.Versions = map[string]int{"nv_keep_link_up": 2}
	// The single-port ConnectX-7 of an InfiniBand fabric: VPI with
	// InfiniBand as its factory link type, one physical function.
	ndr := cx7.clone()
	ndr.Factory["LINK_TYPE"] = "IB"
	ndr.Factory["NUM_OF_PF"] = "1"
	ndr.Factory["nv_global_pci_cap.max_num_pfs"] = "1"
	return map[string]Defaults{"cx7-2p400g": cx7, "cx6dx-2p100g": cx6, "cx7-1p-ndr": ndr}
}

// ProfileDefaults returns the NV defaults of an emulator profile (a copy
// the caller may change). Unknown profiles get the common adapter defaults
// and false.
func ProfileDefaults(profile string) (Defaults, bool) {
	d, ok := profiles()[strings.ToLower(strings.TrimSpace(profile))]
	if !ok {
		return common(), false
	}
	return d.clone(), true
}

// Profiles lists the profiles with NV defaults.
func Profiles() []string {
	names := slices.Collect(maps.Keys(profiles()))
	sort.Strings(names)
	return names
}

func (d Defaults) clone() Defaults {
	d.Factory = maps.Clone(d.Factory)
	d.Configured = maps.Clone(d.Configured)
	d.Pending = maps.Clone(d.Pending)
	d.Versions = maps.Clone(d.Versions)
	d.Unsupported = slices.Clone(d.Unsupported)
	d.ReadOnly = slices.Clone(d.ReadOnly)
	return d
}

// Merge returns d with o's entries added (o wins): how a scenario adds its
// own values to a profile's.
func (d Defaults) Merge(o Defaults) Defaults {
	out := d.clone()
	put := func(dst *map[string]string, src map[string]string) {
		if len(src) == 0 {
			return
		}
		if *dst == nil {
			*dst = map[string]string{}
		}
		maps.Copy(*dst, src)
	}
	put(&out.Factory, o.Factory)
	put(&out.Configured, o.Configured)
	put(&out.Pending, o.Pending)
	if len(o.Versions) > 0 {
		if out.Versions == nil {
			out.Versions = map[string]int{}
		}
		maps.Copy(out.Versions, o.Versions)
	}
	out.Unsupported = append(out.Unsupported, o.Unsupported...)
	out.ReadOnly = append(out.ReadOnly, o.ReadOnly...)
	out.NoReadDefault = out.NoReadDefault || o.NoReadDefault
	out.NoReadCurrent = out.NoReadCurrent || o.NoReadCurrent
	if o.Functions > 0 {
		out.Functions = o.Functions
	}
	return out
}

package hostlink

import (
	"fmt"

	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/pcie"
)

// Install gives the firmware MPEIN and MPCNT answered from the model, with
// the PRM's encodings (MPEIN speeds as bit masks, widths as lane counts:
// package pcie). A database without a register leaves it out.
func Install(f *fw.Firmware, m *Model) error {
	if f == nil || m == nil {
		return fmt.Errorf("hostlink: no firmware or no model to install")
	}
	// SLRG keeps its behaviour for the network ports and gains the PCIe
	// lanes (pnat 3, as mlxlink asks for them: PNAT_PCIE in mstflint's
	// mlxlink_enums.h).
	if b, ok := f.Behaviour("SLRG"); ok && b.Access != nil {
		port := b.Access
		if err := f.SetBehaviour("SLRG", fw.Behaviour{Access: func(c *fw.Call) uint8 {
			if c.Has("pnat") && c.Req("pnat") == pnatPCIe {
				return m.slrg(c)
			}
			return port(c)
		}}); err != nil {
			return fmt.Errorf("hostlink: %w", err)
		}
	}
	for name, h := range map[string]fw.Handler{"MPEIN": m.mpein, "MPCNT": m.mpcnt} {
		if _, err := f.DB().Register(name); err != nil {
			continue
		}
		if err := f.SetBehaviour(name, fw.Behaviour{Access: h}); err != nil {
			return fmt.Errorf("hostlink: %w", err)
		}
	}
	return nil
}

// dpn checks the depth, PCIe index and node of a request: a card with
// one link to its host has (0, 0, 0) only, as MPIR lists it.
func dpn(c *fw.Call) (uint8, bool) {
	for _, f := range []string{"depth", "pcie_index", "node"} {
		if c.Has(f) && c.Req(f) != 0 {
			return c.Fail(fw.StatusBadParam, "%s %d: this adapter has one PCIe link, at depth 0, pcie_index 0, node 0", f, c.Req(f)), false
		}
	}
	return 0, true
}

// mpein answers MPEIN (PRM "Management PCIe INformation").
func (m *Model) mpein(c *fw.Call) uint8 {
	if st, ok := dpn(c); !ok {
		return st
	}
	m.mu.Lock()
	s := m.spec
	var ds uint16
	for _, f := range m.funcs {
		_, _, d := m.counts(f)
		ds |= d
	}
	n := len(m.funcs)
	bdf0 := m.bdf0
	m.mu.Unlock()
	c.Put("link_speed_enabled", pcie.MPEINMaskUpTo(s.Target))
	c.Put("link_width_enabled", s.Card.Width)
	c.Put("link_speed_active", pcie.MPEINMask(s.Trained.Speed))
	c.Put("link_width_active", s.Trained.Width)
	c.Put("link_peer_max_speed", pcie.MPEINMaskUpTo(s.Slot.Speed))
	c.Put("num_of_pfs", n)
	c.Put("bdf0", bdf0)
	c.Put("port_type", 0)             // endpoint
	c.Put("pwr_status", 1)            // sufficient power reported
	c.Put("max_payload_size", 1)      // 256 bytes, as Device Control sets
	c.Put("max_read_request_size", 5) // 4096 bytes
	c.Put("cmn_clk_mode", 1)
	c.Put("device_status", ds)
	return fw.StatusOK
}

// mpcnt answers MPCNT group 0 (PCIe performance counters) from the model;
// the other groups hold nothing the model knows (zeros). clr resets the
// group: later reads count from then.
func (m *Model) mpcnt(c *fw.Call) uint8 {
	if st, ok := dpn(c); !ok {
		return st
	}
	if c.Req("grp") != 0 {
		return c.Generic()
	}
	p := m.Perf()
	m.mu.Lock()
	if c.Has("clr") && c.Req("clr") == 1 {
		m.cleared = p
		c.Changed()
	}
	base := m.cleared
	m.mu.Unlock()
	const set = "counter_set.pcie_perf_counters_ext."
	c.Put(set+"rx_errors", uint32(p.RxErrors-base.RxErrors)) // 32-bit counters wrap
	c.Put(set+"tx_errors", uint32(p.TxErrors-base.TxErrors))
	c.Put(set+"crc_error_dllp", uint32(p.CRCErrorDLLP-base.CRCErrorDLLP))
	c.Put(set+"crc_error_tlp", uint32(p.CRCErrorTLP-base.CRCErrorTLP))
	return fw.StatusOK
}

// pnatPCIe is the port number type that names a PCIe link in SLRG (the
// value mlxlink sends for --port_type PCIE).
const pnatPCIe = 3

// slrg answers SLRG for a lane of the PCIe link: local_port is the PCIe
// index (0: the one link), the eye a healthy 7 nm SerDes's, on the lanes
// the link trained.
func (m *Model) slrg(c *fw.Call) uint8 {
	if idx := c.Req("local_port"); idx != 0 {
		return c.Fail(fw.StatusBadParam, "SLRG pnat PCIe: pcie_index %d: this adapter has one PCIe link (0)", idx)
	}
	s := m.Spec()
	lane := int(c.Req("lane"))
	if lane >= s.Trained.Width {
		return c.Fail(fw.StatusBadParam, "SLRG pnat PCIe lane %d: the link trained %d lanes", lane, s.Trained.Width)
	}
	const eye = 60
	c.Put("status", 1)
	c.Put("version", 4) // 7 nm
	const pre = "page_data.slrg_7nm_ext."
	c.Put(pre+"initial_fom", eye*3)
	c.Put(pre+"last_fom", eye*3)
	c.Put(pre+"upper_eye", eye-eye/10)
	c.Put(pre+"mid_eye", eye)
	c.Put(pre+"lower_eye", eye-eye/8)
	return fw.StatusOK
}

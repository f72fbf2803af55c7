package fw

import (
	"fmt"

	"github.com/cxray/cxray/prm"
)

// PDDR: port diagnostics database. The index picks the port and the page;
// each page has its own handler (SetPDDRPage), and pages without one answer
// from the generic store.
func (f *Firmware) pddr(c *Call) uint8 {
	if _, st := c.localPort(); st != StatusOK {
		return st
	}
	if st := c.portType(); st != StatusOK {
		return st
	}
	// pnat 0 (local port) and 1 (label port) name the same port here: the
	// front-panel label of port N is local port N.
	if pn := c.Req("pnat"); pn > 1 {
		return c.Fail(StatusBadParam, "pnat %d: use 0 (local port) or 1 (label port)", pn)
	}
	page := uint8(c.Req("page_select"))
	h := f.pddrPages[page]
	if h == nil {
		return c.Generic()
	}
	return h(c)
}

// proto_active: bit 0 InfiniBand, bit 2 Ethernet.
const (
	protoActiveInfiniBand = 1 << 0
	protoActiveEthernet   = 1 << 2
)

// PHY manager FSM states (pddr phy_mngr_fsm_state enum names).
func (f *Firmware) phyState(p *portState) string {
	switch {
	case p.up:
		return "Active_or_Linkup"
	case p.cause == causeAdminDown || p.cause == causeForcedDown || p.cause == causeTripped:
		return "Disabled"
	default:
		return "Polling"
	}
}

// Ethernet auto-negotiation FSM states (eth_an_fsm_state numbers).
const (
	ethANEnable        = 0x0
	ethANAbilityDetect = 0x2
	ethANGood          = 0x6
)

// pddrOperational is page 0: the link as the PHY manager sees it.
func (f *Firmware) pddrOperational(c *Call) uint8 {
	p, st := c.localPort()
	if st != StatusOK {
		return st
	}
	const pre = "page_data.pddr_operation_info_page_ext."
	m := f.modules[p.lanes[0].module]
	if p.ib != nil {
		f.pddrOperationalIB(c, p, m)
		return StatusOK
	}
	c.Put(pre+"proto_active", protoActiveEthernet)
	c.Put(pre+"phy_mngr_fsm_state", f.phyState(p))
	c.Put(pre+"loopback_mode", p.loopback)
	switch {
	case p.up:
		c.Put(pre+"eth_an_fsm_state", ethANGood)
	case f.phyState(p) == "Polling":
		c.Put(pre+"eth_an_fsm_state", ethANAbilityDetect)
	default:
		c.Put(pre+"eth_an_fsm_state", ethANEnable)
	}
	c.Put(pre+"phy_manager_link_enabled.pddr_phy_manager_link_enabed_eth_ext.phy_manager_link_eth_enabled", p.adminExt)
	c.Put(pre+"core_to_phy_link_enabled.pddr_c2p_link_enabed_eth_ext.core_to_phy_link_eth_enabled", p.adminExt&p.capExt)
	if m.status.Plugged {
		c.Put(pre+"cable_proto_cap.pddr_cable_cap_eth_ext.cable_ext_eth_proto_cap", m.capExt&p.capExt)
	}
	if p.up {
		proto := ethProtocols[p.proto]
		c.Put(pre+"link_active.pddr_link_active_eth_ext.link_eth_active", uint32(1)<<proto.ExtBit)
		c.Put(pre+"fec_mode_active", f.activeFEC(p))
		c.Put(pre+"fec_mode_request", f.activeFEC(p))
	}
	return StatusOK
}

// Troubleshooting status opcodes (pddr monitor opcodes): 0..1023 come from
// the PHY, 1024..2047 from the management firmware (module problems).
const (
	opNoIssue          = 0
	opClosedByCommand  = 1
	opANFailure        = 2
	opComplianceMismat = 16
	opFECMismatch      = 38
	opNoHCD            = 39
	opInfoNotAvailable = 1023
	opCableUnplugged   = 1024
	opMgmtForcedDown   = 1033
	opModuleDisabled   = 1034
	opTroubleshooting  = 128
)

// moduleErrorOpcodes maps PMAOS error_type names to the opcode the
// management firmware reports for them.
var moduleErrorOpcodes = map[string]uint16{
	"Power_Budget_Exceeded":                   1032,
	"Long_Range_for_non_MLNX_cable_or_module": 1025,
	"Bus_stuck":                       1026,
	"bad_or_unsupported_EEPROM":       1027,
	"Enforce_part_number_list":        1028,
	"unsupported_cable":               1029,
	"High_Temperature":                1030,
	"bad_cable":                       1031,
	"PMD_type_is_not_enabled":         1036,
	"pcie_system_power_slot_Exceeded": 1040,
}

// troubleshooting returns the status opcode and message for a port.
func (f *Firmware) troubleshooting(p *portState) (uint16, string) {
	m := f.modules[p.lanes[0].module]
	switch p.cause {
	case causeNone:
		if op, msg, ok := modelTroubleshooting(p); ok {
			return op, msg
		}
		return opNoIssue, "No issue was observed"
	case causeFECMismatch:
		return opFECMismatch, "AN failure: FEC mismatch during override (see PPLM)"
	case causePartnerNoSpeed:
		return opNoHCD, "AN failure: no speed is enabled on both sides (no HCD)"
	case causeAdminDown:
		return opClosedByCommand, "Port is closed by command (see PAOS)"
	case causeForcedDown:
		return opMgmtForcedDown, "Port is forced down by management (PAOS fd)"
	case causeTripped:
		return opClosedByCommand, "Port went down after up_once; set PAOS to bring it up"
	case causeUnplugged:
		return opCableUnplugged, "Cable is unplugged"
	case causeModuleInit:
		return opTroubleshooting, "Module is initialising"
	case causeModuleError:
		if op, ok := moduleErrorOpcodes[m.status.Error]; ok {
			return op, fmt.Sprintf("Module error: %s", m.status.Error)
		}
		return opInfoNotAvailable, fmt.Sprintf("Module error: %s", m.status.Error)
	case causeModuleDisabled:
		return opModuleDisabled, "Module is disabled by command (see PMAOS)"
	case causeNoPartner:
		return opANFailure, "Auto-negotiation failed: no partner detected"
	case causeNoCommonSpeed:
		return opComplianceMismat, "No protocol is enabled on both the port and the cable"
	}
	return opInfoNotAvailable, "Information is not available"
}

// pddrTroubleshooting is page 1: why the link is (not) up, as an opcode and
// a message. Both opcode groups report the same findings.
func (f *Firmware) pddrTroubleshooting(c *Call) uint8 {
	p, st := c.localPort()
	if st != StatusOK {
		return st
	}
	const pre = "page_data.pddr_troubleshooting_page_ext."
	group := c.Req(pre + "group_opcode")
	name, ok := f.enumName("PDDR", pre+"group_opcode", group)
	if !ok {
		return c.Fail(StatusBadParam, "PDDR troubleshooting group_opcode %d is not defined (%s)", group, f.enumNames("PDDR", pre+"group_opcode"))
	}
	op, msg := f.troubleshooting(p)
	c.Put(pre+"group_opcode", group)
	switch name {
	case "Monitor_opcodes":
		c.Put(pre+"status_opcode.pddr_monitor_opcode_ext.monitor_opcode", op)
	default:
		c.Put(pre+"status_opcode.pddr_advanced_opcode_ext.advanced_opcode", op)
	}
	// status_message is an array of dwords holding ASCII, first character
	// in the most significant byte.
	if _, err := c.Plan.Resolve(pre+"status_message[0]", c.Out); err != nil {
		f.missing(c, pre+"status_message", err)
		return StatusOK
	}
	words := 1
	if arr := findStep(c.Plan.Root, "page_data", "pddr_troubleshooting_page_ext", "status_message"); arr != nil && arr.Count > 0 {
		words = arr.Count
	}
	msgBytes := []byte(msg)
	if len(msgBytes) > 4*words-1 {
		msgBytes = msgBytes[:4*words-1] // keep a terminating NUL
	}
	for i := 0; i*4 < len(msgBytes) && i < words; i++ {
		var w uint32
		for j := 0; j < 4; j++ {
			w <<= 8
			if k := i*4 + j; k < len(msgBytes) {
				w |= uint32(msgBytes[k])
			}
		}
		c.Put(fmt.Sprintf("%sstatus_message[%d]", pre, i), w)
	}
	return StatusOK
}

// findStep walks a compiled layout by member names (through structures and
// union members), for sizes the codec knows but Resolve does not report.
func findStep(s *prm.Step, names ...string) *prm.Step {
	for _, n := range names {
		var next *prm.Step
		for _, ch := range s.Children {
			if ch.Name == n {
				next = ch
				break
			}
		}
		if next == nil {
			return nil
		}
		s = next
	}
	return s
}

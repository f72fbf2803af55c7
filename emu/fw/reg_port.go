package fw

import (
	"fmt"

	"github.com/cxray/cxray/emu"
)

// PAOS: port administrative and operational status, per local port.
func (f *Firmware) paos(c *Call) uint8 {
	p, st := c.localPort()
	if st != StatusOK {
		return st
	}
	if sw := c.Req("swid"); sw != 0 {
		return c.Fail(StatusBadParam, "swid %d: an adapter has only switch partition 0", sw)
	}
	if c.Method == emu.MethodSet {
		admin := p.admin
		if c.Req("ase") != 0 {
			v := c.Req("admin_status")
			name, ok := f.enumName("PAOS", "admin_status", v)
			if !ok || name == "disabled_by_system" {
				return c.Fail(StatusBadParam, "PAOS admin_status %d cannot be set; use one of up, down_by_configuration, up_once, up_lowest_rate", v)
			}
			admin = uint8(v)
		}
		fd := c.Req("fd") != 0
		if down, _ := f.enumValue("PAOS", "admin_status", "down_by_configuration"); fd && uint64(admin) != down {
			return c.Fail(StatusBadParam, "PAOS fd (force down) can be set only with admin_status=down_by_configuration")
		}
		if c.Req("ee") != 0 {
			p.event = uint8(c.Req("e"))
		}
		if admin != p.admin {
			p.tripped = false // an explicit command re-arms up_once
		}
		p.admin, p.fd = admin, fd
		f.relink(c.Now)
	}
	c.Put("admin_status", p.admin)
	switch {
	// A port in PRBS test mode trains its PHY while administratively
	// down (evalLink): the port itself stays down.
	case p.up && f.adminUp(p.admin):
		c.Put("oper_status", "up")
	case p.cause == causeModuleError || p.tripped:
		c.Put("oper_status", "down_by_port_failure")
	default:
		c.Put("oper_status", "down")
	}
	c.Put("e", p.event)
	c.Put("fd", p.fd)
	return StatusOK
}

// PMAOS: module administrative and operational status, per module.
func (f *Firmware) pmaos(c *Call) uint8 {
	if si := c.Req("slot_index"); si != 0 {
		return c.Fail(StatusBadParam, "slot_index %d: an adapter has no line cards (use 0)", si)
	}
	idx := int(c.Req("module"))
	if idx >= len(f.modules) {
		return c.Fail(StatusBadParam, "module %d does not exist (modules 0..%d)", idx, len(f.modules)-1)
	}
	m := f.modules[idx]
	if c.Method == emu.MethodSet {
		if c.Req("ase") != 0 {
			v := c.Req("admin_status")
			if _, ok := f.enumName("PMAOS", "admin_status", v); !ok {
				return c.Fail(StatusBadParam, "PMAOS admin_status %d is not defined (%s)", v, f.enumNames("PMAOS", "admin_status"))
			}
			if !f.moduleAdminEnabled(uint8(v)) {
				for _, p := range f.ports {
					if int(p.lanes[0].module) == idx && f.adminUp(p.admin) {
						return c.Fail(StatusBadParam, "module %d cannot be disabled while local port %d using it is up; set PAOS admin_status=down_by_configuration first", idx, p.local)
					}
				}
			}
			m.admin = uint8(v)
		}
		if c.Req("ee") != 0 {
			m.event = uint8(c.Req("e"))
		}
		if c.Req("rst") != 0 && m.status.Plugged {
			// A reset takes the module through initialisation again.
			m.resets++
			m.initUntil = c.Now.Add(moduleInitTime)
		}
		f.relink(c.Now)
	}
	c.Put("admin_status", m.admin)
	c.Put("e", m.event)
	switch {
	case !m.status.Plugged:
		c.Put("oper_status", "unplugged")
	case m.initializing(c.Now):
		c.Put("oper_status", "initializing")
	case m.status.Error != "":
		c.Put("oper_status", "module_plugged_with_error")
		c.Put("error_type", m.errNum)
	case !f.moduleAdminEnabled(m.admin):
		c.Put("oper_status", "plugged_disabled")
	default:
		c.Put("oper_status", "plugged_enabled")
	}
	return StatusOK
}

// portType checks the port_type index of the port registers: only the
// network port (0) exists on an adapter.
func (c *Call) portType() uint8 {
	if c.Has("port_type") {
		if pt := c.Req("port_type"); pt != 0 {
			return c.Fail(StatusBadParam, "port_type %d: only the network port (0) exists on an adapter", pt)
		}
	}
	return StatusOK
}

// PTYS: port speeds: the Ethernet fields, and on a port that runs
// InfiniBand the IB ones (ib.go). A GET names the protocols it asks for in
// proto_mask; a SET changes the admin fields of the protocol the port runs.
func (f *Firmware) ptys(c *Call) uint8 {
	p, st := c.localPort()
	if st != StatusOK {
		return st
	}
	if st := c.portType(); st != StatusOK {
		return st
	}
	ethBit, ok := f.enumValue("PTYS", "proto_mask", "Ethernet")
	if !ok {
		ethBit = 4
	}
	ibBit, ok := f.enumValue("PTYS", "proto_mask", "InfiniBand")
	if !ok {
		ibBit = 1
	}
	eth := c.Req("proto_mask")&ethBit != 0
	ib := c.Req("proto_mask")&ibBit != 0
	set := c.Method == emu.MethodSet
	switch {
	case set && p.ib != nil && !ib:
		return c.Fail(StatusBadParam, "local port %d runs InfiniBand (LINK_TYPE_P%d=IB): a PTYS SET needs proto_mask=InfiniBand and ib_proto_admin", p.local, p.local)
	case set && p.ib == nil && !eth:
		return c.Fail(StatusBadParam, "PTYS SET needs proto_mask=Ethernet: local port %d runs Ethernet", p.local)
	case set && p.ib == nil:
		ext, leg := uint32(c.Req("ext_eth_proto_admin")), uint32(c.Req("eth_proto_admin"))
		switch {
		case ext != 0:
			if ext&^p.capExt != 0 {
				return c.Fail(StatusBadParam, "ext_eth_proto_admin 0x%x enables protocols the port lacks (capability 0x%x)", ext, p.capExt)
			}
			p.adminExt, p.adminLeg = ext, legacyMask(protocolsOfExt(ext))
		case leg != 0:
			if leg&^p.capLeg != 0 {
				return c.Fail(StatusBadParam, "eth_proto_admin 0x%x enables protocols the port lacks (capability 0x%x)", leg, p.capLeg)
			}
			p.adminLeg, p.adminExt = leg, extMask(protocolsOfLegacy(leg))
		default:
			return c.Fail(StatusBadParam, "PTYS SET enables no protocol; set ext_eth_proto_admin to a subset of 0x%x", p.capExt)
		}
		p.anDis = c.Req("an_disable_admin") != 0
		f.relink(c.Now)
	}
	if p.ib != nil && ib {
		if st := f.ptysIB(c, p, set); st != StatusOK {
			return st
		}
	}
	c.Put("an_disable_cap", true)
	c.Put("an_disable_admin", p.anDis)
	m := f.modules[p.lanes[0].module]
	switch {
	case !m.status.Plugged:
		c.Put("connector_type", "No_connector_or_unknown")
	case m.spec.Media == "copper":
		c.Put("connector_type", "PORT_DA")
	default:
		c.Put("connector_type", "PORT_FIBRE")
	}
	var maxGbps int
	for _, i := range p.protos {
		maxGbps = max(maxGbps, ethProtocols[i].Gbps)
	}
	if p.ib != nil {
		maxGbps = int(p.maxIBGbps())
	}
	c.Put("max_port_rate", maxGbps) // 1 Gb/s units
	// an_status by name where the database names its values (Rev 0.57
	// and later), else by the PRM's numbers.
	an := func(name string, num uint64) {
		if v, ok := f.enumValue("PTYS", "an_status", name); ok {
			num = v
		}
		c.Put("an_status", num)
	}
	switch {
	case p.up && p.anDis:
		an("AN_was_not_performed_link_is_up", 3)
	case p.up:
		an("AN_completed_successfully", 1)
	default:
		an("AN_was_not_performed_link_is_down", 4)
	}
	if !eth {
		return StatusOK
	}
	// A port that runs InfiniBand could run these Ethernet protocols (the
	// adapter is VPI), but none is operational.
	c.Put("ext_eth_proto_capability", p.capExt)
	c.Put("eth_proto_capability", p.capLeg)
	c.Put("ext_eth_proto_admin", p.adminExt)
	c.Put("eth_proto_admin", p.adminLeg)
	if p.up && p.ib == nil {
		proto := ethProtocols[p.proto]
		c.Put("ext_eth_proto_oper", uint32(1)<<proto.ExtBit)
		if b := proto.legacyOper(m.spec.Media); b >= 0 {
			c.Put("eth_proto_oper", uint32(1)<<b)
		}
		c.Put("data_rate_oper", proto.Gbps*10) // 100 Mb/s units
	}
	return StatusOK
}

// legacyOper picks the one legacy bit an active link reports: the copper
// (CR) variant for direct-attach cables, the short-reach (SR) one for optics.
func (p EthProtocol) legacyOper(media string) int {
	if len(p.LegacyBits) == 0 {
		return -1
	}
	if media == "copper" {
		return p.LegacyCR
	}
	return p.LegacySR
}

// PMLP: port to module lane mapping. It can be changed only while the port
// is administratively down, as the PRM requires.
func (f *Firmware) pmlp(c *Call) uint8 {
	p, st := c.localPort()
	if st != StatusOK {
		return st
	}
	if c.Method == emu.MethodSet {
		if f.adminUp(p.admin) {
			return c.Fail(StatusBadParam, "PMLP of local port %d can be changed only while it is down; set PAOS admin_status=down_by_configuration first", p.local)
		}
		w := c.Req("width")
		if _, ok := f.enumName("PMLP", "width", w); !ok {
			return c.Fail(StatusBadParam, "PMLP width %d is not one of %s", w, f.enumNames("PMLP", "width"))
		}
		var lanes [8]laneMap
		for i := 0; i < int(w) && i < len(lanes); i++ {
			pre := fmt.Sprintf("lane_module_mapping[%d].", i)
			l := laneMap{module: uint8(c.Req(pre + "module")), slot: uint8(c.Req(pre + "slot_index")),
				tx: uint8(c.Req(pre + "tx_lane")), rx: uint8(c.Req(pre + "rx_lane"))}
			switch {
			case int(l.module) >= len(f.modules):
				return c.Fail(StatusBadParam, "lane %d: module %d does not exist (modules 0..%d)", i, l.module, len(f.modules)-1)
			case l.slot != 0:
				return c.Fail(StatusBadParam, "lane %d: slot_index %d: an adapter has no line cards (use 0)", i, l.slot)
			case l.tx > 7 || l.rx > 7:
				return c.Fail(StatusBadParam, "lane %d: module lanes are 0..7 (tx_lane %d, rx_lane %d)", i, l.tx, l.rx)
			case i > 0 && l.module != lanes[0].module:
				return c.Fail(StatusBadParam, "lane %d: every lane of a port must go to the same module (%d, not %d)", i, lanes[0].module, l.module)
			}
			if c.Req("m_lane_m") != 0 {
				l.tx, l.rx = 0, 0
			}
			lanes[i] = l
		}
		if w == 0 {
			lanes[0] = p.lanes[0] // an unmapped port keeps its cage for status reporting
		}
		p.width, p.lanes = uint8(w), lanes
		f.relink(c.Now)
	}
	c.Put("width", p.width)
	for i := 0; i < int(p.width) && i < len(p.lanes); i++ {
		l, pre := p.lanes[i], fmt.Sprintf("lane_module_mapping[%d].", i)
		c.Put(pre+"module", l.module)
		c.Put(pre+"slot_index", l.slot)
		c.Put(pre+"tx_lane", l.tx)
		c.Put(pre+"rx_lane", l.rx)
	}
	return StatusOK
}

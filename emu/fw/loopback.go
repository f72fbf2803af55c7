package fw

import (
	"github.com/cxray/cxray/emu"
)

// Loopback modes: PPLR lb_en and lb_cap bits, and PDDR loopback_mode (the
// PRM's PPLR table).
const (
	lbRemote   = 1 // PHY remote: the partner's traffic is looped back here
	lbLocal    = 2 // PHY local: egress looped to the receiver, transmitter off
	lbExternal = 4 // external: a loopback plug links the port with itself
	lbCap      = lbRemote | lbLocal | lbExternal
)

// PPLR: port loopback. One mode at a time (lb_en is one-hot), of those in
// lb_cap. A PHY local loopback brings the link up without cable or
// partner, an external one with whatever the cage holds and no partner; a
// remote one leaves the link to the partner.
func (f *Firmware) pplr(c *Call) uint8 {
	p, st := c.localPort()
	if st != StatusOK {
		return st
	}
	if st := c.portType(); st != StatusOK {
		return st
	}
	if c.Method == emu.MethodSet {
		v := c.Req("lb_en")
		if v != 0 && (v&(v-1) != 0 || v&^lbCap != 0) {
			return c.Fail(StatusBadParam, "PPLR lb_en 0x%x: give 0 (no loopback) or one mode of lb_cap 0x%x", v, lbCap)
		}
		p.loopback = uint16(v)
		f.relink(c.Now)
	}
	c.Put("lb_cap", lbCap)
	c.Put("lb_en", p.loopback)
	return StatusOK
}

// evalLoopback brings a port in local or external loopback up at the
// fastest (or slowest) speed it enables and, with a module (external
// loopback), the module carries; no partner takes part.
func (f *Firmware) evalLoopback(p *portState, m *moduleState, lowest bool) (bool, int, downCause) {
	if p.ib != nil {
		common := p.ib.adminSpeed & p.ib.capSpeed
		if m != nil {
			common &= moduleIBCap(m)
		}
		best := -1
		for i, sp := range ibSpeeds {
			if common&(1<<sp.Bit) != 0 && (best < 0 || !lowest) {
				best = i
			}
		}
		if best < 0 || p.ibLanes() == 0 {
			return false, -1, causeNoCommonSpeed
		}
		return true, best, causeNone
	}
	mask := p.adminExt & p.capExt
	if m != nil {
		mask &= m.capExt
	}
	best := bestProtocol(mask, int(p.width), lowest)
	if best < 0 {
		return false, -1, causeNoCommonSpeed
	}
	return true, best, causeNone
}

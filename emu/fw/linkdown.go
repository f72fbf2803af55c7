package fw

import (
	"fmt"
	"time"
)

// linkDown is the last time an up link went down and why, as PDDR's
// link-down info page (page_select 6, pddr_link_down_info_page_ext) reports
// it: who is blamed and the local PHY's reason, both enum names of the
// database.
type linkDown struct {
	at     time.Time
	blame  string // down_blame: Unknown, Local_phy, Remote_phy
	reason string // local_reason_opcode
}

// downReason maps why the model took a link down to the PRM's words.
func downReason(c downCause) (blame, reason string) {
	switch c {
	case causeAdminDown, causeForcedDown, causeModuleDisabled, causeUnmapped:
		return "Local_phy", "Down_by_outband_command_with_healthy_link"
	case causeUnplugged:
		return "Local_phy", "Cable_was_unplugged"
	case causeModuleError, causeModuleInit:
		return "Local_phy", "Cable_access_issue"
	case causeNoPartner:
		// The partner stopped sending: this side loses block lock.
		return "Remote_phy", "Block_Lock_loss"
	default:
		return "Unknown", "Unknown_reason"
	}
}

// recordDown notes a link going down at now (called by relinkAt).
func (p *portState) recordDown(now time.Time, c downCause) {
	b, r := downReason(c)
	p.lastDown = &linkDown{at: now, blame: b, reason: r}
}

// Flap takes an up link down for the given reason (a local_reason_opcode
// enum name of PDDR's link-down page, e.g. Hi_SER_or_Hi_BER) and brings it
// straight back up, as a link that retrains after a burst of errors: the
// link-down counters grow by one and PDDR page 6 names the reason.
func (f *Firmware) Flap(local int, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.port(local)
	if p == nil {
		return fmt.Errorf("fw: local port %d does not exist (ports 1..%d)", local, len(f.ports))
	}
	const path = pddrLinkDown + "local_reason_opcode"
	if _, ok := f.enumValue("PDDR", path, reason); !ok {
		return fmt.Errorf("fw: link-down reason %q is not one of PDDR's (%s)", reason, f.enumNames("PDDR", path))
	}
	now := f.clk.Now()
	f.relink(now)
	if !p.up {
		return fmt.Errorf("fw: port %d link is down (%s); only an up link can flap", local, causeText[p.cause])
	}
	if d := now.Sub(p.upSince); d > 0 {
		p.upAccum += d
	}
	p.downs++
	blame := "Local_phy"
	if reason == "Received_Remote_Fault" || reason == "Received_TS1" {
		blame = "Remote_phy"
	}
	p.lastDown = &linkDown{at: now, blame: blame, reason: reason}
	p.upSince = now
	p.upEvents++
	return nil
}

const pddrLinkDown = "page_data.pddr_link_down_info_page_ext."

// pddrLinkDownInfo is page 6: the last link-down event of the port.
// Without one the page says No_link_down_indication (0) for every reason.
func (f *Firmware) pddrLinkDownInfo(c *Call) uint8 {
	p, st := c.localPort()
	if st != StatusOK {
		return st
	}
	if p.lastDown == nil {
		return StatusOK
	}
	if v, ok := f.enumValue("PDDR", pddrLinkDown+"down_blame", p.lastDown.blame); ok {
		c.Put(pddrLinkDown+"down_blame", v)
	}
	if v, ok := f.enumValue("PDDR", pddrLinkDown+"local_reason_opcode", p.lastDown.reason); ok {
		c.Put(pddrLinkDown+"local_reason_opcode", v)
	}
	return StatusOK
}

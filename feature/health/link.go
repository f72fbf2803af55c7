package health

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/prm"
)

// linkCheck judges every owned port's link with the link package: a link
// down while enabled (with the firmware's reason), a FEC the two sides do
// not agree on and an effective BER past its threshold fail; a degraded
// lane, a raw BER past its threshold, a speed below what both ends could
// run and what the firmware's troubleshooting page flags warn. A port
// disabled on purpose is the ports check's business, not a link problem.
func linkCheck(ctx context.Context, a *adapter.Adapter, pc portClass, lk *link.Links, ppcnt map[adapter.CounterKey]*prm.Decoded) Check {
	c := Check{Name: "link", Status: OK}
	if !a.HasRegisters() {
		return unsupported(c, &adapter.UnsupportedError{What: "the link's BER, FEC and troubleshooting status", Backend: a.Backend(),
			Why: "they are PHY registers (PDDR, PPCNT, PPLM); use direct access for them"})
	}
	reps, err := link.Read(ctx, a, link.Options{Brief: true, Links: lk, Counters: ppcnt})
	if err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			return unsupported(c, err)
		}
		c = unreadable(c, "the links", err)
		return c
	}
	var ok []string
	unknown := 0
	for _, r := range reps {
		if pc.unused[r.Port] {
			c.Details = append(c.Details, fmt.Sprintf("port %d: declared unused, not judged", r.Port))
			continue
		}
		if pc.empty[r.Port] && (r.Operational.OperUp == nil || !*r.Operational.OperUp) {
			// No module, no link: the ports check says so with the next
			// step; "down: Cable is unplugged" is no link fault.
			c.Details = append(c.Details, fmt.Sprintf("port %d: no module in the cage, no link to judge", r.Port))
			continue
		}
		if r.Operational.OperUp == nil {
			unknown++
		}
		if r.Counters == nil || r.Troubleshooting == nil {
			c.Status = worse(c.Status, Warn)
			for _, u := range r.Unavailable {
				c.Details = append(c.Details, fmt.Sprintf("port %d: %s not read (%s)", r.Port, u.What, u.Why))
			}
		}
		clean := true
		for _, v := range r.Verdicts {
			s := linkSeverity(v)
			if s == OK {
				continue
			}
			clean = false
			c.Status = worse(c.Status, s)
			c.Details = append(c.Details, fmt.Sprintf("port %d: [%s] %s", r.Port, v.Category, v.Summary))
			if c.Next == "" || s == Fail {
				c.Next = v.NextStep
			}
		}
		if clean && r.Operational.OperUp != nil && *r.Operational.OperUp {
			s := fmt.Sprintf("port %d", r.Port)
			if r.Counters != nil && r.Counters.RawBER.Value != nil {
				s += " raw BER " + r.Counters.RawBER.Text
			}
			if r.FEC != nil && r.FEC.Active != "" {
				s += ", " + r.FEC.Active
			}
			ok = append(ok, s)
		}
	}
	switch {
	case c.Status == OK && len(ok) > 0:
		c.Summary = strings.Join(ok, "; ")
	case c.Status == OK:
		// Nothing was judged: not a pass (the ports check says why no
		// link is up).
		c.Status, c.Summary = Skip, "no link is up to judge"
		if unknown > 0 {
			c.Summary = fmt.Sprintf("the state of %d link(s) could not be read; nothing to judge", unknown)
		}
	default:
		n := 0
		for _, d := range c.Details {
			if !strings.Contains(d, "not judged") && !strings.Contains(d, "no link to judge") {
				n++
			}
		}
		c.Summary = fmt.Sprintf("%d link problem(s)", n)
	}
	if c.Next != "" {
		c.Next += " ('cxray link' shows the details)"
	}
	return c
}

// linkSeverity is how much a link verdict weighs in health.
func linkSeverity(v link.Verdict) Status {
	switch v.Code {
	case "link_admin_down":
		return OK
	case "link_down", "fec_mismatch", "effective_ber_high":
		return Fail
	}
	return Warn
}

package link

import (
	"fmt"
	"sort"
)

// judge turns a reading into verdicts.
func judge(r *Report, th Thresholds) []Verdict {
	out := []Verdict{}
	op := r.Operational
	t := r.Troubleshooting
	fwSays := func() []string {
		if t == nil || t.StatusOpcode == nil {
			return nil
		}
		return []string{fmt.Sprintf("PDDR troubleshooting: status opcode %d, %q", *t.StatusOpcode, t.Message)}
	}
	switch {
	case op.AdminUp != nil && !*op.AdminUp:
		out = append(out, Verdict{Code: "link_admin_down", Category: CategoryConfiguration,
			Summary:  fmt.Sprintf("port %d is administratively down (PAOS %s)", r.Port, op.AdminStatus),
			Evidence: fwSays(),
			NextStep: fmt.Sprintf("bring it up (ip link set %s up, or cxray reg set PAOS admin_status=up ase=1 --index local_port=%d) if it should carry traffic", netdevOr(r), r.Port)})
		return out
	case op.OperUp != nil && !*op.OperUp:
		v := Verdict{Code: "link_down", Category: CategoryPartner, Evidence: fwSays()}
		reason := "the firmware gives no reason"
		if t != nil && t.StatusOpcode != nil && t.Message != "" {
			reason = t.Message
		}
		if t != nil && t.Category != "" {
			v.Category = t.Category
		}
		v.Summary = fmt.Sprintf("port %d link is down: %s", r.Port, reason)
		v.NextStep = nextStep(v.Category, r)
		if t != nil && t.StatusOpcode != nil {
			switch *t.StatusOpcode {
			case 38:
				v.Code = "fec_mismatch"
				v.NextStep = "the two sides force different FECs: set both to the same FEC, or both to auto (PPLM fec_override_admin of the speed; on the partner, its FEC setting)"
			case 39:
				v.Code = "speed_mismatch"
				v.NextStep = "this port and its partner enable no common speed: enable a speed both support (PTYS ext_eth_proto_admin, or ethtool -s " + netdevOr(r) + " speed ...)"
			}
		}
		out = append(out, v)
		return out
	}
	if op.OperUp == nil || !*op.OperUp {
		return out
	}
	// Up: loopback, FEC, speed, errors.
	if op.Loopback != "" && op.Loopback != loopbackNames[0] {
		out = append(out, Verdict{Code: "loopback_active", Category: CategoryConfiguration,
			Summary:  fmt.Sprintf("port %d is in %s: its traffic does not reach the link partner", r.Port, op.Loopback),
			Evidence: []string{"PDDR loopback_mode: " + op.Loopback},
			NextStep: fmt.Sprintf("end the test when done: cxray link --port %d --loopback NO --yes (PPLR lb_en=0)", r.Port)})
	}
	if f := r.FEC; f != nil && f.ActiveID != nil && f.RequestedID != nil && *f.ActiveID != *f.RequestedID {
		out = append(out, Verdict{Code: "fec_mismatch", Category: CategoryConfiguration,
			Summary:  fmt.Sprintf("port %d runs %s although %s is requested", r.Port, f.Active, f.Requested),
			Evidence: []string{fmt.Sprintf("PDDR fec_mode_active %d, fec_mode_request %d", *f.ActiveID, *f.RequestedID)},
			NextStep: "the partner runs another FEC: configure the same FEC on both sides (or auto on both)"})
	}
	if op.IB != nil {
		out = append(out, judgeIB(r)...)
	}
	if op.SpeedGbps != nil && op.Enabled != nil && op.Supported != nil && op.IB == nil {
		common := op.Enabled.bits & op.Supported.bits
		if op.Cable != nil && op.Cable.bits != 0 {
			common &= op.Cable.bits
		}
		if best, ok := fastest(common); ok && best.gbps > *op.SpeedGbps {
			out = append(out, Verdict{Code: "speed_mismatch", Category: CategoryConfiguration,
				Summary: fmt.Sprintf("port %d runs at %s although it and its cable can do %s", r.Port, gbps(*op.SpeedGbps), gbps(best.gbps)),
				Evidence: []string{fmt.Sprintf("enabled %s, capability %s, cable %s", op.Enabled.Mask, op.Supported.Mask, maskOr(op.Cable)),
					"the link partner enables (or negotiates) a lower speed"},
				NextStep: "check the partner's enabled speeds (switch port configuration); force the speed only when both sides agree"})
		}
	}
	if c := r.Counters; c != nil {
		if v := c.EffectiveBER.Value; v != nil && *v > th.EffectiveBER {
			out = append(out, Verdict{Code: "effective_ber_high", Category: CategorySignal,
				Summary:  fmt.Sprintf("port %d loses data: effective BER %s after FEC (threshold %s)", r.Port, c.EffectiveBER.Text, Format(th.EffectiveBER)),
				Evidence: append([]string{fmt.Sprintf("%s uncorrectable blocks since the last clear", ptrText(c.FECUncorrectableBlocks))}, fwSays()...),
				NextStep: "FEC no longer corrects every error: reseat or replace the cable or module, clean the connectors (optics), and check the module's Rx powers (" + r.ModuleHint + ")"})
		}
		bad := badLanes(c, th)
		switch {
		case len(bad) > 0 && len(bad) < len(c.Lanes):
			ev := []string{}
			for _, l := range bad {
				ev = append(ev, fmt.Sprintf("lane %d: %s raw errors, raw BER %s", l, ptrText(c.Lanes[l].RawErrors), c.Lanes[l].RawBER.Text))
			}
			out = append(out, Verdict{Code: "lane_degraded", Category: CategoryCable,
				Summary:  fmt.Sprintf("port %d: lane %s has far more errors than the others", r.Port, joinInts(bad)),
				Evidence: append(ev, fwSays()...),
				NextStep: "one lane failing is the cable or module (a fiber, a connector, a laser): compare the lane's Rx power (" + r.ModuleHint + "), clean or swap the cable"})
		case c.RawBER.Value != nil && *c.RawBER.Value > th.RawBER:
			out = append(out, Verdict{Code: "raw_ber_high", Category: CategorySignal,
				Summary:  fmt.Sprintf("port %d: raw BER %s before FEC (threshold %s)", r.Port, c.RawBER.Text, Format(th.RawBER)),
				Evidence: fwSays(),
				NextStep: "every lane is noisy: check cable length and type for the speed, the module's temperature and powers (" + r.ModuleHint + ")"})
		}
	}
	// What the firmware itself flags, when nothing above says it already.
	if t != nil && t.Category != "" {
		seen := false
		for _, v := range out {
			if v.Category == t.Category || (t.Category == CategorySignal && v.Category == CategoryCable) {
				seen = true
			}
		}
		if !seen {
			out = append(out, Verdict{Code: "firmware_troubleshooting", Category: t.Category,
				Summary:  fmt.Sprintf("port %d: the firmware reports %q (opcode %d)", r.Port, t.Message, *t.StatusOpcode),
				NextStep: nextStep(t.Category, r)})
		}
	}
	return out
}

// badLanes are lanes past the raw threshold, or with ten times the
// median lane's errors (and at least 1000).
func badLanes(c *Counters, th Thresholds) []int {
	var counts []uint64
	for _, l := range c.Lanes {
		if l.RawErrors == nil {
			return nil
		}
		counts = append(counts, *l.RawErrors)
	}
	if len(counts) < 2 {
		return nil
	}
	sorted := append([]uint64(nil), counts...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	median := sorted[(len(sorted)-1)/2]
	var bad []int
	for i, n := range counts {
		lb := c.Lanes[i].RawBER.Value
		if (lb != nil && *lb > th.RawBER) || (n >= 1000 && n/10 > median) {
			bad = append(bad, i)
		}
	}
	return bad
}

func nextStep(cat string, r *Report) string {
	switch cat {
	case CategoryPartner:
		return "check the far end: is the partner port up and enabled, at a speed this port enables? (cable plugged at both ends, switch port not shut)"
	case CategoryCable:
		return "check the cable or module: " + r.ModuleHint + " shows its identity, state and powers; reseat or replace it"
	case CategoryConfiguration:
		return "compare this port's configuration (PAOS, PTYS enabled speeds, PPLM FEC) with the partner's and make them agree"
	}
	return "the signal is poor: reseat the cable, clean optical connectors, check the module's powers (" + r.ModuleHint + "); replace the cable if it persists"
}

func netdevOr(r *Report) string {
	if r.Netdev != "" {
		return r.Netdev
	}
	return "DEV"
}

func gbps(g float64) string { return fmt.Sprintf("%g Gb/s", g) }

func maskOr(s *Speeds) string {
	if s == nil {
		return "unknown"
	}
	return s.Mask
}

func ptrText(p *uint64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprint(*p)
}

func joinInts(xs []int) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(x)
	}
	return s
}

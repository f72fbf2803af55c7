package link

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteText prints one report as sections of label and value, every value
// with its unit; counters adds the per-lane and FEC detail.
func WriteText(w io.Writer, r *Report, counters bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(label string, v string) { fmt.Fprintf(tw, "  %s\t%s\n", label, v) }
	title := fmt.Sprintf("Port %d", r.Port)
	if r.Netdev != "" {
		title += " (" + r.Netdev + ")"
	}
	fmt.Fprintf(tw, "%s, module %d, %s backend\n", title, r.Module, r.Backend)
	op := r.Operational
	fmt.Fprintln(tw, "Operational")
	row("State", orNA(op.State))
	row("Physical state", orNA(op.PhysicalState))
	row("Admin / oper", fmt.Sprintf("%s / %s", orNA(op.AdminStatus), orNA(op.OperStatus)))
	speed := "n/a (link down)"
	if op.SpeedGbps != nil {
		speed = gbps(*op.SpeedGbps)
		if op.WidthLanes != nil {
			speed += fmt.Sprintf(" over %d lanes", *op.WidthLanes)
		}
	}
	if op.Speed != "" && op.IB != nil && op.SpeedGbps != nil {
		speed = fmt.Sprintf("%s, %s", op.Speed, speed)
	}
	row("Speed", speed)
	if op.MaxSpeedGbps != nil {
		row("Port maximum", gbps(*op.MaxSpeedGbps))
	}
	if op.AutoNegotiation != "" {
		row("Auto-negotiation", op.AutoNegotiation)
	}
	if op.Loopback != "" {
		row("Loopback", op.Loopback)
	}
	if f := r.FEC; f != nil {
		row("FEC active", orNA(f.Active))
		if f.Requested != "" && f.Requested != f.Active {
			row("FEC requested", f.Requested)
		}
	}
	for _, s := range []struct {
		label string
		sp    *Speeds
	}{{"Enabled speeds", op.Enabled}, {"Cable speeds", op.Cable}} {
		if s.sp != nil {
			row(s.label, s.sp.Mask+" ("+strings.Join(s.sp.Names, ",")+")")
		}
	}
	if counters && r.FEC != nil {
		for _, fs := range r.FEC.PerSpeed {
			row("FEC "+fs.Speed, fmt.Sprintf("supported %s; configured %s", strings.Join(fs.Supported, ", "), fs.Admin))
		}
	}
	if ib := op.IB; ib != nil {
		v := orNA(ib.LogicalState)
		if ib.LID != nil {
			v += fmt.Sprintf(", LID 0x%x", *ib.LID)
		}
		if ib.SMLID != nil {
			v += fmt.Sprintf(", SM LID 0x%x", *ib.SMLID)
		}
		row("InfiniBand state", v)
		if len(ib.EnabledWidths) > 0 {
			row("Enabled widths", widthText(ib.EnabledWidths))
		}
		if len(ib.CableWidths) > 0 {
			row("Cable widths", widthText(ib.CableWidths))
		}
	}
	if c := r.Cable; c != nil {
		switch {
		case c.Present != nil && !*c.Present:
			row("Cable", "none plugged")
		case c.PartNumber != "" || c.Vendor != "":
			row("Cable", fmt.Sprintf("%s %s %s (%s, s/n %s; from the %s)", orNA(c.Identifier), c.Vendor, c.PartNumber, orNA(c.Media), orNA(c.Serial), orNA(c.Source)))
		default:
			row("Cable", "plugged, not identified")
		}
	}
	row("Module", r.ModuleHint)
	if t := r.Troubleshooting; t != nil {
		fmt.Fprintln(tw, "Troubleshooting")
		row("Status opcode", ptrText(t.StatusOpcode))
		row("Message", orNA(t.Message))
		if t.Category != "" {
			row("Category", t.Category)
		}
	}
	if c := r.Counters; c != nil {
		fmt.Fprintln(tw, "Errors since last clear")
		row("Time since clear", msText(c.TimeSinceClearMS))
		row("Received bits", ptrText(c.ReceivedBits)+" bits")
		row("Raw errors", ptrText(c.RawErrors)+" bits")
		row("Effective errors", ptrText(c.EffectiveErrors)+" bits")
		row("Raw BER", berText(c.RawBER))
		row("Effective BER", berText(c.EffectiveBER))
		row("Symbol BER", berText(c.SymbolBER))
		var lanes []string
		for _, l := range c.Lanes {
			lanes = append(lanes, ptrText(l.RawErrors))
		}
		row("Raw errors per lane", strings.Join(lanes, ",")+" bits")
		if counters {
			row("FEC corrected blocks", ptrText(c.FECCorrectedBlocks)+" blocks")
			row("FEC uncorrectable", ptrText(c.FECUncorrectableBlocks)+" blocks")
			row("FEC corrected symbols", ptrText(c.FECCorrectedSymbols)+" symbols")
			for _, l := range c.Lanes {
				row(fmt.Sprintf("Lane %d", l.Lane), fmt.Sprintf("%s raw error bits, %s corrected symbols, raw BER %s", ptrText(l.RawErrors), ptrText(l.CorrectedSymbols), berText(l.RawBER)))
			}
		}
	}
	if ib := op.IB; ib != nil && ib.Counters != nil {
		c := ib.Counters
		fmt.Fprintln(tw, "InfiniBand port counters since last clear")
		row("Symbol errors", ptrText(c.SymbolErrors))
		row("Link error recovery", ptrText(c.LinkErrorRecovery))
		row("Link downed", ptrText(c.LinkDowned))
		row("Receive errors", ptrText(c.PortRcvErrors))
		if counters {
			row("Remote physical errors", ptrText(c.PortRcvRemotePhysical))
			row("Local link integrity", ptrText(c.LocalLinkIntegrityErrors))
			row("Buffer overruns", ptrText(c.ExcessiveBufferOverrun))
		}
	}
	if rt := r.Rates; rt != nil {
		fmt.Fprintf(tw, "Rates over %gs\n", rt.IntervalS)
		row("Raw errors", rateText(rt.RawErrorsPerS, "bits/s"))
		row("Effective errors", rateText(rt.EffectiveErrorsPerS, "bits/s"))
		row("FEC corrected", rateText(rt.CorrectedBlocksPerS, "blocks/s"))
		row("FEC uncorrectable", rateText(rt.UncorrectableBlocksPS, "blocks/s"))
		row("Raw BER", berText(rt.RawBER))
		row("Effective BER", berText(rt.EffectiveBER))
		if rt.IBSymbolErrorsPerS != nil {
			row("Symbol errors", rateText(rt.IBSymbolErrorsPerS, "/s"))
		}
		if rt.Cleared {
			row("Note", "the counters were cleared between the reads")
		}
	}
	if len(r.Eyes) > 0 {
		fmt.Fprintln(tw, "Eye opening per lane (SLRG)")
		for _, e := range r.Eyes {
			v := "not valid (no signal)"
			if e.Valid {
				v = fmt.Sprintf("upper %s, mid %s, lower %s", ptrText(e.Upper), ptrText(e.Mid), ptrText(e.Lower))
				if e.FOM != nil {
					v += ", figure of merit " + ptrText(e.FOM)
				}
				if e.Grade != nil {
					v += ", grade " + ptrText(e.Grade)
				}
			}
			row(fmt.Sprintf("Lane %d (%s)", e.Lane, e.Page), v)
		}
	}
	if len(r.Kernel) > 0 {
		fmt.Fprintln(tw, "Kernel port counters")
		for _, k := range slices.Sorted(maps.Keys(r.Kernel)) {
			row(k, fmt.Sprint(r.Kernel[k]))
		}
	}
	for _, u := range r.Unavailable {
		row("Not available", u.What+": "+u.Why)
	}
	tw.Flush()
	if len(r.Verdicts) == 0 {
		fmt.Fprintln(w, "  Verdict  no problem found")
		return
	}
	fmt.Fprintln(w, "  Verdicts")
	for _, v := range r.Verdicts {
		fmt.Fprintf(w, "    [%s] %s: %s\n", v.Category, v.Code, v.Summary)
		for _, e := range v.Evidence {
			fmt.Fprintf(w, "        - %s\n", e)
		}
		fmt.Fprintf(w, "        next: %s\n", v.NextStep)
	}
}

func widthText(ws []int) string {
	var parts []string
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("%dx", w))
	}
	return strings.Join(parts, ",")
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

func berText(b BER) string {
	s := b.Text
	if b.Why != "" {
		s += " (" + b.Why + ")"
	}
	if b.Firmware != "" && b.Value != nil {
		s += " [firmware " + b.Firmware + "]"
	}
	return s
}

func msText(p *uint64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.3f s", float64(*p)/1000)
}

func rateText(p *float64, unit string) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.6g %s", *p, unit)
}

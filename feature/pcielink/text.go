package pcielink

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/cxray/cxray/pcie"
)

// MlxlinkSpeed is a speed in mlxlink's words ("32G-Gen 5"; "N/A").
func MlxlinkSpeed(s pcie.Speed) string {
	switch s {
	case pcie.Gen1:
		return "2.5G-Gen 1"
	case pcie.Gen2, pcie.Gen3, pcie.Gen4, pcie.Gen5:
		return fmt.Sprintf("%gG-Gen %d", s.GTs(), s.Gen())
	case pcie.Gen6:
		return "32G PAM-4 Gen6"
	}
	return "N/A"
}

// WriteText prints a report: the link and where each fact came from, the
// errors, the rates, and the verdicts.
func WriteText(w io.Writer, r *Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(label, v string) { fmt.Fprintf(tw, "  %s\t%s\n", label, v) }
	fmt.Fprintf(tw, "PCIe link of %s (%s), %s backend\n", r.Device, orDash(r.BDF), r.Backend)
	if r.Text == "" {
		row("Link", "unknown")
	} else {
		row("Link", r.Text)
		row("Bandwidth", fmt.Sprintf("%.0f Gb/s per direction after line encoding (capable %.0f)", r.CurrentGbps, r.CapableGbps))
	}
	if p := r.Readings; p != nil && p.Firmware != nil {
		f := p.Firmware
		row("Link Speed Active (Enabled)", fmt.Sprintf("%s (%s)", MlxlinkSpeed(f.Active.Speed), MlxlinkSpeed(f.Enabled.Speed)))
		row("Link Width Active (Enabled)", fmt.Sprintf("%dX (%dX)", f.Active.Width, f.Enabled.Width))
	}
	if r.Slot.Speed.Known() || r.Slot.Width > 0 {
		row("Slot's port", fmt.Sprintf("%v (%s)", r.Slot, r.Sources["slot"]))
	} else {
		row("Slot's port", "unknown")
	}
	if r.Target.Known() {
		row("Target speed", r.Target.GenText())
	}
	if r.PortGbps > 0 {
		row("Port needs", fmt.Sprintf("%g Gb/s (%s)", r.PortGbps, neededText(r.PortGbps, r.Capable)))
	}
	if r.PowerStatus != "" {
		row("Slot power", r.PowerStatus)
	}
	keys := make([]string, 0, len(r.Sources))
	for k := range r.Sources {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var src []string
	for _, k := range keys {
		src = append(src, k+": "+r.Sources[k])
	}
	if len(src) > 0 {
		row("Sources", strings.Join(src, "; "))
	}
	e := r.Errors
	fmt.Fprintln(tw, "Errors")
	row("Device status", orNone(strings.Join(e.DeviceStatus, " ")))
	if e.Correctable != nil || e.NonFatal != nil || e.Fatal != nil || (r.Readings != nil && r.Readings.Config != nil && r.Readings.Config.AER != nil) {
		row("AER status", fmt.Sprintf("correctable %s; non-fatal %s; fatal %s", orNone(strings.Join(e.Correctable, " ")),
			orNone(strings.Join(e.NonFatal, " ")), orNone(strings.Join(e.Fatal, " "))))
	}
	if e.Counts != nil {
		row("AER counters", fmt.Sprintf("correctable %d, non-fatal %d, fatal %d%s", e.Counts["correctable"], e.Counts["nonfatal"], e.Counts["fatal"], paren(e.CountsBy)))
	}
	if len(e.MPCNT) > 0 {
		var parts []string
		for _, n := range []string{"rx_errors", "tx_errors", "crc_error_dllp", "crc_error_tlp"} {
			if v, ok := e.MPCNT[n]; ok {
				parts = append(parts, fmt.Sprintf("%s %d", n, v))
			}
		}
		row("MPCNT", strings.Join(parts, ", "))
	}
	if r.IntervalS > 0 {
		var parts []string
		for _, k := range sortedKeys(r.Rates) {
			if r.Rates[k] > 0 {
				parts = append(parts, fmt.Sprintf("%s %.3g/s", k, r.Rates[k]))
			}
		}
		row(fmt.Sprintf("Rates over %gs", r.IntervalS), orNone(strings.Join(parts, ", ")))
	}
	for _, u := range r.Unavailable {
		row("Not read: "+u.What, u.Why)
	}
	tw.Flush()
	if len(r.Verdicts) == 0 {
		fmt.Fprintln(w, "Verdict: ok")
		return
	}
	fmt.Fprintln(w, "Verdicts")
	for _, v := range r.Verdicts {
		fmt.Fprintf(w, "  %s [%s] %s: %s\n", v.Severity, v.Category, v.Code, v.Summary)
		for _, e := range v.Evidence {
			fmt.Fprintf(w, "      evidence: %s\n", e)
		}
		fmt.Fprintf(w, "      next: %s\n", v.NextStep)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func neededText(gbps float64, capable pcie.Link) string {
	if !capable.Known() {
		return "the card's link is unknown"
	}
	if l := Needed(gbps, capable); l.Known() {
		return l.String() + " or better"
	}
	return "more than " + capable.String() + " carries"
}

func paren(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return " (" + strings.Join(xs, ", ") + ")"
}

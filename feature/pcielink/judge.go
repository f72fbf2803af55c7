package pcielink

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cxray/cxray/pcie"
)

// judge turns a report into verdicts.
func judge(r *Report, th Thresholds) []Verdict {
	out := []Verdict{}
	cur, capable, slot := r.Current, r.Capable, r.Slot
	if !cur.Known() {
		why := "no source gave the link's speed and width"
		if len(r.Unavailable) > 0 {
			var parts []string
			for _, u := range r.Unavailable {
				parts = append(parts, u.What+": "+u.Why)
			}
			why += " (" + strings.Join(parts, "; ") + ")"
		}
		out = append(out, Verdict{Code: "pcie_unknown", Category: CategoryInput, Severity: "warn",
			Summary:  "the PCIe link could not be read: " + why,
			NextStep: "read it as root with the PCI address (-d 0000:03:00.0), or compare with 'lspci -vv -s BDF' (LnkCap, LnkSta)"})
		return out
	}
	evidence := []string{fmt.Sprintf("trained %v (%s), capable %v (%s)", cur, r.Sources["current"], capable, r.Sources["capable"])}
	if slot.Speed.Known() || slot.Width > 0 {
		evidence = append(evidence, fmt.Sprintf("slot's port: %v (%s)", slot, r.Sources["slot"]))
	}
	if capable.Width > 0 && cur.Width < capable.Width {
		v := Verdict{Code: "pcie_width_degraded", Severity: "warn", Evidence: evidence}
		switch {
		case slot.Width > 0 && slot.Width < capable.Width:
			v.Category = CategorySlot
			v.Summary = fmt.Sprintf("the PCIe link runs x%d of the card's x%d: the slot's port is x%d", cur.Width, capable.Width, slot.Width)
			v.NextStep = fmt.Sprintf("move the card to a slot wired x%d (a full-length slot may be wired x8, or split by the BIOS's bifurcation setting); the link carries %.0f of %.0f Gb/s here",
				capable.Width, cur.Gbps(), pcie.Link{Speed: cur.Speed, Width: capable.Width}.Gbps())
		case slot.Width >= capable.Width:
			v.Category = CategoryCard
			v.Summary = fmt.Sprintf("the PCIe link trained x%d although the card and the slot are x%d", cur.Width, capable.Width)
			v.NextStep = "reseat the card (and its riser or cable), check the edge connector for damage or dirt; a link that keeps training narrow after that points to the riser or the card"
		default:
			v.Category = CategoryLink
			v.Summary = fmt.Sprintf("the PCIe link runs x%d of the card's x%d; whether the slot or the card limits it is unknown (the slot's port was not read)", cur.Width, capable.Width)
			v.NextStep = "compare with the slot's port: 'lspci -vv -s BRIDGE' (LnkCap width; the bridge is the function's parent in /sys/devices); an x" + fmt.Sprint(capable.Width) + " port means reseat the card, a narrower one another slot"
		}
		out = append(out, v)
	}
	if capable.Speed.Known() && cur.Speed < capable.Speed {
		v := Verdict{Code: "pcie_speed_degraded", Severity: "warn", Evidence: evidence}
		switch {
		case slot.Speed.Known() && slot.Speed < capable.Speed:
			v.Category = CategorySlot
			v.Summary = fmt.Sprintf("the PCIe link runs %s of the card's %s: the slot's port is %s", cur.Speed.GenText(), capable.Speed.GenText(), slot.Speed.GenText())
			v.NextStep = fmt.Sprintf("use a %s slot, or check the BIOS's link speed setting for this slot (some default to a lower generation); the link carries %.0f of %.0f Gb/s here",
				capable.Speed.GenText(), cur.Gbps(), pcie.Link{Speed: capable.Speed, Width: cur.Width}.Gbps())
		case r.Target.Known() && r.Target < capable.Speed:
			v.Category = CategoryConfig
			v.Summary = fmt.Sprintf("the PCIe link runs %s because the card is set to train at most %s (Link Control 2 target speed)", cur.Speed.GenText(), r.Target.GenText())
			v.Evidence = append(v.Evidence, fmt.Sprintf("target link speed %v", r.Target))
			v.NextStep = "the target speed is set by the BIOS or by software (setpci): restore it to the card's maximum and retrain the link (or reboot)"
		case slot.Speed.Known():
			v.Category = CategoryCard
			v.Summary = fmt.Sprintf("the PCIe link trained at %s although the card and the slot can do %s", cur.Speed.GenText(), capable.Speed.GenText())
			v.NextStep = "a link that trains slower than both ends is a signal-integrity problem (riser, retimer, cable, dirty contacts) or a BIOS speed limit: reseat, check the BIOS setting, and watch the correctable error rate"
		default:
			v.Category = CategoryLink
			v.Summary = fmt.Sprintf("the PCIe link runs %s of the card's %s; whether the slot or the card limits it is unknown (the slot's port was not read)", cur.Speed.GenText(), capable.Speed.GenText())
			v.NextStep = "compare with the slot's port ('lspci -vv -s BRIDGE': LnkCap speed); a slower port means another slot or a BIOS setting, an equal one a reseat"
		}
		out = append(out, v)
	}
	if r.PortGbps > 0 && cur.UsableGbps() < r.PortGbps {
		v := Verdict{Code: "pcie_bandwidth_short", Category: CategoryBW, Severity: "warn",
			Summary: fmt.Sprintf("the PCIe link cannot feed the port: %v carries %.0f Gb/s per direction (about %.0f after protocol overhead), the port runs %g Gb/s",
				cur, cur.Gbps(), cur.UsableGbps(), r.PortGbps),
			Evidence: []string{fmt.Sprintf("per lane %d Mb/s after line encoding at %v (as the kernel's 'available PCIe bandwidth' line computes it)", cur.Speed.LaneMbps(), cur.Speed)}}
		if need := Needed(r.PortGbps, capable); need.Known() {
			v.Evidence = append(v.Evidence, fmt.Sprintf("%g Gb/s needs %v", r.PortGbps, need))
		}
		if len(out) > 0 {
			v.NextStep = "restore the link the card can train (see the verdicts above); throughput tops out near " + fmt.Sprintf("%.0f%%", 100*cur.UsableGbps()/r.PortGbps) + " of line rate until then"
		} else {
			v.NextStep = fmt.Sprintf("the card trains as well as it can: traffic tops out near %.0f%% of line rate; a faster or wider slot (or a card with a faster host interface) is the fix", 100*cur.UsableGbps()/r.PortGbps)
		}
		out = append(out, v)
	}
	e := r.Errors
	switch {
	case len(e.Fatal) > 0 || has(e.DeviceStatus, "FatalErr") || r.Rates["aer_fatal"] > 0:
		out = append(out, Verdict{Code: "pcie_fatal_error", Category: CategoryErrors, Severity: "fail",
			Summary:  "the PCIe link logged uncorrectable fatal errors" + namesText(e.Fatal),
			Evidence: errEvidence(r),
			NextStep: "a fatal error resets the link and the driver recovers (or not): find it in the kernel log (dmesg | grep -i 'AER'), reseat the card; if it comes back, replace the riser, then the card"})
	case e.Counts["fatal"] > 0:
		out = append(out, Verdict{Code: "pcie_fatal_error_counted", Category: CategoryErrors, Severity: "warn",
			Summary:  fmt.Sprintf("the kernel counted %d uncorrectable fatal PCIe error(s) on this function since it was probed; none is pending now", e.Counts["fatal"]),
			Evidence: errEvidence(r),
			NextStep: "find when in the kernel log (dmesg | grep -i 'AER'); if they recur, reseat the card and its riser"})
	}
	if len(e.NonFatal) > 0 || has(e.DeviceStatus, "NonFatalErr") || e.Counts["nonfatal"] > 0 || r.Rates["aer_nonfatal"] > 0 {
		out = append(out, Verdict{Code: "pcie_nonfatal_error", Category: CategoryErrors, Severity: "warn",
			Summary:  "the PCIe link logged uncorrectable non-fatal errors" + namesText(e.NonFatal),
			Evidence: errEvidence(r),
			NextStep: "a non-fatal error loses a transaction: check the kernel log (dmesg | grep -i 'AER') for the device and the error; completion timeouts point to the platform (IOMMU, power management), poisoned or malformed TLPs to the link"})
	}
	var moving []string
	var total float64
	for _, k := range sortedKeys(r.Rates) {
		if k == "aer_nonfatal" || k == "aer_fatal" || r.Rates[k] <= 0 || isPercent(strings.TrimPrefix(k, "mpcnt_")) || strings.HasSuffix(k, "_events") {
			continue
		}
		moving = append(moving, fmt.Sprintf("%s %.3g/s", k, r.Rates[k]))
		if k == "aer_correctable" || k == "mpcnt_crc_error_tlp" || k == "mpcnt_crc_error_dllp" {
			total = max(total, r.Rates[k])
		}
		if strings.HasPrefix(k, "mpcnt_") && k != "mpcnt_crc_error_tlp" && k != "mpcnt_crc_error_dllp" {
			total = max(total, r.Rates[k])
		}
	}
	if len(moving) > 0 && total > th.CorrectablePerSec {
		out = append(out, Verdict{Code: "pcie_correctable_errors", Category: CategoryErrors, Severity: "warn",
			Summary:  fmt.Sprintf("the PCIe link is logging correctable errors: %s over %gs", strings.Join(moving, ", "), r.IntervalS),
			Evidence: append(errEvidence(r), "correctable errors are retried by the link: each costs a replay (bandwidth), and a steady rate is a link about to train down or fail"),
			NextStep: "reseat the card and its riser, check the slot for dust; watch the rate with 'cxray monitor --what pcie'; a rate that stays points to the riser, the slot or the card"})
	}
	if r.PowerStatus == "insufficient" {
		out = append(out, Verdict{Code: "pcie_power_insufficient", Category: CategoryPower, Severity: "warn",
			Summary:  "the slot reports insufficient power for the card (MPEIN pwr_status)",
			NextStep: "use a slot that gives the card its rated power, or connect its auxiliary power cable"})
	}
	return out
}

// Needed is the narrowest, then slowest, link up to capable whose usable
// bandwidth carries gbps (zero when none does).
func Needed(gbps float64, capable pcie.Link) pcie.Link {
	if !capable.Known() {
		return pcie.Link{}
	}
	for s := pcie.Gen1; s <= capable.Speed; s++ {
		l := pcie.Link{Speed: s, Width: capable.Width}
		if l.UsableGbps() >= gbps {
			return l
		}
	}
	return pcie.Link{}
}

func errEvidence(r *Report) []string {
	e := r.Errors
	var out []string
	if len(e.DeviceStatus) > 0 {
		out = append(out, "Device Status: "+strings.Join(e.DeviceStatus, " "))
	}
	for _, s := range []struct {
		what  string
		names []string
	}{{"AER correctable status", e.Correctable}, {"AER uncorrectable non-fatal status", e.NonFatal}, {"AER uncorrectable fatal status", e.Fatal}} {
		if len(s.names) > 0 {
			out = append(out, s.what+": "+strings.Join(s.names, " "))
		}
	}
	if len(e.CountsBy) > 0 {
		out = append(out, "kernel AER counters: "+strings.Join(e.CountsBy, ", "))
	}
	return out
}

func namesText(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " (" + strings.Join(names, ", ") + ")"
}

func has(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

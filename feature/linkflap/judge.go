package linkflap

import (
	"fmt"
	"strings"

	"github.com/cxray/cxray/feature/link"
)

// commanded are the local reasons that say someone took the link down on
// purpose (PDDR local_reason_opcode 15..19 and 22): evidence, not a fault.
var commanded = map[string]bool{
	"Down_by_outband_command_with_healthy_link": true,
	"Down_by_inband_command_with_healthy_link":  true,
	"Down_by_verification_GW":                   true,
	"Down_by_management_command":                true,
}

// cableReasons point at the module or cable rather than the signal.
var cableReasons = map[string]bool{
	"Cable_was_unplugged": true, "Cable_access_issue": true, "Thermal_shutdown": true,
	"Current_issue": true, "Power_budget": true,
}

// judge turns a recorded link-down event into a verdict; a commanded one
// (a PAOS down, a bounce) is none.
func judge(ev *Evidence) *link.Verdict {
	if !ev.Recorded || commanded[ev.LocalReason] {
		return nil
	}
	v := &link.Verdict{Code: "link_went_down", Category: link.CategorySignal,
		Summary:  fmt.Sprintf("port %d: the link went down (%s), blamed on %s", ev.Port, words(ev.LocalReason), blameText(ev.Blame)),
		NextStep: "a link that drops and comes back is a flap: clear the counters ('cxray link --clear'), watch link_downs, and check the cable and the partner's side (its own link-down reason)"}
	switch {
	case cableReasons[ev.LocalReason]:
		v.Category = link.CategoryCable
		v.NextStep = "reseat or replace the module or cable ('cxray module' reads its diagnostics), then watch whether the link stays up"
	case ev.Blame == "Remote_phy":
		v.Category = link.CategoryPartner
		v.NextStep = "the partner took the link down or stopped sending: read the switch port's log and link-down reason, then the cable"
	}
	v.Evidence = append(v.Evidence, "PDDR link-down page: local_reason_opcode "+ev.LocalReason+", down_blame "+orUnknown(ev.Blame))
	if ev.RemoteReason != "" {
		v.Evidence = append(v.Evidence, "remote_reason_opcode "+ev.RemoteReason)
	}
	if ev.LinkDowns != nil {
		v.Evidence = append(v.Evidence, fmt.Sprintf("%d link-down(s) since the counters were cleared", *ev.LinkDowns))
	}
	return v
}

func words(s string) string { return strings.ReplaceAll(s, "_", " ") }

func orUnknown(s string) string {
	if s == "" {
		return "Unknown"
	}
	return s
}

func blameText(b string) string {
	switch b {
	case "Local_phy":
		return "this side"
	case "Remote_phy":
		return "the link partner"
	}
	return "no side (unknown)"
}

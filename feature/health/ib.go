package health

import (
	"fmt"

	"github.com/cxray/cxray/adapter"
)

// ibPort judges an InfiniBand port whose PHY is up: the logical state the
// subnet manager gave it (Active carries traffic; Init means no subnet
// manager has configured it; Armed that it configured but did not
// activate it) and the width it trained to against the port's lanes (a
// narrower link lost a lane). It returns the summary words, a status, a
// detail and the next step.
func ibPort(l adapter.Link, lanes int) (summary string, st Status, detail, next string) {
	st = OK
	state := "up"
	if l.State != "" {
		state = l.State
	}
	summary = fmt.Sprintf("port %d %s", l.Port, state)
	if l.IBSpeed != "" && l.Width > 0 && l.SpeedGbps != nil {
		summary += fmt.Sprintf(" at %gG (%dX %s)", *l.SpeedGbps, l.Width, l.IBSpeed)
	}
	if l.LID != nil && *l.LID != 0 {
		summary += fmt.Sprintf(", LID 0x%x", *l.LID)
	}
	switch {
	case l.StateID != nil && *l.StateID == 2:
		st = Warn
		detail = fmt.Sprintf("port %d is physically up but INIT: no subnet manager has configured it (no LID), so it carries no traffic", l.Port)
		next = "start or check the subnet manager of the fabric (opensm, UFM, or the switch's); 'sminfo' and 'ibstat' show whether one answers"
	case l.StateID != nil && *l.StateID == 3:
		st = Warn
		detail = fmt.Sprintf("port %d is ARMED: the subnet manager configured it but has not activated it", l.Port)
		next = "check the subnet manager's log for why it stopped short of activating the port (a sweep in progress, a policy)"
	}
	if l.Width > 0 && lanes <= l.Width && l.SpeedGbps != nil && l.MaxSpeedGbps != nil && *l.SpeedGbps < *l.MaxSpeedGbps {
		st = worse(st, Warn)
		d := fmt.Sprintf("port %d runs %s at %gG, below the port's %gG", l.Port, l.IBSpeed, *l.SpeedGbps, *l.MaxSpeedGbps)
		if detail == "" {
			detail = d
		} else {
			detail += "; " + d
		}
		if next == "" {
			next = fmt.Sprintf("the switch port or the cable enables a lower speed: compare the enabled and cable speeds in 'cxray link --port %d' with the switch port's configuration", l.Port)
		}
	}
	if l.Width > 0 && lanes > l.Width {
		st = worse(st, Warn)
		d := fmt.Sprintf("port %d trained to %dX of its %d lanes: a lane failed to come up", l.Port, l.Width, lanes)
		if detail == "" {
			detail = d
		} else {
			detail += "; " + d
		}
		if next == "" {
			next = fmt.Sprintf("a link narrower than its port has a bad lane in the cable, module or connector: compare the lanes in 'cxray link --port %d' and 'cxray module --port %d', reseat or replace the cable", l.Port, l.Port)
		}
	}
	return summary, st, detail, next
}

// ipoibOnly says whether every interface of a function is IPoIB (a 20-byte
// hardware address): an InfiniBand port has no MAC to drift.
func ipoibOnly(nds []adapter.Netdev) bool {
	n := 0
	for _, nd := range nds {
		if nd.Representor {
			continue
		}
		if len(nd.Address) == len("00:00:00:00:00:00") {
			return false
		}
		n++
	}
	return n > 0
}

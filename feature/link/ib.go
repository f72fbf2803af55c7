package link

import (
	"fmt"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/prm/regpath"
)

// InfiniBand ports. The PHY registers are the same (PDDR, PPCNT's physical
// layer, SLRG); PTYS is asked for its InfiniBand fields (proto_mask 1), PDDR's
// operational page read through its InfiniBand members, and the IBA
// PortCounters come from PPCNT's InfiniBand groups. mlxlink prints the speed
// as IB-<speed> and the width as the lanes of ib_link_width_oper.

// ibPhyState names PDDR ib_phy_fsm_state values (the IB PHY's training
// state machine), in mlxlink's words where it has them.
var ibPhyState = map[uint64]string{0: "Disabled", 1: "Initializing", 2: "Recover Config", 3: "Config Test",
	4: "Wait Remote Test", 5: "Wait Config Enhanced", 6: "Config Idle", 7: "LinkUp", 8: "Polling", 9: "Sync Check"}

// ibSpeedsOf is a PTYS/PDDR InfiniBand speed mask and its names.
func ibSpeedsOf(mask uint64) *Speeds {
	return &Speeds{Mask: fmt.Sprintf("0x%04x", mask), Names: append([]string{}, adapter.IBSpeedNames(mask)...), bits: mask}
}

// widthsOf lists the widths (lanes) of an ib_link_width mask.
func widthsOf(mask uint64) []int {
	var out []int
	for b, w := range []int{1, 2, 4, 8, 12} {
		if mask&(1<<b) != 0 {
			out = append(out, w)
		}
	}
	return out
}

// readIB reads PTYS's InfiniBand fields and the logical state the subnet
// manager gave the port.
func readIB(rd *reader, l *adapter.LinkRegisters) error {
	op := &rd.r.Operational
	if op.IB == nil {
		op.IB = &IBPort{}
	}
	d, err := rd.noted("InfiniBand speeds and widths", "PTYS", l.PTYS, l.PTYSErr)
	if err != nil {
		return err
	}
	if d != nil {
		if v, ok := adapter.FieldOf(d, "PTYS", regpath.PTYSAnDisableAdmin); ok {
			op.AutoNegotiation = map[bool]string{false: "ON", true: "FORCE"}[v != 0]
		}
		if v, ok := adapter.FieldOf(d, "PTYS", regpath.PTYSIBProtoAdmin); ok {
			op.Enabled = ibSpeedsOf(v)
		}
		if v, ok := adapter.FieldOf(d, "PTYS", regpath.PTYSIBProtoCapability); ok {
			op.Supported = ibSpeedsOf(v)
		}
		if v, ok := adapter.FieldOf(d, "PTYS", regpath.PTYSIBLinkWidthAdmin); ok {
			op.IB.EnabledWidths = widthsOf(v)
		}
		if v, ok := adapter.FieldOf(d, "PTYS", regpath.PTYSMaxPortRate); ok && v > 0 {
			g := float64(v)
			op.MaxSpeedGbps = &g
		}
		sp, ok1 := adapter.FieldOf(d, "PTYS", regpath.PTYSIBProtoOper)
		w, ok2 := adapter.FieldOf(d, "PTYS", regpath.PTYSIBLinkWidthOper)
		rate, ok3 := adapter.FieldOf(d, "PTYS", regpath.PTYSDataRateOper)
		if ok1 && ok2 && sp != 0 && w != 0 && (op.OperUp == nil || *op.OperUp) {
			lanes := adapter.IBWidthLanes(w)
			op.Speed, op.WidthLanes = "IB-"+adapter.IBSpeedName(sp), &lanes
			if ok3 && rate != 0 {
				g := float64(rate) / 10 // 100 Mb/s units
				op.SpeedGbps = &g
			}
		}
	}
	err = rd.links.Err
	op.IB.LogicalState, op.IB.LID, op.IB.SMLID = rd.l.State, rd.l.LID, rd.l.SMLID
	if op.IB.LogicalState == "" && err != nil {
		rd.r.Unavailable = append(rd.r.Unavailable, Unavailable{What: "InfiniBand logical state and LIDs", Why: err.Error()})
	}
	return nil
}

// IB PPCNT groups (the PRM's grp values): the IBA PortCounters in 64 bits,
// and in their IBA widths.
const (
	GroupIBExtended     uint64 = 0x21
	GroupIBPortCounters uint64 = 0x20
)

// readIBCounters reads the PortCounters: the 64-bit group where the
// database and firmware have it, else the IBA-width one.
func readIBCounters(rd *reader, lp adapter.Index) (*IBCounters, error) {
	// The two groups hold the same counters (the extended one 64 bits
	// wide), each under its own paths: symbol errors, link error
	// recovery, link downed, receive errors, remote physical errors,
	// local link integrity errors, excessive buffer overruns.
	for _, g := range []struct {
		grp   uint64
		paths [7]string
	}{
		{GroupIBExtended, [7]string{regpath.PPCNTIBLongSymbolErrors, regpath.PPCNTIBLongLinkErrorRecovery, regpath.PPCNTIBLongLinkDowned,
			regpath.PPCNTIBLongPortRcvErrors, regpath.PPCNTIBLongPortRcvRemotePhysicalErrors, regpath.PPCNTIBLongLocalLinkIntegrityErrors,
			regpath.PPCNTIBLongExcessiveBufferOverrunErrors}},
		{GroupIBPortCounters, [7]string{regpath.PPCNTIBSymbolErrors, regpath.PPCNTIBLinkErrorRecovery, regpath.PPCNTIBLinkDowned,
			regpath.PPCNTIBPortRcvErrors, regpath.PPCNTIBPortRcvRemotePhysicalErrors, regpath.PPCNTIBLocalLinkIntegrityErrors,
			regpath.PPCNTIBExcessiveBufferOverrunErrors}},
	} {
		d := rd.earlier("PPCNT", lp.Group(g.grp))
		if d == nil {
			x, err := rd.a.ReadRegister(rd.ctx, "PPCNT", lp.Group(g.grp))
			if err != nil {
				if fatal(rd.ctx, err) {
					return nil, fmt.Errorf("port %d PPCNT: %w", rd.r.Port, err)
				}
				continue
			}
			d = x.Decoded
		}
		get := func(path string) *uint64 {
			if v, ok := adapter.FieldOf(d, "PPCNT", path); ok {
				return &v
			}
			return nil
		}
		c := &IBCounters{SymbolErrors: get(g.paths[0]), LinkErrorRecovery: get(g.paths[1]), LinkDowned: get(g.paths[2]),
			PortRcvErrors: get(g.paths[3]), PortRcvRemotePhysical: get(g.paths[4]), LocalLinkIntegrityErrors: get(g.paths[5]),
			ExcessiveBufferOverrun: get(g.paths[6])}
		if c.SymbolErrors != nil {
			return c, nil
		}
	}
	rd.r.Unavailable = append(rd.r.Unavailable, Unavailable{What: "InfiniBand port counters", Why: "PPCNT answered neither InfiniBand counter group"})
	return nil, nil
}

// judgeIB judges what an InfiniBand link adds: a width narrower than the
// port (a lane failed to train), a speed below what both ends and the
// cable enable, link downs and error recoveries since the last clear, and
// symbol errors growing over the interval.
func judgeIB(r *Report) []Verdict {
	var out []Verdict
	op := r.Operational
	if op.WidthLanes != nil && r.Lanes > *op.WidthLanes && *op.WidthLanes > 0 {
		v := Verdict{Code: "width_degraded", Category: CategoryCable,
			Summary:  fmt.Sprintf("port %d trained to %dX of its %d lanes", r.Port, *op.WidthLanes, r.Lanes),
			NextStep: "a lane failed to come up: reseat or replace the cable or module, clean the connectors, and compare the lanes' powers (" + r.ModuleHint + ")"}
		if op.SpeedGbps != nil && op.MaxSpeedGbps != nil {
			v.Evidence = []string{fmt.Sprintf("%s at %s, the port can do %s", op.Speed, gbps(*op.SpeedGbps), gbps(*op.MaxSpeedGbps))}
		}
		out = append(out, v)
	}
	if op.SpeedGbps != nil && op.Enabled != nil && op.Supported != nil && op.Speed != "" {
		common := op.Enabled.bits & op.Supported.bits
		if op.Cable != nil && op.Cable.bits != 0 {
			common &= op.Cable.bits
		}
		if best := adapter.IBSpeedName(common); best != "" && "IB-"+best != op.Speed {
			out = append(out, Verdict{Code: "speed_mismatch", Category: CategoryConfiguration,
				Summary: fmt.Sprintf("port %d runs %s although it and its cable can do %s", r.Port, op.Speed, best),
				Evidence: []string{fmt.Sprintf("enabled %s, capability %s, cable %s", op.Enabled.Mask, op.Supported.Mask, maskOr(op.Cable)),
					"the switch port enables (or trains to) a lower speed"},
				NextStep: "check the switch port's enabled speeds (its configuration, or ibportstate from the fabric); force a speed only when both sides agree"})
		}
	}
	if c := op.IB.Counters; c != nil {
		if c.LinkDowned != nil && *c.LinkDowned > 0 {
			out = append(out, Verdict{Code: "link_downed", Category: CategorySignal,
				Summary:  fmt.Sprintf("port %d: the link went down %d time(s) since the counters were cleared", r.Port, *c.LinkDowned),
				NextStep: "a link that drops has a marginal cable, module or connector, or a partner that restarts: clear the counters ('cxray link --clear') and watch whether link_downed grows"})
		}
		if c.LinkErrorRecovery != nil && *c.LinkErrorRecovery > 0 {
			out = append(out, Verdict{Code: "link_error_recovery", Category: CategorySignal,
				Summary:  fmt.Sprintf("port %d: the PHY recovered the link from errors %d time(s) since the counters were cleared", r.Port, *c.LinkErrorRecovery),
				NextStep: "recoveries stall traffic for a moment each: reseat or replace the cable, clean optical connectors, check the module's powers (" + r.ModuleHint + ")"})
		}
	}
	if rt := r.Rates; rt != nil && rt.IBSymbolErrorsPerS != nil && *rt.IBSymbolErrorsPerS > 0 {
		out = append(out, Verdict{Code: "symbol_errors", Category: CategorySignal,
			Summary:  fmt.Sprintf("port %d: symbol errors are growing (%.3g/s over %gs)", r.Port, *rt.IBSymbolErrorsPerS, rt.IntervalS),
			NextStep: "errors on the wire: clean or reseat the cable and connectors, check the module's powers (" + r.ModuleHint + "); replace the cable if they keep growing"})
	}
	return out
}

// ibCountersOf picks the counters that judge a link from a set named as
// the kernel names them (sysfs counters/, or adapter.PortCounters' "ib").
func ibCountersOf(v map[string]uint64) *IBCounters {
	get := func(n string) *uint64 {
		if x, ok := v[n]; ok {
			return &x
		}
		return nil
	}
	return &IBCounters{SymbolErrors: get("symbol_error"), LinkErrorRecovery: get("link_error_recovery"), LinkDowned: get("link_downed"),
		PortRcvErrors: get("port_rcv_errors"), PortRcvRemotePhysical: get("port_rcv_remote_physical_errors"),
		LocalLinkIntegrityErrors: get("local_link_integrity_errors"), ExcessiveBufferOverrun: get("excessive_buffer_overrun_errors")}
}

package link

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/regpath"
)

// Field paths are the built-in database's (Rev 0.57), named by
// prm/regpath; adapter.FieldOf finds them in older and newer revisions too.

// PPCNT groups (the PRM's grp values, the same in every revision).
const (
	groupPhysical    uint64 = 0x12
	groupStatistical uint64 = 0x16
)

// The groups as the command line prints and takes them ("0x12").
var (
	GroupPhysical    = hex(groupPhysical)
	GroupStatistical = hex(groupStatistical)
)

func hex(g uint64) string { return fmt.Sprintf("%#x", g) }

// ClearGroups are the PPCNT groups --clear resets: the two Read uses.
var ClearGroups = []string{GroupPhysical, GroupStatistical}

func isFieldErr(err error) bool {
	var fe *prm.FieldError
	var nf *prm.NotFoundError
	return errors.As(err, &fe) || errors.As(err, &nf)
}

type reader struct {
	ctx context.Context
	a   *adapter.Adapter
	r   *Report
	// links is the adapter's LinkReadings answer (read once for every
	// port); l the port's link in it.
	links *Links
	l     adapter.Link
	// counters are PPCNT readings the caller made at this moment
	// (Options.Counters), for the first sample only.
	counters map[adapter.CounterKey]*prm.Decoded
}

// earlier is the caller's reading of a PPCNT group of this port, nil
// when it has none.
func (rd *reader) earlier(reg string, index adapter.Index) *prm.Decoded {
	if reg != "PPCNT" || rd.counters == nil {
		return nil
	}
	if g, ok := index.Lookup("grp"); ok {
		return rd.counters[adapter.CounterKey{Port: rd.r.Port, Group: g}]
	}
	return nil
}

// link finds the port's link and its registers in the Links answer.
func (rd *reader) link(port int) (*adapter.LinkRegisters, error) {
	if lr := rd.links.Registers[port]; lr != nil {
		for _, l := range rd.links.Links {
			if l.Port == port {
				rd.l = l
			}
		}
		return lr, nil
	}
	// Links stopped before this port: only the context does that.
	if err := rd.ctx.Err(); err != nil {
		return nil, fmt.Errorf("port %d PAOS: %w", port, err)
	}
	return nil, fmt.Errorf("port %d: the adapter read no link state (%v)", port, rd.links.Err)
}

// noted is a reading the adapter made: a part the firmware refused is
// noted and nil returned, a fatal error is returned (as read does).
func (rd *reader) noted(what, reg string, d *prm.Decoded, err error) (*prm.Decoded, error) {
	if err != nil {
		if fatal(rd.ctx, err) {
			return nil, fmt.Errorf("port %d %s: %w", rd.r.Port, reg, err)
		}
		rd.r.Unavailable = append(rd.r.Unavailable, Unavailable{What: what, Why: fmt.Sprintf("%s: %v", reg, err)})
		return nil, nil
	}
	return d, nil
}

// read reads a register; a part the firmware refuses is noted and nil
// returned, a fatal error is returned.
func (rd *reader) read(what, reg string, index adapter.Index) (*prm.Decoded, error) {
	if d := rd.earlier(reg, index); d != nil {
		return d, nil
	}
	x, err := rd.a.ReadRegister(rd.ctx, reg, index.Join(adapter.LaterIndex(rd.a.DB(), reg, index)))
	if err != nil {
		if fatal(rd.ctx, err) {
			return nil, fmt.Errorf("port %d %s: %w", rd.r.Port, reg, err)
		}
		rd.r.Unavailable = append(rd.r.Unavailable, Unavailable{What: what, Why: fmt.Sprintf("%s: %v", reg, err)})
		return nil, nil
	}
	return x.Decoded, nil
}

func readRegisters(ctx context.Context, a *adapter.Adapter, p adapter.Port, r *Report, o Options, links *Links) error {
	interval := o.Interval
	rd := &reader{ctx: ctx, a: a, r: r, links: links, counters: o.Counters}
	lp := adapter.LocalPort(p.Local)
	op := &r.Operational
	op.Protocol = "Ethernet"
	ib := p.LinkLayer == adapter.LinkInfiniBand
	if ib {
		op.Protocol = adapter.LinkInfiniBand
	}
	// PAOS and PTYS come from the adapter's Links, which reads and
	// decodes them once for every feature.
	l, err := rd.link(p.Local)
	if err != nil {
		return err
	}
	if paos, err := rd.noted("administrative and operational status", "PAOS", l.PAOS, l.PAOSErr); err != nil {
		return err
	} else if paos != nil {
		op.AdminUp, op.AdminStatus = rd.l.AdminUp, rd.l.AdminStatus
		op.OperUp, op.OperStatus = rd.l.OperUp, rd.l.OperStatus
	}
	// The page Ports read for the link layer, when it is of this moment.
	x, err := rd.a.OperationalPage(rd.ctx, p.Local)
	var page *prm.Decoded
	if x != nil {
		page = x.Decoded
	}
	if d, err := rd.noted("PHY operational page", "PDDR", page, err); err != nil {
		return err
	} else if d != nil {
		if v, ok := adapter.FieldOf(d, "PDDR", regpath.PDDROpPhyMngrFsmState); ok {
			op.StateID, op.State = u64(v), nameOr(phyMngrState, v)
		}
		if v, ok := adapter.FieldOf(d, "PDDR", regpath.PDDROpEthAnFsmState); ok && !ib {
			op.PhysicalStateID, op.PhysicalState = u64(v), nameOr(ethANState, v)
		}
		if v, ok := adapter.FieldOf(d, "PDDR", regpath.PDDROpIBPhyFsmState); ok && ib {
			op.PhysicalStateID, op.PhysicalState = u64(v), nameOr(ibPhyState, v)
		}
		up := op.StateID != nil && *op.StateID == 3
		r.FEC = &FEC{}
		if v, ok := adapter.FieldOf(d, "PDDR", regpath.PDDROpFecModeActive); ok && up {
			r.FEC.ActiveID, r.FEC.Active = u64(v), nameOr(fecNames, v)
		}
		if v, ok := adapter.FieldOf(d, "PDDR", regpath.PDDROpFecModeRequest); ok && up {
			r.FEC.RequestedID, r.FEC.Requested = u64(v), nameOr(fecNames, v)
		}
		if v, ok := adapter.FieldOf(d, "PDDR", regpath.PDDROpLoopbackMode); ok && op.StateID != nil && *op.StateID != 0 {
			op.Loopback = nameOr(loopbackNames, v)
		}
		if v, ok := adapter.FieldOf(d, "PDDR", regpath.PDDROpCableEthProtoCap); ok && !ib {
			op.Cable = speedsOf(v)
		}
		if ib {
			op.IB = &IBPort{}
			if v, ok := adapter.FieldOf(d, "PDDR", regpath.PDDROpCableIBSpeedCap); ok {
				op.Cable = ibSpeedsOf(v)
			}
			if v, ok := adapter.FieldOf(d, "PDDR", regpath.PDDROpCableIBWidthCap); ok {
				op.IB.CableWidths = widthsOf(v)
			}
		}
	}
	if ib {
		if err := readIB(rd, l); err != nil {
			return err
		}
	} else if d, err := rd.noted("protocols and speeds", "PTYS", l.PTYS, l.PTYSErr); err != nil {
		return err
	} else if d != nil {
		if v, ok := adapter.FieldOf(d, "PTYS", regpath.PTYSAnDisableAdmin); ok {
			op.AutoNegotiation = map[bool]string{false: "ON", true: "FORCE"}[v != 0]
		}
		if v, ok := adapter.FieldOf(d, "PTYS", regpath.PTYSExtEthProtoAdmin); ok {
			op.Enabled = speedsOf(v)
		}
		if v, ok := adapter.FieldOf(d, "PTYS", regpath.PTYSExtEthProtoCapability); ok {
			op.Supported = speedsOf(v)
			if best, ok := fastest(v); ok {
				op.MaxSpeedGbps = &best.gbps
			}
		}
		if v, ok := adapter.FieldOf(d, "PTYS", regpath.PTYSExtEthProtoOper); ok && v != 0 && (op.OperUp == nil || *op.OperUp) {
			if pr, ok := fastest(v); ok {
				g, w := pr.gbps, pr.lanes
				op.Speed, op.SpeedGbps, op.WidthLanes = pr.speed, &g, &w
			}
		}
	}
	if err := readTroubleshooting(rd, lp); err != nil {
		return err
	}
	if !o.Brief {
		if err := readPPLM(rd, lp); err != nil {
			return err
		}
	}
	// An InfiniBand link trained narrower than its port counts on the
	// lanes it runs on.
	lanes := p.Lanes
	if ib && op.WidthLanes != nil && *op.WidthLanes > 0 {
		lanes = *op.WidthLanes
	}
	first, err := readCounters(rd, lp, lanes)
	if err != nil {
		return err
	}
	r.Counters = first.counters()
	var ibFirst *IBCounters
	if ib {
		if ibFirst, err = readIBCounters(rd, lp); err != nil {
			return err
		}
		op.IB.Counters = ibFirst
	}
	if interval > 0 && first.ok {
		if err := a.Sleep(ctx, interval); err != nil {
			return err
		}
		rd.counters = nil
		second, err := readCounters(rd, lp, lanes)
		if err != nil {
			return err
		}
		r.Counters = second.counters()
		r.Rates = rates(first, second, interval)
		if ib {
			ibSecond, err := readIBCounters(rd, lp)
			if err != nil {
				return err
			}
			op.IB.Counters = ibSecond
			if ibFirst != nil && ibSecond != nil && ibFirst.SymbolErrors != nil && ibSecond.SymbolErrors != nil {
				n, _ := Delta(*ibFirst.SymbolErrors, *ibSecond.SymbolErrors, 64, true)
				r.Rates.IBSymbolErrorsPerS = Rate(n, interval.Seconds())
			}
		}
	}
	if c := r.Counters; c != nil && op.OperUp != nil && !*op.OperUp {
		// Nothing is received on a down link: its ratios are not zero,
		// they are not there (mlxlink prints N/A too).
		why := "the link is down; nothing is received"
		c.RawBER, c.EffectiveBER, c.SymbolBER = keepFW(c.RawBER, why), keepFW(c.EffectiveBER, why), keepFW(c.SymbolBER, why)
		for i := range c.Lanes {
			c.Lanes[i].RawBER = NA(why)
		}
	}
	if o.Brief {
		return nil
	}
	return readEyes(rd, lp, p.Lanes)
}

// keepFW is n/a that still shows what the firmware wrote.
func keepFW(b BER, why string) BER {
	n := NA(why)
	n.Firmware, n.Source = b.Firmware, b.Source
	return n
}

func readTroubleshooting(rd *reader, lp adapter.Index) error {
	d, err := rd.read("troubleshooting page", "PDDR", lp.Page(1).With(regpath.PDDRTroubGroupOpcode, 0))
	if err != nil || d == nil {
		return err
	}
	t := &Troubleshooting{}
	if v, ok := adapter.FieldOf(d, "PDDR", regpath.PDDRTroubMonitorOpcode); ok {
		t.StatusOpcode = u64(v)
		t.Category = opcodeCategory(v)
	}
	if v, ok := adapter.ValueOf(d, "PDDR", regpath.PDDRTroubStatusMessage); ok {
		t.Message = cString(v.Raw())
	}
	rd.r.Troubleshooting = t
	return nil
}

// cString is ASCII up to the first NUL (status_message: dwords whose first
// character is the most significant byte, which is the wire order).
func cString(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c >= 0x20 && c < 0x7f {
			out = append(out, c)
		}
	}
	return strings.TrimSpace(string(out))
}

func readPPLM(rd *reader, lp adapter.Index) error {
	d, err := rd.read("FEC capabilities and overrides", "PPLM", lp)
	if err != nil || d == nil {
		return err
	}
	if rd.r.FEC == nil {
		rd.r.FEC = &FEC{}
	}
	// The speed groups, fastest first (prm/regpath/paths.list).
	for i, g := range regpath.PPLMFecOverrideCapKeys {
		c, ok1 := adapter.FieldOf(d, "PPLM", regpath.PPLMFecOverrideCap[i])
		adm, ok2 := adapter.FieldOf(d, "PPLM", regpath.PPLMFecOverrideAdmin[i])
		if !ok1 || c == 0 {
			continue
		}
		fs := FECSpeed{Speed: g, Supported: fecMask(c), Admin: "auto"}
		if ok2 && adm != 0 {
			if n := adapter.EnumTextOf(d, "PPLM", regpath.PPLMFecOverrideAdmin[i]); strings.EqualFold(n, "auto_mode") {
				fs.Admin = "auto"
			} else {
				fs.Admin = strings.Join(fecMask(adm), ", ")
			}
		}
		rd.r.FEC.PerSpeed = append(rd.r.FEC.PerSpeed, fs)
	}
	return nil
}

// fecMask names the FEC modes of a PPLM mask (bit k: fec_mode_active k).
func fecMask(m uint64) []string {
	var out []string
	for k := 0; k < 16; k++ {
		if m&(1<<k) != 0 {
			out = append(out, nameOr(fecNames, uint64(k)))
		}
	}
	return out
}

// sample is one read of both counter groups.
type sample struct {
	ok                     bool
	since                  *uint64
	bits, raw, eff, sym    *uint64
	rawBER, effBER, symBER BER
	corrBlocks, uncBlocks  *uint64
	corrSyms               *uint64
	laneRaw, laneSyms      []*uint64
}

func readCounters(rd *reader, lp adapter.Index, lanes int) (*sample, error) {
	s := &sample{}
	lanes = max(min(lanes, 8), 1)
	st, err := rd.read("physical-layer statistical counters", "PPCNT", lp.Group(groupStatistical))
	if err != nil {
		return nil, err
	}
	ph, err := rd.read("physical-layer counters", "PPCNT", lp.Group(groupPhysical))
	if err != nil {
		return nil, err
	}
	get := func(d *prm.Decoded, path string) *uint64 {
		if d == nil {
			return nil
		}
		if v, ok := adapter.FieldOf(d, "PPCNT", path); ok {
			return &v
		}
		return nil
	}
	s.since = get(st, regpath.PPCNTPhysStatTimeSinceLastClear)
	if s.since == nil {
		s.since = get(ph, regpath.PPCNTPhysTimeSinceLastClear)
	}
	s.bits = get(st, regpath.PPCNTPhysStatReceivedBits)
	s.raw = get(st, regpath.PPCNTPhysStatCorrectedBits)
	s.eff = get(st, regpath.PPCNTPhysStatEffectiveErrors)
	s.sym = get(ph, regpath.PPCNTPhysSymbolErrors)
	s.corrBlocks = get(ph, regpath.PPCNTPhysFecCorrectedBlocks)
	s.uncBlocks = get(ph, regpath.PPCNTPhysFecUncorrectableBlocks)
	s.corrSyms = get(ph, regpath.PPCNTPhysFecCorrectedSymbolsTotal)
	for l := 0; l < lanes; l++ {
		s.laneRaw = append(s.laneRaw, get(st, regpath.PPCNTPhysStatRawErrorsLane[l]))
		s.laneSyms = append(s.laneSyms, get(ph, regpath.PPCNTPhysFecCorrectedSymbolsLane[l]))
	}
	s.ok = st != nil || ph != nil
	since := uint64(0)
	if s.since != nil {
		since = *s.since
	}
	// counted prefers the counters (errors over bits since the clear), the
	// way the per-lane ratios are computed, so the total and its lanes
	// agree; the firmware's one-digit figure (coef × 10^-mag, "2E-10"
	// where the counters give 2.6E-10) is kept beside it. Without the
	// counters, the firmware's figure is the ratio.
	ratio := func(coef, mag string, errs *uint64, counted bool) BER {
		c, m := get(st, coef), get(st, mag)
		fw := c != nil && m != nil && (*c != 0 || *m != 0)
		if counted && errs != nil && s.bits != nil && *s.bits > 0 && since > 0 {
			b := FromCounters(*errs, *s.bits, since)
			if fw {
				b.Firmware = FromFirmware(*c, *m, since).Firmware
			}
			return b
		}
		if fw {
			return FromFirmware(*c, *m, since)
		}
		if errs != nil && s.bits != nil {
			return FromCounters(*errs, *s.bits, since)
		}
		return NA("the firmware gives neither the ratio nor the counts")
	}
	s.rawBER = ratio(regpath.PPCNTPhysStatRawBerCoef, regpath.PPCNTPhysStatRawBerMagnitude, s.raw, true)
	s.effBER = ratio(regpath.PPCNTPhysStatEffectiveBerCoef, regpath.PPCNTPhysStatEffectiveBerMagnitude, s.eff, true)
	// Symbol errors have no counter of their own here: the firmware's.
	s.symBER = ratio(regpath.PPCNTPhysStatSymbolFecBerCoef, regpath.PPCNTPhysStatSymbolBerMagnitude, s.eff, false)
	return s, nil
}

func (s *sample) counters() *Counters {
	if !s.ok {
		return nil
	}
	c := &Counters{TimeSinceClearMS: s.since, ReceivedBits: s.bits, RawErrors: s.raw, EffectiveErrors: s.eff, SymbolErrors: s.sym,
		RawBER: s.rawBER, EffectiveBER: s.effBER, SymbolBER: s.symBER,
		FECCorrectedBlocks: s.corrBlocks, FECUncorrectableBlocks: s.uncBlocks, FECCorrectedSymbols: s.corrSyms, Lanes: []LaneCounters{}}
	since := uint64(0)
	if s.since != nil {
		since = *s.since
	}
	n := uint64(len(s.laneRaw))
	for l := range s.laneRaw {
		lc := LaneCounters{Lane: l, RawErrors: s.laneRaw[l], CorrectedSymbols: s.laneSyms[l], RawBER: NA("not counted")}
		if s.laneRaw[l] != nil && s.bits != nil {
			// Each lane carries an equal share of the bits.
			lc.RawBER = FromCounters(*s.laneRaw[l], *s.bits/max(n, 1), since)
		}
		c.Lanes = append(c.Lanes, lc)
	}
	return c
}

func rates(a, b *sample, interval time.Duration) *Rates {
	sec := interval.Seconds()
	r := &Rates{IntervalS: sec}
	grew := a.since != nil && b.since != nil && *b.since > *a.since
	d := func(x, y *uint64) (uint64, bool) {
		if x == nil || y == nil {
			return 0, false
		}
		n, cleared := Delta(*x, *y, 64, grew)
		if cleared {
			r.Cleared = true
		}
		return n, true
	}
	per := func(x, y *uint64) *float64 {
		if n, ok := d(x, y); ok {
			return Rate(n, sec)
		}
		return nil
	}
	r.RawErrorsPerS = per(a.raw, b.raw)
	r.EffectiveErrorsPerS = per(a.eff, b.eff)
	r.CorrectedBlocksPerS = per(a.corrBlocks, b.corrBlocks)
	r.UncorrectableBlocksPS = per(a.uncBlocks, b.uncBlocks)
	for l := range b.laneRaw {
		if l < len(a.laneRaw) {
			if v := per(a.laneRaw[l], b.laneRaw[l]); v != nil {
				r.LaneRawErrorsPerS = append(r.LaneRawErrorsPerS, *v)
			}
		}
	}
	bits, okb := d(a.bits, b.bits)
	ms := uint64(interval / time.Millisecond)
	if raw, ok := d(a.raw, b.raw); ok && okb {
		r.RawBER = FromCounters(raw, bits, ms)
	} else {
		r.RawBER = NA("the counters were not read twice")
	}
	if eff, ok := d(a.eff, b.eff); ok && okb {
		r.EffectiveBER = FromCounters(eff, bits, ms)
	} else {
		r.EffectiveBER = NA("the counters were not read twice")
	}
	return r
}

// slrgPages are SLRG's pages by version (the PRM: 0 40 nm, 1 28 nm, 3 16
// nm, 4 7 nm, 5 5 nm).
func readEyes(rd *reader, lp adapter.Index, lanes int) error {
	lanes = max(min(lanes, 8), 1)
	for l := 0; l < lanes; l++ {
		d, err := rd.read(fmt.Sprintf("lane %d eye (SLRG)", l), "SLRG", lp.With("lane", uint64(l)))
		if err != nil {
			return err
		}
		if d == nil {
			return nil // one note for the port is enough
		}
		e := Eye{Lane: l, Units: "firmware units (larger is wider)"}
		st, _ := adapter.FieldOf(d, "SLRG", regpath.SLRGStatus)
		e.Valid = st != 0
		ver, _ := adapter.FieldOf(d, "SLRG", regpath.SLRGVersion)
		f := func(path string) *uint64 {
			if v, ok := adapter.FieldOf(d, "SLRG", path); ok {
				return &v
			}
			return nil
		}
		switch ver {
		case 4, 5:
			e.Page = "7nm"
			e.Upper, e.Mid, e.Lower, e.FOM = f(regpath.SLRGUpperEye7nm), f(regpath.SLRGMidEye7nm), f(regpath.SLRGLowerEye7nm), f(regpath.SLRGLastFom7nm)
		case 3:
			e.Page = "16nm"
			e.Upper, e.Mid, e.Lower, e.Grade = f(regpath.SLRGUpEyeGrade16nm), f(regpath.SLRGMidEyeGrade16nm), f(regpath.SLRGDnEyeGrade16nm), f(regpath.SLRGGrade16nm)
		default:
			e.Page = "40nm/28nm"
			e.Grade = f(regpath.SLRGGrade40nm)
		}
		rd.r.Eyes = append(rd.r.Eyes, e)
	}
	return nil
}

// readKernel gives what the kernel backend has: link state and speed
// (sysfs), the port counters, and notes the rest.
func readKernel(ctx context.Context, a *adapter.Adapter, p adapter.Port, r *Report) error {
	links, err := a.Links(ctx)
	if err != nil && !adapter.IsPartial(err) && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	for _, l := range links {
		if l.Port != p.Local {
			continue
		}
		op := &r.Operational
		op.AdminUp, op.OperUp, op.AdminStatus, op.OperStatus = l.AdminUp, l.OperUp, l.AdminStatus, l.OperStatus
		op.SpeedGbps, op.MaxSpeedGbps = l.SpeedGbps, l.MaxSpeedGbps
		op.State, op.PhysicalState = l.State, l.PhysState
		op.Protocol = p.LinkLayer
		if p.LinkLayer == adapter.LinkInfiniBand {
			op.IB = &IBPort{LogicalState: l.State, LID: l.LID, SMLID: l.SMLID}
			if l.IBSpeed != "" && l.Width > 0 {
				w := l.Width
				op.Speed, op.WidthLanes = "IB-"+l.IBSpeed, &w
			}
		}
	}
	cs, err := a.PortCounters(ctx)
	switch {
	case err == nil || adapter.IsPartial(err):
		for _, c := range cs {
			if c.Port == p.Local {
				r.Kernel = c.Values
				if ib := r.Operational.IB; ib != nil && c.Kind == "ib" {
					ib.Counters = ibCountersOf(c.Values)
				}
			}
		}
	case ctx.Err() != nil:
		return err
	default:
		r.Unavailable = append(r.Unavailable, Unavailable{What: "port counters", Why: err.Error()})
	}
	why := fmt.Sprintf("the kernel backend reads sysfs and ethtool; the PHY's registers (PDDR, PPCNT physical layer, PPLM, SLRG) need register access (-d %s as root)", orBDF(a.BDF()))
	for _, w := range []string{"PHY state and troubleshooting status", "FEC", "bit error ratios and per-lane errors", "eye opening per lane"} {
		r.Unavailable = append(r.Unavailable, Unavailable{What: w, Why: why})
	}
	return nil
}

func orBDF(s string) string {
	if s == "" {
		return "0000:03:00.0"
	}
	return s
}

// readCable summarises the port's module through the adapter's module
// reader (MCIA, or ethtool on the kernel backend).
//
// The summary gets a quarter of the time left (at least cableMin): a
// module whose MCIA answers busy is asked again until its deadline, and
// with the command's whole deadline it left none for the next ports'
// own registers, so all of link --all failed on a deadline "before the
// write of space 0x3" on PDDR (issue 26.10). Past its share the summary
// is left out, with why.
func readCable(ctx context.Context, a *adapter.Adapter, p adapter.Port, r *Report) error {
	cctx, cancel := context.WithTimeout(ctx, cableBudget(ctx))
	defer cancel()
	m, err := a.Module(cctx, p.Local, adapter.ModuleOptions{})
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		why := err.Error()
		if cctx.Err() != nil {
			why = fmt.Sprintf("not read within its share of the deadline (%v): %v", cableBudget(ctx).Round(time.Millisecond), err)
		}
		r.Unavailable = append(r.Unavailable, Unavailable{What: "module summary", Why: why})
		return nil
	}
	c := &Cable{Present: m.Present}
	if b := m.Best(); b != nil {
		c.Identifier, c.Vendor, c.PartNumber, c.Serial, c.Media = b.Identifier.Name, b.Vendor.Name, b.Vendor.PN, b.Vendor.SN, b.Media.Type
		c.Source = b.Source
	}
	r.Cable = c
	return nil
}

// OptionalIndex lists the index fields (field=value) a register needs in
// this database beyond those given, as Read gives them: the ones later
// revisions add. Writers of the same registers (linkctl) use it.
func OptionalIndex(db *prm.DB, reg string, given adapter.Index) adapter.Index {
	return adapter.LaterIndex(db, reg, given)
}

// cableMin is the least time a module summary gets (cableBudget).
const cableMin = 500 * time.Millisecond

// cableBudget is the share of ctx's time left that one port's module
// summary may take: a quarter, at least cableMin; 5 s without a deadline.
func cableBudget(ctx context.Context) time.Duration {
	dl, ok := ctx.Deadline()
	if !ok {
		return 5 * time.Second
	}
	return max(time.Until(dl)/4, cableMin)
}

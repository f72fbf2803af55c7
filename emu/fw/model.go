package fw

import (
	"fmt"
	"math"
	"time"
)

// portState is the model of one network port.
type portState struct {
	local    int
	spec     PortSpec
	protos   []int  // supported protocols (indexes into ethProtocols)
	capExt   uint32 // PTYS ext_eth_proto_capability
	capLeg   uint32 // PTYS eth_proto_capability
	adminExt uint32 // PTYS ext_eth_proto_admin
	adminLeg uint32 // PTYS eth_proto_admin
	anDis    bool   // PTYS an_disable_admin

	admin uint8 // PAOS admin_status
	event uint8 // PAOS e
	fd    bool  // PAOS fd (force down)
	// tripped: admin_status up_once and the link went down by itself; the
	// port stays down until PAOS is set again.
	tripped bool

	width uint8 // PMLP width
	lanes [8]laneMap
	scans [8]eyeScan // SLRED margin scans (eye.go)

	// Link state, re-evaluated by relink whenever something it depends on
	// changes; the up-time integral drives the traffic counters.
	up       bool
	proto    int // active protocol, -1 when down
	cause    downCause
	upSince  time.Time
	upAccum  time.Duration
	upEvents uint64    // times the link went up (for PDDR and tests)
	downs    uint64    // times an up link went down (IB link_downed)
	lastDown *linkDown // the last time it did, and why (PDDR page 6)

	// ib is the InfiniBand side of a port that runs InfiniBand (ib.go);
	// nil on an Ethernet port. There, proto indexes ibSpeeds.
	ib *ibState

	rates  portRates
	clears map[uint8]clearMark // PPCNT group -> last clear
	lq     linkQuality         // link quality and partner (link.go)
	// loopback is PPLR lb_en (loopback.go).
	loopback uint16
	// prbs is the PRBS test mode, PPTT and PPRT (prbs.go).
	prbs prbsState
}

type laneMap struct {
	module, slot, tx, rx uint8
}

type moduleState struct {
	index  int
	spec   ModuleSpec
	admin  uint8 // PMAOS admin_status
	event  uint8 // PMAOS e
	status ModuleStatus
	errNum uint8 // PMAOS error_type when status.Error != ""
	capExt uint32
	resets uint64
	// initUntil: after a reset (PMAOS rst) the module initialises until then.
	initUntil time.Time
}

// moduleInitTime is how long a module takes to initialise after a reset.
const moduleInitTime = 2 * time.Second

func (m *moduleState) initializing(now time.Time) bool {
	return !m.initUntil.IsZero() && now.Before(m.initUntil)
}

// ModuleStatus is what is plugged into a cage. The optics model reports
// plug events and module errors through SetModuleStatus.
type ModuleStatus struct {
	Plugged bool
	// Error, when set, is a PMAOS error_type enum name from the database
	// ("bad_cable", "High_Temperature", ...): the module is plugged but
	// unusable.
	Error string
}

// PortStatus is a snapshot of one port.
type PortStatus struct {
	LocalPort int
	Module    int
	Lanes     int
	AdminUp   bool
	OperUp    bool
	// Protocol is the active Ethernet protocol, or on an InfiniBand port
	// its speed (NDR); "" while down.
	Protocol  string
	SpeedGbps int
	// LinkType is LinkEthernet or LinkInfiniBand.
	LinkType string
	// Width is the number of lanes the link runs on and LaneGbps the data
	// rate of each (0 while down): an InfiniBand link may train narrower
	// than its port.
	Width    int
	LaneGbps float64
	// IBState is an InfiniBand port's logical state (Down, Init, Armed,
	// Active: what the subnet manager made of it), IBStateID its PortInfo
	// number (1..4); LID and SMLID its LIDs, 0 while it has none.
	IBState   string
	IBStateID int
	LID       uint16
	SMLID     uint16
	// DownReason says why the link is down ("" while up).
	DownReason string
	// UpTime is the total time the link has been up since power-on.
	UpTime time.Duration
	// LinkUps counts the times the link came up.
	LinkUps uint64
}

type downCause uint8

const (
	causeNone downCause = iota
	causeAdminDown
	causeForcedDown
	causeUnplugged
	causeModuleError
	causeModuleDisabled
	causeUnmapped
	causeNoPartner
	causeNoCommonSpeed
	causeModuleInit
	causeTripped
	causeFECMismatch
	causePartnerNoSpeed
)

var causeText = [...]string{
	causeNone:           "",
	causeAdminDown:      "port is administratively down (PAOS)",
	causeForcedDown:     "port is forced down (PAOS fd)",
	causeUnplugged:      "no module in the cage",
	causeModuleError:    "module is plugged with an error (PMAOS error_type)",
	causeModuleDisabled: "module is disabled (PMAOS)",
	causeUnmapped:       "port has no lanes (PMLP width 0)",
	causeNoPartner:      "no link partner (link-down fault)",
	causeNoCommonSpeed:  "no speed is enabled on both the port (PTYS admin) and the module",
	causeModuleInit:     "module is initialising after a reset",
	causeTripped:        "port was up_once and went down; set PAOS admin_status again to bring it up",
	causeFECMismatch:    "the link partner forces a FEC this port does not run at the speed both enable (PPLM)",
	causePartnerNoSpeed: "no speed is enabled on both this port and its link partner",
}

func (f *Firmware) buildModel() error {
	upVal, ok := f.enumValue("PAOS", "admin_status", "up")
	if !ok {
		upVal = 1
	}
	downVal, ok := f.enumValue("PAOS", "admin_status", "down_by_configuration")
	if !ok {
		downVal = 2
	}
	modEnabled, ok := f.enumValue("PMAOS", "admin_status", "enabled")
	if !ok {
		modEnabled = 1
	}
	for i, ms := range f.spec.Modules {
		m := &moduleState{index: i, spec: ms, admin: uint8(modEnabled), status: ModuleStatus{Plugged: !ms.Absent}}
		if len(ms.Protocols) > 0 {
			var ps []int
			for _, n := range ms.Protocols {
				p, _ := LookupEthProtocol(n)
				ps = append(ps, protoIndex(p.Name))
			}
			m.capExt = extMask(ps)
		} else {
			m.capExt = math.MaxUint32
		}
		f.modules = append(f.modules, m)
	}
	for i, ps := range f.spec.Ports {
		p := &portState{local: i + 1, spec: ps, proto: -1, clears: map[uint8]clearMark{}}
		for _, n := range ps.Protocols {
			proto, _ := LookupEthProtocol(n)
			p.protos = append(p.protos, protoIndex(proto.Name))
		}
		p.capExt, p.capLeg = extMask(p.protos), legacyMask(p.protos)
		p.adminExt, p.adminLeg = p.capExt, p.capLeg
		p.admin = uint8(upVal)
		if ps.AdminDown {
			p.admin = uint8(downVal)
		}
		p.width = uint8(ps.Lanes)
		for l := 0; l < ps.Lanes; l++ {
			p.lanes[l] = laneMap{module: uint8(ps.Module), tx: uint8(l), rx: uint8(l)}
		}
		p.rates = newPortRates(ps, f.spec.Seed, i)
		if ps.LinkType == LinkInfiniBand {
			p.ib = newIBState(ps)
			p.rates.topGbps = p.maxIBGbps()
		}
		f.initLink(p, ps.Link)
		f.ports = append(f.ports, p)
	}
	f.buildSensors()
	return f.buildRoCE()
}

func protoIndex(name string) int {
	for i, p := range ethProtocols {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// port returns local port lp (1-based), or nil.
func (f *Firmware) port(lp int) *portState {
	if lp < 1 || lp > len(f.ports) {
		return nil
	}
	return f.ports[lp-1]
}

// adminUp says whether a PAOS admin_status value brings the port up.
func (f *Firmware) adminUp(v uint8) bool {
	for _, name := range []string{"up", "up_once", "up_lowest_rate"} {
		if ev, ok := f.enumValue("PAOS", "admin_status", name); ok && uint64(v) == ev {
			return true
		}
	}
	return false
}

func (f *Firmware) moduleAdminEnabled(v uint8) bool {
	for _, name := range []string{"enabled", "enabled_once"} {
		if ev, ok := f.enumValue("PMAOS", "admin_status", name); ok && uint64(v) == ev {
			return true
		}
	}
	return false
}

// evalLink works out whether a port's link is up and at which protocol.
func (f *Firmware) evalLink(p *portState, now time.Time) (bool, int, downCause) {
	// A port in PRBS test mode runs its PHY with the pattern even when
	// administratively down, as mstlink --test_mode EN leaves it (prbs.go).
	if !f.adminUp(p.admin) && !p.prbs.tx.on {
		return false, -1, causeAdminDown
	}
	if p.fd {
		return false, -1, causeForcedDown
	}
	if p.tripped {
		return false, -1, causeTripped
	}
	if p.width == 0 {
		return false, -1, causeUnmapped
	}
	lowest := false
	if v, ok := f.enumValue("PAOS", "admin_status", "up_lowest_rate"); ok && uint64(p.admin) == v {
		lowest = true
	}
	if p.loopback == lbLocal {
		return f.evalLoopback(p, nil, lowest)
	}
	m := f.modules[p.lanes[0].module]
	switch {
	case !m.status.Plugged:
		return false, -1, causeUnplugged
	case m.initializing(now):
		return false, -1, causeModuleInit
	case m.status.Error != "":
		return false, -1, causeModuleError
	case !f.moduleAdminEnabled(m.admin):
		return false, -1, causeModuleDisabled
	case p.loopback == lbExternal:
		return f.evalLoopback(p, m, lowest)
	case f.linkDown[p.local]:
		return false, -1, causeNoPartner
	}
	if p.ib != nil {
		return f.evalIB(p, m, lowest)
	}
	best := bestProtocol(p.adminExt&p.capExt&m.capExt, int(p.width), lowest)
	if best < 0 {
		return false, -1, causeNoCommonSpeed
	}
	return f.withPartner(p, best, p.adminExt&p.capExt&m.capExt, lowest)
}

// relink re-evaluates every port at time now, closing or opening up-time
// intervals. Every state change calls it, so counters integrate exactly.
func (f *Firmware) relink(now time.Time) {
	f.tick(now)
	f.relinkAt(now)
}

func (f *Firmware) relinkAt(now time.Time) {
	for _, p := range f.ports {
		up, proto, cause := f.evalLink(p, now)
		switch {
		case up && !p.up:
			p.upSince = now
			p.upEvents++
		case !up && p.up:
			if d := now.Sub(p.upSince); d > 0 {
				p.upAccum += d
			}
			p.downs++
			if now.After(p.upSince) {
				// A link that was up for no time at all (the scenario's
				// faults applied at power-on) never ran: no event.
				p.recordDown(now, cause)
			}
			if v, ok := f.enumValue("PAOS", "admin_status", "up_once"); ok && uint64(p.admin) == v && cause != causeAdminDown {
				p.tripped, cause = true, causeTripped
			}
		}
		p.up, p.proto, p.cause = up, proto, cause
		f.respeed(p, now)
	}
}

// tick applies the transitions that happen by themselves with time (a
// module finishing its initialisation) at the moment they happen, so the
// link-up integral stays exact however late the next request comes.
func (f *Firmware) tick(now time.Time) {
	for range f.modules { // each pass retires one module, earliest first
		var next *moduleState
		for _, m := range f.modules {
			if !m.initUntil.IsZero() && !now.Before(m.initUntil) && (next == nil || m.initUntil.Before(next.initUntil)) {
				next = m
			}
		}
		if next == nil {
			return
		}
		f.relinkAt(next.initUntil)
		next.initUntil = time.Time{}
	}
}

// upTime is the port's total link-up time at now.
func (p *portState) upTime(now time.Time) time.Duration {
	t := p.upAccum
	if p.up {
		if d := now.Sub(p.upSince); d > 0 {
			t += d
		}
	}
	return t
}

func (f *Firmware) portStatus(p *portState, now time.Time) PortStatus {
	s := PortStatus{
		LocalPort: p.local, Module: int(p.lanes[0].module), Lanes: int(p.width),
		AdminUp: f.adminUp(p.admin), OperUp: p.up, DownReason: causeText[p.cause],
		UpTime: p.upTime(now), LinkUps: p.upEvents,
	}
	s.LinkType = LinkEthernet
	switch {
	case p.ib != nil:
		s.LinkType = LinkInfiniBand
		s.IBStateID, s.IBState, s.LID, s.SMLID = p.ibLogical()
		if p.proto >= 0 {
			sp := ibSpeeds[p.proto]
			s.Protocol, s.Width, s.LaneGbps = sp.Name, p.ibLanes(), sp.LaneGbps
			s.SpeedGbps = int(ibRate(p.proto, s.Width))
		}
	case p.proto >= 0:
		pr := ethProtocols[p.proto]
		s.Protocol, s.SpeedGbps, s.Width = pr.Name, pr.Gbps, pr.Lanes
		s.LaneGbps = float64(pr.Gbps) / float64(pr.Lanes)
	}
	return s
}

// Ports returns a snapshot of every port.
func (f *Firmware) Ports() []PortStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.clk.Now()
	f.tick(now)
	out := make([]PortStatus, len(f.ports))
	for i, p := range f.ports {
		out[i] = f.portStatus(p, now)
	}
	return out
}

// ModuleStatus returns what is plugged into cage index.
func (f *Firmware) ModuleStatus(index int) (ModuleStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if index < 0 || index >= len(f.modules) {
		return ModuleStatus{}, fmt.Errorf("fw: module %d does not exist (modules 0..%d)", index, len(f.modules)-1)
	}
	return f.modules[index].status, nil
}

// SetModuleStatus reports a plug event or module error; ports using the
// module go down or come back up at once (PMAOS oper_status follows).
func (f *Firmware) SetModuleStatus(index int, st ModuleStatus) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if index < 0 || index >= len(f.modules) {
		return fmt.Errorf("fw: module %d does not exist (modules 0..%d)", index, len(f.modules)-1)
	}
	m := f.modules[index]
	var num uint64
	if st.Error != "" {
		if !st.Plugged {
			return fmt.Errorf("fw: module %d: an error (%s) needs a plugged module", index, st.Error)
		}
		v, ok := f.enumValue("PMAOS", "error_type", st.Error)
		if !ok {
			return fmt.Errorf("fw: module %d: %q is not a PMAOS error_type; use one of %s", index, st.Error, f.enumNames("PMAOS", "error_type"))
		}
		num = v
	}
	m.status, m.errNum = st, uint8(num)
	f.relink(f.clk.Now())
	return nil
}

// SetPortAdmin brings a port administratively up or down, as a PAOS SET
// with ase would (for a control socket simulating `ip link set`).
func (f *Firmware) SetPortAdmin(local int, up bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.port(local)
	if p == nil {
		return fmt.Errorf("fw: local port %d does not exist (ports 1..%d)", local, len(f.ports))
	}
	name := "down_by_configuration"
	if up {
		name = "up"
	}
	v, ok := f.enumValue("PAOS", "admin_status", name)
	if !ok {
		return fmt.Errorf("fw: PAOS admin_status has no value %q in this database", name)
	}
	p.admin = uint8(v)
	f.relink(f.clk.Now())
	return nil
}

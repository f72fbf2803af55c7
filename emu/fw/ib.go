package fw

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"
)

// InfiniBand ports. A VPI adapter's port runs InfiniBand when its NV
// configuration says so (LINK_TYPE_P<n>=IB, read at power-on); the PHY
// then trains to an IB speed (SDR ... XDR) and a width (1x, 2x, 4x), and
// the subnet manager takes the port through its logical states (Init,
// Armed, Active) and gives it a LID. The registers show the PHY side:
// PTYS's ib_* fields (and ext_ib_proto_* where the database has them),
// PDDR's operational page with proto_active InfiniBand, PPCNT's InfiniBand
// groups. The logical side (state, LID, SM LID) is what the command
// interface's QUERY_HCA_VPORT_CONTEXT and the kernel's sysfs show
// (PortStatus carries it to them).

// IBSpeed is one InfiniBand speed of PTYS ib_proto_*: its bit (the
// kernel's IB_SPEED_* value is 1<<Bit, include/rdma/ib_verbs.h), the data
// rate of one lane as the kernel's rate attribute prints it
// (drivers/infiniband/core/sysfs.c: SDR 2.5 ... NDR 100 Gb/s), and the FEC
// the emulated link runs at it: none below EDR, RS(528,514) on EDR's
// 25G NRZ lanes, RS(544,514) on the PAM4 lanes of HDR and faster (PDDR
// fec_mode_active numbers).
type IBSpeed struct {
	Name     string
	Bit      int
	LaneGbps float64
	FEC      uint16
}

var ibSpeeds = []IBSpeed{
	{"SDR", 0, 2.5, fecNone}, {"DDR", 1, 5, fecNone}, {"QDR", 2, 10, fecNone}, {"FDR10", 3, 10, fecNone},
	{"FDR", 4, 14, fecNone}, {"EDR", 5, 25, fecRS528}, {"HDR", 6, 50, fecRS544}, {"NDR", 7, 100, fecRS544},
	{"XDR", 8, 200, fecRS544},
}

// IBSpeeds lists the InfiniBand speeds, slowest first.
func IBSpeeds() []IBSpeed { return slices.Clone(ibSpeeds) }

// LookupIBSpeed finds a speed by name (any case).
func LookupIBSpeed(name string) (IBSpeed, error) {
	for _, s := range ibSpeeds {
		if strings.EqualFold(s.Name, strings.TrimSpace(name)) {
			return s, nil
		}
	}
	names := make([]string, len(ibSpeeds))
	for i, s := range ibSpeeds {
		names[i] = s.Name
	}
	return IBSpeed{}, fmt.Errorf("unknown InfiniBand speed %q; known: %s", name, strings.Join(names, ", "))
}

// IB logical states the subnet manager leaves an up port in
// (IBSpec.State).
const (
	IBStateActive = "active"
	IBStateArmed  = "armed"
	IBStateInit   = "init"
)

// IBSpec is an InfiniBand port's side of the fabric.
type IBSpec struct {
	// Speeds the port supports (IBSpeed names); empty: every speed whose
	// lane rate the port's Ethernet protocols reach, but FDR10.
	Speeds []string
	// PartnerSpeeds are what the switch port enables; empty: every speed.
	PartnerSpeeds []string
	// Width is the number of lanes the link trains to (1, 2 or 4); 0:
	// every lane the port enables. Fewer lanes than the port has is a
	// degraded width: a lane failed to train.
	Width int
	// State is the logical state the subnet manager leaves an up port in:
	// IBStateActive (default), IBStateArmed, or IBStateInit (no subnet
	// manager: the port has no LID).
	State string
	// LID and SMLID are the port's and the subnet manager's LIDs (0: the
	// port's local number plus one, and 1).
	LID, SMLID uint16
	// LinkRecoveriesPerHour is how often the PHY recovers the link from
	// errors without it going down (PPCNT link_error_recovery_counter).
	LinkRecoveriesPerHour float64
}

func (s IBSpec) clone() IBSpec {
	s.Speeds = slices.Clone(s.Speeds)
	s.PartnerSpeeds = slices.Clone(s.PartnerSpeeds)
	return s
}

// Validate checks an InfiniBand spec for a port of lanes lanes.
func (s IBSpec) Validate(lanes int) error {
	var errs []error
	for _, list := range [][]string{s.Speeds, s.PartnerSpeeds} {
		for _, n := range list {
			if _, err := LookupIBSpeed(n); err != nil {
				errs = append(errs, err)
			}
		}
	}
	switch {
	case s.Width == 0:
	case s.Width != 1 && s.Width != 2 && s.Width != 4:
		errs = append(errs, fmt.Errorf("width %dx; an InfiniBand link trains to 1x, 2x or 4x", s.Width))
	case s.Width > lanes:
		errs = append(errs, fmt.Errorf("width %dx is wider than the port's %d lanes", s.Width, lanes))
	}
	switch s.State {
	case "", IBStateActive, IBStateArmed, IBStateInit:
	default:
		errs = append(errs, fmt.Errorf("state %q; use %s, %s or %s", s.State, IBStateActive, IBStateArmed, IBStateInit))
	}
	for _, l := range []struct {
		what string
		v    uint16
	}{{"LID", s.LID}, {"SM LID", s.SMLID}} {
		if l.v > 0xBFFF { // 0xC000 and up are multicast LIDs, 0xFFFF the permissive one
			errs = append(errs, fmt.Errorf("%s 0x%x is not a unicast LID (1..0xbfff)", l.what, l.v))
		}
	}
	if !(s.LinkRecoveriesPerHour >= 0 && s.LinkRecoveriesPerHour <= 1e6) {
		errs = append(errs, fmt.Errorf("link recoveries per hour %v is out of range 0..1e6", s.LinkRecoveriesPerHour))
	}
	return errors.Join(errs...)
}

// ibState is an InfiniBand port's model.
type ibState struct {
	spec                 IBSpec
	capSpeed, adminSpeed uint16 // PTYS ib_proto_capability, ib_proto_admin
	capWidth, adminWidth uint16 // PTYS ib_link_width_capability, _admin
	partner              uint16 // the switch's speeds; 0: every one
	recoveries           uint64 // link error recoveries, micro-events per hour of link-up time
}

func newIBState(ps PortSpec) *ibState {
	s := &ibState{spec: ps.IB.clone()}
	if len(ps.IB.Speeds) > 0 {
		s.capSpeed = ibMask(ps.IB.Speeds)
	} else {
		lane := 0.0
		for _, n := range ps.Protocols {
			if p, err := LookupEthProtocol(n); err == nil && p.Lanes > 0 {
				lane = max(lane, float64(p.Gbps)/float64(p.Lanes))
			}
		}
		for _, sp := range ibSpeeds {
			if sp.Name != "FDR10" && sp.LaneGbps <= lane {
				s.capSpeed |= 1 << sp.Bit
			}
		}
	}
	s.partner = ibMask(ps.IB.PartnerSpeeds)
	s.capWidth = widthMask(ps.Lanes)
	s.adminSpeed, s.adminWidth = s.capSpeed, s.capWidth
	s.recoveries = perMicro(ps.IB.LinkRecoveriesPerHour)
	return s
}

func ibMask(names []string) uint16 {
	var m uint16
	for _, n := range names {
		if s, err := LookupIBSpeed(n); err == nil {
			m |= 1 << s.Bit
		}
	}
	return m
}

// widthMask is the PTYS ib_link_width mask of every width up to lanes:
// bit 0 1x, bit 1 2x, bit 2 4x, bit 3 8x.
func widthMask(lanes int) uint16 {
	var m uint16
	for b, w := range []int{1, 2, 4, 8} {
		if w <= lanes {
			m |= 1 << b
		}
	}
	return m
}

// widthBit is the width mask bit of a link of lanes lanes (1, 2, 4, 8).
func widthBit(lanes int) uint16 {
	if lanes <= 0 {
		return 0
	}
	return uint16(1) << bits.Len(uint(lanes)-1)
}

// moduleIBCap is what the module in a cage carries as InfiniBand: every
// speed whose lane rate its fastest Ethernet protocol reaches.
func moduleIBCap(m *moduleState) uint16 {
	if m.capExt == math.MaxUint32 {
		return 0xFFFF
	}
	lane := 0.0
	for _, i := range protocolsOfExt(m.capExt) {
		p := ethProtocols[i]
		lane = max(lane, float64(p.Gbps)/float64(p.Lanes))
	}
	var out uint16
	for _, sp := range ibSpeeds {
		if sp.LaneGbps <= lane {
			out |= 1 << sp.Bit
		}
	}
	return out
}

// ibLanes is the width an InfiniBand link trains to: the widest the port
// enables and its PMLP mapping allows, or the spec's narrower width.
func (p *portState) ibLanes() int {
	w := 0
	for b, lanes := range []int{1, 2, 4, 8} {
		if (p.ib.adminWidth&p.ib.capWidth)&(1<<b) != 0 && lanes <= int(p.width) {
			w = lanes
		}
	}
	if p.ib.spec.Width > 0 && p.ib.spec.Width < w {
		w = p.ib.spec.Width
	}
	return w
}

// activeLanes are the lanes that carry the link: an InfiniBand link's
// trained width, else the port's (PMLP).
func (p *portState) activeLanes() int {
	if p.ib != nil && p.up {
		return p.ibLanes()
	}
	return int(p.width)
}

// evalIB picks the speed an InfiniBand link comes up at: the fastest (or,
// with PAOS up_lowest_rate, the slowest) that the port enables, the module
// carries and the switch enables.
func (f *Firmware) evalIB(p *portState, m *moduleState, lowest bool) (bool, int, downCause) {
	common := p.ib.adminSpeed & p.ib.capSpeed & moduleIBCap(m)
	if common == 0 || p.ibLanes() == 0 {
		return false, -1, causeNoCommonSpeed
	}
	if p.ib.partner != 0 {
		if common &= p.ib.partner; common == 0 {
			return false, -1, causePartnerNoSpeed
		}
	}
	best := -1
	for i, sp := range ibSpeeds {
		if common&(1<<sp.Bit) == 0 {
			continue
		}
		if best < 0 || !lowest {
			best = i
		}
	}
	return true, best, causeNone
}

// ibLogical is the port's IB logical state (the PortInfo PortState
// numbers: 1 Down, 2 Init, 3 Armed, 4 Active) and its LIDs.
func (p *portState) ibLogical() (state int, name string, lid, smLID uint16) {
	if !p.up {
		return 1, "Down", 0, 0
	}
	lid, smLID = p.ib.spec.LID, p.ib.spec.SMLID
	if lid == 0 {
		lid = uint16(p.local + 1)
	}
	if smLID == 0 {
		smLID = 1
	}
	switch p.ib.spec.State {
	case IBStateInit:
		return 2, "Init", 0, 0
	case IBStateArmed:
		return 3, "Armed", lid, smLID
	}
	return 4, "Active", lid, smLID
}

// ibRate is an InfiniBand link's data rate in Gb/s.
func ibRate(speed, lanes int) float64 {
	if speed < 0 || speed >= len(ibSpeeds) {
		return 0
	}
	return ibSpeeds[speed].LaneGbps * float64(lanes)
}

// ptysIB answers PTYS's InfiniBand fields, and a SET of them.
func (f *Firmware) ptysIB(c *Call, p *portState, set bool) uint8 {
	if set {
		speeds, widths := uint16(c.Req("ib_proto_admin")), uint16(c.Req("ib_link_width_admin"))
		switch {
		case speeds == 0:
			return c.Fail(StatusBadParam, "PTYS SET enables no InfiniBand speed; set ib_proto_admin to a subset of 0x%x", p.ib.capSpeed)
		case speeds&^p.ib.capSpeed != 0:
			return c.Fail(StatusBadParam, "ib_proto_admin 0x%x enables speeds the port lacks (capability 0x%x)", speeds, p.ib.capSpeed)
		case widths&^p.ib.capWidth != 0:
			return c.Fail(StatusBadParam, "ib_link_width_admin 0x%x enables widths the port lacks (capability 0x%x)", widths, p.ib.capWidth)
		case c.Req("an_disable_admin") != 0 && speeds&(speeds-1) != 0:
			// The PRM: with auto-negotiation disabled, the admin mask must
			// hold a single speed.
			return c.Fail(StatusBadParam, "an_disable_admin needs exactly one speed in ib_proto_admin, not 0x%x", speeds)
		}
		if widths == 0 {
			widths = p.ib.capWidth
		}
		p.ib.adminSpeed, p.ib.adminWidth = speeds, widths
		p.anDis = c.Req("an_disable_admin") != 0
		f.relink(c.Now)
	}
	c.Put("ib_proto_capability", p.ib.capSpeed)
	c.Put("ib_link_width_capability", p.ib.capWidth)
	c.Put("ib_proto_admin", p.ib.adminSpeed)
	c.Put("ib_link_width_admin", p.ib.adminWidth)
	if p.up {
		lanes := p.ibLanes()
		c.Put("ib_proto_oper", uint16(1)<<ibSpeeds[p.proto].Bit)
		c.Put("ib_link_width_oper", widthBit(lanes))
		c.Put("data_rate_oper", int(math.Round(ibRate(p.proto, lanes)*10))) // 100 Mb/s units
	}
	// The extended form (Rev 0.61 and later): one bit per speed and width.
	f.putExtIB(c, "ext_ib_proto_cap.ptys_ext_proto_ib_cap_oper_ext.ext_proto_ib", p.ib.capSpeed, p.ib.capWidth)
	f.putExtIB(c, "ext_ib_proto_admin.ptys_ext_proto_ib_admin_ext.ext_proto_ib", p.ib.adminSpeed, p.ib.adminWidth)
	if p.up {
		f.putExtIB(c, "ext_ib_proto_oper.ptys_ext_proto_ib_cap_oper_ext.ext_proto_ib", 1<<ibSpeeds[p.proto].Bit, widthBit(p.ibLanes()))
	}
	return StatusOK
}

// putExtIB writes an extended IB mask: the enum value named
// <SPEED>_<width>x of every speed and width given, where the database
// names one.
func (f *Firmware) putExtIB(c *Call, path string, speeds, widths uint16) {
	if _, err := c.Plan.Resolve(path, c.Out); err != nil {
		return // a revision without the extended form
	}
	var m uint64
	for _, sp := range ibSpeeds {
		if speeds&(1<<sp.Bit) == 0 {
			continue
		}
		for b, w := range []int{1, 2, 4, 8} {
			if widths&(1<<b) == 0 {
				continue
			}
			if v, ok := f.enumValue("PTYS", path, fmt.Sprintf("%s_%dx", sp.Name, w)); ok {
				m |= v
			}
		}
	}
	c.Put(path, m)
}

// maxIBGbps is the fastest rate an InfiniBand port's capability allows:
// its fastest speed on every lane it has.
func (p *portState) maxIBGbps() float64 {
	lanes := 0
	for b, w := range []int{1, 2, 4, 8} {
		if p.ib.capWidth&(1<<b) != 0 && w <= int(p.width) {
			lanes = w
		}
	}
	top := 0.0
	for i, sp := range ibSpeeds {
		if p.ib.capSpeed&(1<<sp.Bit) != 0 {
			top = max(top, ibRate(i, lanes))
		}
	}
	return top
}

// IB PHY state machine states (PDDR ib_phy_fsm_state enum names).
func (f *Firmware) ibPhyState(p *portState) string {
	switch f.phyState(p) {
	case "Active_or_Linkup":
		return "IB_AN_FSM_LINK_UP"
	case "Polling":
		return "IB_AN_FSM_POLLING"
	}
	return "IB_AN_FSM_DISABLED"
}

// pddrOperationalIB is page 0 of an InfiniBand port.
func (f *Firmware) pddrOperationalIB(c *Call, p *portState, m *moduleState) {
	const pre = "page_data.pddr_operation_info_page_ext."
	c.Put(pre+"proto_active", protoActiveInfiniBand)
	c.Put(pre+"phy_mngr_fsm_state", f.phyState(p))
	c.Put(pre+"loopback_mode", p.loopback)
	c.Put(pre+"ib_phy_fsm_state", f.ibPhyState(p))
	const (
		pm  = pre + "phy_manager_link_enabled.pddr_phy_manager_link_enabed_ib_ext."
		c2p = pre + "core_to_phy_link_enabled.pddr_c2p_link_enabed_ib_ext."
		cab = pre + "cable_proto_cap.pddr_cable_cap_ib_ext."
		act = pre + "link_active.pddr_link_active_ib_ext."
	)
	c.Put(pm+"phy_manager_link_proto_enabled", p.ib.adminSpeed)
	c.Put(pm+"phy_manager_link_width_enabled", p.ib.adminWidth)
	c.Put(c2p+"core_to_phy_link_proto_enabled", p.ib.adminSpeed&p.ib.capSpeed)
	c.Put(c2p+"core_to_phy_link_width_enabled", p.ib.adminWidth&p.ib.capWidth)
	if m.status.Plugged {
		c.Put(cab+"cable_link_speed_cap", moduleIBCap(m)&p.ib.capSpeed)
		c.Put(cab+"cable_link_width_cap", widthMask(int(p.width)))
	}
	if p.up {
		c.Put(act+"link_speed_active", uint16(1)<<ibSpeeds[p.proto].Bit)
		c.Put(act+"link_width_active", widthBit(p.ibLanes()))
		c.Put(pre+"fec_mode_active", f.activeFEC(p))
		c.Put(pre+"fec_mode_request", f.activeFEC(p))
	}
}

// ppcntIB fills the InfiniBand port counters (group 0x20): the IBA
// PortCounters, whose narrow fields stop at their maximum instead of
// wrapping.
func (f *Firmware) ppcntIB(c *Call, p *portState, up, _ time.Duration) uint8 {
	if p.ib == nil {
		return StatusOK // an Ethernet port counts nothing here
	}
	const pre = "counter_set.IB_portcntrs_attribute_grp_data_ext."
	v := f.ibCounts(c, p, up)
	for _, n := range ibCounterFields {
		c.putSat(pre+n.short, v[n.name])
	}
	return StatusOK
}

// ppcntIBExt fills the extended InfiniBand port counters (group 0x21):
// the same counts in 64 bits.
func (f *Firmware) ppcntIBExt(c *Call, p *portState, up, _ time.Duration) uint8 {
	if p.ib == nil {
		return StatusOK
	}
	const pre = "counter_set.IB_long_portcntrs_attribute_grp_data_ext."
	v := f.ibCounts(c, p, up)
	for _, n := range ibCounterFields {
		c.Put(pre+n.long, v[n.name])
	}
	return StatusOK
}

// ppcntIBGeneral fills the InfiniBand general counters (group 0x26): the
// data counters in 8-octet words.
func (f *Firmware) ppcntIBGeneral(c *Call, p *portState, up, _ time.Duration) uint8 {
	if p.ib == nil {
		return StatusOK
	}
	const pre = "counter_set.ppcnt_infiniband_general_counter_ext."
	c.Put(pre+"port_rcv_data_qword", count(p.rates.rxOctets, up)/8)
	c.Put(pre+"port_xmit_data_qword", count(p.rates.txOctets, up)/8)
	return StatusOK
}

// ibCounterFields name the IBA PortCounters in the two PPCNT groups (the
// 32-bit group and the 64-bit one) and in the kernel's sysfs counters/.
var ibCounterFields = []struct{ name, short, long string }{
	{"symbol_error", "symbol_error_counter", "symbol_error_counter"},
	{"link_error_recovery", "link_error_recovery_counter", "link_error_recovery_counter"},
	{"link_downed", "link_downed_counter", "link_downed_counter"},
	{"port_rcv_errors", "port_rcv_errors", "port_rcv_errors"},
	{"port_rcv_remote_physical_errors", "port_rcv_remote_physical_errors", "port_rcv_remote_physical_errors"},
	{"port_rcv_switch_relay_errors", "port_rcv_switch_relay_errors", "port_rcv_switch_relay_errors"},
	{"port_xmit_discards", "port_xmit_discards", "port_xmit_discards"},
	{"port_xmit_constraint_errors", "port_xmit_constraint_errors", "port_xmit_constraint_errors"},
	{"port_rcv_constraint_errors", "port_rcv_constraint_errors", "port_rcv_constraint_errors"},
	{"local_link_integrity_errors", "local_link_integrity_errors", "local_link_integrity_errors"},
	{"excessive_buffer_overrun_errors", "excessive_buffer_overrun_errors", "excessive_buffer_overrun_errors"},
	{"VL15_dropped", "vl_15_dropped", "vl_15_dropped"},
	{"port_xmit_data", "port_xmit_data", "port_xmit_data"},
	{"port_rcv_data", "port_rcv_data", "port_rcv_data"},
	{"port_xmit_packets", "port_xmit_pkts", "port_xmit_pkts"},
	{"port_rcv_packets", "port_rcv_pkts", "port_rcv_pkts"},
	{"port_xmit_wait", "port_xmit_wait", "port_xmit_wait"},
}

// ibCounts are an InfiniBand port's PortCounters over up of link-up time
// (since the group's clear), by their sysfs names. Data counts 4-octet
// words, as the IBA defines PortXmitData.
func (f *Firmware) ibCounts(c *Call, p *portState, up time.Duration) map[string]uint64 {
	r := &p.rates
	mark := p.clears[uint8(c.Req("grp"))]
	return map[string]uint64{
		"symbol_error":        f.symbolErrors(p, c.Now, up),
		"link_error_recovery": count(p.ib.recoveries, up) / 3600, // per hour: exact for whole rates
		"link_downed":         p.downs - min(p.downs, mark.downs),
		"port_rcv_errors":     count(r.rxErrors, up),
		"port_xmit_discards":  count(r.rxDiscards, up),
		"port_xmit_data":      count(r.txOctets, up) / 4,
		"port_rcv_data":       count(r.rxOctets, up) / 4,
		"port_xmit_packets":   count(r.txFrames, up),
		"port_rcv_packets":    count(r.rxFrames, up),
	}
}

// symbolErrors is the port's symbol error count over up of link-up time,
// the same number PPCNT's physical-layer group reports.
func (f *Firmware) symbolErrors(p *portState, now time.Time, up time.Duration) uint64 {
	if p.lq.spec.modeled() {
		return f.linkCounts(p, now, up).effective
	}
	return count(p.rates.symbolErrors, up)
}

// putSat writes a counter into a field too narrow for it as the field's
// maximum (IBA counters saturate).
func (c *Call) putSat(path string, v uint64) {
	t, err := c.Plan.Resolve(path, c.Out)
	if err != nil {
		c.Put(path, v) // let Put report the missing field
		return
	}
	if w := t.Width; w > 0 && w < 64 && v >= 1<<w {
		v = 1<<w - 1
	}
	c.Put(path, v)
}

// countedLanes are the lanes the Traffic-driven counters spread their
// errors over: the port's, or an InfiniBand link's trained width.
func (p *portState) countedLanes() int {
	if p.ib != nil && p.up {
		return p.ibLanes()
	}
	return p.rates.lanes
}

package adapter

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"time"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/regpath"
)

// InfiniBand ports over registers. A VPI adapter's port runs InfiniBand or
// Ethernet as its NV configuration says (LINK_TYPE_P<n>); PDDR's
// operational page names the protocol the PHY runs (proto_active, as
// mlxlink reads it), PTYS with proto_mask InfiniBand its IB speeds and
// widths, PPCNT's InfiniBand groups its PortCounters. The logical state
// the subnet manager gives the port (Init, Armed, Active) and its LIDs are
// no register's: they come from the command interface
// (QUERY_HCA_VPORT_CONTEXT, as mlx5_ib reads them) or the kernel's sysfs.

// Link layers (Port.LinkLayer, Link.LinkLayer): the kernel's words.
const (
	LinkEthernet   = "Ethernet"
	LinkInfiniBand = "InfiniBand"
)

// PDDR proto_active and PTYS proto_mask bits (the PRM's, in every
// revision): bit 0 InfiniBand, bit 2 Ethernet.
const (
	protoInfiniBand = 1 << 0
	protoEthernet   = 1 << 2
)

// registerLinkLayer is the protocol a port's PHY runs, from PDDR's
// operational page. A firmware that refuses PDDR, or names no protocol, is
// taken to run Ethernet (adapters without VPI).
func (a *Adapter) registerLinkLayer(ctx context.Context, local int) (string, error) {
	r, err := a.get(ctx, "PDDR", a.operationalIndex(local))
	if err == nil {
		now := a.c.Clock.Now()
		a.mu.Lock()
		if a.phy == nil {
			a.phy = map[int]kept{}
		}
		a.phy[local] = kept{r, now}
		a.mu.Unlock()
	}
	if err != nil {
		if _, isStatus := dev.StatusOf(err); isStatus || errors.Is(err, dev.ErrNotSupported) {
			return LinkEthernet, nil
		}
		var ie *dev.IndexError
		if errors.As(err, &ie) || prm.IsDatabaseProblem(err) {
			return LinkEthernet, nil
		}
		return "", fmt.Errorf("port %d (PDDR): %w", local, err)
	}
	if v, ok := fieldOf(r.Decoded, "PDDR", regpath.PDDROpProtoActive); ok && v&protoInfiniBand != 0 && v&protoEthernet == 0 {
		return LinkInfiniBand, nil
	}
	return LinkEthernet, nil
}

// operationalIndex is PDDR's operational page of port local: page_select
// 0, with the index fields later revisions add.
func (a *Adapter) operationalIndex(local int) Index {
	idx := LocalPort(local).Page(0)
	return idx.Join(LaterIndex(a.DB(), "PDDR", idx))
}

// phyFresh is how old a kept operational page may be and still be handed
// out as the port's current one: the reading Ports made moments before,
// within one command. The PHY's state (phy_mngr_fsm_state, PRM PDDR
// operational page) moves over link training, which takes seconds.
const phyFresh = time.Second

// OperationalPage reads PDDR's operational page (page_select 0) of port
// local. The reading Ports made for the port's link layer is handed out
// once, to the first caller within phyFresh of it on the adapter's clock,
// so a command that lists the ports and then reads the page (link) asks
// the firmware once; any later call reads afresh.
func (a *Adapter) OperationalPage(ctx context.Context, local int) (*dev.Reading, error) {
	now := a.c.Clock.Now()
	a.mu.Lock()
	k, ok := a.phy[local]
	delete(a.phy, local)
	a.mu.Unlock()
	if ok && !now.Before(k.at) && now.Sub(k.at) <= phyFresh {
		return k.r, nil
	}
	return a.get(ctx, "PDDR", a.operationalIndex(local))
}

// IB speed names by PTYS ib_proto bit, and the data rate of one lane as
// the kernel's rate attribute prints it (drivers/infiniband/core/sysfs.c).
var ibSpeeds = []struct {
	name string
	lane float64
}{{"SDR", 2.5}, {"DDR", 5}, {"QDR", 10}, {"FDR10", 10}, {"FDR", 14}, {"EDR", 25}, {"HDR", 50}, {"NDR", 100}, {"XDR", 200}}

// IBSpeedName names the fastest speed of a PTYS ib_proto mask ("" for none).
func IBSpeedName(mask uint64) string {
	if mask == 0 {
		return ""
	}
	b := bits.Len64(mask) - 1
	if b < len(ibSpeeds) {
		return ibSpeeds[b].name
	}
	return "bit" + strconv.Itoa(b)
}

// IBSpeedNames names every speed of a mask, fastest first.
func IBSpeedNames(mask uint64) []string {
	var out []string
	for b := 63; b >= 0; b-- {
		if mask&(1<<b) == 0 {
			continue
		}
		if b < len(ibSpeeds) {
			out = append(out, ibSpeeds[b].name)
		} else {
			out = append(out, "bit"+strconv.Itoa(b))
		}
	}
	return out
}

// IBWidthLanes is the lanes of a PTYS ib_link_width mask's widest width:
// bit 0 1x, bit 1 2x, bit 2 4x, bit 3 8x, bit 4 12x (0 for none).
func IBWidthLanes(mask uint64) int {
	lanes := 0
	for b, w := range []int{1, 2, 4, 8, 12} {
		if mask&(1<<b) != 0 {
			lanes = w
		}
	}
	return lanes
}

// IB port states (the PortInfo numbers the kernel prints in ports/N/state
// and phys_state, drivers/infiniband/core/sysfs.c).
var (
	ibStates     = map[int]string{1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}
	ibPhysStates = map[int]string{1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining", 5: "LinkUp",
		6: "LinkErrorRecovery", 7: "Phy Test"}
)

// registerIBLink fills an InfiniBand port's link from PTYS's IB fields and,
// when the function has a command interface, the logical state and LIDs
// of QUERY_HCA_VPORT_CONTEXT; without one, from the kernel's view when
// there is one.
func (a *Adapter) registerIBLink(ctx context.Context, p Port, l *Link, lr *LinkRegisters) error {
	r, err := a.get(ctx, "PTYS", LocalPort(p.Local).With("proto_mask", protoInfiniBand))
	lr.PTYSErr = err
	switch {
	case err == nil:
		lr.PTYS = r.Decoded
		if v, ok := fieldOf(r.Decoded, "PTYS", regpath.PTYSDataRateOper); ok {
			g := float64(v) / 10 // 100 Mb/s units
			l.SpeedGbps = &g
		}
		if v, ok := fieldOf(r.Decoded, "PTYS", regpath.PTYSMaxPortRate); ok && v > 0 {
			g := float64(v)
			l.MaxSpeedGbps = &g
		}
		if v, ok := fieldOf(r.Decoded, "PTYS", regpath.PTYSIBProtoOper); ok && v != 0 {
			l.IBSpeed = IBSpeedName(v)
		}
		if v, ok := fieldOf(r.Decoded, "PTYS", regpath.PTYSIBLinkWidthOper); ok && v != 0 {
			l.Width = IBWidthLanes(v)
		}
	case ctx.Err() != nil:
		return err
	case !errors.Is(err, dev.ErrNotSupported):
		return fmt.Errorf("port %d PTYS: %w", p.Local, err)
	}
	d, err := a.Registers(ctx)
	if err != nil {
		return err
	}
	if d.Commander() == nil {
		if k := a.c.Kernel; k != nil {
			if kp, err := k.Port(ctx, p.Local); err == nil {
				a.kernelIBState(l, kp.StateID, kp.PhysStateID, kp.LID, kp.SMLID)
			}
		}
		return nil
	}
	out, err := d.Command(ctx, "QUERY_HCA_VPORT_CONTEXT", []prm.Assignment{{Path: "port_num", Value: strconv.Itoa(p.Local)}})
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("port %d QUERY_HCA_VPORT_CONTEXT: %w", p.Local, err)
	}
	get := func(f string) (uint64, bool) {
		v, err := out.Get("hca_vport_context." + f)
		if err != nil {
			return 0, false
		}
		return v.Uint(), true
	}
	st, ok1 := get("port_state")
	phys, ok2 := get("port_physical_state")
	lid, _ := get("lid")
	sm, _ := get("sm_lid")
	if ok1 && ok2 {
		l32, s32 := uint32(lid), uint32(sm)
		a.kernelIBState(l, int(st), int(phys), &l32, &s32)
	}
	return nil
}

// kernelIBState sets the logical and physical states and LIDs.
func (a *Adapter) kernelIBState(l *Link, state, phys int, lid, sm *uint32) {
	if state > 0 {
		l.StateID, l.State = &state, ibStates[state]
	}
	if phys > 0 {
		l.PhysStateID, l.PhysState = &phys, ibPhysStates[phys]
	}
	if state >= 2 && state <= 4 { // a LID means something from Init on
		l.LID, l.SMLID = lid, sm
	}
}

// ibCounterFields are the InfiniBand port counters of PPCNT's groups 0x20
// and 0x21 by their built-in names, with the kernel's sysfs names
// (counters/), which the kernel backend and the exporter use.
var ibCounterFields = []struct{ prm, sysfs string }{
	{"symbol_error_counter", "symbol_error"},
	{"link_error_recovery_counter", "link_error_recovery"},
	{"link_downed_counter", "link_downed"},
	{"port_rcv_errors", "port_rcv_errors"},
	{"port_rcv_remote_physical_errors", "port_rcv_remote_physical_errors"},
	{"port_rcv_switch_relay_errors", "port_rcv_switch_relay_errors"},
	{"port_xmit_discards", "port_xmit_discards"},
	{"port_xmit_constraint_errors", "port_xmit_constraint_errors"},
	{"port_rcv_constraint_errors", "port_rcv_constraint_errors"},
	{"local_link_integrity_errors", "local_link_integrity_errors"},
	{"excessive_buffer_overrun_errors", "excessive_buffer_overrun_errors"},
	{"vl_15_dropped", "VL15_dropped"},
	{"port_xmit_data", "port_xmit_data"},
	{"port_rcv_data", "port_rcv_data"},
	{"port_xmit_pkts", "port_xmit_packets"},
	{"port_rcv_pkts", "port_rcv_packets"},
	{"port_xmit_wait", "port_xmit_wait"},
}

// IB PPCNT groups (the PRM's grp values) and their members of the
// counter_set union in the built-in database.
var ibGroups = []struct {
	grp    uint64
	member string
}{
	{0x21, "counter_set.IB_long_portcntrs_attribute_grp_data_ext."}, // 64 bits
	{0x20, "counter_set.IB_portcntrs_attribute_grp_data_ext."},      // the IBA widths
}

// registerIBCounters reads an InfiniBand port's PortCounters: the 64-bit
// group, or the IBA-width one from firmware without it. Fields are found
// by their built-in paths (fieldOf), so a database older than the group
// (Rev 0.51 has no 0x21) reads what the firmware sends all the same.
func (a *Adapter) registerIBCounters(ctx context.Context, p Port, regs map[CounterKey]*prm.Decoded) (CounterSet, error) {
	cs := CounterSet{Port: p.Local, Kind: "ib", Values: map[string]uint64{}}
	lp := LocalPort(p.Local)
	var first error
	for _, g := range ibGroups {
		r, err := a.get(ctx, "PPCNT", lp.Group(g.grp))
		if err != nil {
			if ctx.Err() != nil {
				return cs, err
			}
			if first == nil {
				first = err
			}
			continue
		}
		keep(regs, p.Local, g.grp, r.Decoded)
		if _, ok := fieldOf(r.Decoded, "PPCNT", g.member+"symbol_error_counter"); !ok {
			continue
		}
		for _, f := range ibCounterFields {
			if v, ok := fieldOf(r.Decoded, "PPCNT", g.member+f.prm); ok {
				cs.Values[f.sysfs] = v
			}
		}
		return cs, nil
	}
	if first == nil {
		first = errors.New("the firmware answered neither InfiniBand counter group")
	}
	return cs, fmt.Errorf("port %d PPCNT InfiniBand port counters: %w", p.Local, first)
}

// Package linkflap reads the evidence a link leaves when it goes down: PDDR's
// link-down info page (page_select 6, pddr_link_down_info_page_ext: who is
// blamed and the local, remote and end-to-end reasons of the last event),
// and puts it beside the link-down counter (InfiniBand PortCounters
// link_downed, PPCNT) and the time since the counters were cleared, from
// which a flap rate follows. The registers are the database's; a revision
// that lacks a field is a database finding, never a hardware one.
package linkflap

import (
	"context"
	"errors"
	"fmt"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/regpath"
)

// noEvent is local_reason_opcode 0, No_link_down_indication: nothing
// recorded since the port came up the first time.
const noEvent = 0

// Evidence is one port's link-down record.
type Evidence struct {
	Port int `json:"port"`
	// Recorded: the firmware holds a link-down event.
	Recorded bool `json:"recorded"`
	// Blame is down_blame (Local_phy, Remote_phy, Unknown); the reasons
	// are the opcodes' enum names (their numbers when the database names
	// none).
	Blame        string `json:"down_blame,omitempty"`
	LocalReason  string `json:"local_reason,omitempty"`
	RemoteReason string `json:"remote_reason,omitempty"`
	E2EReason    string `json:"e2e_reason,omitempty"`
	// LinkDowns counts the times the link went down since the counters
	// were cleared: InfiniBand's link_downed. Ethernet ports have no such
	// field in PPCNT's physical-layer group of this database (the kernel's
	// mlx5_ifc.h has link_down_events there), so it is nil with a finding.
	LinkDowns    *uint64 `json:"link_downs"`
	SinceClearMS *uint64 `json:"time_since_clear_ms"`
	// PerHour is LinkDowns over the time since the clear.
	PerHour *float64 `json:"link_downs_per_hour"`
	// Unavailable lists what the device would not give; DatabaseFindings
	// what the register database does not describe.
	Unavailable      []link.Unavailable `json:"unavailable,omitempty"`
	DatabaseFindings []string           `json:"database_findings,omitempty"`
	Verdict          *link.Verdict      `json:"verdict,omitempty"`
}

// Read reads the link-down page of r's port and judges it with the counters
// r already holds. A refused page is noted; only a device that cannot be
// reached is an error.
func Read(ctx context.Context, a *adapter.Adapter, r *link.Report) (*Evidence, error) {
	ev := &Evidence{Port: r.Port}
	if r.Operational.IB != nil && r.Operational.IB.Counters != nil {
		ev.LinkDowns = r.Operational.IB.Counters.LinkDowned
	} else {
		ev.DatabaseFindings = append(ev.DatabaseFindings,
			"PPCNT physical-layer group (0x12) has no link_down_events field in this database (the kernel's mlx5_ifc.h places it at 0xc8): the Ethernet link-down count is not read")
	}
	if r.Counters != nil {
		ev.SinceClearMS = r.Counters.TimeSinceClearMS
	}
	if ev.LinkDowns != nil && ev.SinceClearMS != nil && *ev.SinceClearMS > 0 {
		h := float64(*ev.LinkDowns) / (float64(*ev.SinceClearMS) / 3.6e6)
		ev.PerHour = &h
	}
	if !a.HasRegisters() {
		ev.Unavailable = append(ev.Unavailable, link.Unavailable{What: "link-down info", Why: "PDDR is a register; the kernel backend has none (use -d with a PCI address)"})
		return ev, nil
	}
	idx := adapter.LocalPort(r.Port).Page(6)
	x, err := a.ReadRegister(ctx, "PDDR", idx.Join(link.OptionalIndex(a.DB(), "PDDR", idx)))
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		if _, ok := dev.StatusOf(err); ok || errors.Is(err, errors.ErrUnsupported) || isDBErr(err) {
			ev.Unavailable = append(ev.Unavailable, link.Unavailable{What: "link-down info", Why: fmt.Sprintf("PDDR page 6: %v", err)})
			return ev, nil
		}
		return nil, fmt.Errorf("port %d PDDR link-down page: %w", r.Port, err)
	}
	d := x.Decoded
	reason, ok := adapter.FieldOf(d, "PDDR", regpath.PDDRDownLocalReason)
	if !ok {
		ev.DatabaseFindings = append(ev.DatabaseFindings, "PDDR page 6 has no local_reason_opcode in this database")
		return ev, nil
	}
	ev.Recorded = reason != noEvent
	if ev.Recorded {
		ev.LocalReason = adapter.EnumTextOf(d, "PDDR", regpath.PDDRDownLocalReason)
		ev.Blame = adapter.EnumTextOf(d, "PDDR", regpath.PDDRDownBlame)
		if v, ok := adapter.FieldOf(d, "PDDR", regpath.PDDRDownRemoteReason); ok && v != 0 {
			ev.RemoteReason = adapter.EnumTextOf(d, "PDDR", regpath.PDDRDownRemoteReason)
		}
		if v, ok := adapter.FieldOf(d, "PDDR", regpath.PDDRDownE2EReason); ok && v != 0 {
			ev.E2EReason = adapter.EnumTextOf(d, "PDDR", regpath.PDDRDownE2EReason)
		}
	}
	ev.Verdict = judge(ev)
	return ev, nil
}

func isDBErr(err error) bool {
	var fe *prm.FieldError
	var nf *prm.NotFoundError
	var ie *dev.IndexError
	return errors.As(err, &fe) || errors.As(err, &nf) || errors.As(err, &ie)
}

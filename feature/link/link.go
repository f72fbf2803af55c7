// Package link reads and judges a port's link the way mlxlink does, from
// the same registers: PAOS and PTYS (state, speeds, auto-negotiation),
// PDDR's operational page (the PHY manager's state, FEC, loopback, the
// cable's speeds) and troubleshooting page (the firmware's status opcode
// and message), PPLM (FEC capability and overrides per speed), PPCNT's
// physical-layer and statistical groups (errors, bit error ratios, per
// lane) and SLRG (each lane's eye). Fields are found by their built-in
// paths in every PRM revision (adapter.FieldOf). On the kernel backend it
// gives what sysfs and ethtool give, and says what is missing.
//
// Every reading is judged: a verdict names its category (link partner,
// cable or module, configuration, signal quality), the evidence and the
// next step, as the modules package does for modules.
package link

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/prm"
)

// Options tune Read.
type Options struct {
	// Ports to read (local port numbers); empty: every owned port.
	Ports []int
	// Interval, when positive, reads the counters a second time after it
	// (on the adapter's clock) and gives rates over it.
	Interval time.Duration
	// Thresholds judge the ratios; zero values take the defaults.
	Thresholds Thresholds
	// Brief leaves out what no verdict needs (PPLM's FEC per speed, SLRG's
	// eyes), for periodic readers: health, the exporter, monitor.
	Brief bool
	// Links, when set, is the adapter's LinkReadings answer the caller
	// has just read (health, for its ports check): Read decodes PAOS and
	// PTYS from it rather than reading them again.
	Links *Links
	// Counters, when set, are PPCNT readings the caller has just made
	// (adapter.PortCounterReadings: health's second sample): the first
	// sample takes its groups from them rather than reading them again.
	Counters map[adapter.CounterKey]*prm.Decoded
}

// Links is one answer of adapter.Adapter.LinkReadings.
type Links struct {
	Links     []adapter.Link
	Registers map[int]*adapter.LinkRegisters
	Err       error
}

// Thresholds are the ratios past which a verdict is raised.
type Thresholds struct {
	// RawBER: pre-FEC, per port or lane (default 1E-5: RS-FEC still
	// corrects it, with little margin left).
	RawBER float64 `json:"raw_ber"`
	// EffectiveBER: after FEC (default 1E-12, the Ethernet objective).
	EffectiveBER float64 `json:"effective_ber"`
}

// DefaultThresholds are used for zero fields.
var DefaultThresholds = Thresholds{RawBER: 1e-5, EffectiveBER: 1e-12}

func (t Thresholds) withDefaults() Thresholds {
	if !(t.RawBER > 0) {
		t.RawBER = DefaultThresholds.RawBER
	}
	if !(t.EffectiveBER > 0) {
		t.EffectiveBER = DefaultThresholds.EffectiveBER
	}
	return t
}

// Report is what was read about one port's link.
type Report struct {
	Port    int    `json:"port"`
	Netdev  string `json:"netdev,omitempty"`
	Module  int    `json:"module"`
	Lanes   int    `json:"lanes,omitempty"`
	Backend string `json:"backend"`

	Operational     Operational      `json:"operational"`
	FEC             *FEC             `json:"fec,omitempty"`
	Counters        *Counters        `json:"counters,omitempty"`
	Rates           *Rates           `json:"rates,omitempty"`
	Troubleshooting *Troubleshooting `json:"troubleshooting,omitempty"`
	Eyes            []Eye            `json:"eyes,omitempty"`
	// Kernel holds the kernel backend's port counters (IB PMA names).
	Kernel map[string]uint64 `json:"kernel_counters,omitempty"`
	// Unavailable lists what could not be read, and why.
	Unavailable []Unavailable `json:"unavailable,omitempty"`
	Verdicts    []Verdict     `json:"verdicts"`
	// Cable is a summary of the port's module or cable (not in Brief).
	Cable *Cable `json:"cable,omitempty"`
	// Module says where the module's own diagnostics are.
	ModuleHint string `json:"module_hint,omitempty"`
}

// Cable summarises the module in the port's cage; `cxray module` has the
// rest (powers, thresholds, flags).
type Cable struct {
	Present    *bool  `json:"present,omitempty"`
	Identifier string `json:"identifier,omitempty"`
	Vendor     string `json:"vendor,omitempty"`
	PartNumber string `json:"part_number,omitempty"`
	Serial     string `json:"serial_number,omitempty"`
	Media      string `json:"media,omitempty"`
	// Source: "EEPROM" or "firmware" (PDDR page 3).
	Source string `json:"source,omitempty"`
}

// Unavailable is a part of the reading the backend or firmware did not give.
type Unavailable struct {
	What string `json:"what"`
	Why  string `json:"why"`
}

// Operational is the link's state and speed.
type Operational struct {
	AdminUp     *bool  `json:"admin_up,omitempty"`
	OperUp      *bool  `json:"oper_up,omitempty"`
	AdminStatus string `json:"admin_status,omitempty"`
	OperStatus  string `json:"oper_status,omitempty"`
	// State is the PHY manager's state (PDDR phy_mngr_fsm_state), in
	// mlxlink's words ("Active", "Polling", "Disable").
	State   string  `json:"state,omitempty"`
	StateID *uint64 `json:"state_id,omitempty"`
	// PhysicalState is the auto-negotiation state (PDDR eth_an_fsm_state).
	PhysicalState   string  `json:"physical_state,omitempty"`
	PhysicalStateID *uint64 `json:"physical_state_id,omitempty"`
	Protocol        string  `json:"protocol,omitempty"` // Ethernet
	// Speed is mlxlink's name of the active protocol ("400G"), Width its
	// lanes; SpeedGbps the rate. nil/"" while down.
	Speed        string   `json:"speed,omitempty"`
	SpeedGbps    *float64 `json:"speed_gbps,omitempty"`
	WidthLanes   *int     `json:"width_lanes,omitempty"`
	MaxSpeedGbps *float64 `json:"max_speed_gbps,omitempty"`
	// AutoNegotiation: "ON" or "FORCE" (PTYS an_disable_admin).
	AutoNegotiation string `json:"auto_negotiation,omitempty"`
	Loopback        string `json:"loopback,omitempty"`
	// Enabled, Supported and Cable are extended Ethernet protocol masks:
	// what this port enables (PTYS admin), can do (capability) and what
	// the cable supports (PDDR).
	Enabled   *Speeds `json:"enabled_speeds,omitempty"`
	Supported *Speeds `json:"supported_speeds,omitempty"`
	Cable     *Speeds `json:"cable_speeds,omitempty"`
	// IB is an InfiniBand port's side of the fabric (nil on Ethernet).
	IB *IBPort `json:"infiniband,omitempty"`
}

// IBPort is what an InfiniBand port adds: the logical state the subnet
// manager gave it (ACTIVE, INIT, ARMED) and its LIDs, from the command
// interface or the kernel; the widths it enables; its PortCounters (PPCNT's
// InfiniBand port counters group, where mlxlink reads them).
type IBPort struct {
	LogicalState string  `json:"logical_state,omitempty"`
	LID          *uint32 `json:"lid,omitempty"`
	SMLID        *uint32 `json:"sm_lid,omitempty"`
	// EnabledWidths and CableWidths are the widths (lanes) the port
	// enables and its cable supports.
	EnabledWidths []int `json:"enabled_widths,omitempty"`
	CableWidths   []int `json:"cable_widths,omitempty"`
	// Counters are the IBA PortCounters since the last clear; the narrow
	// ones stop at their maximum.
	Counters *IBCounters `json:"counters,omitempty"`
}

// IBCounters are the InfiniBand port counters that judge a link.
type IBCounters struct {
	SymbolErrors             *uint64 `json:"symbol_error"`
	LinkErrorRecovery        *uint64 `json:"link_error_recovery"`
	LinkDowned               *uint64 `json:"link_downed"`
	PortRcvErrors            *uint64 `json:"port_rcv_errors"`
	PortRcvRemotePhysical    *uint64 `json:"port_rcv_remote_physical_errors"`
	LocalLinkIntegrityErrors *uint64 `json:"local_link_integrity_errors"`
	ExcessiveBufferOverrun   *uint64 `json:"excessive_buffer_overrun_errors"`
}

// Speeds is a protocol mask and its names.
type Speeds struct {
	Mask  string   `json:"mask"` // 0x00013ff2
	Names []string `json:"names"`
	bits  uint64
}

// FEC is the forward error correction the link runs and may run.
type FEC struct {
	Active      string  `json:"active,omitempty"`
	ActiveID    *uint64 `json:"active_id,omitempty"`
	Requested   string  `json:"requested,omitempty"`
	RequestedID *uint64 `json:"requested_id,omitempty"`
	// PerSpeed is PPLM: what each speed supports and what is configured.
	PerSpeed []FECSpeed `json:"per_speed,omitempty"`
}

// FECSpeed is PPLM's capability and override of one speed group.
type FECSpeed struct {
	Speed     string   `json:"speed"` // PPLM's group name: 400g_4x
	Supported []string `json:"supported"`
	// Admin is the override: "auto", or the FEC forced.
	Admin string `json:"admin"`
}

// Counters are the physical-layer error counters since the last clear.
type Counters struct {
	TimeSinceClearMS *uint64 `json:"time_since_clear_ms"`
	ReceivedBits     *uint64 `json:"received_bits"`
	// RawErrors are the bits FEC corrected (PPCNT phy_corrected_bits);
	// EffectiveErrors those it could not; SymbolErrors the symbol errors.
	RawErrors       *uint64 `json:"raw_errors_bits"`
	EffectiveErrors *uint64 `json:"effective_errors_bits"`
	SymbolErrors    *uint64 `json:"symbol_errors"`
	RawBER          BER     `json:"raw_ber"`
	EffectiveBER    BER     `json:"effective_ber"`
	SymbolBER       BER     `json:"symbol_ber"`
	// FEC block and symbol counts (physical-layer group).
	FECCorrectedBlocks     *uint64        `json:"fec_corrected_blocks"`
	FECUncorrectableBlocks *uint64        `json:"fec_uncorrectable_blocks"`
	FECCorrectedSymbols    *uint64        `json:"fec_corrected_symbols"`
	Lanes                  []LaneCounters `json:"lanes"`
}

// LaneCounters are one lane's errors.
type LaneCounters struct {
	Lane             int     `json:"lane"`
	RawErrors        *uint64 `json:"raw_errors_bits"`
	CorrectedSymbols *uint64 `json:"fec_corrected_symbols"`
	// RawBER is the lane's errors over its share of the bits.
	RawBER BER `json:"raw_ber"`
}

// Rates are the counters' growth over an interval.
type Rates struct {
	IntervalS             float64   `json:"interval_s"`
	RawErrorsPerS         *float64  `json:"raw_errors_per_s"`
	EffectiveErrorsPerS   *float64  `json:"effective_errors_per_s"`
	CorrectedBlocksPerS   *float64  `json:"fec_corrected_blocks_per_s"`
	UncorrectableBlocksPS *float64  `json:"fec_uncorrectable_blocks_per_s"`
	LaneRawErrorsPerS     []float64 `json:"lane_raw_errors_per_s,omitempty"`
	// IBSymbolErrorsPerS is an InfiniBand port's symbol_error growth.
	IBSymbolErrorsPerS *float64 `json:"ib_symbol_errors_per_s,omitempty"`
	RawBER             BER      `json:"raw_ber"`
	EffectiveBER       BER      `json:"effective_ber"`
	// Cleared: the counters were cleared between the reads, so the rates
	// count from the clear.
	Cleared bool `json:"cleared,omitempty"`
}

// Troubleshooting is PDDR's verdict on the link.
type Troubleshooting struct {
	StatusOpcode *uint64 `json:"status_opcode"`
	// Message is the firmware's status message (mlxlink's "Recommendation").
	Message  string `json:"message"`
	Category string `json:"category,omitempty"`
}

// Eye is one lane's receive eye (SLRG), in the firmware's units.
type Eye struct {
	Lane    int     `json:"lane"`
	Page    string  `json:"page"` // 7nm, 16nm, 28nm/40nm
	Valid   bool    `json:"valid"`
	Upper   *uint64 `json:"upper_eye,omitempty"`
	Mid     *uint64 `json:"mid_eye,omitempty"`
	Lower   *uint64 `json:"lower_eye,omitempty"`
	FOM     *uint64 `json:"figure_of_merit,omitempty"`
	Grade   *uint64 `json:"grade,omitempty"`
	Units   string  `json:"units"`
	Problem string  `json:"problem,omitempty"`
}

// Verdict is a problem found, as modules report them.
type Verdict struct {
	Code     string   `json:"code"`
	Category string   `json:"category"`
	Summary  string   `json:"summary"`
	Evidence []string `json:"evidence,omitempty"`
	NextStep string   `json:"next_step"`
}

// Verdict categories.
const (
	CategoryPartner       = "link partner"
	CategoryCable         = "cable or module"
	CategoryConfiguration = "configuration"
	CategorySignal        = "signal quality"
)

// Read reads the links of the ports asked for. A part one port could not
// give is noted in its report; only a device error (or the context) fails
// the call.
func Read(ctx context.Context, a *adapter.Adapter, o Options) ([]*Report, error) {
	ports, err := a.Ports(ctx)
	if err != nil {
		return nil, err
	}
	want := ports
	if len(o.Ports) > 0 {
		want = nil
		for _, n := range o.Ports {
			p, err := a.Port(ctx, n)
			if err != nil {
				return nil, err
			}
			want = append(want, p)
		}
	}
	th := o.Thresholds.withDefaults()
	links := o.Links
	if links == nil && a.HasRegisters() {
		links = &Links{}
		links.Links, links.Registers, links.Err = a.LinkReadings(ctx)
	}
	var out []*Report
	for _, p := range want {
		r := &Report{Port: p.Local, Netdev: p.Netdev, Module: p.Module, Lanes: p.Lanes, Backend: string(a.Backend()),
			ModuleHint: fmt.Sprintf("cxray module -d %s --port %d", a.Name(), p.Local)}
		if a.HasRegisters() {
			err = readRegisters(ctx, a, p, r, o, links)
		} else {
			err = readKernel(ctx, a, p, r)
		}
		if err != nil {
			return out, err
		}
		if !o.Brief {
			if err := readCable(ctx, a, p, r); err != nil {
				return out, err
			}
		}
		r.Verdicts = judge(r, th)
		out = append(out, r)
	}
	return out, nil
}

// Problems counts the verdicts of reports.
func Problems(rs []*Report) int {
	n := 0
	for _, r := range rs {
		n += len(r.Verdicts)
	}
	return n
}

// fatal says whether a read error stops everything (the context, a gone
// transport) rather than leaving one part unread (a firmware status).
func fatal(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return true
	}
	if _, ok := dev.StatusOf(err); ok {
		return false
	}
	// An index field a future revision adds (and adapter.LaterIndex does not
	// know yet) leaves that part unread, not the whole link.
	var ie *dev.IndexError
	if errors.As(err, &ie) {
		return false
	}
	return !errors.Is(err, errors.ErrUnsupported) && !isFieldErr(err)
}

func u64(v uint64) *uint64 { return &v }

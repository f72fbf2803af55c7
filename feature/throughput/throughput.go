// Package throughput explains "bandwidth only half of line rate": from
// the evidence a reader gathered over one interval it names the causes
// the evidence supports, most decisive first:
//
//   - a PCIe link below what the port needs (400G needs Gen5 x16; a card
//     trained x8 or Gen4 carries about half);
//   - a PSN window smaller than the bandwidth-delay product (one RoCE
//     connection cannot keep the link busy);
//   - link errors and retransmissions (every loss resends a window);
//   - pause frames or discards (the fabric or the host cannot take it).
//
// A cause the evidence cannot judge (the window without the fabric's
// RTT) is said to be unjudged, with what would judge it.
package throughput

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cxray/cxray/feature/pcielink"
)

// Window is what the PSN window check found (roce.Advise with an RTT).
type Window struct {
	LogWindow  int     // LOG_TX_PSN_WINDOW in effect
	BDPPackets float64 // the bandwidth-delay product in packets
	// MaxGbps is what one connection reaches with the window.
	MaxGbps  float64
	Limiting bool
}

// Evidence is what was read over one interval.
type Evidence struct {
	// PortGbps is the port's speed (0 unknown).
	PortGbps float64
	// PCIe is the PCIe report (nil: not read).
	PCIe *pcielink.Report
	// Window is nil when it could not be judged (no RTT, no NV database);
	// WindowWhy says why.
	Window    *Window
	WindowWhy string
	// Errors are link error counters that grew, Retransmissions the RoCE
	// retransmission counters that grew, Pause the pause counters that
	// grew, Discards the discard counters that grew ("NAME RATE/s").
	Errors, Retransmissions, Pause, Discards []string
	// Unread names evidence that could not be read, and why.
	Unread []string
}

// Cause is one explanation the evidence supports.
type Cause struct {
	Code     string   `json:"code"`
	Summary  string   `json:"summary"`
	Evidence []string `json:"evidence,omitempty"`
	NextStep string   `json:"next_step"`
}

// Causes, by code.
const (
	CausePCIe     = "pcie_link_below_port"
	CauseWindow   = "psn_window_below_bdp"
	CauseErrors   = "link_errors_and_retransmissions"
	CauseFlowCtrl = "pause_or_discards"
)

// Short names a cause in a few words.
func Short(code string) string {
	switch code {
	case CausePCIe:
		return "the PCIe link is below what the port needs"
	case CauseWindow:
		return "the PSN window is below the bandwidth-delay product"
	case CauseErrors:
		return "link errors and retransmissions"
	case CauseFlowCtrl:
		return "pause frames or discards"
	}
	return code
}

// Explain lists the causes the evidence supports, most decisive first: a
// PCIe link that cannot carry the port caps every workload, a small
// window caps each connection, errors and pause cost a share.
func Explain(e Evidence) []Cause {
	out := []Cause{}
	if p := e.PCIe; p != nil {
		for _, v := range p.Verdicts {
			if v.Code != "pcie_bandwidth_short" {
				continue
			}
			c := Cause{Code: CausePCIe,
				Summary: fmt.Sprintf("the PCIe link %s carries about %.0f Gb/s after protocol overhead, %.0f%% of the port's %g Gb/s: throughput cannot go higher",
					p.Text, p.Current.UsableGbps(), 100*p.Current.UsableGbps()/p.PortGbps, p.PortGbps)}
			for _, w := range p.Verdicts {
				if w.Code == "pcie_width_degraded" || w.Code == "pcie_speed_degraded" {
					c.Evidence = append(c.Evidence, w.Summary)
					c.NextStep = w.NextStep
				}
			}
			c.Evidence = append(c.Evidence, v.Evidence...)
			if need := pcielink.Needed(p.PortGbps, p.Capable); need.Known() {
				c.Evidence = append(c.Evidence, fmt.Sprintf("%g Gb/s needs %v", p.PortGbps, need))
			}
			if c.NextStep == "" {
				c.NextStep = v.NextStep
			}
			out = append(out, c)
		}
	}
	if w := e.Window; w != nil && w.Limiting {
		out = append(out, Cause{Code: CauseWindow,
			Summary: fmt.Sprintf("the PSN window 2^%d = %d packets is smaller than the bandwidth-delay product (%.0f packets): one connection reaches about %.1f Gb/s",
				w.LogWindow, 1<<w.LogWindow, w.BDPPackets, w.MaxGbps),
			NextStep: "raise LOG_TX_PSN_WINDOW to cover the BDP ('cxray roce advise', 'cxray roce set log_tx_psn_window=N'), or spread traffic over more connections"})
	}
	if len(e.Errors)+len(e.Retransmissions) > 0 {
		out = append(out, Cause{Code: CauseErrors,
			Summary:  lossSummary(e.Errors, e.Retransmissions),
			NextStep: "errors on the wire point to the cable, module or connector ('cxray link', 'cxray module --verify'); retransmissions without them to loss in the fabric ('cxray roce status'); with go-back-N every loss resends the window in flight"})
	}
	if len(e.Pause)+len(e.Discards) > 0 {
		out = append(out, Cause{Code: CauseFlowCtrl,
			Summary:  "traffic is paused or dropped: " + strings.Join(append(append([]string{}, e.Pause...), e.Discards...), ", "),
			NextStep: "pause frames received mean the switch (or the peer) cannot take more: congestion in the fabric; sent ones, or rx_out_of_buffer, that this host cannot keep up (CPU, ring sizes, PCIe); discards without pause are a lossy class overflowing: enable PFC or ECN for RoCE"})
	}
	return out
}

// lossSummary says what the counters that grew show: errors on the wire,
// resends by the transport (RoCE or InfiniBand RC), or both. Without a
// retransmission counter nothing says that anything was resent.
func lossSummary(errs, resends []string) string {
	all := strings.Join(append(append([]string{}, errs...), resends...), ", ")
	switch {
	case len(resends) == 0:
		return "the link loses data: " + all
	case len(errs) == 0:
		return "the transport resends lost packets: " + all
	}
	return "the link loses data and the transport resends it: " + all
}

// Unjudged lists what the evidence could not say, and what would.
func Unjudged(e Evidence) []string {
	var out []string
	if e.PCIe == nil || e.PCIe.Text == "" {
		out = append(out, "the PCIe link: not read ('cxray link --pcie')")
	}
	if e.Window == nil {
		why := e.WindowWhy
		if why == "" {
			why = "give the fabric's round-trip time: 'cxray roce status --rtt 8us'"
		}
		out = append(out, "the PSN window: "+why)
	}
	return append(out, e.Unread...)
}

// Port counters weighed as evidence, by the names adapter.PortCounters
// gives them (PPCNT's IEEE 802.3, RFC 2863 and physical-layer groups; the
// IB PMA counters on the kernel backend).
var (
	ErrorCounters = []string{"a_frame_check_sequence_errors", "a_symbol_error_during_carrier", "a_alignment_errors",
		"if_in_errors", "if_out_errors", "symbol_errors", "sync_headers_errors", "rs_fec_uncorrectable_blocks",
		"symbol_error", "port_rcv_errors", "link_error_recovery", "local_link_integrity_errors"}
	DiscardCounters = []string{"if_in_discards", "if_out_discards", "port_xmit_discards", "excessive_buffer_overrun_errors"}
	PauseCounters   = []string{"a_pause_mac_ctrl_frames_received", "a_pause_mac_ctrl_frames_transmitted"}
)

// Grew lists the counters of names that grew from before to after, keyed
// "portN.name", with their rate over secs.
func Grew(before, after map[int]map[string]uint64, names []string, secs float64) []string {
	var out []string
	ports := make([]int, 0, len(after))
	for p := range after {
		ports = append(ports, p)
	}
	sort.Ints(ports)
	for _, p := range ports {
		for _, n := range names {
			a, ok1 := before[p][n]
			b, ok2 := after[p][n]
			if ok1 && ok2 && b > a && secs > 0 {
				out = append(out, fmt.Sprintf("port%d.%s %.3g/s", p, n, float64(b-a)/secs))
			}
		}
	}
	return out
}

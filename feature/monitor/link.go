package monitor

import (
	"context"
	"fmt"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/feature/link"
)

// linkCollector reads every port's link through the same reader as
// `cxray link` (brief: no PPLM, no eyes): state, speed, the bit error
// ratios (left out while there is none: link down, or no time since the
// last clear), the error counts per lane, the firmware's status opcode
// and the verdicts.
type linkCollector struct{}

func (linkCollector) Name() string { return "link" }

func (linkCollector) Moves(string) bool { return false }

func (linkCollector) Collect(ctx context.Context, a *adapter.Adapter, out map[string]float64) []string {
	reps, err := link.Read(ctx, a, link.Options{Brief: true})
	var errs []string
	if err != nil {
		errs = append(errs, "link: "+err.Error())
	}
	for _, r := range reps {
		pfx := fmt.Sprintf("port%d.link.", r.Port)
		if up := r.Operational.OperUp; up != nil {
			out[pfx+"up"] = b2f(*up)
		}
		if s := r.Operational.SpeedGbps; s != nil {
			out[pfx+"speed_gbps"] = *s
		}
		if c := r.Counters; c != nil {
			for key, b := range map[string]link.BER{"raw_ber": c.RawBER, "effective_ber": c.EffectiveBER, "symbol_ber": c.SymbolBER} {
				if b.Value != nil {
					out[pfx+key] = *b.Value
				}
			}
			for key, n := range map[string]*uint64{"raw_errors": c.RawErrors, "effective_errors": c.EffectiveErrors,
				"fec_corrected_blocks": c.FECCorrectedBlocks, "fec_uncorrectable_blocks": c.FECUncorrectableBlocks} {
				if n != nil {
					out[pfx+key] = float64(*n)
				}
			}
			for _, l := range c.Lanes {
				if l.RawErrors != nil {
					out[fmt.Sprintf("%slane%d_raw_errors", pfx, l.Lane)] = float64(*l.RawErrors)
				}
				if l.RawBER.Value != nil {
					out[fmt.Sprintf("%slane%d_raw_ber", pfx, l.Lane)] = *l.RawBER.Value
				}
			}
		}
		if t := r.Troubleshooting; t != nil && t.StatusOpcode != nil {
			out[pfx+"status_opcode"] = float64(*t.StatusOpcode)
		}
		// An InfiniBand port: the width it trained to and its PortCounters
		// that judge a link (link downs and recoveries are events: an
		// alert takes rate() or a threshold on them).
		if ib := r.Operational.IB; ib != nil {
			if w := r.Operational.WidthLanes; w != nil {
				out[pfx+"width"] = float64(*w)
			}
			if c := ib.Counters; c != nil {
				for key, n := range map[string]*uint64{"ib_symbol_errors": c.SymbolErrors, "ib_link_downed": c.LinkDowned,
					"ib_link_error_recovery": c.LinkErrorRecovery, "ib_port_rcv_errors": c.PortRcvErrors} {
					if n != nil {
						out[pfx+key] = float64(*n)
					}
				}
			}
		}
		out[pfx+"verdicts"] = float64(len(r.Verdicts))
		for _, u := range r.Unavailable {
			errs = append(errs, fmt.Sprintf("port %d link: %s not read (%s)", r.Port, u.What, u.Why))
		}
	}
	return errs
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

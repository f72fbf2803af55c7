package exporter

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/feature/link"
)

// The link collector: bit error ratios and FEC of each port, from the
// link package (PPCNT's physical-layer groups, PDDR, PPLM). Only sources
// with register access have it; others leave the collector out.

// linkSource is a Source that reads link diagnostics.
type linkSource interface {
	LinkReports(ctx context.Context) ([]*link.Report, error)
}

// LinkReports reads every owned port's link; on the kernel backend the
// error matches ErrUnsupported (its BER and FEC are PHY registers).
func (s adapterSource) LinkReports(ctx context.Context) ([]*link.Report, error) {
	if !s.HasRegisters() {
		return nil, &adapter.UnsupportedError{What: "link BER and FEC", Backend: s.Adapter.Backend(), Why: "they are PHY registers (PPCNT, PDDR, PPLM)"}
	}
	return link.Read(ctx, s.Adapter, link.Options{Brief: true})
}

var (
	famLinkRawBER = gauge("cxray_link_raw_ber",
		"Bit error ratio before FEC since the counters were last cleared (the firmware's PPCNT ratio, else errors over bits received). Absent while it cannot be given: link down, or no time since clear.",
		"device", "port")
	famLinkEffectiveBER = gauge("cxray_link_effective_ber",
		"Bit error ratio after FEC (errors FEC could not correct) since the last clear; absent when it cannot be given.",
		"device", "port")
	famLinkLaneRawBER = gauge("cxray_link_lane_raw_ber",
		"Bit error ratio before FEC of one lane (its errors over its share of the bits) since the last clear.",
		"device", "port", "lane")
	famLinkLaneRawErrors = counter("cxray_link_lane_raw_errors_total",
		"Bit errors FEC corrected on the lane since the last clear (PPCNT phy_raw_errors_laneN); resets on a clear.",
		"device", "port", "lane")
	famLinkFECCorrected = counter("cxray_link_fec_corrected_blocks_total",
		"FEC blocks with errors FEC corrected since the last clear.",
		"device", "port")
	famLinkFECUncorrectable = counter("cxray_link_fec_uncorrectable_blocks_total",
		"FEC blocks with errors FEC could not correct since the last clear.",
		"device", "port")
	famLinkFECActive = gauge("cxray_link_fec_active",
		"The FEC the link runs (value 1; PDDR fec_mode_active), by its number and name.",
		"device", "port", "fec_mode", "fec")
	famLinkFECMismatch = gauge("cxray_link_fec_mismatch",
		"1 when the link runs another FEC than requested or is down for a FEC mismatch, 0 otherwise.",
		"device", "port")
	famLinkStatusOpcode = gauge("cxray_link_troubleshooting_opcode",
		"The firmware's troubleshooting status opcode (PDDR page 1; 0 no issue).",
		"device", "port")
	famLinkVerdicts = gauge("cxray_link_verdicts",
		"Problems 'cxray link' finds on the port, by category (link partner, cable or module, configuration, signal quality).",
		"device", "port", "category")
)

func collectLink(ctx context.Context, s *sink, src Source) error {
	ls, ok := src.(linkSource)
	if !ok {
		return &adapter.UnsupportedError{What: "link BER and FEC", Why: "the source has no link diagnostics"}
	}
	reps, err := ls.LinkReports(ctx)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for _, r := range reps {
		port := strconv.Itoa(r.Port)
		if r.Counters == nil {
			// The ratios are this collector's point: without them it did
			// not read what it reads.
			errs = append(errs, fmt.Errorf("port %d: the physical-layer counters could not be read", r.Port))
		}
		if c := r.Counters; c != nil {
			if v := c.RawBER.Value; v != nil {
				s.add(famLinkRawBER, *v, port)
			}
			if v := c.EffectiveBER.Value; v != nil {
				s.add(famLinkEffectiveBER, *v, port)
			}
			for _, l := range c.Lanes {
				lane := strconv.Itoa(l.Lane)
				if l.RawBER.Value != nil {
					s.add(famLinkLaneRawBER, *l.RawBER.Value, port, lane)
				}
				if l.RawErrors != nil {
					s.add(famLinkLaneRawErrors, float64(*l.RawErrors), port, lane)
				}
			}
			if c.FECCorrectedBlocks != nil {
				s.add(famLinkFECCorrected, float64(*c.FECCorrectedBlocks), port)
			}
			if c.FECUncorrectableBlocks != nil {
				s.add(famLinkFECUncorrectable, float64(*c.FECUncorrectableBlocks), port)
			}
		}
		if f := r.FEC; f != nil && f.ActiveID != nil {
			s.add(famLinkFECActive, 1, port, strconv.FormatUint(*f.ActiveID, 10), f.Active)
		}
		mismatch := false
		cats := map[string]float64{link.CategoryPartner: 0, link.CategoryCable: 0, link.CategoryConfiguration: 0, link.CategorySignal: 0}
		for _, v := range r.Verdicts {
			if v.Code == "fec_mismatch" {
				mismatch = true
			}
			cats[v.Category]++
		}
		s.add(famLinkFECMismatch, boolf(mismatch), port)
		for _, c := range sortedKeys(cats) {
			s.add(famLinkVerdicts, cats[c], port, c)
		}
		if t := r.Troubleshooting; t != nil && t.StatusOpcode != nil {
			s.add(famLinkStatusOpcode, float64(*t.StatusOpcode), port)
		}
	}
	return errors.Join(errs...)
}

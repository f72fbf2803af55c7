package linkeye

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteText prints the eyes, one row per lane, then the verdicts.
func WriteText(w io.Writer, r *Report) {
	proto := ""
	if r.Protocol != "" {
		proto = " (" + r.Protocol + ")"
	}
	fmt.Fprintf(w, "Port %d%s eye opening per lane (SLRG)\n", r.Port, proto)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  LANE\tPAGE\tFIGURE\tUPPER\tMID\tLOWER\tHEIGHT\tWIDTH")
	for _, l := range r.Lanes {
		if !l.Measured {
			fmt.Fprintf(tw, "  %d\t%s\tnot measured: %s\n", l.Lane, dash(l.Page), l.NotMeasured)
			continue
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s %d\t%s\t%s\t%s\t%s\t%s\n", l.Lane, l.Page, l.FigureName, *l.Figure,
			num(l.Upper), num(l.Mid), num(l.Lower), num(l.HeightTicks), num(l.WidthTicks))
	}
	tw.Flush()
	for _, l := range r.Lanes {
		if len(l.Sentinels) > 0 {
			fmt.Fprintf(w, "  lane %d: %v hold all ones (no reading)\n", l.Lane, l.Sentinels)
		}
	}
	if len(r.Lanes) > 0 && strings.HasPrefix(r.Lanes[0].Selection, "version") {
		fmt.Fprintf(w, "  page chosen by SLRG.version %s (the database names no selector)\n", r.Lanes[0].Version)
	}
	for _, f := range r.DatabaseFindings {
		fmt.Fprintf(w, "  %s\n", f)
	}
	measured := 0
	for _, l := range r.Lanes {
		if l.Measured {
			measured++
		}
	}
	if len(r.Verdicts) == 0 && measured == 0 {
		fmt.Fprintln(w, "  Verdict  none: no lane was measured")
		return
	}
	if len(r.Verdicts) == 0 {
		fmt.Fprintln(w, "  Verdict  no problem found")
		return
	}
	for _, v := range r.Verdicts {
		fmt.Fprintf(w, "  [%s] %s: %s\n", v.Category, v.Code, v.Summary)
		for _, e := range v.Evidence {
			fmt.Fprintf(w, "      - %s\n", e)
		}
		fmt.Fprintf(w, "      next: %s\n", v.NextStep)
	}
}

func num(p *uint64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatUint(*p, 10)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteMarginText prints a margin scan, one row per lane and eye, mlxlink's
// final margin (the smallest), then the verdicts.
func WriteMarginText(w io.Writer, r *MarginReport) {
	fmt.Fprintf(w, "Port %d eye margins (SLRED), %.4g Gb/s lanes (%s), %d s per eye\n", r.Port, r.LaneGbps, map[bool]string{true: "PAM4", false: "NRZ"}[r.PAM4], r.MeasureTimeS)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  LANE\tEYE\tMARGIN\tSTATUS")
	for _, x := range r.Results {
		m := "not measured"
		if x.Margin != nil {
			m = strconv.FormatUint(*x.Margin, 10)
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\n", x.Lane, dash(x.Eye), m, x.Status)
	}
	tw.Flush()
	if r.Final == nil {
		fmt.Fprintln(w, "  Final margin  N/A: no scan completed, no verdict")
		return
	}
	fmt.Fprintf(w, "  Final margin  %d\n", *r.Final)
	if len(r.Verdicts) == 0 {
		fmt.Fprintln(w, "  Verdict  no problem found")
		return
	}
	for _, v := range r.Verdicts {
		fmt.Fprintf(w, "  [%s] %s: %s\n", v.Category, v.Code, v.Summary)
		for _, e := range v.Evidence {
			fmt.Fprintf(w, "      - %s\n", e)
		}
		fmt.Fprintf(w, "      next: %s\n", v.NextStep)
	}
}

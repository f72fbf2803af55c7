package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/internal/atomicfile"
	"github.com/cxray/cxray/monitor"
)

func (a *app) plotCmd() *cobra.Command {
	var what, thresholds []string
	var out, title string
	c := &cobra.Command{
		Use:   "plot FILE.jsonl --out CHART.svg|.png|.pdf [--what KEY...]",
		Short: "Draw monitored values over time, with threshold lines",
		Long: `Draw the values of a 'cxray monitor --format jsonl' file against time. --what
picks the keys (exact, a suffix after a dot, or with * wildcards; default: all
temperatures). Thresholds recorded beside the values (temp.asic_threshold_hi_c)
are drawn as dashed lines; add more with --threshold NAME=VALUE.`,
		Example: `  cxray plot temps.jsonl --out temps.svg
  cxray plot run.jsonl --what 'port1.ppcnt.*errors*' --out errors.png`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if out == "" {
				return usageErr("give the chart file with --out (ending in .svg, .png or .pdf)")
			}
			f, err := os.Open(args[0])
			if err != nil {
				return usageWrap(err)
			}
			defer f.Close()
			samples, bad, err := monitor.ReadSamples(f)
			if err != nil {
				return usageWrap(err)
			}
			if len(samples) == 0 {
				return usageErr("%s has no monitor samples (write them with cxray monitor --format jsonl --out FILE)", args[0])
			}
			pats := splitList(what)
			if len(pats) == 0 {
				pats = []string{"temp.*_c"}
			}
			series := monitor.SelectSeries(samples, pats)
			var plotted []monitor.Series
			for _, s := range series {
				if !strings.Contains(s.Name, "threshold") {
					plotted = append(plotted, s)
				}
			}
			ths := monitor.AutoThresholds(samples, plotted)
			for _, t := range thresholds {
				name, v, ok := strings.Cut(t, "=")
				x, err := strconv.ParseFloat(v, 64)
				if !ok || err != nil {
					return usageErr("--threshold %q: write NAME=VALUE, e.g. alarm=70", t)
				}
				ths = append(ths, monitor.Threshold{Name: name, Value: x})
			}
			if title == "" {
				title = strings.Join(pats, ", ")
			}
			var buf bytes.Buffer
			if err := monitor.Plot(&buf, out, title, plotted, ths); err != nil {
				return usageWrap(err)
			}
			if err := atomicfile.Write(out, buf.Bytes()); err != nil {
				return deviceErr(err)
			}
			if a.json() {
				names := []string{}
				for _, s := range plotted {
					names = append(names, s.Name)
				}
				return a.writeJSON(map[string]any{"file": out, "series": names, "thresholds": len(ths), "samples": len(samples), "skipped_lines": bad})
			}
			fmt.Fprintf(a.stdout, "wrote %s: %d series, %d threshold lines, %d samples", out, len(plotted), len(ths), len(samples))
			if bad > 0 {
				fmt.Fprintf(a.stdout, " (%d unreadable lines skipped)", bad)
			}
			fmt.Fprintln(a.stdout)
			return nil
		},
	}
	c.Flags().StringSliceVar(&what, "what", nil, "keys to draw (default temp.*_c)")
	c.Flags().StringVar(&out, "out", "", "chart file (.svg, .png or .pdf)")
	c.Flags().StringArrayVar(&thresholds, "threshold", nil, "extra threshold line NAME=VALUE")
	c.Flags().StringVar(&title, "title", "", "chart title")
	return c
}

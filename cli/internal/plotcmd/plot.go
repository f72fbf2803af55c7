// Package plotcmd is `cxray plot`: a monitor file drawn as a chart. It is
// the command of cxray-plot (cmd/cxray-plot), which `cxray plot` runs, so
// the plotting stack is linked there and not into the cxray CLI.
package plotcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/monitor"
	"github.com/cxray/cxray/feature/monitor/chart"
	"github.com/cxray/cxray/internal/atomicfile"
)

type app struct{ *cmdutil.App }

// New is `cxray plot`.
func New(a *cmdutil.App) *cobra.Command { return (&app{a}).plotCmd() }

// plotOptions holds the flags of the "plot" command.
type plotOptions struct {
	what, thresholds []string
	out, title, mode string
}

func (a *app) plotCmd() *cobra.Command { return a.newPlotCmd(nil) }

// newPlotCmd wires the flags to plotOptions; runF (tests) replaces runPlot.
func (a *app) newPlotCmd(runF func(*plotOptions, []string) error) *cobra.Command {
	o := &plotOptions{}
	c := &cobra.Command{
		Use:   "plot FILE --out CHART.svg|.png|.pdf [--what KEY...]",
		Short: "Draw monitored values over time, with threshold lines",
		Long: `Draw the values of a 'cxray monitor --format jsonl' (or --format csv) file
against time. --what picks the keys: monitor's group names (temp, counters,
module, rdma, nvmf, link, pcie, driver), an exact key or its end after a dot (asic_c), a pattern with *
wildcards (port1.ppcnt.*errors*; a key that only has the word negated, such
as rs_fec_no_errors_blocks, is left out: name it to draw it), or /regexp/
matching whole keys. Default: temp. Counters are drawn as their rate per
second (--mode value draws the running totals). The y axis is labelled with
the keys' quantity and unit; the legend sits beside the data. Thresholds
recorded beside the values (temp.asic_threshold_hi_c) are drawn as dashed
lines; add more with --threshold NAME=VALUE. A torn last line (the monitor
was killed while writing it) is left out; anything else that is not a
sample is refused with the reason.`,
		Example: `  cxray plot temps.jsonl --out temps.svg
  cxray plot run.jsonl --what 'port1.ppcnt.*errors*' --out errors.png
  cxray plot run.jsonl --what counters --mode value --out totals.svg`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return a.runPlot(a.Ctx, o, args)
		},
	}
	c.Flags().StringSliceVar(&o.what, "what", nil, "keys to draw: a group (temp, counters, module, rdma, nvmf, link, pcie, driver), a key, a * pattern or /regexp/ (default temp)")
	c.Flags().StringVar(&o.out, "out", "", "chart file (.svg, .png or .pdf)")
	c.Flags().StringArrayVar(&o.thresholds, "threshold", nil, "extra threshold line NAME=VALUE")
	c.Flags().StringVar(&o.title, "title", "", "chart title")
	c.Flags().StringVar(&o.mode, "mode", "auto", "auto (counters as rates per second), rate, or value")
	return c
}

// runPlot is the work of the "plot" command, apart from its cobra wiring.
func (a *app) runPlot(ctx context.Context, o *plotOptions, args []string) error {
	if o.out == "" {
		return cmdutil.UsageErr("give the chart file with --out (ending in .svg, .png or .pdf)")
	}
	f, err := os.Open(args[0])
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	defer f.Close()
	rec, err := monitor.ReadRecording(f)
	if err != nil {
		return cmdutil.UsageErr("%s: %v", args[0], err)
	}
	pats := monitor.SplitWhat(o.what)
	if len(pats) == 0 {
		pats = []string{"temp"}
	}
	sel, err := monitor.SelectSeries(rec.Samples, pats)
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	var plotted []monitor.Series
	for _, s := range sel.Series {
		if !strings.Contains(s.Key, "threshold") {
			plotted = append(plotted, s)
		}
	}
	ths := monitor.AutoThresholds(rec.Samples, plotted)
	for _, t := range o.thresholds {
		name, v, ok := strings.Cut(t, "=")
		x, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return cmdutil.UsageErr("--threshold %q: write NAME=VALUE with a finite number, e.g. alarm=70", t)
		}
		ths = append(ths, monitor.Threshold{Name: name, Value: x})
	}
	if o.title == "" {
		o.title = strings.Join(pats, ", ")
	}
	var buf bytes.Buffer
	ch, err := chart.Plot(&buf, o.out, plotted, ths, chart.Options{Title: o.title, Mode: o.mode})
	if err != nil {
		var fe *chart.FiniteError
		if errors.As(err, &fe) {
			return cmdutil.UsageErr("%s: %v", args[0], err)
		}
		return cmdutil.UsageWrap(err)
	}
	if err := atomicfile.Write(o.out, buf.Bytes()); err != nil {
		return cmdutil.DeviceErr(err)
	}
	notes := ch.Notes
	if len(sel.Left) > 0 {
		notes = append(notes, "left out (they count the absence of what --what names; give them exactly to draw them): "+strings.Join(sel.Left, ", "))
	}
	if rec.TornLine {
		notes = append(notes, "the last line of the file was cut (the monitor was stopped while writing it) and is left out")
	}
	if a.JSON() {
		names := []string{}
		for _, s := range plotted {
			names = append(names, s.Name)
		}
		skipped := 0
		if rec.TornLine {
			skipped = 1
		}
		return a.WriteJSON(plotDocument{File: o.out, LeftOut: cmdutil.NonNil(sel.Left), Notes: cmdutil.NonNil(notes), Samples: len(rec.Samples),
			Series: names, SkippedLines: skipped, Thresholds: len(ths), XLabel: ch.XLabel, YLabel: ch.YLabel})
	}
	fmt.Fprintf(a.Stdout, "wrote %s: %d series, %d threshold lines, %d samples; y axis: %s\n", o.out, len(plotted), len(ths), len(rec.Samples), ch.YLabel)
	for _, n := range notes {
		fmt.Fprintf(a.Stdout, "note: %s\n", n)
	}
	return nil
}

// plotDocument is `cxray plot -o json`: the image written and what it
// drew. The fields are in key order, as the map it replaced was written,
// so the output is unchanged.
type plotDocument struct {
	File         string   `json:"file"`
	LeftOut      []string `json:"left_out"`
	Notes        []string `json:"notes"`
	Samples      int      `json:"samples"`
	Series       []string `json:"series"`
	SkippedLines int      `json:"skipped_lines"`
	Thresholds   int      `json:"thresholds"`
	XLabel       string   `json:"x_label"`
	YLabel       string   `json:"y_label"`
}

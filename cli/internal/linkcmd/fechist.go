package linkcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/fechist"
	"github.com/cxray/cxray/feature/linkctl"
)

// histOptions are mlxlink's --rx_fec_histogram flags.
type histOptions struct {
	rx, show, clear, alias bool
}

var histFlags = []string{"rx_fec_histogram", "show_histogram", "clear_histogram", "fec_histogram"}

func addHistFlags(c *cobra.Command, o *histOptions) {
	c.Flags().BoolVar(&o.rx, "rx_fec_histogram", false, "the RS-FEC histogram (PPHCR, PPCNT group 0x23): with --show_histogram or --clear_histogram")
	c.Flags().BoolVar(&o.show, "show_histogram", false, "with --rx_fec_histogram: codewords per number of symbol errors")
	c.Flags().BoolVar(&o.clear, "clear_histogram", false, "with --rx_fec_histogram: clear the histogram's counters (asks unless --yes)")
	c.Flags().BoolVar(&o.alias, "fec_histogram", false, "short for --rx_fec_histogram --show_histogram")
}

func checkHistFlags(cmd *cobra.Command, o *histOptions) error {
	for _, f := range append([]string{"all", "counters", "interval", "clear", "pcie", "cable"}, changeFlags...) {
		if changed(cmd, f) {
			return cmdutil.UsageErr("--%s is not for the FEC histogram: run them apart", f)
		}
	}
	if o.alias {
		o.rx, o.show = true, true
	}
	switch {
	case !o.rx:
		return cmdutil.UsageErr("--show_histogram and --clear_histogram go with --rx_fec_histogram")
	case o.show == o.clear:
		return cmdutil.UsageErr("--rx_fec_histogram: give --show_histogram or --clear_histogram (one of them)")
	}
	return nil
}

func (a *app) runHist(o *linkOptions) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(a.Ctx, o.df.Timeout)
	defer cancel()
	ad, err := a.Open(ctx, o.df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	if _, err := ad.Port(ctx, o.port); err != nil {
		return cmdutil.Classify(err)
	}
	if o.hist.clear {
		return a.clearHist(ctx, o, ad)
	}
	h, err := fechist.Read(ctx, ad, o.port)
	if err != nil {
		return cmdutil.Classify(err)
	}
	if a.JSON() {
		return a.WriteJSON(histogramDoc{Device: o.df.Name, Histogram: h})
	}
	fechist.WriteText(a.Stdout, h)
	return nil
}

// clearHist clears PPCNT group 0x23 of the port through the guarded
// writer, after asking.
func (a *app) clearHist(ctx context.Context, o *linkOptions, ad *adapter.Adapter) error {
	name := ad.Name()
	if o.change.dryRun {
		w := linkctl.Clear{Port: o.port, Group: fechist.Group}.Write()
		if a.JSON() {
			return a.WriteJSON(dryRunDoc{Device: name, DryRun: true, WouldWrite: []string{w}})
		}
		fmt.Fprintf(a.Stdout, "would write %s\ndry run: nothing written (the histogram would restart from 0)\n", w)
		return nil
	}
	if err := a.Ask(o.yes, fmt.Sprintf("Clear the FEC histogram of port %d on %s?", o.port, name), "nothing cleared"); err != nil {
		return err
	}
	if _, err := cmdutil.Registers(ctx, ad); err != nil {
		return err
	}
	done, err := linkctl.ClearCounters(ctx, ad, []linkctl.Clear{{Port: o.port, Group: fechist.Group}})
	if err != nil {
		return cmdutil.Classify(err)
	}
	if a.JSON() {
		return a.WriteJSON(clearedDoc{Device: name, Cleared: done})
	}
	fmt.Fprintf(a.Stdout, "cleared port %d PPCNT group %s (the FEC histogram)\n", o.port, fechist.Group)
	return nil
}

package linkcmd

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/linkctl"
)

// prbsOptions are the PRBS test's flags (mlxlink's names; --duration is
// ours: mlxlink's MEAS shows the counters since the test began).
type prbsOptions struct {
	testMode       string
	tx, rx         string
	txRate, rxRate string
	invTx, invRx   bool
	duration       time.Duration
	lanes          []int
}

func addPRBSFlags(c *cobra.Command, o *prbsOptions) {
	c.Flags().StringVar(&o.testMode, "test_mode", "", "PRBS test (PPTT/PPRT): EN (start; a change, with --yes), DS (stop), MEAS (measure the BER of each lane)")
	c.Flags().StringVar(&o.tx, "tx_prbs", "", "with --test_mode EN: the pattern sent (PRBS31, PRBS23A, PRBS15, PRBS13, PRBS11, PRBS9, PRBS7, SSPRQ, ...; default PRBS31)")
	c.Flags().StringVar(&o.rx, "rx_prbs", "", "with --test_mode EN: the pattern checked (default: --tx_prbs)")
	c.Flags().StringVar(&o.txRate, "tx_rate", "", "with --test_mode EN: the generator's lane rate (SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, 1G, 2.5G, 10G, 25G, 50G_1X, 100G_2X, 200G_4X, 400G_8X, ...; default: the port's current rate)")
	c.Flags().StringVar(&o.rxRate, "rx_rate", "", "with --test_mode EN: the checker's lane rate (default: --tx_rate)")
	c.Flags().BoolVar(&o.invTx, "invert_tx_polarity", false, "with --test_mode EN: invert the pattern sent (PPTT p)")
	c.Flags().BoolVar(&o.invRx, "invert_rx_polarity", false, "with --test_mode EN: invert the pattern checked (PPRT p)")
	c.Flags().DurationVar(&o.duration, "duration", 10*time.Second, "with --test_mode MEAS: how long to count errors")
}

// prbsMeasure says the flags ask for a measurement, a read.
func prbsMeasure(o *prbsOptions) bool {
	return strings.EqualFold(strings.TrimSpace(o.testMode), "MEAS")
}

func checkPRBSMeasureFlags(cmd *cobra.Command, o *linkOptions) error {
	for _, f := range []string{"tx_prbs", "rx_prbs", "tx_rate", "rx_rate", "invert_tx_polarity", "invert_rx_polarity", "all", "counters", "interval", "clear", "pcie", "dry-run", "force"} {
		if changed(cmd, f) {
			return cmdutil.UsageErr("--test_mode MEAS reads one port; --%s does not go with it", f)
		}
	}
	if changed(cmd, "lanes") {
		ls, err := parseLanes(cmd.Flags().Lookup("lanes").Value.String())
		if err != nil {
			return cmdutil.UsageErr("--lanes: %v", err)
		}
		o.prbs.lanes = ls
	}
	return nil
}

func (a *app) runPRBSMeasure(o *linkOptions) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(a.Ctx, o.df.Timeout+o.prbs.duration)
	defer cancel()
	ad, err := a.Open(ctx, o.df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	r, err := linkctl.MeasureTestMode(ctx, ad, o.port, o.prbs.duration, o.prbs.lanes)
	if err != nil {
		return cmdutil.Classify(err)
	}
	if a.JSON() {
		err = a.WriteJSON(r)
	} else {
		err = writePRBS(a, r)
	}
	if err != nil {
		return err
	}
	if len(r.Problems) > 0 {
		return cmdutil.ErrProblem
	}
	return nil
}

func writePRBS(a *app, r *linkctl.PRBSReport) error {
	inv := func(b bool) string {
		if b {
			return " inverted"
		}
		return ""
	}
	fmt.Fprintf(a.Stdout, "%s port %d: PRBS test, Tx %s%s at %s, Rx %s%s at %s, measured over %s\n", r.Device, r.Port, r.TxPRBS, inv(r.TxInverted), r.TxRate, r.RxPRBS, inv(r.RxInverted), r.RxRate, r.Duration)
	tw := tabwriter.NewWriter(a.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LANE\tLOCK\tERRORS\tBITS\tBER\tVERDICT")
	for _, l := range r.Lanes {
		ber := fmt.Sprintf("%.2e", l.BER)
		if l.Locked && l.Errors == 0 && l.BERBelow > 0 {
			ber = fmt.Sprintf("< %.2e", l.BERBelow)
		}
		if l.Verdict != "ok" && l.Verdict != "degraded" {
			ber = "-"
		}
		lock := "no"
		if l.Locked {
			lock = "yes"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\n", l.Lane, lock, l.Errors, l.Bits, ber, l.Verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range r.Problems {
		fmt.Fprintf(a.Stdout, "  - %s\n", p)
	}
	for _, f := range r.DatabaseFindings {
		fmt.Fprintf(a.Stdout, "  * %s\n", f)
	}
	return nil
}

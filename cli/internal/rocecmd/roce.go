package rocecmd

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/configcmd"
	"github.com/cxray/cxray/cli/internal/regcmd"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/feature/roce"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/prm"
)

func (a *app) roceCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "roce",
		Short: "RoCE retransmission: switches, PSN window, counters, advice",
		Long: `RoCE retransmission tuning. 'status' shows the ROCE_ACCL switches (supported
and enabled), the LOG_TX_PSN_WINDOW NV setting (log2 of the transmit PSN window
for connected transports) and the retransmission counters as rates, and says
which cause the evidence of its interval supports when throughput falls short
of line rate: a PCIe link below what the port needs, a PSN window below the
bandwidth-delay product (with --rtt), link errors and retransmissions, pause
frames or discards; 'advise'
works out the window a link's bandwidth-delay product needs; 'set' changes the
window or a switch through the guarded write paths of 'config set' and 'reg set'.`,
	}
	c.AddCommand(a.roceStatusCmd(), a.roceAdviseCmd(), a.roceSetCmd())
	return c
}

type roceStatusOptions struct {
	df            cmdutil.DeviceFlags
	interval, rtt time.Duration
	nvdb          string
}

func (a *app) roceStatusCmd() *cobra.Command { return a.newRoceStatusCmd(nil) }

// newRoceStatusCmd wires the flags to roceStatusOptions; runF (tests) replaces runRoceStatus.
func (a *app) newRoceStatusCmd(runF func(*roceStatusOptions, []string) error) *cobra.Command {
	var o roceStatusOptions
	c := &cobra.Command{
		Use:   "status -d DEV [--interval 5s] [--rtt 8us]",
		Short: "ROCE_ACCL switches, LOG_TX_PSN_WINDOW and retransmission rates",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return a.runRoceStatus(a.Ctx, &o)
		},
	}
	o.df.Add(c)
	c.Flags().DurationVar(&o.interval, "interval", 2*time.Second, "time between the two counter samples")
	c.Flags().DurationVar(&o.rtt, "rtt", 0, "round-trip time of the fabric, to judge the window against the port speed (e.g. 8us)")
	cmdutil.AddNVDBFlag(c, &o.nvdb)
	return c
}

func (a *app) runRoceStatus(ctx context.Context, o *roceStatusOptions) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	if o.interval <= 0 || o.interval > 10*time.Minute {
		return cmdutil.UsageErr("--interval %v: give a duration between 1ms and 10m", o.interval)
	}
	nv, err := cmdutil.NVDB(o.nvdb)
	if err != nil {
		return err
	}
	// --timeout bounds the first read; the interval is added only once
	// the device answered (cmdutil.FirstRead).
	ctx, cancel := context.WithTimeout(ctx, o.df.Timeout+o.interval)
	defer cancel()
	ad, err := a.Open(ctx, o.df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	if err := cmdutil.FirstRead(ctx, ad, o.df.Timeout); err != nil {
		return err
	}
	rep, err := roce.Status(ctx, ad, roce.StatusOptions{NV: nv, Interval: o.interval, RTT: o.rtt})
	if err != nil && ctx.Err() != nil {
		return cmdutil.Stopped(ctx, err) // a signal, or --timeout: say which
	}
	if err != nil {
		return cmdutil.Classify(err)
	}
	if a.JSON() {
		return a.WriteJSON(rep)
	}
	fmt.Fprintf(a.Stdout, "RoCE on %s\n\nROCE_ACCL\n", cmdutil.Describe(ad))
	if rep.FeaturesErr != "" {
		fmt.Fprintf(a.Stdout, "  %s\n", rep.FeaturesErr)
	} else {
		t := a.NewTable("  FEATURE", "SUPPORTED", "ENABLED", "MEANING")
		for _, f := range rep.Features {
			t.Row("  "+f.Name, cmdutil.YesNo(f.Supported), cmdutil.YesNo(f.Enabled), f.Meaning)
		}
		t.Flush()
	}
	fmt.Fprintln(a.Stdout)
	switch {
	case rep.Window.Error != "":
		fmt.Fprintf(a.Stdout, "LOG_TX_PSN_WINDOW: unreadable (%s)\n", rep.Window.Error)
	default:
		fmt.Fprintf(a.Stdout, "LOG_TX_PSN_WINDOW: current %s, next boot %s  (0: device default, 63: device maximum; window = 2^N packets)\n",
			windowText(rep.Window.Current), windowText(rep.Window.NextBoot))
	}
	if rep.Advice != nil {
		for _, n := range rep.Advice.Notes[:min(2, len(rep.Advice.Notes))] {
			fmt.Fprintf(a.Stdout, "  %s\n", n)
		}
	}
	fmt.Fprintln(a.Stdout)
	switch {
	case rep.RatesErr != "":
		fmt.Fprintf(a.Stdout, "retransmission counters: %s\n", rep.RatesErr)
	case len(rep.Rates) == 0:
		fmt.Fprintln(a.Stdout, "retransmission counters: none moved")
	default:
		fmt.Fprintf(a.Stdout, "retransmission counters over %s:\n", o.interval)
		for _, k := range roce.SortedRates(rep.Rates) {
			name := k[strings.IndexByte(k, '.')+1:]
			fmt.Fprintf(a.Stdout, "  %-34s %10.3g/s  %s\n", k, rep.Rates[k], roce.CounterMeaning[name])
		}
	}
	fmt.Fprintln(a.Stdout)
	if rep.PCIe != "" {
		fmt.Fprintf(a.Stdout, "PCIe link: %s\n", rep.PCIe)
	}
	if len(rep.Causes) == 0 {
		fmt.Fprintf(a.Stdout, "throughput: nothing read over %s limits it (PCIe link, errors, retransmissions, pause, discards)\n", o.interval)
	} else {
		fmt.Fprintln(a.Stdout, "throughput short of line rate? the evidence points to, most decisive first:")
		for i, c := range rep.Causes {
			fmt.Fprintf(a.Stdout, "  %d. %s\n     next: %s\n", i+1, c.Summary, c.NextStep)
		}
	}
	for _, u := range rep.Unjudged {
		fmt.Fprintf(a.Stdout, "  not judged: %s\n", u)
	}
	return nil
}

func windowText(n int) string {
	switch {
	case n < 0:
		return "unknown"
	case n == 0:
		return "0 (device default)"
	case n >= roce.MaxLogWindow:
		return "63 (device maximum)"
	}
	return fmt.Sprintf("%d (%d packets)", n, 1<<n)
}

// roceAdviseOptions holds the flags of the "advise" command.
type roceAdviseOptions struct {
	df    cmdutil.DeviceFlags
	rateS string
	rtt   time.Duration
	mtu   int
	loss  float64
	nvdb  string
}

func (a *app) roceAdviseCmd() *cobra.Command { return a.newRoceAdviseCmd(nil) }

// newRoceAdviseCmd wires the flags to roceAdviseOptions; runF (tests) replaces runRoceAdvise.
func (a *app) newRoceAdviseCmd(runF func(*roceAdviseOptions, []string) error) *cobra.Command {
	o := &roceAdviseOptions{}
	c := &cobra.Command{
		Use:   "advise --rate 400G --rtt 10us [--mtu 4096] [--loss P] [-d DEV]",
		Short: "The PSN window a link needs: bandwidth-delay product, smallest log2 window, whether the current one limits",
		Example: `  cxray roce advise --rate 400G --rtt 8us
  cxray roce advise --rate 100G --rtt 20us --mtu 1024 --loss 1e-5 -d emu`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return a.runRoceAdvise(a.Ctx, o)
		},
	}
	o.df.Add(c)
	c.Flags().StringVar(&o.rateS, "rate", "", "link rate (400G, 100G, 25G)")
	c.Flags().DurationVar(&o.rtt, "rtt", 0, "round-trip time of the fabric (8us)")
	c.Flags().IntVar(&o.mtu, "mtu", 4096, "RoCE path MTU in bytes")
	c.Flags().Float64Var(&o.loss, "loss", 0, "packet loss probability, if known (1e-5)")
	cmdutil.AddNVDBFlag(c, &o.nvdb)
	c.MarkFlagRequired("rate")
	c.MarkFlagRequired("rtt")
	return c
}

// runRoceAdvise is the work of the "advise" command, apart from its cobra wiring.
func (a *app) runRoceAdvise(ctx context.Context, o *roceAdviseOptions) error {
	rate, err := roce.ParseRate(o.rateS)
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	current := -1
	// The receive-side window: what the NV database names (and,
	// with -d, what the device holds).
	nv, err := cmdutil.NVDB(o.nvdb)
	if err != nil {
		return err
	}
	rx := roce.FindRxWindow(nv)
	if o.df.Name != "" {
		db, err := a.DB()
		if err != nil {
			return err
		}
		ctx, cancel := o.df.Context(ctx)
		defer cancel()
		ad, d, err := a.OpenRegisters(ctx, o.df.Name, db)
		if err != nil {
			return err
		}
		defer ad.Close()
		_, cur, err := roce.Window(ctx, d, nv)
		if err != nil {
			return cmdutil.Classify(err)
		}
		current = cur
		if rx, err = roce.ReadRxWindow(ctx, d, nv); err != nil {
			return cmdutil.Classify(err)
		}
	}
	adv, err := roce.Advise(rate, o.rtt.Seconds(), o.mtu, o.loss, current, rx)
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	limiting := adv.Limiting != nil && *adv.Limiting
	if a.JSON() {
		if err := a.WriteJSON(adv); err != nil {
			return err
		}
		if limiting {
			return cmdutil.ErrProblem
		}
		return nil
	}
	fmt.Fprintf(a.Stdout, "link %.0f Gb/s, RTT %g µs, MTU %d: BDP %.0f bytes = %.0f packets\n", adv.RateGbps, adv.RTTMicros, adv.MTU, adv.BDPBytes, adv.BDPPackets)
	fmt.Fprintf(a.Stdout, "smallest LOG_TX_PSN_WINDOW that covers it: %d (%d packets)\n", adv.MinLogWindow, 1<<adv.MinLogWindow)
	if adv.Current >= 0 {
		fmt.Fprintf(a.Stdout, "current: %s\n", windowText(adv.Current))
	}
	for _, n := range adv.Notes[1:] {
		fmt.Fprintf(a.Stdout, "- %s\n", n)
	}
	if limiting {
		return cmdutil.ErrProblem
	}
	return nil
}

// roceSetOptions holds the flags of the "set" command.
type roceSetOptions struct {
	df          cmdutil.DeviceFlags
	yes, dryRun bool
	backup      string
	nvdb        string
}

func (a *app) roceSetCmd() *cobra.Command { return a.newRoceSetCmd(nil) }

// newRoceSetCmd wires the flags to roceSetOptions; runF (tests) replaces runRoceSet.
func (a *app) newRoceSetCmd(runF func(*roceSetOptions, []string) error) *cobra.Command {
	o := &roceSetOptions{}
	c := &cobra.Command{
		Use:   "set log_tx_psn_window=N | FEATURE=on|off ... -d DEV",
		Short: "Change the PSN window (NV, next boot) or a ROCE_ACCL switch (live), through the guarded writers",
		Long: `Change LOG_TX_PSN_WINDOW (through 'cxray config set': validated, backed up,
verified; takes effect at the next firmware reset) or ROCE_ACCL switches
(through 'cxray reg set': read-modify-write, verified, immediate). Features: ` + strings.Join(roce.FeatureNames(), ", ") + ".",
		Example: `  cxray roce set log_tx_psn_window=10 -d 0000:03:00.0
  cxray roce set roce_tx_window=on roce_slow_restart=off -d emu --yes`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return a.runRoceSet(a.Ctx, o, args)
		},
	}
	o.df.Add(c)
	c.Flags().BoolVar(&o.yes, "yes", false, "do not ask for confirmation")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "show what would be written; write nothing")
	c.Flags().StringVar(&o.backup, "backup", "", "NV backup file (for log_tx_psn_window)")
	cmdutil.AddNVDBFlag(c, &o.nvdb)
	return c
}

// runRoceSet is the work of the "set" command, apart from its cobra wiring.
func (a *app) runRoceSet(ctx context.Context, o *roceSetOptions, args []string) error {
	var nvSets []nvconf.Assignment
	var regSets []prm.Assignment
	for _, arg := range args {
		k, v, ok := strings.Cut(arg, "=")
		if !ok {
			return cmdutil.UsageErr("%q: write log_tx_psn_window=N or FEATURE=on|off", arg)
		}
		k = strings.ToLower(strings.TrimSpace(k))
		if k == "log_tx_psn_window" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > roce.MaxLogWindow {
				return cmdutil.UsageErr("log_tx_psn_window=%s: give 0 (device default) to 63 (device maximum)", v)
			}
			nvSets = append(nvSets, nvconf.Assignment{Name: "LOG_TX_PSN_WINDOW", Value: v})
			continue
		}
		on := false
		switch strings.ToLower(v) {
		case "on", "1", "true", "yes":
			on = true
		case "off", "0", "false", "no":
		default:
			return cmdutil.UsageErr("%s=%s: give on or off", k, v)
		}
		as, err := roce.SetAssignments(k, on)
		if err != nil {
			return cmdutil.UsageWrap(err)
		}
		regSets = append(regSets, as...)
	}
	if len(nvSets) > 0 && len(regSets) > 0 {
		return cmdutil.UsageErr("set the window and the switches in two commands: the window is NV (next boot), the switches are live")
	}
	ctx, cancel := o.df.Context(ctx)
	defer cancel()
	if len(nvSets) > 0 {
		return configcmd.Set(ctx, a.App, o.df, o.nvdb, nvSets, o.yes, o.dryRun, o.backup)
	}
	db, err := a.DB()
	if err != nil {
		return err
	}
	ad, err := a.Open(ctx, o.df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	return regcmd.WriteRegister(ctx, a.App, ad, "ROCE_ACCL", nil, regSets, dev.SetOptions{}, o.yes, o.dryRun)
}

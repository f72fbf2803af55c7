package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/health"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/roce"
)

func (a *app) roceCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "roce",
		Short: "RoCE retransmission: switches, PSN window, counters, advice",
		Long: `RoCE retransmission tuning. 'status' shows the ROCE_ACCL switches (supported
and enabled), the LOG_TX_PSN_WINDOW NV setting (log2 of the transmit PSN window
for connected transports) and the retransmission counters as rates; 'advise'
works out the window a link's bandwidth-delay product needs; 'set' changes the
window or a switch through the guarded write paths of 'config set' and 'reg set'.`,
	}
	c.AddCommand(a.roceStatusCmd(), a.roceAdviseCmd(), a.roceSetCmd())
	return c
}

// psnWindow reads LOG_TX_PSN_WINDOW (Next Boot and Current; -1 unknown).
func psnWindow(ctx context.Context, cc *configCtx, o *opened) (next, current int, err error) {
	nv, err := cc.db()
	if err != nil {
		return -1, -1, err
	}
	s, err := nvconf.Open(ctx, o.dev, nv)
	if err != nil {
		return -1, -1, err
	}
	res, err := s.Query(ctx, nvconf.QueryOptions{Names: []string{"LOG_TX_PSN_WINDOW"}, Extended: true})
	if err != nil {
		return -1, -1, err
	}
	next, current = -1, -1
	for _, st := range res.Settings {
		if st.Name != "LOG_TX_PSN_WINDOW" {
			continue
		}
		if st.Next != nil && st.Next.Numeric {
			next = int(st.Next.Raw)
		}
		if st.Current != nil && st.Current.Numeric {
			current = int(st.Current.Raw)
		}
	}
	return next, current, nil
}

// counterMeaning says what a moving retransmission counter suggests.
var counterMeaning = map[string]string{
	"duplicate_request":     "the responder received requests again: the requester retransmitted (loss, or a timeout shorter than the RTT)",
	"out_of_sequence":       "packets arrived with a PSN gap: loss on the path or reordering",
	"packet_seq_err":        "NAK-sequence errors received: the peer saw a gap and asked for a resend",
	"local_ack_timeout_err": "ACKs did not come in time: loss, congestion, or a window that keeps packets waiting",
	"rnr_nak_retry_err":     "the receiver had no receive buffer posted (RNR): the application is slow to post receives",
	"implied_nak_seq_err":   "a read response implied a lost request",
	"roce_adp_retrans":      "adaptive retransmission fired",
	"roce_adp_retrans_to":   "adaptive retransmission hit its timeout",
	"roce_slow_restart":     "slow restart engaged after retransmission",
}

func (a *app) roceStatusCmd() *cobra.Command {
	var df deviceFlags
	var interval, rtt time.Duration
	cc := &configCtx{a: a}
	c := &cobra.Command{
		Use:   "status -d DEV [--interval 5s] [--rtt 8us]",
		Short: "ROCE_ACCL switches, LOG_TX_PSN_WINDOW and retransmission rates",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			db, err := a.db()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), df.timeout+interval)
			defer cancel()
			o, err := a.openConfigDevice(ctx, df.name, db)
			if err != nil {
				return err
			}
			defer o.Close()
			out := map[string]any{"device": o.name.Given}
			feats, err := roce.Features(ctx, o.dev)
			if err != nil {
				return classify(err)
			}
			out["features"] = feats
			next, cur, nvErr := psnWindow(ctx, cc, o)
			out["log_tx_psn_window"] = map[string]int{"next_boot": next, "current": cur}
			rates, rerr := a.rdmaRates(ctx, o, interval)
			out["retransmission_rates_per_s"] = rates
			var adv *roce.Advice
			if rtt > 0 {
				if rate, err := portRate(ctx, o); err == nil {
					adv, _ = roce.Advise(rate, rtt.Seconds(), 4096, 0, cur)
					out["advice"] = adv
				}
			}
			if a.json() {
				return a.writeJSON(out)
			}
			fmt.Fprintf(a.stdout, "RoCE on %s\n\nROCE_ACCL\n", describeDev(o))
			t := a.newTable("  FEATURE", "SUPPORTED", "ENABLED", "MEANING")
			for _, f := range feats {
				t.row("  "+f.Name, yesNo(f.Supported), yesNo(f.Enabled), f.Meaning)
			}
			t.flush()
			fmt.Fprintln(a.stdout)
			switch {
			case nvErr != nil:
				fmt.Fprintf(a.stdout, "LOG_TX_PSN_WINDOW: unreadable (%v)\n", nvErr)
			default:
				fmt.Fprintf(a.stdout, "LOG_TX_PSN_WINDOW: current %s, next boot %s  (0: device default, 63: device maximum; window = 2^N packets)\n", windowText(cur), windowText(next))
			}
			if adv != nil {
				for _, n := range adv.Notes[:min(2, len(adv.Notes))] {
					fmt.Fprintf(a.stdout, "  %s\n", n)
				}
			}
			fmt.Fprintln(a.stdout)
			switch {
			case rerr != nil:
				fmt.Fprintf(a.stdout, "retransmission counters: %v\n", rerr)
			case len(rates) == 0:
				fmt.Fprintln(a.stdout, "retransmission counters: none moved")
			default:
				fmt.Fprintf(a.stdout, "retransmission counters over %s:\n", interval)
				for _, k := range sortedRateKeys(rates) {
					name := k[strings.IndexByte(k, '.')+1:]
					fmt.Fprintf(a.stdout, "  %-34s %10.3g/s  %s\n", k, rates[k], counterMeaning[name])
				}
			}
			return nil
		},
	}
	df.add(c)
	c.Flags().DurationVar(&interval, "interval", 2*time.Second, "time between the two counter samples")
	c.Flags().DurationVar(&rtt, "rtt", 0, "round-trip time of the fabric, to judge the window against the port speed (e.g. 8us)")
	c.Flags().StringVar(&cc.nvdb, "nvdb", "", "NV parameter database (as for 'cxray config')")
	return c
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

func sortedRateKeys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// portRate is port 1's operational speed in bits per second (PTYS).
func portRate(ctx context.Context, o *opened) (float64, error) {
	r, err := o.dev.Get(ctx, "PTYS", []prm.Assignment{{Path: "local_port", Value: "1"}, {Path: "proto_mask", Value: "4"}}, nil, 0)
	if err != nil {
		return 0, err
	}
	v, err := r.Decoded.Get("data_rate_oper")
	if err != nil || v.Uint() == 0 {
		return 0, fmt.Errorf("port 1 reports no speed")
	}
	return float64(v.Uint()) * 100e6, nil
}

// rdmaRates samples the retransmission counters of port 1 twice.
func (a *app) rdmaRates(ctx context.Context, o *opened, interval time.Duration) (map[string]float64, error) {
	read := rdmaSource(o)
	if read == nil {
		return nil, fmt.Errorf("not available: RDMA counters come from the kernel (-d kernel:mlx5_0) or the emulator's RDMA model")
	}
	first, err := read(ctx, 1)
	if err != nil {
		return nil, err
	}
	wait := sleeper(o.emu)
	if wait == nil {
		wait = clock.Real{}.Sleep
	}
	if err := wait(ctx, interval); err != nil {
		return nil, err
	}
	second, err := read(ctx, 1)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, n := range health.RetransmissionCounters {
		if d := float64(second[n]) - float64(first[n]); d > 0 {
			out["port1."+n] = d / interval.Seconds()
		}
	}
	return out, nil
}

func (a *app) roceAdviseCmd() *cobra.Command {
	var df deviceFlags
	var rateS string
	var rtt time.Duration
	var mtu int
	var loss float64
	cc := &configCtx{a: a}
	c := &cobra.Command{
		Use:   "advise --rate 400G --rtt 10us [--mtu 4096] [--loss P] [-d DEV]",
		Short: "The PSN window a link needs: bandwidth-delay product, smallest log2 window, whether the current one limits",
		Example: `  cxray roce advise --rate 400G --rtt 8us
  cxray roce advise --rate 100G --rtt 20us --mtu 1024 --loss 1e-5 -d emu`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			rate, err := roce.ParseRate(rateS)
			if err != nil {
				return usageWrap(err)
			}
			current := -1
			if df.name != "" {
				db, err := a.db()
				if err != nil {
					return err
				}
				ctx, cancel := df.context()
				defer cancel()
				o, err := a.openConfigDevice(ctx, df.name, db)
				if err != nil {
					return err
				}
				defer o.Close()
				if _, cur, err := psnWindow(ctx, cc, o); err == nil {
					current = cur
				} else {
					return classify(err)
				}
			}
			adv, err := roce.Advise(rate, rtt.Seconds(), mtu, loss, current)
			if err != nil {
				return usageWrap(err)
			}
			if a.json() {
				return a.writeJSON(adv)
			}
			fmt.Fprintf(a.stdout, "link %.0f Gb/s, RTT %g µs, MTU %d: BDP %.0f bytes = %.0f packets\n", adv.RateGbps, adv.RTTMicros, adv.MTU, adv.BDPBytes, adv.BDPPackets)
			fmt.Fprintf(a.stdout, "smallest LOG_TX_PSN_WINDOW that covers it: %d (%d packets)\n", adv.MinLogWindow, 1<<adv.MinLogWindow)
			if adv.Current >= 0 {
				fmt.Fprintf(a.stdout, "current: %s\n", windowText(adv.Current))
			}
			for _, n := range adv.Notes[1:] {
				fmt.Fprintf(a.stdout, "- %s\n", n)
			}
			if adv.Limiting != nil && *adv.Limiting {
				return errProblem
			}
			return nil
		},
	}
	df.add(c)
	c.Flags().StringVar(&rateS, "rate", "", "link rate (400G, 100G, 25G)")
	c.Flags().DurationVar(&rtt, "rtt", 0, "round-trip time of the fabric (8us)")
	c.Flags().IntVar(&mtu, "mtu", 4096, "RoCE path MTU in bytes")
	c.Flags().Float64Var(&loss, "loss", 0, "packet loss probability, if known (1e-5)")
	c.Flags().StringVar(&cc.nvdb, "nvdb", "", "NV parameter database (as for 'cxray config')")
	c.MarkFlagRequired("rate")
	c.MarkFlagRequired("rtt")
	return c
}

func (a *app) roceSetCmd() *cobra.Command {
	var df deviceFlags
	var yes, dryRun bool
	var backup string
	cc := &configCtx{a: a}
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
			var nvSets []nvconf.Assignment
			var regSets []prm.Assignment
			for _, arg := range args {
				k, v, ok := strings.Cut(arg, "=")
				if !ok {
					return usageErr("%q: write log_tx_psn_window=N or FEATURE=on|off", arg)
				}
				k = strings.ToLower(strings.TrimSpace(k))
				if k == "log_tx_psn_window" {
					n, err := strconv.Atoi(v)
					if err != nil || n < 0 || n > roce.MaxLogWindow {
						return usageErr("log_tx_psn_window=%s: give 0 (device default) to 63 (device maximum)", v)
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
					return usageErr("%s=%s: give on or off", k, v)
				}
				as, err := roce.SetAssignments(k, on)
				if err != nil {
					return usageWrap(err)
				}
				regSets = append(regSets, as...)
			}
			if len(nvSets) > 0 && len(regSets) > 0 {
				return usageErr("set the window and the switches in two commands: the window is NV (next boot), the switches are live")
			}
			if len(nvSets) > 0 {
				ctx, cancel := df.context()
				defer cancel()
				t, err := cc.open(ctx, df)
				if err != nil {
					return err
				}
				defer t.Close()
				plan, err := t.s.PlanSet(ctx, nvSets)
				if err != nil {
					return cfgErr(err)
				}
				return cc.runSet(ctx, t, plan, yes, dryRun, backup)
			}
			reg := []string{"ROCE_ACCL"}
			for _, s := range regSets {
				reg = append(reg, s.Path+"="+s.Value)
			}
			flags := []string{"-d", df.name, "--timeout", df.timeout.String()}
			if yes {
				flags = append(flags, "--yes")
			}
			if dryRun {
				flags = append(flags, "--dry-run")
			}
			rs := a.regSetCmd()
			rs.SetArgs(append(reg, flags...))
			rs.SetOut(a.stdout)
			rs.SetErr(a.stderr)
			rs.SilenceErrors, rs.SilenceUsage = true, true
			return rs.Execute()
		},
	}
	df.add(c)
	c.Flags().BoolVar(&yes, "yes", false, "do not ask for confirmation")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "show what would be written; write nothing")
	c.Flags().StringVar(&backup, "backup", "", "NV backup file (for log_tx_psn_window)")
	c.Flags().StringVar(&cc.nvdb, "nvdb", "", "NV parameter database (as for 'cxray config')")
	return c
}

package monitorcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/monitor"
	"github.com/cxray/cxray/internal/clock"
)

// MonitorOptions is what `cxray monitor` was asked.
type MonitorOptions struct {
	Device              cmdutil.DeviceFlags
	All                 bool
	Interval, FrozenFor time.Duration
	What, Alerts        []string
	// Format is --format; FormatGiven says it was given (else --out's
	// extension decides).
	Format      string
	FormatGiven bool
	Out         string
	Count       int
	FrozenAfter int
	MaxSize     int64
}

func (a *app) monitorCmd() *cobra.Command { return a.newMonitorCmd(nil) }

// newMonitorCmd wires the flags to MonitorOptions; runF (tests) replaces
// runMonitor.
func (a *app) newMonitorCmd(runF func(*MonitorOptions, []string) error) *cobra.Command {
	o := &MonitorOptions{}
	c := &cobra.Command{
		Use:   "monitor [-d DEV|--all] [-i 10s] [--what temp,counters,REG...] [--format table|jsonl|csv] [--out FILE]",
		Short: "Sample temperatures, counters and registers on an interval, with alerts",
		Long: `Sample on an interval and write every reading in units (°C, counts, the units
of known register fields): a live table on a terminal, JSON lines (-o json or
--format jsonl) or CSV. --out appends to a file safely (one write per line, a
torn last line is cut on restart, rotated at --max-size), in --format or the
format its extension says (also with -o json); a file that holds another
format, or CSV columns that lack some of this run's values, is refused
before anything is written. Alerts are simple
expressions printed and recorded in the stream:
  temp.asic_c > 70     port1.ppcnt.symbol_errors > 0     rate(ppcnt.symbol_errors) > 0
(a key matches exactly or as a suffix; * is a wildcard; rate() per second,
delta() per sample). An alert whose key can never match (unknown group or
field, another function's port) is refused; one whose value is missing now
(an empty cage) waits for it, and each sample says so. A moving value (temperatures) unchanged for
--frozen-after samples and at least --frozen-for is reported as frozen (a
steady sensor can hold one 0.125 °C step for minutes; a stuck one holds it
for good). Devices are read side by side. --timeout bounds opening and
the first sample together, then each device's reads in every later sample;
a first sample in which no device answered ends the run there (exit 3),
without waiting an interval. A device that stops answering is reported and
retried; the others go on, and the run exits 3 at its end (the samples say
which device and when). Ctrl-C stops cleanly. Otherwise exit 1 when an
alert fired or a reading froze.

--what: temp (ASIC and module sensors), counters (PPCNT IEEE 802.3, RFC 2863,
physical layer, per port), module (optics, when available), rdma (RDMA
hw_counters), nvmf (NVMe-oF offload namespaces through the command interface:
xrq1.ns1.nvmf.read_cmds ...), link (per port: state, speed, BER raw, effective and symbol,
FEC blocks, the firmware's troubleshooting opcode), pcie (the PCIe link: speed,
width, capable and slot, pcie.degraded, AER totals, Device Status, MPCNT:
'rate(pcie.aer_correctable) > 0' alerts on link errors), driver (devlink health
reporters' errors and recoveries, driver statistics: discards, pause, PCIe
stalls; where the kernel drives the function), or register names with fixed
indexes:
PDDR[page_select=0,local_port=1].`,
		Example: `  cxray monitor -d 0000:03:00.0 -i 60s --format jsonl --out temps.jsonl
  cxray monitor -d emu --what temp,counters --alert 'temp.asic_c > 70' --count 10`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.FormatGiven = cmd.Flags().Changed("format")
			if runF != nil {
				return runF(o, args)
			}
			return a.runMonitor(a.Ctx, o)
		},
	}
	o.Device.Add(c)
	c.Flags().BoolVar(&o.All, "all", false, "every function (of this machine, or of the emulated scenario -d names)")
	c.Flags().DurationVarP(&o.Interval, "interval", "i", 10*time.Second, "time between samples")
	// A string array, not a slice: cobra's slice splits at every comma,
	// also inside REG[k=v,k=v]; monitor.SplitWhat knows the brackets.
	c.Flags().StringArrayVar(&o.What, "what", []string{"temp,counters"}, "what to sample, comma-separated or repeated: temp, counters, module, rdma, nvmf, link, pcie, driver, REG or REG[k=v,...]")
	c.Flags().StringVar(&o.Format, "format", "table", "table, jsonl or csv")
	c.Flags().StringVar(&o.Out, "out", "", "append to FILE instead of standard output")
	c.Flags().Int64Var(&o.MaxSize, "max-size", 64<<20, "rotate --out at this many bytes (0: never)")
	c.Flags().StringArrayVar(&o.Alerts, "alert", nil, "alert expression (repeat)")
	c.Flags().IntVar(&o.Count, "count", 0, "stop after N samples (0: until Ctrl-C)")
	c.Flags().IntVar(&o.FrozenAfter, "frozen-after", 5, "samples in which a moving value must stay the same to be reported frozen")
	c.Flags().DurationVar(&o.FrozenFor, "frozen-for", monitor.DefaultFrozenFor, "time over which a moving value must stay the same to be reported frozen")
	return c
}

// check refuses bad flags (exit 2) and settles the format: -o json is
// what goes to standard output; a file's format is --format's or its
// extension's, in both modes. The flags are checked as given, before -o
// json overrides --format, so a bad value is the same usage error in both
// modes.
func (o *MonitorOptions) check(json bool) (format string, err error) {
	switch o.Format {
	case "table", "jsonl", "csv":
	default:
		return "", cmdutil.UsageErr("--format %s: use table, jsonl or csv", o.Format)
	}
	if o.Count < 0 {
		return "", cmdutil.UsageErr("--count %d: give the number of samples to take (1 or more), or 0 to sample until Ctrl-C", o.Count)
	}
	if o.FrozenAfter < 0 || o.FrozenAfter == 1 {
		return "", cmdutil.UsageErr("--frozen-after %d: give 2 or more samples (a value is frozen when it is the same in that many), or 0 for the default 5", o.FrozenAfter)
	}
	if o.FrozenFor < 0 {
		return "", cmdutil.UsageErr("--frozen-for %s: give a duration such as 10m, or 0 for the default %s", o.FrozenFor, monitor.DefaultFrozenFor)
	}
	if o.MaxSize < 0 {
		return "", cmdutil.UsageErr("--max-size %d: give a size in bytes, or 0 never to rotate", o.MaxSize)
	}
	format = o.Format
	if json && o.Out == "" {
		format = "jsonl"
	}
	if o.Out != "" && !o.FormatGiven {
		// A file's extension says its format; a file without one that
		// does has to say it.
		switch strings.ToLower(filepath.Ext(o.Out)) {
		case ".jsonl", ".ndjson", ".json":
			format = "jsonl"
		case ".csv":
			format = "csv"
		case ".txt", ".log":
			format = "table"
		default:
			return "", cmdutil.UsageErr("--out %s: give --format jsonl, csv or table (plot reads jsonl); the file's extension says none", o.Out)
		}
	}
	if o.Interval <= 0 {
		return "", cmdutil.UsageErr("-i %s: give a positive interval", o.Interval)
	}
	return format, nil
}

// runMonitor is `cxray monitor`: it checks the flags, opens the targets
// and hands the sampling to monitor.Run.
func (a *app) runMonitor(ctx context.Context, o *MonitorOptions) error {
	format, err := o.check(a.JSON())
	if err != nil {
		return err
	}
	db, err := a.DB()
	if err != nil {
		return err
	}
	cols, err := monitor.Collectors(splitList(o.What), db)
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	var as []*monitor.Alert
	for _, s := range o.Alerts {
		al, err := monitor.ParseAlert(s)
		if err != nil {
			return cmdutil.UsageWrap(err)
		}
		as = append(as, al)
	}
	// --timeout bounds opening and the first sample together, and each
	// later sample (the per-sample rule in the help).
	first, cancelFirst := context.WithTimeout(ctx, o.Device.Timeout)
	defer cancelFirst()
	targets, err := a.OpenTargets(first, o.Device.Name, o.All, db)
	if err != nil {
		return err
	}
	defer adapter.CloseAll(targets)
	clk := targets[0].Clock()
	if _, manual := clk.(*clock.Manual); manual && o.Count == 0 {
		return cmdutil.UsageErr("the scenario's clock is manual, so samples are instant: give --count N (each sample advances the emulated clock by -i)")
	}
	var ts []*monitor.Target
	for _, ad := range targets {
		name := ad.BDF()
		if name == "" {
			name = ad.Name()
		}
		ts = append(ts, &monitor.Target{Name: name, Adapter: ad})
	}
	w, closeW, err := a.sampleWriter(format, o.Out, o.MaxSize)
	if err != nil {
		return err
	}
	defer closeW()
	firstDeadline, _ := first.Deadline()
	res, err := monitor.Run(ctx, ts, monitor.Options{
		Collectors: cols, Alerts: as, FrozenAfter: o.FrozenAfter, FrozenFor: o.FrozenFor, Timeout: o.Device.Timeout,
		Clock: clk, Interval: o.Interval, Count: o.Count, FirstDeadline: firstDeadline,
	}, func(samples []monitor.Sample) error {
		if err := w(samples); err != nil {
			return err
		}
		if o.Out != "" {
			a.tellAlerts(samples)
		}
		return nil
	})
	if err != nil {
		var ae *monitor.AppendError
		var ie *monitor.InputError
		if errors.As(err, &ae) || errors.As(err, &ie) {
			return cmdutil.UsageWrap(err)
		}
		return cmdutil.DeviceErr(err)
	}
	return monitorExit(ts, res.Taken, res.Answered, res.Problems, res.FirstError)
}

// monitorExit is the exit-code rule of monitor: 3 when a device did not
// answer in some sample (the samples say which and when), 1 when an alert
// fired or a reading froze, else 0.
func monitorExit(ts []*monitor.Target, taken int, answered, problems bool, firstErr string) error {
	if taken > 0 && !answered {
		// Not one value in the whole run: that is no clean run.
		return cmdutil.DeviceErr(fmt.Errorf("none of the %d samples read a value (%s); check that the device answers (cxray status)", taken, firstErr))
	}
	var missed []string
	for _, t := range ts {
		if t.Missed > 0 {
			missed = append(missed, fmt.Sprintf("%s in %d of %d", t.Name, t.Missed, taken))
		}
	}
	if len(missed) > 0 {
		return cmdutil.Reported(fmt.Errorf("a device did not answer in some samples: %s; check it with 'cxray status'", strings.Join(missed, ", ")))
	}
	if problems {
		return cmdutil.ErrProblem
	}
	return nil
}

// splitList splits repeated, comma-separated flag values into items,
// keeping REG[k=v,k=v] whole (monitor.SplitWhat).
func splitList(xs []string) []string { return monitor.SplitWhat(xs) }

// sampleWriter returns a function that writes a batch of samples in the
// chosen format, to --out or standard output.
func (a *app) sampleWriter(format, out string, maxSize int64) (func([]monitor.Sample) error, func(), error) {
	o := monitor.WriterOptions{Format: format}
	closeFn := func() {}
	if out != "" {
		// Append only what fits: the same format, and (CSV) rows whose
		// columns the file's header has; the writer checks the columns
		// on the first batch, before the first line goes out.
		hdr, err := monitor.CheckAppend(out, format)
		if err != nil {
			return nil, nil, cmdutil.UsageWrap(err)
		}
		o.Header, o.HeaderFile = hdr, out
		// Refuse a file that cannot be written at start (exit 2), not at
		// the first line; opening it to append changes nothing, and a
		// file this probe creates is removed again if the run ends (or is
		// refused) before its first line.
		_, statErr := os.Stat(out)
		created := os.IsNotExist(statErr)
		pf, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, cmdutil.UsageErr("--out %s: %v; give a file you can write", out, err)
		}
		pf.Close()
		// The file is opened (and a torn last line cut) at the first
		// line, so a run refused before it writes leaves the file as it
		// was.
		var lf *monitor.LogFile
		o.Sink = func(line []byte) error {
			if lf == nil {
				var err error
				if lf, err = monitor.OpenLog(out, maxSize, 3); err != nil {
					return err
				}
			}
			if err := lf.WriteLine(line); err != nil {
				return err
			}
			return lf.Sync()
		}
		closeFn = func() {
			if lf != nil {
				lf.Close()
			} else if created {
				os.Remove(out)
			}
		}
	} else {
		o.Stdout = a.Stdout
		if f, ok := a.Stdout.(*os.File); ok && cmdutil.IsTerminal(f) {
			o.Live = true
		}
	}
	w, err := monitor.NewWriter(o)
	if err != nil {
		closeFn()
		return nil, nil, cmdutil.UsageWrap(err)
	}
	return w, closeFn, nil
}

// tellAlerts puts the alerts and frozen readings of samples written to
// --out on standard error as they happen: the samples go to the file, but
// whoever watches the terminal must see an alert fire.
func (a *app) tellAlerts(samples []monitor.Sample) {
	for _, s := range samples {
		for _, al := range s.Alerts {
			fmt.Fprintf(a.Stderr, "%s %s ALERT %s\n", s.Time.UTC().Format(time.RFC3339), s.Device, al)
		}
		for _, fr := range s.Frozen {
			fmt.Fprintf(a.Stderr, "%s %s FROZEN %s\n", s.Time.UTC().Format(time.RFC3339), s.Device, fr)
		}
	}
}

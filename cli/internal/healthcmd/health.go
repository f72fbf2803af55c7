package healthcmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/health"
)

type healthOptions struct {
	df       cmdutil.DeviceFlags
	all      bool
	verbose  bool
	interval time.Duration
	nvdb     string
	unused   []int
}

func (a *app) healthCmd() *cobra.Command { return a.newHealthCmd(nil) }

// newHealthCmd wires the flags to healthOptions; runF (tests) replaces runHealth.
func (a *app) newHealthCmd(runF func(*healthOptions, []string) error) *cobra.Command {
	var o healthOptions
	c := &cobra.Command{
		Use:   "health [-d DEV|--all]",
		Short: "The first command to run on a suspicious adapter: a verdict per check",
		Long: `Check an adapter in one pass and say, for each check, ok, warn or fail, what
it means and what to do:
  identity       firmware, PSID, a firmware waiting for a reset, and whether
                 the PRM database is much older than the firmware (fields you
                 may misread)
  access         how the device is reached and what that limits
  ports          state and speed of the ports this function owns
  modules        the 'cxray module' verdicts (read twice, to catch frozen
                 monitors), thresholds crossed
  temperatures   ASIC and modules against their thresholds
  configuration  NV settings pending until a firmware reset, suspicious ones
  counters       error counters (and RoCE retransmissions) moving between
                 two samples --interval apart
  mac            the OS's MAC against the permanent one
A check the backend cannot serve is skipped ("--"), saying why.
An empty cage on an enabled port is "info" with the next step, not a
failure. Ports left unused on purpose are not judged: --unused-ports 2, or
lines "DEVICE PORTS" ("* 2", "0000:81:00.0 1,2") in ` + health.UnusedPortsFile + `
($` + health.EnvUnusedPorts + ` names another file, "off" none).
Exit 0 when every check is ok (or info), 1 on a warning or failure, 3 when a
device could not be read at all (its identity).`,
		Example: `  cxray health -d emu
  cxray health -d 0000:03:00.0 -o json
  cxray health -d kernel:mlx5_0
  cxray health --all
  cxray health -d 0000:03:00.0 --unused-ports 2`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return a.runHealth(a.Ctx, &o)
		},
	}
	o.df.Add(c)
	c.Flags().BoolVar(&o.all, "all", false, "every function (of this machine, or of the emulated scenario -d names)")
	c.Flags().DurationVar(&o.interval, "interval", 2*time.Second, "time between the two samples of counters and module monitors")
	c.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "show the details of passing checks too")
	c.Flags().IntSliceVar(&o.unused, "unused-ports", nil, "local port numbers left unused on purpose (not judged), added to "+health.UnusedPortsFile)
	cmdutil.AddNVDBFlag(c, &o.nvdb)
	return c
}

func (a *app) runHealth(ctx context.Context, o *healthOptions) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	if o.df.Name == "" && !o.all {
		return cmdutil.UsageErr("add -d DEV, or --all for every adapter ('cxray status' lists them; -d emu tries the emulator)")
	}
	if o.interval <= 0 || o.interval > 10*time.Minute {
		return cmdutil.UsageErr("--interval %v: give a duration between 1ms and 10m", o.interval)
	}
	nv, err := cmdutil.NVDB(o.nvdb)
	if err != nil {
		return err
	}
	unused, err := unusedPorts(a, o.unused)
	if err != nil {
		return err
	}
	// --timeout bounds opening, and each function's first read; a
	// function whose first read answered may take one --interval more
	// for its second samples. Functions are read side by side.
	octx, cancel := context.WithTimeout(ctx, o.df.Timeout)
	targets, err := a.OpenTargets(octx, o.df.Name, o.all, db)
	cancel()
	if err != nil {
		return err
	}
	defer adapter.CloseAll(targets)
	reports := make([]*health.Report, len(targets))
	cmdutil.EachTarget(ctx, targets, o.df.Timeout+o.interval, func(ctx context.Context, i int, ad *adapter.Adapter) {
		rep := health.Run(ctx, ad, health.Options{Interval: o.interval, NV: nv, Unused: unused.For(ad.BDF()), FirstRead: o.df.Timeout})
		if ctx.Err() != nil && rep.Error == "" {
			rep.Error = fmt.Sprintf("the checks did not finish within --timeout %s (and --interval %s): %v", o.df.Timeout, o.interval, ctx.Err())
		}
		reports[i] = rep
	})
	if err := ctx.Err(); err != nil {
		return cmdutil.Stopped(ctx, err)
	}
	bad := false
	for _, r := range reports {
		bad = bad || r.Status != health.OK
	}
	if a.JSON() {
		if err := a.WriteJSON(health.Document{Devices: reports, SourceRevision: db.Revision}); err != nil {
			return err
		}
	} else {
		for i, r := range reports {
			if i > 0 {
				fmt.Fprintln(a.Stdout)
			}
			printHealth(a, r, o.verbose)
		}
	}
	return healthExit(a, reports, bad)
}

// healthExit is the exit-code rule of a command over many functions: 3
// when any function could not be read (standard error names each and
// why; issue 26.9: MGIR unsupported or a firmware always busy exited 1),
// 2 when the register database does not match a device, else 1 when any
// check found a problem, else 0.
func healthExit(a *app, reports []*health.Report, bad bool) error {
	var names []string
	var usage bool
	for _, r := range reports {
		if r.Unread == nil && r.Error == "" {
			continue
		}
		why := r.Error
		if r.Unread != nil {
			why = r.Unread.Error()
		}
		fmt.Fprintf(a.Stderr, "cxray: %s: could not be read: %s\n", reportName(r), why)
		if r.Error == "" {
			usage = true // the register database's problem, not the device's
			continue
		}
		names = append(names, reportName(r))
	}
	switch {
	case len(names) > 0:
		return cmdutil.Unread(len(reports), names)
	case usage:
		return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: cmdutil.ErrQuiet}
	}
	if bad {
		return cmdutil.ErrProblem
	}
	return nil
}

func reportName(r *health.Report) string {
	if r.BDF != "" && r.BDF != r.Device {
		return r.Device + " (" + r.BDF + ")"
	}
	return r.Device
}

// unusedPorts are the ports declared unused: the file's lines and, for
// every device, --unused-ports. A file that does not parse is bad input
// (exit 2): a typo must not judge a port meant to be left alone.
func unusedPorts(a *app, flag []int) (health.UnusedPorts, error) {
	u := health.UnusedPorts{}
	for _, p := range flag {
		if p < 1 || p > 255 {
			return nil, cmdutil.UsageErr("--unused-ports %d: give local port numbers (1, 2 ...)", p)
		}
	}
	u["*"] = append(u["*"], flag...)
	path := os.Getenv(health.EnvUnusedPorts)
	switch {
	case strings.EqualFold(path, "off"):
		return u, nil
	case path == "":
		path = health.UnusedPortsFile
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return u, nil
		}
	}
	b, err := cmdutil.ReadInput(path, a.Stdin, 1<<20, "a list of unused ports")
	if err != nil {
		return nil, err
	}
	f, err := health.ParseUnusedPorts(b)
	if err != nil {
		return nil, cmdutil.UsageErr("%s: %v", path, err)
	}
	u.Merge(f)
	return u, nil
}

var healthMarks = map[health.Status]string{health.OK: "ok  ", health.Warn: "WARN", health.Fail: "FAIL", health.Skip: "--  ", health.Info: "info"}

func printHealth(a *app, r *health.Report, verbose bool) {
	fmt.Fprintf(a.Stdout, "%s: %s\n", reportName(r), strings.ToUpper(string(r.Status)))
	for _, c := range r.Checks {
		fmt.Fprintf(a.Stdout, "  %s %-14s %s\n", healthMarks[c.Status], c.Name, c.Summary)
		if c.Status == health.Warn || c.Status == health.Fail || c.Status == health.Info || verbose {
			for _, d := range c.Details {
				fmt.Fprintf(a.Stdout, "                       - %s\n", d)
			}
			if c.Next != "" {
				fmt.Fprintf(a.Stdout, "                       next: %s\n", c.Next)
			}
		}
	}
}

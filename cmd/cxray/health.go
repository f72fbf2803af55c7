package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/health"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/optics"
	"github.com/cxray/cxray/prm"
)

func (a *app) healthCmd() *cobra.Command {
	var df deviceFlags
	var all, verbose bool
	var interval time.Duration
	cc := &configCtx{a: a}
	c := &cobra.Command{
		Use:   "health [-d DEV|--all]",
		Short: "The first command to run on a suspicious adapter: a verdict per check",
		Long: `Check an adapter in one pass and say, for each check, ok, warn or fail, what
it means and what to do:
  identity       firmware, PSID, and whether the PRM database is much older
                 than the firmware (fields you may misread)
  access         how the device is reached and what that limits
  ports          state and speed against what the port can do
  modules        the 'cxray module' verdicts (read twice, to catch frozen
                 monitors), thresholds crossed
  temperatures   ASIC and modules against their thresholds
  configuration  NV settings pending until a firmware reset, suspicious ones
  counters       error counters (and RoCE retransmissions) moving between
                 two samples --interval apart
  mac            the OS's MAC against the permanent one
Exit 0 when every check is ok, 1 on a warning or failure.`,
		Example: `  cxray health -d emu
  cxray health -d 0000:03:00.0 -o json
  cxray health --all`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			db, err := a.db()
			if err != nil {
				return err
			}
			if df.name == "" && !all {
				return usageErr("add -d DEV, or --all for every adapter ('cxray status' lists them; -d emu tries the emulator)")
			}
			ctx, cancel := context.WithTimeout(context.Background(), df.timeout+2*interval)
			defer cancel()
			targets, err := a.openHealthTargets(ctx, df.name, all, db)
			if err != nil {
				return err
			}
			defer closeAll(targets)
			var reports []*health.Report
			bad := false
			for _, o := range targets {
				opt := a.healthOptions(ctx, cc, o, interval)
				rep := health.Run(ctx, o.dev, opt)
				if rep.Status != health.OK {
					bad = true
				}
				reports = append(reports, rep)
			}
			if a.json() {
				if err := a.writeJSON(map[string]any{"source_revision": db.Revision, "devices": reports}); err != nil {
					return err
				}
			} else {
				for i, r := range reports {
					if i > 0 {
						fmt.Fprintln(a.stdout)
					}
					printHealth(a, r, verbose)
				}
			}
			if bad {
				return errProblem
			}
			return nil
		},
	}
	df.add(c)
	c.Flags().BoolVar(&all, "all", false, "every function (of this machine, or of the emulated scenario -d names)")
	c.Flags().DurationVar(&interval, "interval", 2*time.Second, "time between the two samples of counters and module monitors")
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "show the details of passing checks too")
	c.Flags().StringVar(&cc.nvdb, "nvdb", "", "NV parameter database (as for 'cxray config')")
	return c
}

// openHealthTargets opens the devices, with the NV store installed on
// emulated ones (as 'cxray config' does).
func (a *app) openHealthTargets(ctx context.Context, name string, all bool, db *prm.DB) ([]*opened, error) {
	if !all {
		o, err := a.openConfigDevice(ctx, name, db)
		if err != nil {
			return nil, err
		}
		return []*opened{o}, nil
	}
	return a.openTargets(ctx, name, all, db)
}

// healthOptions wires the checks to what this device offers.
func (a *app) healthOptions(ctx context.Context, cc *configCtx, o *opened, interval time.Duration) health.Options {
	d := o.dev
	wait := sleeper(o.emu)
	if wait == nil {
		wait = clock.Real{}.Sleep
	}
	opt := health.Options{Interval: interval, Sleep: wait, Now: nowOf(o.emu), OSMACs: a.osMACs(o)}
	if d.Backend == "kernel" {
		opt.RDMA = rdmaSource(o)
		return opt // no registers: the register checks say what they could not do
	}
	opt.Modules = func(ctx context.Context, ports []int) ([]health.Module, error) {
		fwv := adapterFirmware(ctx, d)
		var first []*moduleReport
		for _, p := range ports {
			r, err := readPortModule(ctx, d, p, false)
			if err != nil {
				return nil, err
			}
			r.obs.AdapterFirmware = fwv
			first = append(first, r)
		}
		if err := wait(ctx, interval); err != nil {
			return nil, err
		}
		var out []health.Module
		for _, r := range first {
			if second, err := readPortModule(ctx, d, r.Port, false); err == nil {
				r.verifyWith(second, interval)
			}
			out = append(out, health.Module{Port: r.Port, Verdicts: optics.Diagnose(r.obs)})
		}
		return out, nil
	}
	opt.NV = func(ctx context.Context) ([]string, []string, error) {
		nv, err := cc.db()
		if err != nil {
			return nil, nil, err
		}
		s, err := nvconf.Open(ctx, d, nv)
		if err != nil {
			return nil, nil, err
		}
		res, err := s.Query(ctx, nvconf.QueryOptions{Extended: true})
		if err != nil {
			return nil, nil, err
		}
		return nvFindings(res)
	}
	opt.RDMA = rdmaSource(o)
	return opt
}

// rdmaSource gives the RDMA hw_counters of an opened device, when a backend
// has them (the kernel's sysfs, or the emulator's model); nil otherwise.
var rdmaSource = func(o *opened) func(ctx context.Context, port int) (map[string]uint64, error) {
	if o.emu != nil {
		models := newRDMAModels(o.emu)
		for _, f := range o.emu.Functions() {
			if f.BDF == o.dev.BDF {
				return func(_ context.Context, port int) (map[string]uint64, error) { return models.counters(f, port) }
			}
		}
		return nil
	}
	return kernelRDMA(o)
}

// nvFindings lists pending settings and suspicious combinations.
func nvFindings(res *nvconf.QueryResult) ([]string, []string, error) {
	var pending, suspicious []string
	val := map[string]string{}
	for _, s := range res.Settings {
		if s.Next != nil {
			val[s.Name] = s.Next.Text
		}
		if s.Pending && s.Current != nil && s.Next != nil {
			pending = append(pending, fmt.Sprintf("%s: %s now, %s after the next firmware reset", s.Name, s.Current.Text, s.Next.Text))
		}
	}
	on := func(name string) bool { return strings.HasPrefix(val[name], "True") }
	if on("SRIOV_EN") && strings.HasPrefix(val["NUM_OF_VFS"], "0") {
		suspicious = append(suspicious, "SR-IOV is enabled (SRIOV_EN) with NUM_OF_VFS=0: no virtual function can be created")
	}
	if strings.HasPrefix(val["ROCE_CONTROL"], "ROCE_DISABLE") {
		suspicious = append(suspicious, "RoCE is disabled (ROCE_CONTROL=ROCE_DISABLE): RDMA over Ethernet will not work")
	}
	return pending, suspicious, nil
}

// osMACs are the current addresses of the function's interfaces.
func (a *app) osMACs(o *opened) map[string]string {
	out := map[string]string{}
	if o.emu != nil {
		for _, f := range o.emu.Functions() {
			if f.BDF == o.dev.BDF && f.Netdev != "" {
				if m := emuOSMAC(f); m != "" {
					out[f.Netdev] = m
				}
			}
		}
		return out
	}
	if o.dev.BDF == "" {
		return out
	}
	if fn, err := sys.Function(o.dev.BDF); err == nil {
		for _, nd := range fn.Netdevs {
			if m := sys.MAC(nd); m != "" {
				out[nd] = m
			}
		}
	}
	return out
}

var healthMarks = map[health.Status]string{health.OK: "ok  ", health.Warn: "WARN", health.Fail: "FAIL", health.Skip: "--  "}

func printHealth(a *app, r *health.Report, verbose bool) {
	name := r.Device
	if r.BDF != "" && r.BDF != name {
		name += " (" + r.BDF + ")"
	}
	fmt.Fprintf(a.stdout, "%s: %s\n", name, strings.ToUpper(string(r.Status)))
	for _, c := range r.Checks {
		fmt.Fprintf(a.stdout, "  %s %-14s %s\n", healthMarks[c.Status], c.Name, c.Summary)
		if c.Status == health.Warn || c.Status == health.Fail || verbose {
			for _, d := range c.Details {
				fmt.Fprintf(a.stdout, "                       - %s\n", d)
			}
			if c.Next != "" {
				fmt.Fprintf(a.stdout, "                       next: %s\n", c.Next)
			}
		}
	}
}

package snapshotcmd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/snapshot"
	"github.com/cxray/cxray/internal/atomicfile"
	"github.com/cxray/cxray/prm"
)

// snapshotOptions holds the flags of the "snapshot" command.
type snapshotOptions struct {
	df           cmdutil.DeviceFlags
	all          bool
	profile, out string
	samples      int
	interval     time.Duration
}

func (a *app) snapshotCmd() *cobra.Command { return a.newSnapshotCmd(nil) }

// newSnapshotCmd wires the flags to snapshotOptions; runF (tests) replaces runSnapshot.
func (a *app) newSnapshotCmd(runF func(*snapshotOptions, []string) error) *cobra.Command {
	o := &snapshotOptions{}
	c := &cobra.Command{
		Use:   "snapshot [-d DEV|--all] [--profile NAME|FILE] [--out FILE]",
		Short: "Record a baseline of an adapter's registers, every field classed static, dynamic or counter",
		Long: `Read a set of registers with their instances (per port, module, sensor),
decode them and record every field with its class: static (must not change:
identity, configuration, thresholds), dynamic (states, temperatures, powers) or
counter. The file is versioned JSON with the device identity, firmware and
driver versions, PRM database revision, host and time. Profiles (` + strings.Join(snapshot.Profiles(), ", ") + `,
or a YAML file) say which registers; --samples N --interval D reads N times and
learns which fields move. A register that fails is recorded, not fatal.

Around the registers the file records the identity (with the pending firmware
version) and what the profile's "record" list names: nv (every NV parameter's
Next Boot and Current value, named with the database 'config' uses), os (the
OS's MACs of the function's interfaces), caps (the capability pages, where the
device has a command interface); all are static, so 'diff' reports a changed
one among the static changes. The built-in profiles record all three; a
profile file reads what it names and no more ("record: [nv, os, caps]" adds
them).

Without --out the snapshot is printed as JSON.`,
		Example: `  cxray snapshot -d 0000:03:00.0 --out before.json
  cxray snapshot -d emu:examples/two-adapters.yaml --all --samples 3 --interval 10s --out base.json`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return a.runSnapshot(a.Ctx, o)
		},
	}
	o.df.Add(c)
	c.Flags().BoolVar(&o.all, "all", false, "every function (of this machine, or of the emulated scenario -d names)")
	c.Flags().StringVar(&o.profile, "profile", "standard", "which registers: "+strings.Join(snapshot.Profiles(), ", ")+", or a YAML file")
	c.Flags().StringVar(&o.out, "out", "", "write the snapshot to FILE (atomically) instead of standard output")
	c.Flags().IntVar(&o.samples, "samples", 1, "read everything N times")
	c.Flags().DurationVar(&o.interval, "interval", 0, "time between samples")
	return c
}

// runSnapshot is the work of the "snapshot" command, apart from its cobra wiring.
func (a *app) runSnapshot(ctx context.Context, o *snapshotOptions) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	p, err := snapshot.LoadProfile(o.profile)
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	if o.samples < 1 || o.samples > 1000 {
		return cmdutil.UsageErr("--samples %d: give 1 to 1000", o.samples)
	}
	if o.samples > 1 && o.interval <= 0 {
		return cmdutil.UsageErr("--samples %d needs --interval (e.g. 10s)", o.samples)
	}
	if o.out != "" {
		// Before reading the device: a destination that cannot
		// be written is the user's to fix (2), not minutes later.
		if err := atomicfile.Check(o.out); err != nil {
			return cmdutil.UsageErr("--out %v; nothing was read", err)
		}
	}
	f, failed, err := a.takeSnapshot(ctx, o.df, o.all, db, p, o.samples, o.interval)
	if err != nil {
		return err
	}
	if o.out == "" {
		err = a.WriteJSON(f)
	} else if err = snapshot.Write(o.out, f); err != nil {
		return cmdutil.DeviceErr(err)
	} else {
		err = a.printSnapshotSummary(o.out, f)
	}
	if err != nil {
		return err
	}
	// Each function not read, and why, on standard error too (the
	// file holds it as well).
	for _, d := range f.Devices {
		if d.Error != "" {
			fmt.Fprintf(a.Stderr, "cxray: %s: %s\n", d.BDF, d.Error)
		}
	}
	return failed
}

// takeSnapshot reads the targets into one file, side by side, each
// function within its own deadline: --timeout for opening and its first
// reads, and the waits between its samples. A function that could not be
// read is recorded with its error, and failed (exit 3, after the output)
// names it; only when none could be read is that the error.
func (a *app) takeSnapshot(ctx context.Context, df cmdutil.DeviceFlags, all bool, db *prm.DB, p *snapshot.Profile, samples int, interval time.Duration) (f *snapshot.File, failed, err error) {
	octx, cancel := context.WithTimeout(ctx, df.Timeout)
	targets, err := a.OpenTargets(octx, df.Name, all, db)
	cancel()
	if err != nil {
		return nil, nil, err
	}
	defer adapter.CloseAll(targets)
	host, _ := os.Hostname()
	f = &snapshot.File{Format: snapshot.Format, Version: snapshot.Version, Created: targets[0].Clock().Now().UTC(), Host: host, Tool: a.Version,
		PRMRevision: db.Revision, PRMSource: db.Source, Profile: *p, Samples: samples, Interval: snapshot.Duration(interval)}
	// The NV configuration is named with the database `config` uses
	// ($CXRAY_NVDB, mstflint's, or the built-in one).
	nv, err := cmdutil.NVDB("")
	if err != nil {
		return nil, nil, err
	}
	progress := a.progress(len(targets))
	devs := make([]snapshot.Device, len(targets))
	wait := time.Duration(max(samples-1, 0)) * interval
	cmdutil.EachTarget(ctx, targets, df.Timeout+wait, func(ctx context.Context, i int, ad *adapter.Adapter) {
		fail := func(err error) {
			devs[i] = snapshot.Device{Name: ad.Name(), BDF: ad.BDF(), Backend: ad.Backend(), Error: err.Error()}
			progress.function()
		}
		// The first read (the port topology, kept by the adapter) within
		// --timeout: a function that does not answer never waits its
		// intervals.
		first, cancel := context.WithTimeout(ctx, df.Timeout)
		_, err := ad.Ports(first)
		cancel()
		if err != nil {
			fail(err)
			return
		}
		opt := snapshot.Options{Samples: samples, Interval: interval, NV: nv, Progress: progress.registers()}
		d, err := snapshot.Take(ctx, ad, p, opt)
		if err != nil {
			fail(err)
			return
		}
		devs[i] = *d
		progress.function()
	})
	progress.done()
	if err := ctx.Err(); err != nil {
		return nil, nil, cmdutil.Stopped(ctx, err)
	}
	f.Devices = devs
	f.Created = targets[0].Clock().Now().UTC()
	var bad []string
	for _, d := range f.Devices {
		if d.Error != "" {
			bad = append(bad, d.BDF)
		}
	}
	switch {
	case len(bad) == len(f.Devices):
		return nil, nil, cmdutil.DeviceErr(fmt.Errorf("no device could be read: %s", f.Devices[0].Error))
	case len(bad) > 0:
		return f, cmdutil.Unread(len(f.Devices), bad), nil
	}
	return f, nil, nil
}

// progressBar shows a snapshot's progress on a terminal: the registers of
// one function, or how many of several functions are done (they are read
// side by side). The zero value (standard error is no terminal) shows
// nothing.
type progressBar struct {
	f     *os.File
	total int
	mu    sync.Mutex
	n     int
}

func (a *app) progress(functions int) *progressBar {
	f, ok := a.Stderr.(*os.File)
	if !ok || !cmdutil.IsTerminal(f) {
		return &progressBar{}
	}
	return &progressBar{f: f, total: functions}
}

func (p *progressBar) draw(label string, done, total int) {
	const width = 30
	n := done * width / max(total, 1)
	fmt.Fprintf(p.f, "\r%s [%s%s] %d/%d", label, strings.Repeat("#", n), strings.Repeat(".", width-n), done, total)
}

// registers is the per-register progress of a lone function.
func (p *progressBar) registers() func(done, total int) {
	if p.f == nil || p.total != 1 {
		return nil
	}
	return func(done, total int) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.draw("registers", done, total)
	}
}

// function counts one more function done.
func (p *progressBar) function() {
	if p.f == nil || p.total == 1 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	p.draw("functions", p.n, p.total)
}

func (p *progressBar) done() {
	if p.f != nil {
		fmt.Fprint(p.f, "\r\033[K")
	}
}

func (a *app) printSnapshotSummary(path string, f *snapshot.File) error {
	var sums []devSum
	for _, d := range f.Devices {
		s := devSum{BDF: d.BDF, Firmware: d.Identity.Firmware, Error: d.Error}
		for _, r := range d.Registers {
			if r.Error != "" {
				s.Failed++
				continue
			}
			s.Registers++
			s.Fields += len(r.Fields)
		}
		sums = append(sums, s)
	}
	if a.JSON() {
		return a.WriteJSON(snapshotDocument{Devices: sums, File: path, Profile: f.Profile.Name, Samples: f.Samples})
	}
	fmt.Fprintf(a.Stdout, "wrote %s (profile %s, %d sample(s), %s)\n", path, f.Profile.Name, f.Samples, f.PRMRevision)
	t := a.NewTable("BDF", "FIRMWARE", "REGISTERS", "FIELDS", "UNREADABLE")
	for _, s := range sums {
		t.Row(s.BDF, cmdutil.Dash(s.Firmware), fmt.Sprint(s.Registers), fmt.Sprint(s.Fields), fmt.Sprint(s.Failed))
	}
	t.Flush()
	return nil
}

// diffOptions holds the flags of the "diff" command.
type diffOptions struct {
	df             cmdutil.DeviceFlags
	all            bool
	samples, limit int
	interval       time.Duration
}

func (a *app) diffCmd() *cobra.Command { return a.newDiffCmd(nil) }

// newDiffCmd wires the flags to diffOptions; runF (tests) replaces runDiff.
func (a *app) newDiffCmd(runF func(*diffOptions, []string) error) *cobra.Command {
	o := &diffOptions{}
	c := &cobra.Command{
		Use:   "diff BASE [NEW | -d DEV]",
		Short: "Compare a baseline snapshot with another, or with the device now",
		Long: `Compare two snapshots (or a snapshot with the device now, read with the
baseline's profile). Static values that changed are listed first and make the
exit status 1; dynamic values and counters are summarised with deltas and
rates; firmware, driver and PRM-revision changes are called out; fields that
appeared or disappeared (a new PRM revision) are shown as such; values that
should move but stayed the same over several samples are flagged as stale
(exit 1). Snapshots decoded with different PRM revisions are matched by field
name, then by position.`,
		Example: `  cxray diff before.json after.json
  ssh host cxray snapshot -d mlx5_0 | cxray diff before.json -
  cxray diff before.json -d 0000:03:00.0 -o json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return a.runDiff(a.Ctx, o, args)
		},
	}
	o.df.Add(c)
	c.Flags().BoolVar(&o.all, "all", false, "with -d: every function of the emulated scenario")
	c.Flags().IntVar(&o.samples, "samples", 1, "with -d: samples to read now")
	c.Flags().DurationVar(&o.interval, "interval", 0, "with -d: time between samples")
	c.Flags().IntVar(&o.limit, "limit", 25, "list at most this many changes per section (0: all)")
	return c
}

// runDiff is the work of the "diff" command, apart from its cobra wiring.
func (a *app) runDiff(ctx context.Context, o *diffOptions, args []string) error {
	if args[0] == "-" && len(args) == 2 && args[1] == "-" {
		return cmdutil.UsageErr("only one of the snapshots can come from standard input")
	}
	base, err := a.readSnapshot(args[0])
	if err != nil {
		return err
	}
	var cur *snapshot.File
	var failed error
	switch {
	case len(args) == 2 && o.df.Name != "":
		return cmdutil.UsageErr("compare with a file or with -d DEV, not both")
	case len(args) == 2:
		if cur, err = a.readSnapshot(args[1]); err != nil {
			return err
		}
	case o.df.Name != "":
		db, err := a.DB()
		if err != nil {
			return err
		}
		if cur, failed, err = a.takeSnapshot(ctx, o.df, o.all, db, &base.Profile, o.samples, o.interval); err != nil {
			return err
		}
	default:
		return cmdutil.UsageErr("give a second snapshot file, or -d DEV to compare with the device now")
	}
	rep := snapshot.Diff(base, cur, nil)
	if a.JSON() {
		if err := a.WriteJSON(rep); err != nil {
			return err
		}
	} else if err := rep.WriteText(a.Stdout, o.limit); err != nil {
		return err
	}
	if failed != nil {
		return failed
	}
	if rep.Problems() {
		return cmdutil.ErrProblem
	}
	return nil
}

// readSnapshot reads a snapshot file, or standard input for "-" (bounded:
// a snapshot is never near snapshot.MaxFile).
func (a *app) readSnapshot(path string) (*snapshot.File, error) {
	if path != "-" {
		f, err := snapshot.Read(path)
		if err != nil {
			return nil, cmdutil.UsageWrap(err)
		}
		return f, nil
	}
	b, err := cmdutil.ReadInput(path, a.Stdin, maxSnapshotInput, "a snapshot")
	if err != nil {
		return nil, err
	}
	f, err := snapshot.Parse(b, "standard input")
	if err != nil {
		return nil, cmdutil.UsageWrap(err)
	}
	return f, nil
}

// maxSnapshotInput bounds a snapshot read from standard input.
const maxSnapshotInput = 512 << 20

// snapshotDocument is `cxray snapshot -o json`: the file written and a
// summary per device. The fields are in key order, as the map it replaced
// was written, so the output is unchanged.
type snapshotDocument struct {
	Devices []devSum `json:"devices"`
	File    string   `json:"file"`
	Profile string   `json:"profile"`
	Samples int      `json:"samples"`
}

// devSum is one device of snapshotDocument.
type devSum struct {
	BDF       string `json:"bdf"`
	Firmware  string `json:"firmware"`
	Registers int    `json:"registers"`
	Fields    int    `json:"fields"`
	Failed    int    `json:"failed"`
	Error     string `json:"error,omitempty"`
}

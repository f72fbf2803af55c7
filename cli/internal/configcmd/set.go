package configcmd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cxray/cxray/cli/internal/cmdutil"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/tlv"
)

type changeOut struct {
	Name    string `json:"name"`
	TLV     string `json:"tlv"`
	Current string `json:"current,omitempty"`
	Before  string `json:"next_boot_before"`
	After   string `json:"next_boot_after"`
}

type writeOut struct {
	TLV     string   `json:"tlv"`
	Type    string   `json:"type"`
	Version int      `json:"version"`
	Data    []string `json:"data"`
}

type configSetOptions struct {
	df          cmdutil.DeviceFlags
	yes, dryRun bool
	backup      string
	settle      time.Duration
}

// EnvSettle sets config set's default --settle (a Go duration; 0 skips the
// second read).
const EnvSettle = "CXRAY_NV_SETTLE"

// defaultSettle is --settle's default: $CXRAY_NV_SETTLE, else
// nvconf.DefaultSettle.
func defaultSettle() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(EnvSettle)); err == nil && d >= 0 {
		return d
	}
	return nvconf.DefaultSettle
}

func (cc *configCtx) setCmd() *cobra.Command { return cc.newSetCmd(nil) }

// newSetCmd wires the flags to configSetOptions; runF (tests) replaces runSetCmd.
func (cc *configCtx) newSetCmd(runF func(*configSetOptions, []string) error) *cobra.Command {
	var o configSetOptions
	c := &cobra.Command{
		Use:     "set PARAM=VALUE...",
		Aliases: []string{"s"},
		Short:   "Change parameters (validated, backed up, whole-TLV write, verified; Next Boot)",
		Long: `Change parameters for the next boot: cxray reads each TLV, checks every value
(type, enum values, the device's limits and rules) before touching the device,
writes a backup of the NV configuration, writes whole TLVs with the valid bits
of the changed parameters set, and reads them back. A lock per adapter keeps
two cxray runs from interleaving their writes, and a journal lets the next run
find a write that was cut short ('cxray config recover').

Values: True/False or 1/0 for booleans, enum names or numbers (ETH or 2),
numbers in decimal or 0x... Per-port parameters are NAME_P1, NAME_P2; array
elements NAME[i].

The change takes effect at the next firmware reset: 'cxray config apply' where
the firmware allows it, a reboot after 'cxray config apply --at-reboot', or a
power cycle.

The lock orders cxray's writers only: mstconfig and mlxconfig take none, and
one that read a TLV before cxray wrote it can write it back after, undoing
the change. So after the read-back cxray waits --settle and reads the TLVs
again: a parameter another writer changed since is a warning, and a change of
cxray's that was undone exits 1.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return cc.runSetCmd(cc.a.Ctx, &o, args)
		},
	}
	o.df.Add(c)
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask for confirmation (mlxconfig's -y)")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "validate and print the TLVs that would be written; write nothing")
	c.Flags().StringVar(&o.backup, "backup", "", "write the backup to this file (default: a new file in $CXRAY_BACKUP_DIR or ~/.local/state/cxray/backups)")
	c.Flags().DurationVar(&o.settle, "settle", defaultSettle(), "after the write is verified, wait this long and read the TLVs again, to catch another writer (mstconfig) undoing it; 0 skips ($"+EnvSettle+" sets the default)")
	return c
}

func (cc *configCtx) runSetCmd(ctx context.Context, o *configSetOptions, args []string) error {
	as, err := nvconf.ParseAssignments(args)
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	ctx, cancel := o.df.Context(ctx)
	defer cancel()
	t, err := cc.openWrite(ctx, o.df)
	if err != nil {
		return err
	}
	defer t.Close()
	return cc.runSet(ctx, t, as, o.yes, o.dryRun, o.backup, o.settle)
}

// setDoc is set -o json (docs/config.md).
type setDoc struct {
	Device      string      `json:"device"`
	Changes     []changeOut `json:"changes"`
	Unchanged   []string    `json:"unchanged,omitempty"`
	Writes      []writeOut  `json:"writes"`
	DryRun      bool        `json:"dry_run"`
	Backup      string      `json:"backup,omitempty"`
	Written     bool        `json:"written"`
	TakesEffect string      `json:"takes_effect,omitempty"`
	// ChangedAfter are parameters another writer changed after the
	// write was verified (seen --settle later).
	ChangedAfter []driftOut `json:"changed_after_write,omitempty"`
}

// runSet plans, shows and performs a set (roce set shares it).
func (cc *configCtx) runSet(ctx context.Context, t *nvTarget, as []nvconf.Assignment, yes, dryRun bool, backupPath string, settle time.Duration) error {
	a := cc.a
	plan, err := t.s.PlanSet(ctx, as)
	if err != nil {
		return cmdutil.Classify(err)
	}
	hc := t.s.HeaderCodec()
	changes := []changeOut{}
	writes := []writeOut{}
	var names []string
	for _, w := range plan.Writes {
		names = append(names, w.Inst.String())
		for _, c := range w.Changes {
			changes = append(changes, changeOut{Name: c.Name, TLV: w.Inst.String(), Current: c.Current, Before: c.Before, After: c.After})
		}
		img, _ := nvconf.RawTLV{Header: nvconf.Header{Type: w.Inst.Type(), Version: w.Version, WriterID: t.s.Writer}, Data: w.After}.Image(hc)
		writes = append(writes, writeOut{TLV: w.Inst.String(), Type: fmt.Sprintf("0x%08x", w.Inst.Type()), Version: w.Version, Data: strings.Fields(tlv.Dwords(img))})
	}
	result := setDoc{Device: t.ad.Name(), Changes: changes, Unchanged: plan.Unchanged, Writes: writes, DryRun: dryRun}
	if !a.JSON() {
		if len(changes) > 0 {
			tb := a.NewTable("PARAMETER", "CURRENT", "NEXT BOOT", "NEW")
			for _, c := range changes {
				tb.Row(c.Name, dashIfEmpty(c.Current), c.Before, c.After)
			}
			tb.Flush()
		}
		for _, u := range plan.Unchanged {
			fmt.Fprintf(a.Stdout, "%s already has that value for the next boot; nothing to write for it.\n", u)
		}
	}
	if len(plan.Writes) == 0 || dryRun {
		if a.JSON() {
			return a.WriteJSON(result)
		}
		if len(plan.Writes) == 0 {
			fmt.Fprintln(a.Stdout, "Nothing to write.")
			return nil
		}
		fmt.Fprintln(a.Stdout, "Dry run: the values are valid; these TLVs (MNVDA header + data) would be written:")
		for _, w := range writes {
			fmt.Fprintf(a.Stdout, "  %s  %s\n", w.TLV, strings.Join(w.Data, " "))
		}
		return nil
	}
	done, path, err := cc.commit(ctx, t, fmt.Sprintf("Write %s (Next Boot) on %s?", strings.Join(names, ", "), t.ad.Name()), plan, yes, backupPath)
	if err != nil {
		return err
	}
	final := done.(*nvconf.SetPlan)
	result.Backup, result.Written, result.TakesEffect = path, true, "next firmware reset"
	lost := cc.settled(ctx, t, final, settle, &result.ChangedAfter)
	if a.JSON() {
		if err := a.WriteJSON(result); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(a.Stdout, "Backup: %s\n", path)
		if lost {
			fmt.Fprintf(a.Stdout, "Written and verified, then undone by another writer: see the warnings.\n")
		} else {
			fmt.Fprintf(a.Stdout, "Written and verified: %d TLV(s) hold the new values for the next boot.\n", len(final.Writes))
			cc.printTakesEffect(t)
		}
	}
	if lost {
		return cmdutil.ErrProblem
	}
	return nil
}

// driftOut is a parameter changed after the write, in set -o json.
type driftOut struct {
	TLV       string `json:"tlv"`
	Parameter string `json:"parameter"`
	Wrote     string `json:"wrote"`
	Now       string `json:"now"`
	Ours      bool   `json:"ours"`
}

// settled waits settle (in real time: the other writer is a process on
// this host, whatever clock the device runs on) and reads the TLVs the
// set wrote again. Each parameter changed since is a warning; it says
// whether one of the set's own changes was undone. A wait cut short (a
// signal, the deadline) or a read that fails is said, not an error: the
// write itself was verified.
func (cc *configCtx) settled(ctx context.Context, t *nvTarget, plan *nvconf.SetPlan, settle time.Duration, out *[]driftOut) (lost bool) {
	if settle <= 0 {
		return false
	}
	// --timeout bounds the command: the second read must fit in it.
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl) - time.Second; left < settle {
			fmt.Fprintf(cc.a.Stderr, "cxray: note: --settle %v shortened to %v to read the TLVs again within --timeout\n", settle, max(left, 0).Round(time.Millisecond))
			settle = max(left, 0)
		}
	}
	if err := (clock.Real{}).Sleep(ctx, settle); err != nil {
		fmt.Fprintf(cc.a.Stderr, "cxray: note: did not read the TLVs again after --settle %v (%v)\n", settle, err)
		return false
	}
	drift, err := t.s.Settled(ctx, plan)
	if err != nil {
		fmt.Fprintf(cc.a.Stderr, "cxray: note: reading the TLVs again after --settle %v failed: %v\n", settle, err)
	}
	for _, d := range drift {
		*out = append(*out, driftOut{TLV: d.TLV, Parameter: d.Param, Wrote: d.Wrote, Now: d.Now, Ours: d.Ours})
		what := "a parameter this set did not change"
		if d.Ours {
			what, lost = "this set's change was undone", true
		}
		fmt.Fprintf(cc.a.Stderr, "cxray: warning: another writer changed %s %s after cxray wrote it (wrote %s, now %s): %s. "+
			"cxray's NV lock does not cover mstconfig or mlxconfig; check with 'cxray config query -d %s' and set it again once the other tool is done\n",
			d.TLV, d.Param, d.Wrote, d.Now, what, t.ad.Name())
	}
	return lost
}

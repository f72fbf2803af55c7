package configcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/cxray/cxray/cli/internal/cmdutil"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/nvconf"
)

type configRestoreOptions struct {
	df                 cmdutil.DeviceFlags
	yes, dryRun, merge bool
	resetMissing       bool
	acceptUnchecked    bool
	force              bool
	backup             string
}

func (cc *configCtx) restoreCmd() *cobra.Command { return cc.newRestoreCmd(nil) }

// newRestoreCmd wires the flags to configRestoreOptions; runF (tests) replaces runRestoreCmd.
func (cc *configCtx) newRestoreCmd(runF func(*configRestoreOptions, []string) error) *cobra.Command {
	var o configRestoreOptions
	c := &cobra.Command{
		Use:   "restore FILE",
		Short: "Write a backup back (cxray or MLNX_RAW_TLV_FILE format), for the next boot",
		Long: `Write the TLVs of a backup that differ from what the adapter stores. The file
is cxray's backup format or mstflint's MLNX_RAW_TLV_FILE (from 'mstconfig
backup' or get_raw). Every TLV is checked against the parameter database first;
a backup of the current configuration is written before anything changes, and
the result is read back (MNVGN) and compared with the file.

TLVs the adapter stores but the file does not hold are left as they are: a
file says nothing about what it does not hold (and a file cut short must not
reset what it lost). --reset-missing returns them to their defaults as well;
they are listed first.

A TLV means what the firmware of one model and PSID makes of it: a cxray
backup names the adapter it was taken from, and one of another model or PSID
is refused (exit 2, in --dry-run too) unless --force is given. mstflint's
files name no adapter; restore says so.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return cc.runRestoreCmd(cc.a.Ctx, &o, args[0])
		},
	}
	o.df.Add(c)
	c.Flags().BoolVar(&o.resetMissing, "reset-missing", false, "also reset the TLVs stored on the adapter but not in the file")
	c.Flags().BoolVar(&o.acceptUnchecked, "accept-unchecked", false, "with --reset-missing: trust a file without count or checksum (mstflint's format) to be complete")
	c.Flags().BoolVar(&o.merge, "merge", false, "only write the file's TLVs (the default; kept for older scripts)")
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask for confirmation (mlxconfig's -y)")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "say what would be written and reset; write nothing")
	c.Flags().StringVar(&o.backup, "backup", "", "write the backup of the current configuration to this file")
	c.Flags().BoolVar(&o.force, "force", false, "restore a backup taken from an adapter of another model or PSID")
	return c
}

// checkOrigin refuses a backup taken from an adapter of another model or
// PSID than the target, unless force; it returns a note to print when it
// goes ahead anyway, or when the file does not say where it came from.
func checkOrigin(ctx context.Context, t *nvTarget, file string, bf *nvconf.BackupFile, force bool) (string, error) {
	if bf.Model == "" && bf.PSID == "" {
		return fmt.Sprintf("note: %s (%s) does not say which adapter it was taken from: check it is one of this model and PSID", file, bf.Format), nil
	}
	id, err := t.ad.Identity(ctx)
	if err != nil {
		return "", cmdutil.Classify(err)
	}
	var diffs []string
	if bf.Model != "" && id.Model != "" && !strings.EqualFold(bf.Model, id.Model) {
		diffs = append(diffs, fmt.Sprintf("model %s, this adapter is a %s", bf.Model, id.Model))
	}
	if bf.PSID != "" && id.PSID != "" && !strings.EqualFold(bf.PSID, id.PSID) {
		diffs = append(diffs, fmt.Sprintf("PSID %s, this adapter's is %s", bf.PSID, id.PSID))
	}
	if len(diffs) == 0 {
		return "", nil
	}
	what := fmt.Sprintf("%s was taken from another adapter (%s)", file, strings.Join(diffs, "; "))
	if force {
		return "warning: " + what + "; restoring it anyway (--force)", nil
	}
	return "", cmdutil.UsageErr("%s: its TLVs may mean other things to this firmware; nothing was written. "+
		"Restore a backup of this model and PSID, or add --force if you know they mean the same", what)
}

// restoreDoc is restore -o json (docs/config.md).
type restoreDoc struct {
	Device    string   `json:"device"`
	File      string   `json:"file"`
	Reset     []string `json:"reset"`
	Write     []string `json:"write"`
	Kept      []string `json:"kept"`
	Unchanged int      `json:"unchanged"`
	DryRun    bool     `json:"dry_run"`
	Backup    string   `json:"backup,omitempty"`
	Written   bool     `json:"written"`
}

func (cc *configCtx) runRestoreCmd(ctx context.Context, o *configRestoreOptions, file string) error {
	a := cc.a
	if o.merge && o.resetMissing {
		return cmdutil.UsageErr("--merge and --reset-missing exclude each other; --merge is the default")
	}
	ctx, cancel := o.df.Context(ctx)
	defer cancel()
	t, err := cc.openWrite(ctx, o.df)
	if err != nil {
		return err
	}
	defer t.Close()
	bf, err := readBackup(file, t.s.HeaderCodec(), t.nv, a.Stdin)
	if err != nil {
		return err
	}
	note, err := checkOrigin(ctx, t, file, bf, o.force)
	if err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintf(a.Stderr, "cxray: %s\n", note)
	}
	want := bf.TLVs
	// A file without a count or checksum (mstflint's format) that was cut
	// at a line boundary reads as a smaller backup: resetting what it
	// lacks would reset what the cut removed.
	if bf.Unchecked && o.resetMissing && !o.acceptUnchecked {
		return cmdutil.UsageErr("%s (%s) carries no count or checksum, so nothing proves it is whole, and --reset-missing would reset every TLV a cut removed; restore without --reset-missing (the file's TLVs only), or add --accept-unchecked if you know the file is complete", file, bf.Format)
	}
	ro := nvconf.RestoreOptions{ResetMissing: o.resetMissing}
	plan, err := t.s.PlanRestore(ctx, want, ro)
	if err != nil {
		return cmdutil.Classify(err)
	}
	names := func(rs []nvconf.RawTLV) []string {
		out := []string{}
		for _, r := range rs {
			out = append(out, t.nv.DescribeType(r.Header.Type))
		}
		return out
	}
	out := restoreDoc{Device: t.ad.Name(), File: file, Reset: names(plan.Resets), Write: names(plan.Writes), Kept: names(plan.Kept), Unchanged: plan.Unchanged, DryRun: o.dryRun}
	if !a.JSON() {
		for _, r := range plan.Resets {
			fmt.Fprintf(a.Stdout, "reset  %s (stored now, not in the file)\n", t.nv.DescribeType(r.Header.Type))
		}
		for _, r := range plan.Writes {
			fmt.Fprintf(a.Stdout, "write  %s\n", t.nv.DescribeType(r.Header.Type))
			for _, l := range plan.Deltas[r.Header.Type] {
				fmt.Fprintf(a.Stdout, "         %s\n", l)
			}
		}
		for _, r := range plan.Kept {
			fmt.Fprintf(a.Stdout, "keep   %s (stored now, not in the file; --reset-missing resets it)\n", t.nv.DescribeType(r.Header.Type))
		}
		fmt.Fprintf(a.Stdout, "%d TLV(s) already as in the file.\n", plan.Unchanged)
		if bf.Unchecked {
			fmt.Fprintf(a.Stdout, "note: %s (%s) carries no count or checksum: check it holds every TLV you expect\n", file, bf.Format)
		}
	}
	if plan.Empty() || o.dryRun {
		if a.JSON() {
			return a.WriteJSON(out)
		}
		if plan.Empty() {
			fmt.Fprintln(a.Stdout, "Nothing to do: the stored configuration holds the file's TLVs.")
		} else {
			fmt.Fprintln(a.Stdout, "Dry run: nothing written.")
		}
		return nil
	}
	_, path, err := cc.commit(ctx, t, fmt.Sprintf("Write %d and reset %d TLV(s) (Next Boot) on %s?", len(plan.Writes), len(plan.Resets), t.ad.Name()), plan, o.yes, o.backup)
	if err != nil {
		return err
	}
	out.Backup, out.Written = path, true
	if a.JSON() {
		return a.WriteJSON(out)
	}
	fmt.Fprintf(a.Stdout, "Backup of the configuration before: %s\n", path)
	fmt.Fprintf(a.Stdout, "Restored and verified: the stored configuration holds the TLVs of %s.\n", file)
	cc.printTakesEffect(t)
	return nil
}

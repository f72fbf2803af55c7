package configcmd

import (
	"context"
	"fmt"

	"github.com/cxray/cxray/cli/internal/cmdutil"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/nvconf"
)

type configResetOptions struct {
	df               cmdutil.DeviceFlags
	yes, dryRun, all bool
	backup           string
}

func (cc *configCtx) resetCmd() *cobra.Command { return cc.newResetCmd(nil) }

// newResetCmd wires the flags to configResetOptions; runF (tests) replaces runReset.
func (cc *configCtx) newResetCmd(runF func(*configResetOptions, []string) error) *cobra.Command {
	var o configResetOptions
	c := &cobra.Command{
		Use:     "reset [TLV|PARAM...] [--all]",
		Aliases: []string{"r"},
		Short:   "Return TLVs (MNVDI) or the whole NV configuration (MNVIA) to the defaults, for the next boot",
		Long: `Erase what is written for the named TLVs, so their Next Boot values are the
firmware defaults again (MNVDI), or everything with --all (MNVIA, what
'mstconfig reset' does). Name a TLV (nv_global_pci_conf) or a parameter in it
(SRIOV_EN, LINK_TYPE_P1): the whole TLV is reset, and cxray lists every
parameter that changes. A backup is written first. Takes effect at the next
firmware reset, like set.`,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return cc.runReset(cc.a.Ctx, &o, args)
		},
	}
	o.df.Add(c)
	c.Flags().BoolVar(&o.all, "all", false, "reset the whole NV configuration (MNVIA)")
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask for confirmation (mlxconfig's -y)")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "list what would return to its default; write nothing")
	c.Flags().StringVar(&o.backup, "backup", "", "write the backup to this file")
	return c
}

// resetDoc is reset -o json (docs/config.md).
type resetDoc struct {
	Device  string        `json:"device"`
	All     bool          `json:"all"`
	TLVs    []string      `json:"tlvs"`
	Changes []resetChange `json:"changes"`
	DryRun  bool          `json:"dry_run"`
	Backup  string        `json:"backup,omitempty"`
	Written bool          `json:"written"`
}

type resetChange struct {
	Name   string `json:"name"`
	Before string `json:"next_boot_before"`
	After  string `json:"next_boot_after"`
}

func (cc *configCtx) runReset(ctx context.Context, o *configResetOptions, names []string) error {
	a := cc.a
	if o.all == (len(names) > 0) {
		return cmdutil.UsageErr("name the TLVs or parameters to reset, or give --all (not both)")
	}
	ctx, cancel := o.df.Context(ctx)
	defer cancel()
	t, err := cc.openWrite(ctx, o.df)
	if err != nil {
		return err
	}
	defer t.Close()
	plan, err := t.s.PlanReset(ctx, names, o.all)
	if err != nil {
		return cmdutil.Classify(err)
	}
	out := resetDoc{Device: t.ad.Name(), All: o.all, TLVs: plan.Names(), Changes: []resetChange{}, DryRun: o.dryRun}
	for _, c := range plan.Changes {
		out.Changes = append(out.Changes, resetChange{Name: c.Name, Before: c.Before, After: c.After})
	}
	if !a.JSON() {
		if len(out.Changes) > 0 {
			tb := a.NewTable("PARAMETER", "NEXT BOOT", "DEFAULT")
			for _, c := range out.Changes {
				tb.Row(c.Name, c.Before, c.After)
			}
			tb.Flush()
		} else if plan.KnownDefaults {
			fmt.Fprintln(a.Stdout, "Every parameter of these TLVs already has its default for the next boot.")
		}
	}
	if o.dryRun {
		if a.JSON() {
			return a.WriteJSON(out)
		}
		fmt.Fprintf(a.Stdout, "Dry run: would reset %s; nothing written.\n", plan.Subject())
		return nil
	}
	done, path, err := cc.commit(ctx, t, fmt.Sprintf("Reset %s to the defaults (Next Boot) on %s?", plan.Subject(), t.ad.Name()), plan, o.yes, o.backup)
	if err != nil {
		return err
	}
	out.Backup, out.Written = path, true
	if a.JSON() {
		return a.WriteJSON(out)
	}
	fmt.Fprintf(a.Stdout, "Backup: %s\n", path)
	fmt.Fprintf(a.Stdout, "Reset %s: the defaults apply from the next boot.\n", done.(*nvconf.ResetPlan).Subject())
	cc.printTakesEffect(t)
	return nil
}

package configcmd

import (
	"context"
	"fmt"

	"github.com/cxray/cxray/cli/internal/cmdutil"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/nvconf"
)

type configRecoverOptions struct {
	df                            cmdutil.DeviceFlags
	finish, rollback, yes, dryRun bool
}

func (cc *configCtx) recoverCmd() *cobra.Command {
	var o configRecoverOptions
	c := &cobra.Command{
		Use:   "recover -d DEV [--finish|--rollback]",
		Short: "Find an NV write that was cut short, and finish it or roll it back from its backup",
		Long: `Every NV write (set, reset, restore) records what it is about to do in a journal
before its first TLV and clears it after the last is verified. A write cut short
(cxray killed, a crash, power lost) leaves its entry, and the adapter may hold
some TLVs new and some old. Without a flag, recover says whether such a write is
pending (exit 1 when one is). --finish writes what the interrupted write meant
to; --rollback puts the TLVs it touched back as the backup taken before it
holds them.`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error { return cc.runRecover(&o) },
	}
	o.df.Add(c)
	c.Flags().BoolVar(&o.finish, "finish", false, "complete the interrupted write")
	c.Flags().BoolVar(&o.rollback, "rollback", false, "undo it from the backup taken before it")
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask for confirmation (mlxconfig's -y)")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "say what would be written; write nothing")
	return c
}

func (cc *configCtx) runRecover(o *configRecoverOptions) error {
	a := cc.a
	if o.finish && o.rollback {
		return cmdutil.UsageErr("--finish and --rollback exclude each other")
	}
	ctx, cancel := o.df.Context(a.Ctx)
	defer cancel()
	t, err := cc.open(ctx, o.df)
	if err != nil {
		return err
	}
	defer t.Close()
	j, err := nvconf.DefaultJournal()
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	e, err := j.Pending(t.key())
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	if e == nil {
		if a.JSON() {
			return a.WriteJSON(map[string]any{"device": t.ad.Name(), "pending": false})
		}
		fmt.Fprintf(a.Stdout, "No interrupted NV write on %s.\n", t.ad.Name())
		return nil
	}
	ie := nvconf.Interrupted(e, t.nv)
	if !o.finish && !o.rollback {
		if a.JSON() {
			if err := a.WriteJSON(map[string]any{"device": t.ad.Name(), "pending": true, "op": e.Op, "started": e.Started, "backup": e.Backup, "tlvs": ie.Names}); err != nil {
				return err
			}
		} else {
			fmt.Fprintln(a.Stdout, ie.Error())
		}
		return cmdutil.ErrProblem
	}
	var backup []nvconf.RawTLV
	if o.rollback {
		if backup, err = readTLVFile(e.Backup, t.s.HeaderCodec(), t.nv, a.Stdin); err != nil {
			return fmt.Errorf("the backup of the interrupted write cannot be read: %w", err)
		}
	}
	rec := nvconf.PlanRecover(e, o.rollback, backup)
	verb := map[bool]string{true: "roll back", false: "finish"}[o.rollback]
	if !a.JSON() {
		fmt.Fprintf(a.Stdout, "%s\nTo %s: reset %d TLV(s), write %d.\n", ie.Error(), verb, len(rec.Resets), len(rec.Writes))
	}
	if o.dryRun {
		return nil
	}
	_, err = cc.commit(ctx, t, fmt.Sprintf("%s the interrupted %s on %s?", verb, e.Op, t.ad.Name()), nvconf.Change{
		Op: "recover",
		Replan: func(ctx context.Context) ([]string, []nvconf.Instance, *nvconf.JournalEntry, error) {
			var insts []nvconf.Instance
			for _, r := range rec.Writes {
				if in, ok := t.nv.InstanceOf(r.Header.Type); ok {
					insts = append(insts, in)
				}
			}
			return nil, insts, &nvconf.JournalEntry{Writes: rec.Writes, Resets: rec.Resets, All: rec.All}, nil
		},
		Apply: func(ctx context.Context) error { return t.s.Recover(ctx, rec) },
	}, o.yes, "")
	if err != nil {
		return err
	}
	if a.JSON() {
		return a.WriteJSON(map[string]any{"device": t.ad.Name(), "pending": false, "recovered": verb})
	}
	fmt.Fprintf(a.Stdout, "Done: the interrupted %s is %s.\n", e.Op, map[bool]string{true: "rolled back", false: "finished"}[o.rollback])
	return nil
}

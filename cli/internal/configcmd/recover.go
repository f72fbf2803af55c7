package configcmd

import (
	"context"
	"fmt"
	"time"

	"github.com/cxray/cxray/cli/internal/cmdutil"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/nvconf"
)

// recoverDoc is `config recover -o json` when nothing is pending, or once
// the interrupted write is finished or rolled back (Already: the adapter
// held what the recovery leaves, and nothing was Written).
type recoverDoc struct {
	Already   bool   `json:"already,omitempty"`
	Device    string `json:"device"`
	Pending   bool   `json:"pending"`
	Recovered string `json:"recovered,omitempty"`
	Written   *bool  `json:"written,omitempty"`
}

// recoverPendingDoc is `config recover -o json` on an interrupted write
// without --finish or --rollback: what the journal entry holds.
type recoverPendingDoc struct {
	Backup  string    `json:"backup"`
	Device  string    `json:"device"`
	Op      string    `json:"op"`
	Pending bool      `json:"pending"`
	Started time.Time `json:"started"`
	TLVs    []string  `json:"tlvs"`
}

type configRecoverOptions struct {
	df                            cmdutil.DeviceFlags
	finish, rollback, yes, dryRun bool
}

func (cc *configCtx) recoverCmd() *cobra.Command { return cc.newRecoverCmd(nil) }

// newRecoverCmd wires the flags to configRecoverOptions; runF (tests) replaces runRecover.
func (cc *configCtx) newRecoverCmd(runF func(*configRecoverOptions, []string) error) *cobra.Command {
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
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return cc.runRecover(cc.a.Ctx, &o)
		},
	}
	o.df.Add(c)
	c.Flags().BoolVar(&o.finish, "finish", false, "complete the interrupted write")
	c.Flags().BoolVar(&o.rollback, "rollback", false, "undo it from the backup taken before it")
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask for confirmation (mlxconfig's -y)")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "say what would be written; write nothing")
	return c
}

func (cc *configCtx) runRecover(ctx context.Context, o *configRecoverOptions) error {
	a := cc.a
	if o.finish && o.rollback {
		return cmdutil.UsageErr("--finish and --rollback exclude each other")
	}
	ctx, cancel := o.df.Context(ctx)
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
			return a.WriteJSON(recoverDoc{Device: t.ad.Name()})
		}
		fmt.Fprintf(a.Stdout, "No interrupted NV write on %s.\n", t.ad.Name())
		return nil
	}
	ie := nvconf.Interrupted(e, t.nv)
	if !o.finish && !o.rollback {
		if a.JSON() {
			if err := a.WriteJSON(recoverPendingDoc{Device: t.ad.Name(), Pending: true, Op: e.Op, Started: e.Started, Backup: e.Backup, TLVs: ie.Names}); err != nil {
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
			return fmt.Errorf("the backup of the interrupted write cannot be read: %w; without it only --finish can resolve the entry, or, once 'cxray config query -d %s' shows the configuration you want, remove %s by hand", err, t.ad.Name(), j.Path(t.key()))
		}
	}
	rec := nvconf.PlanRecover(e, o.rollback, backup)
	verb := map[bool]string{true: "roll back", false: "finish"}[o.rollback]
	done := map[bool]string{true: "rolled back", false: "finished"}[o.rollback]
	if !a.JSON() {
		fmt.Fprintf(a.Stdout, "%s\nTo %s: reset %d TLV(s), write %d.\n", ie.Error(), verb, len(rec.Resets), len(rec.Writes))
	}
	// A write the firmware refused may have changed nothing: when the
	// adapter already holds what the recovery would leave, writing it again
	// (and being refused again) helps no one; the entry is resolved.
	held, err := cc.recoveryHeld(ctx, t, j, rec, o.dryRun)
	if err != nil {
		return err
	}
	if held {
		if a.JSON() {
			written := false
			return a.WriteJSON(recoverDoc{Device: t.ad.Name(), Pending: o.dryRun, Recovered: verb, Already: true, Written: &written})
		}
		if o.dryRun {
			fmt.Fprintf(a.Stdout, "%s already holds what --%s would leave: nothing to write; without --dry-run the journal entry %s is removed.\n", t.ad.Name(), map[bool]string{true: "rollback", false: "finish"}[o.rollback], j.Path(t.key()))
			return nil
		}
		fmt.Fprintf(a.Stdout, "Done: %s already holds what the %s leaves, so nothing was written; the interrupted %s is %s and its journal entry removed.\n", t.ad.Name(), verb, e.Op, done)
		return nil
	}
	if o.dryRun {
		return nil
	}
	if _, _, err := cc.commit(ctx, t, fmt.Sprintf("%s the interrupted %s on %s?", verb, e.Op, t.ad.Name()), rec, o.yes, ""); err != nil {
		return err
	}
	if a.JSON() {
		return a.WriteJSON(recoverDoc{Device: t.ad.Name(), Recovered: verb})
	}
	fmt.Fprintf(a.Stdout, "Done: the interrupted %s is %s.\n", e.Op, done)
	return nil
}

// recoveryHeld says, under the adapter's NV lock, whether the adapter
// already holds what rec leaves; unless dryRun it then removes the
// journal entry.
func (cc *configCtx) recoveryHeld(ctx context.Context, t *nvTarget, j nvconf.Journal, rec nvconf.Recovery, dryRun bool) (bool, error) {
	unlock, err := nvconf.Lock(ctx, t.key())
	if err != nil {
		return false, cmdutil.Classify(err)
	}
	defer unlock()
	if e, err := j.Pending(t.key()); err != nil || e == nil {
		return false, err // resolved meanwhile: the commit below finds out
	}
	held, err := t.s.Holds(ctx, rec)
	if err != nil {
		return false, cmdutil.Classify(err)
	}
	if !held || dryRun {
		return held, nil
	}
	if err := j.Done(t.key()); err != nil {
		return false, fmt.Errorf("%s already holds the recovered configuration, but its journal entry cannot be removed (%v); remove %s by hand", t.ad.Name(), err, j.Path(t.key()))
	}
	return true, nil
}

package configcmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cxray/cxray/cli/internal/cmdutil"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/nvconf"
)

// `cxray config`: NV configuration, what mlxconfig/mstconfig do, with
// validation before any write, backups, read-back verification and JSON.

// configCtx is what the config subcommands share.
type configCtx struct {
	a    *app
	nvdb string
	// fileDevice picks one device of a query output that holds several
	// (--file-device); "" refuses such a file with the list of devices.
	fileDevice string
}

func (a *app) configCmd() *cobra.Command {
	cc := &configCtx{a: a}
	c := &cobra.Command{
		Use:   "config",
		Short: "NV configuration (mlxconfig): query, set, apply, reset, backup, restore, recover, diff",
		Long: `Read and change the adapter's non-volatile configuration (the TLVs mlxconfig
and mstconfig work with), by parameter name: SRIOV_EN, NUM_OF_VFS, LINK_TYPE_P1,
LOG_TX_PSN_WINDOW ...

mlxconfig's short commands work: q (query), s (set), r (reset), i
(show-params), and -y for --yes.

A value set goes to Next Boot: the running firmware keeps its Current value
until a firmware reset ('cxray config apply', mstfwreset) or a reboot; some
parameters need a power cycle. 'query -e' shows Default, Current and Next Boot.

Writes are validated first (type, enum values, the limits the device's
capability TLVs give, the database's rules), write a backup, rewrite whole TLVs
with their valid bits, and read back to verify.

The parameter database is mstflint's mlxconfig_host.db when installed, else
the one built into cxray; --nvdb FILE or $CXRAY_NVDB picks another ('builtin'
for the built-in one).`,
	}
	// mlxconfig puts -y and -e before the command (mlxconfig -d DEV -y s
	// X=1): known here as booleans, they do not swallow the command
	// name; the subcommands' own --yes and --extended take the values.
	var mlxYes, mlxExtended bool
	c.PersistentFlags().BoolVarP(&mlxYes, "yes", "y", false, "do not ask for confirmation")
	c.PersistentFlags().BoolVarP(&mlxExtended, "extended", "e", false, "also show Default and Current values (query)")
	c.PersistentFlags().MarkHidden("yes")
	c.PersistentFlags().MarkHidden("extended")
	c.PersistentFlags().StringVar(&cc.nvdb, "nvdb", "", "NV parameter database: mstflint's mlxconfig_host.db (SQLite) or 'builtin'; default $CXRAY_NVDB, the installed one, or the built-in")
	c.AddCommand(cc.queryCmd(), cc.setCmd(), cc.applyCmd(), cc.resetCmd(), cc.backupCmd(), cc.restoreCmd(), cc.recoverCmd(), cc.diffCmd(), cc.showParamsCmd(), cc.checkCmd())
	return c
}

// db loads the parameter database --nvdb names.
func (cc *configCtx) db() (*nvconf.DB, error) { return cmdutil.NVDB(cc.nvdb) }

// nvTarget is an opened device with its NV session.
type nvTarget struct {
	ad *adapter.Adapter
	s  *nvconf.Session
	nv *nvconf.DB
	// interrupted is an earlier write the journal shows was cut short
	// (open looks for it).
	interrupted *nvconf.InterruptedError
}

func (t *nvTarget) Close() { t.ad.Close() }

// open opens -d and starts the NV session. An interrupted earlier write
// on the adapter is said on standard error.
func (cc *configCtx) open(ctx context.Context, df cmdutil.DeviceFlags) (*nvTarget, error) {
	t, err := cc.openSession(ctx, df)
	if err != nil {
		return nil, err
	}
	t.interrupted, _ = t.findInterrupted(ctx, false)
	if t.interrupted != nil {
		fmt.Fprintf(cc.a.Stderr, "cxray: warning: %v\n", t.interrupted)
	}
	return t, nil
}

// openQuery is open for query, which reports an interrupted write in its
// output (table and JSON) rather than on standard error.
func (cc *configCtx) openQuery(ctx context.Context, df cmdutil.DeviceFlags) (*nvTarget, error) {
	t, err := cc.openSession(ctx, df)
	if err != nil {
		return nil, err
	}
	t.interrupted, _ = t.findInterrupted(ctx, false)
	return t, nil
}

// openWrite is open for the commands that write: they refuse to build on
// an interrupted write until it is finished or rolled back.
func (cc *configCtx) openWrite(ctx context.Context, df cmdutil.DeviceFlags) (*nvTarget, error) {
	t, err := cc.openSession(ctx, df)
	if err != nil {
		return nil, err
	}
	ie, err := t.findInterrupted(ctx, true)
	if ie != nil {
		err = ie
	}
	if err != nil {
		t.Close()
		return nil, cmdutil.DeviceErr(err)
	}
	return t, nil
}

func (cc *configCtx) openSession(ctx context.Context, df cmdutil.DeviceFlags) (*nvTarget, error) {
	nv, err := cc.db()
	if err != nil {
		return nil, err
	}
	db, err := cc.a.DB()
	if err != nil {
		return nil, err
	}
	if df.Name == "" {
		return nil, cmdutil.UsageErr("no device given; add -d DEV (a PCI address, mlx5_0, an interface name, or emu for the emulator)")
	}
	ad, d, err := cc.a.OpenRegisters(ctx, df.Name, db)
	if err != nil {
		return nil, err
	}
	s, err := nvconf.Open(ctx, d, nv)
	if err != nil {
		ad.Close()
		return nil, cmdutil.Classify(err)
	}
	return &nvTarget{ad: ad, s: s, nv: nv}, nil
}

// key names the adapter's NV lock and journal.
func (t *nvTarget) key() string { return nvconf.KeyFor(t.ad.Backend(), t.ad.Name(), t.ad.BDF()) }

// findInterrupted is the adapter's interrupted write, if the journal has one
// (nvconf.CheckInterrupted: the NV lock is waited for when wait, else
// tried briefly). When wait, a lock that could not be had is the error:
// the command would only fail later on the spent deadline, blaming the
// device.
func (t *nvTarget) findInterrupted(ctx context.Context, wait bool) (*nvconf.InterruptedError, error) {
	lctx := ctx
	if !wait {
		var cancel context.CancelFunc
		lctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
	}
	ie, err := nvconf.CheckInterrupted(lctx, t.key(), t.nv)
	var le *nvconf.LockError
	switch {
	case err == nil:
		return ie, nil
	case errors.As(err, &le) && !wait:
		return nil, nil // held: another write is under way (a write waits for it)
	case wait:
		return nil, err
	}
	return nil, nil
}

func (t *nvTarget) deviceLine(ctx context.Context) string {
	s := cmdutil.Describe(t.ad)
	if id, err := t.ad.Identity(ctx); err == nil && id.Firmware != "" {
		s += ", firmware " + id.Firmware
	}
	return s
}

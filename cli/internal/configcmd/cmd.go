// Package configcmd is `cxray config`: the adapter's NV configuration
// (mlxconfig's job) read and changed by parameter name, through nvconf's
// plans, with a backup before and a read-back after every write.
package configcmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/nvconf"
)

type app struct{ *cmdutil.App }

// New is `cxray config`.
func New(a *cmdutil.App) *cobra.Command { return (&app{a}).configCmd() }

// Set is config set's guarded write of NV parameters on the device df
// names (nvdb the parameter database, "" for the default), for other
// commands that change NV parameters (roce set): refused on an interrupted
// earlier write, validated, backed up, read back, and read again after
// config set's default --settle.
func Set(ctx context.Context, a *cmdutil.App, df cmdutil.DeviceFlags, nvdb string, as []nvconf.Assignment, yes, dryRun bool, backupPath string) error {
	cc := &configCtx{a: &app{a}, nvdb: nvdb}
	t, err := cc.openWrite(ctx, df)
	if err != nil {
		return err
	}
	defer t.Close()
	return cc.runSet(ctx, t, as, yes, dryRun, backupPath, defaultSettle())
}

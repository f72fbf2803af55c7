// Package regcmd is `cxray reg`: list, get and set registers by name or
// by ID, and mlxreg's (mstreg's) flags translated into those commands.
package regcmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/prm"
)

type app struct{ *cmdutil.App }

// New is `cxray reg`.
func New(a *cmdutil.App) *cobra.Command { return (&app{a}).regCmd() }

// WriteRegister is reg set's guarded read-modify-write of named fields,
// for other commands that change a register (roce set).
func WriteRegister(ctx context.Context, a *cmdutil.App, ad *adapter.Adapter, name string, idx, fields []prm.Assignment, so dev.SetOptions, yes, dryRun bool) error {
	return (&app{a}).writeRegister(ctx, ad, name, idx, fields, so, yes, dryRun)
}

// PrintReading prints a register reading as reg get does.
func PrintReading(a *cmdutil.App, ad *adapter.Adapter, r *dev.Reading, field string, raw bool) error {
	return (&app{a}).printReading(ad, r, field, raw)
}

// Package prmcmd is `cxray prm`: the register and command databases
// themselves (info, list, show, search, decode, encode, diff between
// revisions, and the cross-check against mlx5_ifc.h), no device needed.
package prmcmd

import (
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

type app struct{ *cmdutil.App }

// New is `cxray prm`.
func New(a *cmdutil.App) *cobra.Command { return (&app{a}).prmCmd() }

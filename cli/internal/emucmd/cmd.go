// Package emucmd is `cxray emu`: run a command (mstflint's tools, or cxray)
// with the emulated adapters as its /sys, serve them for other commands,
// and list or reset the emulator's kept state. It is the one command
// package that imports the emulator.
package emucmd

import (
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

type app struct{ *cmdutil.App }

// New is `cxray emu`.
func New(a *cmdutil.App) *cobra.Command { return (&app{a}).emuCmd() }

// Package fwcmd holds the commands that speak to the firmware's command
// interface rather than its registers: cxray cmd (any command by name),
// caps (HCA capabilities), esw (e-switch), nvmf (NVMe-oF target offload),
// qp and mkey (one object's context).
package fwcmd

import (
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

type app struct{ *cmdutil.App }

// NewCmd is `cxray cmd`.
func NewCmd(a *cmdutil.App) *cobra.Command { return (&app{a}).cmdCmd() }

// NewCaps is `cxray caps`.
func NewCaps(a *cmdutil.App) *cobra.Command { return (&app{a}).capsCmd() }

// NewEsw is `cxray esw`.
func NewEsw(a *cmdutil.App) *cobra.Command { return (&app{a}).eswCmd() }

// NewNvmf is `cxray nvmf`.
func NewNvmf(a *cmdutil.App) *cobra.Command { return (&app{a}).nvmfCmd() }

// NewQP is `cxray qp`.
func NewQP(a *cmdutil.App) *cobra.Command { return (&app{a}).qpCmd() }

// NewMkey is `cxray mkey`.
func NewMkey(a *cmdutil.App) *cobra.Command { return (&app{a}).mkeyCmd() }

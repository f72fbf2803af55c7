// Package snapshotcmd is `cxray snapshot` and `cxray diff`: a baseline of
// an adapter's registers written to a file, and two baselines compared.
package snapshotcmd

import (
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

type app struct{ *cmdutil.App }

// New is `cxray snapshot`.
func New(a *cmdutil.App) *cobra.Command { return (&app{a}).snapshotCmd() }

// NewDiff is `cxray diff`.
func NewDiff(a *cmdutil.App) *cobra.Command { return (&app{a}).diffCmd() }

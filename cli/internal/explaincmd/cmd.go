// Package explaincmd is `cxray explain`: say what a kernel log, a pasted
// tool output, a dump or a cxray file is, decode it, and give verdicts
// (feature/explain); --follow decodes the live kernel log.
package explaincmd

import (
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

type app struct{ *cmdutil.App }

// New is `cxray explain`.
func New(a *cmdutil.App) *cobra.Command { return (&app{a}).explainCmd() }

// Package linkcmd is `cxray link`: mlxlink's view of a port (state,
// speed, FEC, BER, troubleshooting, counters) from PDDR, PPCNT and friends.
package linkcmd

import (
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

type app struct{ *cmdutil.App }

// New is `cxray link`.
func New(a *cmdutil.App) *cobra.Command { return (&app{a}).linkCmd() }

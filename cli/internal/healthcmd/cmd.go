// Package healthcmd is `cxray health`: the health package's checks of one
// function or all of them, as a table or JSON, exit 1 when one fails.
package healthcmd

import (
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

type app struct{ *cmdutil.App }

// New is `cxray health`.
func New(a *cmdutil.App) *cobra.Command { return (&app{a}).healthCmd() }

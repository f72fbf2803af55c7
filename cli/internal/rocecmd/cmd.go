// Package rocecmd is `cxray roce`: RoCE status with the PSN window and
// congestion control, the window advice for a fabric, and guarded changes.
package rocecmd

import (
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

type app struct{ *cmdutil.App }

// New is `cxray roce`.
func New(a *cmdutil.App) *cobra.Command { return (&app{a}).roceCmd() }

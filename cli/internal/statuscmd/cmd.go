// Package statuscmd is `cxray status`: the ConnectX functions of this
// machine (or of an emulated scenario) and what each is: part, firmware,
// names, ports, backend.
package statuscmd

import (
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

type app struct{ *cmdutil.App }

// New is `cxray status`.
func New(a *cmdutil.App) *cobra.Command { return (&app{a}).statusCmd() }

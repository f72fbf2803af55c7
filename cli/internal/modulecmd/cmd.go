// Package modulecmd is `cxray module`: the optical or copper module in a
// cage (identity, diagnostics against thresholds, verdict), from the
// adapter or from an EEPROM image.
package modulecmd

import (
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

type app struct{ *cmdutil.App }

// New is `cxray module`.
func New(a *cmdutil.App) *cobra.Command { return (&app{a}).moduleCmd() }

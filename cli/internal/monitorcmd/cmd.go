// Package monitorcmd is `cxray monitor` (counters, temperatures and module
// readings sampled over time, with alerts, as a table, JSON lines or CSV);
// `cxray plot` draws what it records (package plotcmd).
package monitorcmd

import (
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

type app struct{ *cmdutil.App }

// New is `cxray monitor`.
func New(a *cmdutil.App) *cobra.Command { return (&app{a}).monitorCmd() }

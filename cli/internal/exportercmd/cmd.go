// Package exportercmd is `cxray exporter`: the exporter package's
// collectors served over HTTP for Prometheus (exporter-toolkit's TLS and
// basic authentication), for the machine's adapters, kernel names or an
// emulated fleet.
package exportercmd

import (
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

type app struct{ *cmdutil.App }

// New is `cxray exporter`.
func New(a *cmdutil.App) *cobra.Command { return (&app{a}).exporterCmd(Hooks{}, nil) }

// NewWithHooks is `cxray exporter` run the way h says (tests).
func NewWithHooks(a *cmdutil.App, h Hooks) *cobra.Command { return (&app{a}).exporterCmd(h, nil) }

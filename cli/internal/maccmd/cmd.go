// Package maccmd is `cxray mac`: the MAC addresses of a function as the
// firmware, the NV configuration and the OS see them, and where they drift.
package maccmd

import (
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

type app struct{ *cmdutil.App }

// New is `cxray mac`.
func New(a *cmdutil.App) *cobra.Command { return (&app{a}).macCmd() }

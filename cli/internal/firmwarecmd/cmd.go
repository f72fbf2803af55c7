// Package firmwarecmd is `cxray fw`: the firmware lifecycle without MFT.
// query reads an image file, an MFA2 package or an adapter; update
// installs an image through the component update registers; reset makes
// a stored image run (feature/firmware, dev/fwreset; docs/firmware.md).
package firmwarecmd

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

type app struct{ *cmdutil.App }

// New is `cxray fw`.
func New(a *cmdutil.App) *cobra.Command {
	x := &app{a}
	c := &cobra.Command{
		Use:   "fw",
		Short: "Firmware: query an image, a package or an adapter; update; reset (no MFT needed)",
		Long: `Firmware lifecycle without MFT (docs/firmware.md):

  cxray fw query FILE        what a firmware image (.bin, FS4) or MFA2 package holds
  cxray fw query -d DEV      running, stored and pending versions; components
  cxray fw update -d DEV FILE  install an image (MCC/MCDA); it runs after a reset
  cxray fw reset -d DEV      the firmware reset levels the adapter offers (MROQ/MFRL),
                             and a reset that makes the stored image run`,
	}
	c.AddCommand(x.queryCmd(), x.updateCmd(), x.resetCmd())
	return c
}

// deviceFlags adds -d, --timeout (default long: an update takes minutes on
// hardware) and --via.
func deviceFlags(c *cobra.Command, f *cmdutil.DeviceFlags, timeout time.Duration) {
	f.Add(c)
	fl := c.Flags().Lookup("timeout")
	f.Timeout = timeout
	fl.DefValue = timeout.String()
}

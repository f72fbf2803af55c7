package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/modules"
)

// moduleOptions are the flags of `cxray module`.
type moduleOptions struct {
	df       deviceFlags
	port     int
	all      bool
	raw      bool
	verify   bool
	interval time.Duration
}

func (a *app) moduleCmd() *cobra.Command {
	var o moduleOptions
	c := &cobra.Command{
		Use:   "module",
		Short: "Optical module diagnostics: identity, temperature, voltage, bias and powers per lane",
		Long: `Read the pluggable module of a port: its identity (vendor, part and serial
number, media, wavelength, power class, CMIS state and firmware) and its
diagnostics (temperature, supply voltage, and per lane Tx bias, Tx and Rx
power) with the module's own alarm and warning thresholds, latched flags and
lane signals (Tx fault, LOS, CDR loss of lock). The EEPROM is read through the
MCIA register and decoded by cxray (SFF-8472, SFF-8636, CMIS 4.0/5.x); the
firmware's decoded view (PDDR page 3, what mlxlink -m shows) is read as well.

Values near a threshold are marked ~, past a warning *, past an alarm !.

With -d kernel:NAME the EEPROM is read through the kernel (ethtool netlink,
CAP_NET_ADMIN) and decoded the same way; the kernel does not offer the
firmware's view, so --verify then only re-reads the EEPROM.

--verify compares the EEPROM with the firmware's view number by number within
each quantity's resolution, then reads both again after --interval to catch
monitors that have stopped updating. --raw adds a hex dump of every page read.

When something is wrong the command names it, says whether the module, the
firmware or cxray (a misreading) is at fault, and what to do next; it then
exits 1. Exit 3 means the device itself could not be read.`,
		Example: `  cxray module -d emu
  cxray module -d 0000:03:00.0 --all -o json
  cxray module -d mlx5_0 --port 1 --verify --raw
  cxray module -d kernel:mlx5_0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.all && cmd.Flags().Changed("port") {
				return usageErr("--port and --all exclude each other; give one")
			}
			if o.port < 1 || o.port > 255 {
				return usageErr("--port %d: ports are numbered from 1 (local port of the function)", o.port)
			}
			if o.interval <= 0 || o.interval > 10*time.Minute {
				return usageErr("--interval %v: give a duration between 1ms and 10m", o.interval)
			}
			return a.runModule(&o)
		},
	}
	o.df.add(c)
	c.Flags().IntVar(&o.port, "port", 1, "local port whose module to read (1 is the function's own port)")
	c.Flags().BoolVar(&o.all, "all", false, "read the modules of every port this function reaches")
	c.Flags().BoolVar(&o.raw, "raw", false, "add a hex dump of every EEPROM page read")
	c.Flags().BoolVar(&o.verify, "verify", false, "compare the EEPROM with the firmware's view and re-read to detect frozen monitors")
	c.Flags().DurationVar(&o.interval, "interval", 2*time.Second, "with --verify: time between the two reads")
	return c
}

func (a *app) runModule(o *moduleOptions) error {
	db, err := a.db()
	if err != nil {
		return err
	}
	timeout := o.df.timeout
	if o.verify {
		timeout += o.interval
	}
	ctx, cancel := context.WithTimeout(a.ctx, timeout)
	defer cancel()
	ad, err := a.open(ctx, o.df.name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	mo := modules.Options{Raw: o.raw, Verify: o.verify, Interval: o.interval}
	if !o.all {
		mo.Ports = []int{o.port}
	}
	reports, err := modules.Read(ctx, ad, mo)
	if err != nil {
		return classify(err)
	}
	fwVersion := ""
	if id, err := ad.Identity(ctx); err == nil {
		fwVersion = id.Firmware
	}
	total := modules.Verdicts(reports)
	if a.json() {
		if err := a.writeJSON(map[string]any{"device": o.df.name, "source_revision": db.Revision, "adapter_firmware": fwVersion,
			"modules": reports, "verdicts": total}); err != nil {
			return err
		}
	} else {
		for i, r := range reports {
			if i > 0 {
				fmt.Fprintln(a.stdout)
			}
			modules.WriteText(a.stdout, r, o.raw)
		}
	}
	if total > 0 {
		return errProblem
	}
	return nil
}

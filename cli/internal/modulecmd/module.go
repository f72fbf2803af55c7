package modulecmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/hexdump"
	"github.com/cxray/cxray/feature/modules"
)

// moduleOptions are the flags of `cxray module`.
type moduleOptions struct {
	df       cmdutil.DeviceFlags
	port     int
	all      bool
	raw      bool
	verify   bool
	interval time.Duration
	file     string
	// portGiven says --port was given (it excludes --all).
	portGiven bool
}

func (a *app) moduleCmd() *cobra.Command { return a.newModuleCmd(nil) }

// newModuleCmd wires the flags to moduleOptions; runF (tests) replaces runModuleVerb.
func (a *app) newModuleCmd(runF func(*moduleOptions, []string) error) *cobra.Command {
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

--file DUMP decodes a module dump offline, with the same decoders and
verdicts: ethtool -m DEV raw on (binary) or hex on, or any hex dump form prm
decode reads; '-' reads standard input.

When something is wrong the command names it, says whether the module, the
firmware or cxray (a misreading) is at fault, and what to do next; it then
exits 1. Exit 3 means the device itself could not be read.`,
		Example: `  cxray module -d emu
  cxray module -d 0000:03:00.0 --all -o json
  cxray module -d mlx5_0 --port 1 --verify --raw
  cxray module -d kernel:mlx5_0
  ethtool -m eth2 raw on > sfp.bin; cxray module --file sfp.bin`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			o.portGiven = cmd.Flags().Changed("port")
			return a.runModuleVerb(a.Ctx, &o)
		},
	}
	o.df.Add(c)
	c.Flags().IntVar(&o.port, "port", 1, "local port whose module to read (1 is the function's own port)")
	c.Flags().BoolVar(&o.all, "all", false, "read the modules of every port this function reaches")
	c.Flags().BoolVar(&o.raw, "raw", false, "add a hex dump of every EEPROM page read")
	c.Flags().BoolVar(&o.verify, "verify", false, "compare the EEPROM with the firmware's view and re-read to detect frozen monitors")
	c.Flags().DurationVar(&o.interval, "interval", 2*time.Second, "with --verify: time between the two reads")
	c.Flags().StringVar(&o.file, "file", "", "decode a module dump instead of a device: ethtool -m DEV raw on / hex on ('-': standard input)")
	return c
}

// runModuleVerb checks module's flags and reads the module, or decodes
// --file's dump offline.
func (a *app) runModuleVerb(ctx context.Context, o *moduleOptions) error {
	if o.all && o.portGiven {
		return cmdutil.UsageErr("--port and --all exclude each other; give one")
	}
	if o.port < 1 || o.port > 255 {
		return cmdutil.UsageErr("--port %d: ports are numbered from 1 (local port of the function)", o.port)
	}
	if o.interval <= 0 || o.interval > 10*time.Minute {
		return cmdutil.UsageErr("--interval %v: give a duration between 1ms and 10m", o.interval)
	}
	if o.file != "" {
		if o.df.Name != "" || o.verify || o.all {
			return cmdutil.UsageErr("--file decodes a dump offline; leave out -d, --verify and --all")
		}
		return a.runModuleFile(o)
	}
	return a.runModule(o)
}

func (a *app) runModule(o *moduleOptions) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	timeout := o.df.Timeout
	if o.verify {
		timeout += o.interval
	}
	ctx, cancel := context.WithTimeout(a.Ctx, timeout)
	defer cancel()
	ad, err := a.Open(ctx, o.df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	// --timeout bounds the first read; --verify's interval is added only
	// once the device answered (cmdutil.FirstRead).
	if err := cmdutil.FirstRead(ctx, ad, o.df.Timeout); err != nil {
		return err
	}
	mo := modules.Options{Raw: o.raw, Verify: o.verify, Interval: o.interval}
	if !o.all {
		mo.Ports = []int{o.port}
	}
	reports, err := modules.Read(ctx, ad, mo)
	if err != nil && ctx.Err() != nil {
		return cmdutil.Stopped(ctx, err) // a signal, or --timeout: say which
	}
	if err != nil {
		return cmdutil.Classify(err)
	}
	fwVersion := ""
	if id, err := ad.Identity(ctx); err == nil {
		fwVersion = id.Firmware
	}
	total := modules.Verdicts(reports)
	if a.JSON() {
		if err := a.WriteJSON(modules.Document{AdapterFirmware: fwVersion, Device: o.df.Name, Modules: reports,
			SourceRevision: db.Revision, Verdicts: total}); err != nil {
			return err
		}
	} else {
		for i, r := range reports {
			if i > 0 {
				fmt.Fprintln(a.Stdout)
			}
			modules.WriteText(a.Stdout, r, o.raw)
		}
	}
	if total > 0 {
		return cmdutil.ErrProblem
	}
	return nil
}

// runModuleFile decodes a module dump from a file.
func (a *app) runModuleFile(o *moduleOptions) error {
	// A hex dump of MaxBytes takes about 4 characters a byte.
	data, err := cmdutil.ReadInput(o.file, a.Stdin, 8*hexdump.MaxBytes, "a module dump")
	if err != nil {
		return err
	}
	dump, err := hexdump.ReadBytes(data)
	if err != nil {
		return cmdutil.UsageErr("--file %s: %v; give ethtool -m DEV raw on (or hex on) output", o.file, err)
	}
	// A partial dump, random bytes or a register dump get an input verdict
	// (modules.CheckDump), never one on the hardware; exit 2 after the
	// report, as for any input that cannot be judged.
	r, notes, err := modules.FromDump(dump, "file", o.raw)
	if err != nil {
		return cmdutil.UsageErr("--file %s: %v", o.file, err)
	}
	n := 0
	if dump.Bytes != nil {
		n = len(dump.Bytes)
	}
	if a.JSON() {
		if err := a.WriteJSON(modules.FileDocument{File: o.file, Format: dump.Format, Modules: []*modules.Report{r}, Notes: notes,
			Verdicts: len(r.Verdicts)}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(a.Stdout, "%s (%s, %d bytes)\n", o.file, dump.Format, n)
		for _, n := range notes {
			fmt.Fprintf(a.Stdout, "note: %s\n", n)
		}
		modules.WriteText(a.Stdout, r, o.raw)
	}
	if r.InputOnly() {
		return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: cmdutil.ErrQuiet}
	}
	if len(r.Verdicts) > 0 {
		return cmdutil.ErrProblem
	}
	return nil
}

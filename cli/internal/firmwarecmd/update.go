package firmwarecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/firmware"
)

type updateOptions struct {
	df                   cmdutil.DeviceFlags
	file                 string
	yes, dryRun          bool
	allowDowngrade       bool
	forceRelease, resend bool
}

func (a *app) updateCmd() *cobra.Command { return a.newUpdateCmd(nil) }

// newUpdateCmd wires the flags to updateOptions; runF (tests) replaces runUpdate.
func (a *app) newUpdateCmd(runF func(*updateOptions, []string) error) *cobra.Command {
	var o updateOptions
	c := &cobra.Command{
		Use:   "update -d DEV FILE",
		Short: "Install a firmware image (or an MFA2 package's image for the adapter) through MCC/MCDA",
		Long: `Install FILE (an FS4 image, or the image an MFA2 package carries for this
adapter's PSID) as the kernel's mlxfw does: lock the update handle (MCC), write
the image in blocks (MCDA), verify and activate it, release the handle. The
running firmware is not touched: the image is stored and runs after a firmware
reset ('cxray fw reset'); 'cxray status' and 'cxray fw query -d' show it pending.

Refused before anything is written (exit 2): a file that is cut short or
damaged, an image for another PSID or hardware, an older version without
--allow-downgrade. The adapter's own checks (signature, format) fail with a
clear message and exit 3, as does a handle another tool holds (--force-release
takes it over when that tool died). Ctrl-C, a signal or --timeout cancels the
update and releases the handle; the flash keeps the image it had.

--via chooses the path: mcc (the registers, as above), devlink (the mlx5
driver runs the same flow from the file: 'devlink dev flash'; a plain image is
wrapped in an MFA2 package, which the driver needs, and staged in
/lib/firmware/cxray/ for the length of the update), or auto (the default:
devlink where the mlx5 driver is bound to the adapter, else mcc). On the
devlink path a stop only stops the wait: the kernel finishes the update.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			o.file = args[0]
			return a.runUpdate(a.Ctx, &o)
		},
	}
	deviceFlags(c, &o.df, 10*time.Minute)
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask for confirmation")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "check the image against the adapter and say what would happen; write nothing")
	c.Flags().BoolVar(&o.allowDowngrade, "allow-downgrade", false, "install an image older than the running firmware")
	c.Flags().BoolVar(&o.forceRelease, "force-release", false, "take the update handle from a tool that holds it (one that died mid-update)")
	c.Flags().BoolVar(&o.resend, "force", false, "install even when the image is the version already running and stored")
	cmdutil.ExtendVia(c, "update path: devlink (the driver's 'devlink dev flash'), mcc (the registers), auto (devlink where the mlx5 driver is bound, else the registers), or the register path: vsec, fwctl")
	return c
}

type updateResult struct {
	*firmware.Plan
	DryRun  bool   `json:"dry_run"`
	Skipped bool   `json:"skipped"`
	Pending string `json:"pending,omitempty"`
}

func (a *app) runUpdate(ctx context.Context, o *updateOptions) error {
	if o.df.Name == "" {
		return cmdutil.UsageErr("add -d DEV: the adapter to update ('cxray status' lists them)")
	}
	path, err := fwPath(o.df.Via)
	if err != nil {
		return err
	}
	f, err := readFile(a, o.file)
	if err != nil {
		return err
	}
	ctx, cancel := o.df.Context(ctx)
	defer cancel()
	db, err := a.DB()
	if err != nil {
		return err
	}
	ad, err := a.Open(ctx, o.df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	via, err := firmware.ChooseVia(ctx, ad, path)
	if err != nil {
		if ctx.Err() != nil {
			return cmdutil.Stopped(ctx, err)
		}
		return cmdutil.DeviceErr(err)
	}
	prepare := firmware.Prepare
	if via == firmware.ViaDevlink {
		prepare = firmware.PrepareDevlink
	}
	plan, err := prepare(ctx, ad, f, firmware.Options{AllowDowngrade: o.allowDowngrade})
	if err != nil {
		if ctx.Err() != nil {
			return cmdutil.Stopped(ctx, err)
		}
		return cmdutil.Classify(err)
	}
	res := &updateResult{Plan: plan, DryRun: o.dryRun}
	if !a.JSON() {
		fmt.Fprintf(a.Stdout, "Device:   %s (PSID %s)\nRunning:  %s\n", plan.Device, plan.PSID, plan.From)
		if plan.Stored != "" && plan.Stored != plan.From {
			fmt.Fprintf(a.Stdout, "Stored:   %s (pending a reset; the update replaces it)\n", plan.Stored)
		}
		what := ""
		if plan.Downgrade {
			what = " (a downgrade)"
		}
		fmt.Fprintf(a.Stdout, "Image:    %s%s, %d bytes\n", plan.To, what, plan.Size)
	}
	if plan.Same && !o.resend {
		res.Skipped = true
		if a.JSON() {
			return a.WriteJSON(res)
		}
		fmt.Fprintln(a.Stdout, "The adapter runs and stores this version already; nothing to do (--force installs it again).")
		return nil
	}
	if plan.Busy != "" && !o.forceRelease {
		return cmdutil.DeviceErr(&firmware.BusyError{Who: plan.Busy})
	}
	if o.dryRun {
		if a.JSON() {
			return a.WriteJSON(res)
		}
		fmt.Fprintln(a.Stdout, "Dry run: the image fits this adapter; nothing written. The update would store it; it runs after 'cxray fw reset'.")
		return nil
	}
	if err := a.Ask(o.yes, fmt.Sprintf("Install firmware %s on %s (it runs after a firmware reset)?", plan.To, plan.Device), "nothing written"); err != nil {
		return err
	}
	bar := newBar(a.Stderr)
	if via == firmware.ViaDevlink {
		err = firmware.UpdateDevlink(ctx, ad, plan, firmware.Options{Progress: bar.update})
		bar.done()
		switch {
		case err != nil && ctx.Err() != nil:
			return cmdutil.Stopped(ctx, fmt.Errorf("stopped waiting for devlink; the kernel finishes the update it started ('cxray fw query -d %s' shows the result): %w", plan.Device, err))
		case err != nil:
			return cmdutil.DeviceErr(fmt.Errorf("devlink refused the update; the driver released its handle and the flash keeps its image: %w", err))
		}
		return a.updated(res, plan)
	}
	err = firmware.Update(ctx, ad, plan, firmware.Options{ForceRelease: o.forceRelease, Progress: bar.update})
	bar.done()
	if err != nil {
		var be *firmware.BusyError
		switch {
		case errors.As(err, &be):
			return cmdutil.DeviceErr(err)
		case ctx.Err() != nil:
			return cmdutil.Stopped(ctx, fmt.Errorf("update cancelled; the handle was released and the flash keeps its image: %w", err))
		}
		return cmdutil.DeviceErr(fmt.Errorf("update failed; the handle was released and the flash keeps its image: %w", err))
	}
	return a.updated(res, plan)
}

func (a *app) updated(res *updateResult, plan *firmware.Plan) error {
	res.Pending = plan.To
	if a.JSON() {
		return a.WriteJSON(res)
	}
	fmt.Fprintf(a.Stdout, "Stored:   %s; it runs after a firmware reset ('cxray fw reset -d %s') or a reboot.\n", plan.To, plan.Device)
	return nil
}

// bar draws the progress on standard error when it is a terminal, and
// nothing otherwise (logs and pipes get no control characters).
type bar struct {
	w     io.Writer
	on    bool
	last  string
	shown bool
}

func newBar(w io.Writer) *bar {
	f, ok := w.(*os.File)
	return &bar{w: w, on: ok && cmdutil.IsTerminal(f)}
}

func (b *bar) update(phase string, done, total int) {
	if !b.on {
		return
	}
	pct := 100
	if total > 0 {
		pct = done * 100 / total
	}
	const width = 30
	fill := pct * width / 100
	line := fmt.Sprintf("\r%-8s [%-*s] %3d%%", phase, width, string(repeat('#', fill)), pct)
	if line == b.last {
		return
	}
	b.last, b.shown = line, true
	fmt.Fprint(b.w, line)
}

func (b *bar) done() {
	if b.shown {
		fmt.Fprintln(b.w)
	}
}

func repeat(c byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = c
	}
	return out
}

// fwPath reads the firmware commands' --via: devlink, mcc, auto, or an
// access path (vsec, fwctl), which means the registers by that path.
func fwPath(v string) (string, error) {
	switch v {
	case "", firmware.ViaAuto:
		return firmware.ViaAuto, nil
	case firmware.ViaDevlink, firmware.ViaMCC:
		return v, nil
	case "vsec", "fwctl":
		return firmware.ViaMCC, nil
	}
	return "", cmdutil.UsageErr("--via %q: use devlink (the driver), mcc (the registers), auto (devlink where the mlx5 driver is bound), or a register path: vsec, fwctl", v)
}

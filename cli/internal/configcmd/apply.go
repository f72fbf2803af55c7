package configcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/cxray/cxray/cli/internal/cmdutil"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/nvconf"
)

type configApplyOptions struct {
	df                    cmdutil.DeviceFlags
	yes, dryRun, atReboot bool
}

func (cc *configCtx) applyCmd() *cobra.Command { return cc.newApplyCmd(nil) }

// newApplyCmd wires the flags to configApplyOptions; runF (tests) replaces runApply.
func (cc *configCtx) newApplyCmd(runF func(*configApplyOptions, []string) error) *cobra.Command {
	var o configApplyOptions
	c := &cobra.Command{
		Use:   "apply",
		Short: "Apply Next Boot now with a firmware reset (MFRL), or arm it for the next reboot",
		Long: `Ask the firmware to reset (MFRL) so the Next Boot values become Current without
rebooting the host, where the firmware allows it. The reset interrupts the
adapter's traffic; the driver must tolerate it. With --at-reboot the reset is
armed for the next PERST (host reboot) instead, as mstconfig does after set.

Afterwards cxray reads Current back and says what took effect and what is still
pending (on hardware a link-toggle reset happens when the PCIe link toggles:
mstfwreset or a reboot).`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return cc.runApply(cc.a.Ctx, &o)
		},
	}
	o.df.Add(c)
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask for confirmation (mlxconfig's -y)")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "say what would be applied and which reset would be sent; send nothing")
	c.Flags().BoolVar(&o.atReboot, "at-reboot", false, "arm the reset for the next host reboot (PERST) instead of now")
	return c
}

// applyDoc is apply -o json (docs/config.md).
type applyDoc struct {
	Device        string   `json:"device"`
	Trigger       string   `json:"trigger"`
	Pending       []string `json:"pending_before"`
	Applied       []string `json:"applied"`
	StillPending  []string `json:"still_pending"`
	ArmedAtReboot bool     `json:"armed_for_reboot"`
	DryRun        bool     `json:"dry_run"`
}

func (cc *configCtx) runApply(ctx context.Context, o *configApplyOptions) error {
	a := cc.a
	ctx, cancel := o.df.Context(ctx)
	defer cancel()
	t, err := cc.openWrite(ctx, o.df)
	if err != nil {
		return err
	}
	defer t.Close()
	plan, err := t.s.PlanApply(ctx, o.atReboot)
	if err != nil {
		return cmdutil.Classify(err)
	}
	out := applyDoc{Device: t.ad.Name(), Trigger: plan.TriggerName(), Pending: nonNilStr(plan.Pending), Applied: []string{}, StillPending: []string{}, DryRun: o.dryRun}
	if plan.Nothing() {
		if a.JSON() {
			return a.WriteJSON(out)
		}
		fmt.Fprintln(a.Stdout, "Nothing pending: Current already equals Next Boot; no reset sent.")
		return nil
	}
	if !a.JSON() {
		if len(plan.Pending) > 0 {
			fmt.Fprintf(a.Stdout, "Pending: %s\n", strings.Join(plan.Pending, ", "))
		}
		fmt.Fprintf(a.Stdout, "Firmware reset: %s (MFRL reset_trigger 0x%02x)\n", plan.TriggerName(), plan.Trigger)
	}
	if o.dryRun {
		if a.JSON() {
			return a.WriteJSON(out)
		}
		fmt.Fprintln(a.Stdout, "Dry run: no reset sent.")
		return nil
	}
	q := fmt.Sprintf("Reset the firmware of %s now (traffic stops for a moment)?", t.ad.Name())
	if plan.Trigger == nvconf.TriggerPERST {
		q = fmt.Sprintf("Arm a firmware reset of %s for the next reboot?", t.ad.Name())
	}
	if err := a.Ask(o.yes, q, "no reset sent"); err != nil {
		return err
	}
	res, err := t.s.Apply(ctx, plan)
	if err != nil {
		return cmdutil.Classify(err)
	}
	out.Applied, out.StillPending, out.ArmedAtReboot = res.Applied, res.StillPending, res.ArmedAtReboot
	if a.JSON() {
		return a.WriteJSON(out)
	}
	switch {
	case res.ArmedAtReboot:
		fmt.Fprintln(a.Stdout, "Armed: the firmware resets at the next reboot (PERST) and then uses the Next Boot values.")
	case !res.ReadCurrent:
		fmt.Fprintln(a.Stdout, "Reset requested. This firmware cannot report Current values (MNVGC), so cxray cannot tell whether it has happened; a reboot makes sure.")
	case len(res.StillPending) == 0:
		fmt.Fprintf(a.Stdout, "Applied: Current now equals Next Boot (%d parameter(s) took effect).\n", len(res.Applied))
	default:
		fmt.Fprintf(a.Stdout, "The reset is armed but has not happened: still pending %s. It happens at the next PCIe link toggle (mstfwreset -d %s reset) or reboot.\n",
			strings.Join(res.StillPending, ", "), t.ad.Name())
	}
	return nil
}

package linkcmd

import (
	"context"
	"fmt"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/linkctl"
	"github.com/cxray/cxray/feature/linkeye"
)

// runMargin is --margin: plan the scan (exit 2 on what the port or the
// database cannot do), show it, ask, then scan lane by lane in real time;
// the command's deadline is --timeout plus the scan's estimate.
func (a *app) runMargin(o *linkOptions) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(a.Ctx, o.df.Timeout)
	defer cancel()
	ad, err := a.Open(ctx, o.df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	p, err := linkeye.PlanMargin(ctx, ad, o.port, linkeye.MarginOptions{Lanes: o.eye.lanes, MeasureTime: o.eye.measureTime, Eye: o.eye.eyeSelect})
	if err != nil {
		return cmdutil.Classify(err)
	}
	if o.change.dryRun {
		if a.JSON() {
			est := int(p.Estimate() / time.Second)
			return a.WriteJSON(dryRunDoc{Device: ad.Name(), DryRun: true, WouldWrite: p.Writes(), EstimateS: &est})
		}
		for _, w := range p.Writes() {
			fmt.Fprintf(a.Stdout, "would write %s\n", w)
		}
		fmt.Fprintf(a.Stdout, "dry run: nothing written (the scan would take up to %s)\n", p.Estimate())
		return nil
	}
	if err := a.guardManagement(ctx, ad, o); err != nil {
		return err
	}
	fmt.Fprintf(a.Stderr, "A margin scan of port %d, %d lane(s) x %d eye(s), %d s each: up to %s. The PRM asks for a non-destructive scan (destructive_ctrl 0); where the firmware cannot, the link may retrain.\n",
		o.port, len(p.Lanes), max(len(p.Eyes), 1), p.Seconds, p.Estimate())
	if err := a.Ask(o.yes, fmt.Sprintf("Scan the eye margins of port %d on %s?", o.port, ad.Name()), "nothing scanned"); err != nil {
		return err
	}
	sctx, scancel := context.WithTimeout(a.Ctx, o.df.Timeout+p.Estimate())
	defer scancel()
	r, err := linkeye.Scan(sctx, ad, p, func(lane int, eye string, wait time.Duration) {
		fmt.Fprintf(a.Stderr, "lane %d %s: scanning for %s\n", lane, eye, wait)
	})
	if err != nil {
		if sctx.Err() != nil {
			return cmdutil.Stopped(sctx, err)
		}
		return cmdutil.Classify(err)
	}
	if a.JSON() {
		err = a.WriteJSON(linkeye.MarginDocument{Device: o.df.Name, Margin: r})
	} else {
		linkeye.WriteMarginText(a.Stdout, r)
	}
	if err != nil {
		return err
	}
	if len(r.Verdicts) > 0 {
		return cmdutil.ErrProblem
	}
	return nil
}

// guardManagement refuses a scan on an adapter that carries the host's
// management interface unless --force, as a change does.
func (a *app) guardManagement(ctx context.Context, ad *adapter.Adapter, o *linkOptions) error {
	if o.change.force {
		return nil
	}
	p, iface, err := linkctl.ManagementPort(ctx, ad, managementInterfaces())
	if err != nil {
		return cmdutil.Classify(err)
	}
	if iface != "" {
		return cmdutil.UsageErr("%s port %d carries %s, an interface this host is managed through (a default route or your SSH session): a margin scan may retrain the link; nothing was scanned; give --force if you have another way in", ad.Name(), p, iface)
	}
	return nil
}

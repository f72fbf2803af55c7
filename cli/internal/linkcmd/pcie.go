package linkcmd

import (
	"context"
	"time"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/pcielink"
)

// pcieInterval is how long `link --pcie` watches the error counters when
// --interval is not given: long enough to see a steady error rate.
const pcieInterval = time.Second

// runPCIe is `cxray link --pcie`.
func (a *app) runPCIe(o *linkOptions, intervalGiven bool) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	interval := o.interval
	if !intervalGiven {
		interval = pcieInterval
	}
	ctx, cancel := context.WithTimeout(a.Ctx, o.df.Timeout+interval)
	defer cancel()
	ad, err := a.Open(ctx, o.df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	rep, err := pcielink.Read(ctx, ad, pcielink.Options{Interval: interval})
	if err != nil {
		return cmdutil.Classify(err)
	}
	if a.JSON() {
		if err := a.WriteJSON(pcielink.Document{Device: o.df.Name, Backend: string(ad.Backend()), SourceRevision: db.Revision,
			Thresholds: pcielink.Thresholds{}, PCIe: rep, Verdicts: pcielink.Problems(rep)}); err != nil {
			return err
		}
	} else {
		pcielink.WriteText(a.Stdout, rep)
	}
	if pcielink.Problems(rep) > 0 {
		return cmdutil.ErrProblem
	}
	return nil
}

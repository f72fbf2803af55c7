package linkcmd

import (
	"context"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/feature/linkflap"
)

// readLinkDowns reads each report's link-down evidence and adds its verdict
// to the report, so that the exit code counts it.
func readLinkDowns(ctx context.Context, ad *adapter.Adapter, reports []*link.Report) ([]*linkflap.Evidence, error) {
	out := make([]*linkflap.Evidence, 0, len(reports))
	for _, r := range reports {
		ev, err := linkflap.Read(ctx, ad, r)
		if err != nil {
			return nil, err
		}
		if ev.Verdict != nil {
			r.Verdicts = append(r.Verdicts, *ev.Verdict)
		}
		out = append(out, ev)
	}
	return out, nil
}

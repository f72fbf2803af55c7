package health

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/feature/pcielink"
)

// pcieCheck judges the function's PCIe link (package pcielink) from two
// readings around the counters' interval: a link narrower or slower than
// the card can train, one that cannot feed the port, and uncorrectable
// errors warn; a fatal error fails; correctable errors warn when they
// grow while health watches.
func pcieCheck(info pcielink.Info, before, after *adapter.PCIe, interval time.Duration) (Check, *pcielink.Report) {
	c := Check{Name: "pcie", Status: OK}
	if after == nil {
		c.Status, c.Summary = Warn, "the PCIe link could not be read"
		return c, nil
	}
	rep := pcielink.Build(info, before, after, interval, pcielink.Thresholds{})
	if !rep.Current.Known() {
		// Nothing gave the link: a backend without any source is skipped,
		// a source that failed is a warning.
		all := true
		for _, e := range []error{after.ConfigErr, after.HostErr, after.FirmwareErr} {
			if e != nil && !errors.Is(e, adapter.ErrUnsupported) && !errors.Is(e, dev.ErrNotSupported) {
				all = false
			}
		}
		if all {
			c.Status, c.Summary = Skip, "not available on this backend: no source of the PCIe link"
			return c, rep
		}
	}
	for _, v := range rep.Verdicts {
		s := Warn
		if v.Severity == "fail" {
			s = Fail
		}
		if s.rank() > c.Status.rank() || c.Next == "" {
			c.Next = v.NextStep
		}
		c.Status = worse(c.Status, s)
		c.Details = append(c.Details, fmt.Sprintf("[%s] %s", v.Category, v.Summary))
	}
	for _, u := range rep.Unavailable {
		if !strings.Contains(u.Why, "not available on the") {
			c.Details = append(c.Details, fmt.Sprintf("%s not read: %s", u.What, u.Why))
		}
	}
	switch {
	case rep.Text == "":
		c.Summary = "the PCIe link could not be read"
	case len(rep.Verdicts) == 0:
		c.Summary = rep.Text + ", no error while watched"
		if n := rep.Errors.Counts["correctable"]; n > 0 {
			c.Summary += fmt.Sprintf(" (%d correctable AER errors counted since the driver probed it)", n)
		}
	default:
		c.Summary = fmt.Sprintf("%s: %d problem(s)", rep.Text, len(rep.Verdicts))
	}
	if c.Next != "" {
		c.Next += " ('cxray link --pcie' shows the details)"
	}
	return c, rep
}

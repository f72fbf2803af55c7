package health

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/feature/driverhealth"
)

// driverCheck judges what the kernel driver says of the function (package
// driverhealth) from two readings around the counters' interval: a
// reporter in error or a firmware syndrome fails; reporter errors,
// discards, PCIe stalls and wire errors growing while watched warn; pause
// frames are shown, not judged (flow control at work).
func driverCheck(before, after *adapter.Driver, errBefore error, interval time.Duration) (Check, *driverhealth.Report) {
	c := Check{Name: "driver", Status: OK}
	if after == nil || before == nil {
		err := errBefore
		if errors.Is(err, adapter.ErrUnsupported) {
			return noDriver(c, err), nil
		}
		c.Status, c.Summary = Warn, "the kernel driver's health could not be read"
		if err != nil {
			c.Summary += ": " + err.Error()
		}
		return c, nil
	}
	rep := driverhealth.Build(before, after, interval)
	if after.ReportersErr != nil && after.StatsErr != nil {
		c.Status = Skip
		c.Summary = "not available: devlink health: " + after.ReportersErr.Error() + "; driver statistics: " + after.StatsErr.Error()
		return c, rep
	}
	for _, f := range rep.Findings {
		s := Warn
		if f.Severity == "fail" {
			s = Fail
		}
		if s.rank() > c.Status.rank() || c.Next == "" {
			c.Next = f.NextStep
		}
		c.Status = worse(c.Status, s)
		c.Details = append(c.Details, f.Summary)
	}
	if p := driverhealth.Pausing(rep); len(p) > 0 {
		c.Details = append(c.Details, "pause frames (flow control, not an error): "+strings.Join(p, ", "))
	}
	for _, u := range rep.Unavailable {
		c.Details = append(c.Details, "not read: "+u)
	}
	healthy := 0
	for _, r := range rep.Reporters {
		if r.State == "healthy" {
			healthy++
		}
	}
	switch {
	case len(rep.Findings) == 0:
		c.Summary = fmt.Sprintf("%d of %d devlink health reporters healthy; no discard or PCIe stall while watched", healthy, len(rep.Reporters))
	default:
		c.Summary = fmt.Sprintf("%d problem(s) the driver reports", len(rep.Findings))
	}
	return c, rep
}

// noDriver is the line of a function with no kernel driver to ask: said
// once, with what would give the reading (the generic "not available on
// this backend: ... is not available on the X backend" said it twice).
func noDriver(c Check, err error) Check {
	var ue *adapter.UnsupportedError
	if !errors.As(err, &ue) {
		return unsupported(c, err)
	}
	c.Status = Skip
	if ue.Backend == dev.BackendEmulator {
		c.Summary = "the emulator has no kernel driver: devlink health and driver statistics need a host where mlx5_core drives the adapter"
		c.Next = "run 'cxray health -d BDF' (or -d kernel:NAME) on the host whose kernel drives the adapter"
		return c
	}
	c.Summary = fmt.Sprintf("no kernel driver drives this function (%s backend): devlink health and driver statistics need mlx5_core bound to it", ue.Backend)
	c.Next = "bind mlx5_core to the function (or run on the host where it is bound) and run health again"
	return c
}

package adapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/cxray/cxray/kernel"
)

// Driver is what the kernel driver (mlx5_core) says of the function's
// health: its devlink health reporters and its interfaces' driver
// statistics (ethtool -S). A part that could not be read has its reason.
type Driver struct {
	Reporters    []kernel.HealthReporter `json:"health_reporters"`
	ReportersErr error                   `json:"-"`
	// Stats are each uplink interface's driver statistics, by name.
	Stats    map[string]map[string]uint64 `json:"driver_stats"`
	StatsErr error                        `json:"-"`
}

// Driver reads the kernel driver's health of the function: devlink
// health reporters (with the device reporters' diagnose when asked: it
// needs CAP_NET_ADMIN, and a refusal is kept per reporter) and the
// driver statistics of its uplink interfaces. It needs the kernel's view
// of the function (direct access or the kernel backend on a host); the
// emulator has no kernel driver. Only a dead context fails the call.
func (a *Adapter) Driver(ctx context.Context, diagnose bool) (*Driver, error) {
	k := a.c.Kernel
	if k == nil {
		return nil, &UnsupportedError{What: "the kernel driver's health (devlink health, ethtool -S)", Backend: a.c.Backend,
			Why: "no kernel driver drives this function here"}
	}
	d := &Driver{Stats: map[string]map[string]uint64{}}
	d.Reporters, d.ReportersErr = k.HealthReporters(ctx, diagnose)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	os, err := a.OS(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		d.StatsErr = err
		return d, nil
	}
	var errs []error
	for _, n := range os.Netdevs {
		if n.Representor {
			continue
		}
		s, err := k.DriverStats(ctx, n.Name)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			errs = append(errs, fmt.Errorf("%s: %w", n.Name, err))
			continue
		}
		d.Stats[n.Name] = s
	}
	d.StatsErr = errors.Join(errs...)
	if len(os.Netdevs) == 0 && d.StatsErr == nil {
		d.StatsErr = errors.New("the function has no network interface")
	}
	return d, nil
}

package monitor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/feature/driverhealth"
	"github.com/cxray/cxray/feature/pcielink"
)

// pcieCollector reads the function's PCIe link through the same reader as
// `cxray link --pcie` (one reading: rates come from the alerts' rate()):
// the link trained and capable, the slot's port, whether it runs below
// the card, the AER totals, the Device Status bits, MPCNT's counters.
type pcieCollector struct{}

func (pcieCollector) Name() string { return "pcie" }

func (pcieCollector) Moves(string) bool { return false }

func (pcieCollector) Collect(ctx context.Context, a *adapter.Adapter, out map[string]float64) []string {
	p, err := a.PCIe(ctx)
	if err != nil {
		return []string{"pcie: " + err.Error()}
	}
	r := pcielink.Build(pcielink.Info{}, p, nil, 0, pcielink.Thresholds{})
	var errs []string
	if !r.Current.Known() {
		errs = append(errs, "pcie: the link could not be read")
	}
	put := func(key string, v float64, ok bool) {
		if ok {
			out["pcie."+key] = v
		}
	}
	put("speed_gts", r.Current.Speed.GTs(), r.Current.Speed.Known())
	put("width", float64(r.Current.Width), r.Current.Width > 0)
	put("max_speed_gts", r.Capable.Speed.GTs(), r.Capable.Speed.Known())
	put("max_width", float64(r.Capable.Width), r.Capable.Width > 0)
	put("slot_speed_gts", r.Slot.Speed.GTs(), r.Slot.Speed.Known())
	put("slot_width", float64(r.Slot.Width), r.Slot.Width > 0)
	put("gbps", r.CurrentGbps, r.Current.Known())
	put("degraded", b2f(r.Current.Speed < r.Capable.Speed || r.Current.Width < r.Capable.Width), r.Current.Known() && r.Capable.Known())
	for _, k := range []string{"correctable", "nonfatal", "fatal"} {
		v, ok := r.Errors.Counts[k]
		put("aer_"+k, float64(v), ok)
	}
	if p.Config != nil && p.Config.Express != nil {
		put("device_status", float64(p.Config.Express.DeviceStatus), true)
	} else if p.Firmware != nil {
		put("device_status", float64(p.Firmware.DeviceStatus), true)
	}
	for n, v := range r.Errors.MPCNT {
		put("mpcnt_"+n, float64(v), true)
	}
	out["pcie.verdicts"] = float64(len(r.Verdicts))
	for _, u := range r.Unavailable {
		if !strings.Contains(u.Why, "not available on the") {
			errs = append(errs, fmt.Sprintf("pcie: %s not read (%s)", u.What, u.Why))
		}
	}
	return errs
}

// driverCollector reads what the kernel driver says: each devlink health
// reporter's state, errors and recoveries, and the watched driver
// statistics (discards, pause, PCIe stalls: package driverhealth) of each
// interface. Only functions the kernel drives have it.
type driverCollector struct{}

func (driverCollector) Name() string { return "driver" }

func (driverCollector) Moves(string) bool { return false }

func (driverCollector) Collect(ctx context.Context, a *adapter.Adapter, out map[string]float64) []string {
	d, err := a.Driver(ctx, false)
	if err != nil {
		if errors.Is(err, adapter.ErrUnsupported) {
			return []string{"driver: " + err.Error()}
		}
		return []string{"driver: " + err.Error()}
	}
	r := driverhealth.Build(d, nil, 0)
	for _, rep := range r.Reporters {
		name := rep.Name
		if rep.Port != nil {
			name = fmt.Sprintf("%s_port%d", rep.Name, *rep.Port)
		}
		pfx := "driver.reporter." + name + "."
		out[pfx+"healthy"] = b2f(rep.State == "healthy")
		out[pfx+"errors"] = float64(rep.Errors)
		out[pfx+"recoveries"] = float64(rep.Recoveries)
	}
	for k, v := range r.Stats {
		out["driver."+k] = float64(v)
	}
	var errs []string
	for _, u := range r.Unavailable {
		errs = append(errs, "driver: "+u)
	}
	return errs
}

// pcieKeys are the keys the pcie group may write.
var pcieKeys = []string{"speed_gts", "width", "max_speed_gts", "max_width", "slot_speed_gts", "slot_width", "gbps", "degraded",
	"aer_correctable", "aer_nonfatal", "aer_fatal", "device_status", "verdicts",
	"mpcnt_rx_errors", "mpcnt_tx_errors", "mpcnt_crc_error_dllp", "mpcnt_crc_error_tlp", "mpcnt_outbound_stalled_reads",
	"mpcnt_outbound_stalled_writes", "mpcnt_outbound_stalled_reads_events", "mpcnt_outbound_stalled_writes_events"}

func (pcieCollector) possibleKeys(context.Context, *adapter.Adapter) []string {
	out := make([]string, len(pcieKeys))
	for i, k := range pcieKeys {
		out[i] = "pcie." + k
	}
	return out
}

package exporter

import (
	"context"
	"errors"
	"fmt"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/feature/driverhealth"
	"github.com/cxray/cxray/feature/pcielink"
)

// The pcie and driver collectors: the function's PCIe link to the host
// (package pcielink: config space, sysfs, MPEIN and MPCNT, with the
// slot's port) and what the kernel driver says of the function's health
// (package driverhealth: devlink health reporters, driver statistics).
// Rates (AER errors per second, discards) are Prometheus' rate().

// PCIeSource is a Source that reads the PCIe link and the driver's
// health. Sources made by FromAdapter and Lazy are; others are left out
// of the two collectors.
type PCIeSource interface {
	PCIe(ctx context.Context) (*adapter.PCIe, error)
	Driver(ctx context.Context, diagnose bool) (*adapter.Driver, error)
}

// PCIe reads through the opened source, when it reads the link.
func (l *lazySource) PCIe(ctx context.Context) (*adapter.PCIe, error) {
	src, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	ps, ok := src.(PCIeSource)
	if !ok {
		return nil, &adapter.UnsupportedError{What: "the PCIe link", Backend: dev.Backend(src.Backend()), Why: "the source reads no PCIe link"}
	}
	return ps.PCIe(ctx)
}

// Driver reads through the opened source, when it reads the driver.
func (l *lazySource) Driver(ctx context.Context, diagnose bool) (*adapter.Driver, error) {
	src, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	ps, ok := src.(PCIeSource)
	if !ok {
		return nil, &adapter.UnsupportedError{What: "the kernel driver's health", Backend: dev.Backend(src.Backend()), Why: "the source reads no driver"}
	}
	return ps.Driver(ctx, diagnose)
}

var (
	famPCIeSpeed = gauge("cxray_pcie_link_speed_gts",
		"The PCIe link's transfer rate per lane in GT/s: trained (state=\"current\"), what the card can train (\"capable\"), what the slot's port can (\"slot\").",
		"device", "state")
	famPCIeWidth = gauge("cxray_pcie_link_width",
		"The PCIe link's lanes: trained (state=\"current\"), what the card can train (\"capable\"), what the slot's port can (\"slot\").",
		"device", "state")
	famPCIeBandwidth = gauge("cxray_pcie_link_bandwidth_gbps",
		"What the trained PCIe link carries per direction after line encoding, in Gb/s (as the kernel's 'available PCIe bandwidth').",
		"device")
	famPCIeDegraded = gauge("cxray_pcie_link_degraded",
		"1 when the PCIe link trained narrower or slower than the card can, 0 otherwise.",
		"device")
	famPCIeAER = counter("cxray_pcie_aer_errors_total",
		"AER errors the kernel counted on the function since it was probed (aer_dev_correctable, _nonfatal, _fatal), by severity.",
		"device", "severity")
	famPCIeDevStatus = gauge("cxray_pcie_device_status",
		"The PCI Express Device Status error bits set now (1) or not (0), by bit: CorrErr, NonFatalErr, FatalErr, UnsupReq.",
		"device", "bit")
	famPCIeMPCNT = counter("cxray_pcie_mpcnt_total",
		"The firmware's PCIe counters (MPCNT group 0): rx_errors and tx_errors count link recoveries, crc_error_dllp and crc_error_tlp bad packets.",
		"device", "counter")
	famPCIeVerdicts = gauge("cxray_pcie_verdicts",
		"Problems 'cxray link --pcie' finds on one reading, by category (slot, card or riser, link training, configuration, bandwidth, link errors).",
		"device", "category")

	famDriverReporterHealthy = gauge("cxray_driver_health_reporter_healthy",
		"1 when the devlink health reporter is healthy, 0 when it is in error (the driver did not recover).",
		"device", "reporter")
	famDriverReporterErrors = counter("cxray_driver_health_reporter_errors_total",
		"Errors the devlink health reporter reported since the driver registered it.",
		"device", "reporter")
	famDriverReporterRecoveries = counter("cxray_driver_health_reporter_recoveries_total",
		"Recoveries the devlink health reporter made since the driver registered it.",
		"device", "reporter")
	famDriverStat = counter("cxray_driver_stat_total",
		"Driver statistics (ethtool -S) that say where packets were lost or slowed: discards, out of buffer, pause frames, PCIe signal integrity and stalls, wire errors.",
		"device", "netdev", "stat", "kind")
)

// pcieCounters are MPCNT's counts (not the percentages).
var pcieCounters = []string{"rx_errors", "tx_errors", "crc_error_dllp", "crc_error_tlp", "outbound_stalled_reads_events", "outbound_stalled_writes_events"}

func collectPCIe(ctx context.Context, s *sink, src Source) error {
	ps, ok := src.(PCIeSource)
	if !ok {
		return &adapter.UnsupportedError{What: "the PCIe link", Why: "the source reads no PCIe link"}
	}
	p, err := ps.PCIe(ctx)
	if err != nil {
		return err
	}
	ls, _ := src.Links(ctx)
	r := pcielink.Build(pcielink.Info{PortGbps: pcielink.NeedOf(ls)}, p, nil, 0, pcielink.Thresholds{})
	if !r.Current.Known() {
		return fmt.Errorf("the PCIe link could not be read from any source")
	}
	for state, l := range map[string]struct {
		gts   float64
		width int
	}{"current": {r.Current.Speed.GTs(), r.Current.Width}, "capable": {r.Capable.Speed.GTs(), r.Capable.Width}, "slot": {r.Slot.Speed.GTs(), r.Slot.Width}} {
		if l.gts > 0 {
			s.add(famPCIeSpeed, l.gts, state)
		}
		if l.width > 0 {
			s.add(famPCIeWidth, float64(l.width), state)
		}
	}
	s.add(famPCIeBandwidth, r.CurrentGbps)
	if r.Capable.Known() {
		s.add(famPCIeDegraded, boolf(r.Current.Speed < r.Capable.Speed || r.Current.Width < r.Capable.Width))
	}
	for _, sev := range []string{"correctable", "nonfatal", "fatal"} {
		if v, ok := r.Errors.Counts[sev]; ok {
			s.add(famPCIeAER, float64(v), sev)
		}
	}
	var ds *uint16
	switch {
	case p.Config != nil && p.Config.Express != nil:
		ds = &p.Config.Express.DeviceStatus
	case p.Firmware != nil:
		ds = &p.Firmware.DeviceStatus
	}
	if ds != nil {
		for i, b := range []string{"CorrErr", "NonFatalErr", "FatalErr", "UnsupReq"} {
			s.add(famPCIeDevStatus, boolf(*ds&(1<<i) != 0), b)
		}
	}
	for _, n := range pcieCounters {
		if v, ok := r.Errors.MPCNT[n]; ok {
			s.add(famPCIeMPCNT, float64(v), n)
		}
	}
	cats := map[string]float64{pcielink.CategorySlot: 0, pcielink.CategoryCard: 0, pcielink.CategoryLink: 0, pcielink.CategoryConfig: 0,
		pcielink.CategoryBW: 0, pcielink.CategoryErrors: 0}
	for _, v := range r.Verdicts {
		cats[v.Category]++
	}
	for _, c := range sortedKeys(cats) {
		s.add(famPCIeVerdicts, cats[c], c)
	}
	// The device's own registers did not answer (a held gateway, a busy
	// firmware): what config space and sysfs give is served, and the
	// collector failed, so the device is not counted up on it alone.
	for _, e := range []error{p.FirmwareErr, p.CountersErr} {
		if e != nil && !errors.Is(e, ErrUnsupported) && !errors.Is(e, dev.ErrNotSupported) {
			return e
		}
	}
	return nil
}

func collectDriver(ctx context.Context, s *sink, src Source) error {
	ps, ok := src.(PCIeSource)
	if !ok {
		return &adapter.UnsupportedError{What: "the kernel driver's health", Why: "the source reads no driver"}
	}
	d, err := ps.Driver(ctx, false)
	if err != nil {
		return err
	}
	r := driverhealth.Build(d, nil, 0)
	for _, rep := range r.Reporters {
		name := rep.Name
		if rep.Port != nil {
			name = fmt.Sprintf("%s:port%d", rep.Name, *rep.Port)
		}
		s.add(famDriverReporterHealthy, boolf(rep.State == "healthy"), name)
		s.add(famDriverReporterErrors, float64(rep.Errors), name)
		s.add(famDriverReporterRecoveries, float64(rep.Recoveries), name)
	}
	for nd, st := range d.Stats {
		for name, v := range st {
			if kind := driverhealth.KindOf(name); kind != "" {
				s.add(famDriverStat, float64(v), nd, name, kind)
			}
		}
	}
	if d.ReportersErr != nil && d.StatsErr != nil {
		return errors.Join(d.ReportersErr, d.StatsErr)
	}
	return nil
}

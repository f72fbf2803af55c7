package exporter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/optics"
)

// collector is one concern: it reads one kind of thing from a Source and
// owns the metric families that show it.
type collector struct {
	name    string
	help    string
	collect func(ctx context.Context, s *sink, src Source) error
}

// allCollectors run in this order on each device: identity first (it is
// cheap and tells whether the device answers at all), the slow module
// reads last but one.
var allCollectors = []collector{
	{"identity", "device info (PSID, firmware, part number, GUIDs) and interfaces with their MACs", collectIdentity},
	{"temperature", "ASIC and module temperatures from the firmware's sensors, with thresholds", collectTemperature},
	{"port", "port link state, administrative state, speed and lanes", collectPort},
	{"counters", "port counters: PPCNT IEEE 802.3, RFC 2863 and physical-layer groups (registers), IB PMA counters (kernel)", collectCounters},
	{"module", "module diagnostics: temperature, voltage, per-lane bias, Tx and Rx power (W and dBm), thresholds, flags", collectModule},
	{"rdma", "RDMA hw_counters, RoCE retransmission and congestion (kernel, or the emulator's model)", collectRDMA},
	{"nvmf", "NVMe-oF target-offload namespace counters through the command interface (fwctl, or the emulator's)", collectNVMF},
	{"link", "link bit error ratios (raw, effective, per lane), FEC blocks and mode, troubleshooting opcode and verdicts (registers)", collectLink},
	{"pcie", "PCIe link to the host: speed and width trained, capable and the slot's, degraded, AER totals, Device Status, MPCNT, verdicts", collectPCIe},
	{"driver", "the kernel driver's health: devlink health reporters (healthy, errors, recoveries) and driver statistics (discards, pause, PCIe stalls)", collectDriver},
	{"nvconfig", "NV configuration: one series per parameter, Current and Next Boot, as numbers (registers; read again every --collector.nvconfig.interval)", collectNVConfig},
	{"policy", "departures from the --policy file: NV values, firmware minimum and PSID, link state and speed, PCIe", collectPolicy},
}

func collectIdentity(ctx context.Context, s *sink, src Source) error {
	in, err := src.Identity(ctx)
	if in == nil {
		return err
	}
	var errs []error
	if err != nil && !adapter.IsPartial(err) {
		errs = append(errs, err)
	}
	os, oerr := src.OS(ctx)
	rdma := ""
	if oerr == nil && len(os.RDMA) > 0 {
		rdma = os.RDMA[0]
	} else if oerr != nil && !errors.Is(oerr, ErrUnsupported) {
		errs = append(errs, oerr)
	}
	deviceID := ""
	if in.DeviceID != 0 {
		deviceID = fmt.Sprintf("0x%04x", in.DeviceID)
	}
	netdev := ""
	if oerr == nil && len(os.Netdevs) > 0 {
		netdev = os.Netdevs[0].Name
	}
	s.add(famInfo, 1, src.Backend(), in.Model, deviceID, in.HCAType, in.PSID, in.Firmware, in.FirmwareStored, in.PartNumber,
		in.NodeGUID, in.SysImageGUID, in.HWRev, in.NodeDesc, rdma, src.Name(), netdev)
	s.add(famFirmware, 1, in.PSID, in.Firmware)
	if in.Firmware != "" && in.FirmwareStored != "" {
		s.add(famPending, boolf(in.FirmwarePending != ""))
	}
	if oerr == nil {
		for _, n := range os.Netdevs {
			perm := n.PermanentAddress
			if perm == "" {
				perm = in.PermanentMAC
			}
			s.add(famNetdev, 1, n.Name, n.Address, perm, n.OperState)
			if n.Address != "" && perm != "" && !n.Representor {
				s.add(famNetdevChanged, boolf(!strings.EqualFold(n.Address, perm)), n.Name)
			}
		}
	}
	return errors.Join(errs...)
}

func collectTemperature(ctx context.Context, s *sink, src Source) error {
	ts, err := src.Temperatures(ctx)
	for _, t := range ts {
		mod := ""
		if t.Module >= 0 {
			mod = strconv.Itoa(t.Module)
		}
		if t.Celsius != nil {
			s.add(famTemp, *t.Celsius, t.Sensor, t.Kind, mod)
		}
		if t.Highest != nil {
			s.add(famTempHighest, *t.Highest, t.Sensor, t.Kind, mod)
		}
		if t.High != nil {
			s.add(famTempThreshold, *t.High, t.Sensor, t.Kind, mod, "high")
		}
		if t.Low != nil {
			s.add(famTempThreshold, *t.Low, t.Sensor, t.Kind, mod, "low")
		}
	}
	return err
}

func collectPort(ctx context.Context, s *sink, src Source) error {
	ps, err := src.Ports(ctx)
	if err != nil {
		return err
	}
	for _, p := range ps {
		mod := ""
		if p.Module >= 0 {
			mod = strconv.Itoa(p.Module)
		}
		s.add(famPortInfo, 1, strconv.Itoa(p.Local), p.LinkLayer, p.Netdev, mod)
		if p.Lanes > 0 {
			s.add(famPortLanes, float64(p.Lanes), strconv.Itoa(p.Local))
		}
	}
	ls, err := src.Links(ctx)
	for _, l := range ls {
		port := strconv.Itoa(l.Port)
		if l.OperUp != nil {
			s.add(famPortUp, boolf(*l.OperUp), port)
		}
		if l.AdminUp != nil {
			s.add(famPortAdminUp, boolf(*l.AdminUp), port)
		}
		if l.SpeedGbps != nil {
			s.add(famPortSpeed, *l.SpeedGbps*1e9/8, port)
		}
		if l.StateID != nil {
			s.add(famPortState, float64(*l.StateID), port)
		}
		if l.PhysStateID != nil {
			s.add(famPortPhysState, float64(*l.PhysStateID), port)
		}
		if l.Width > 0 {
			s.add(famPortWidth, float64(l.Width), port)
		}
	}
	return err
}

func collectCounters(ctx context.Context, s *sink, src Source) error {
	sets, err := src.PortCounters(ctx)
	emitCounters(s, sets)
	return err
}

func collectRDMA(ctx context.Context, s *sink, src Source) error {
	sets, err := src.RDMACounters(ctx)
	emitCounters(s, sets)
	return err
}

func emitCounters(s *sink, sets []adapter.CounterSet) {
	for _, cs := range sets {
		port := strconv.Itoa(cs.Port)
		for _, name := range sortedKeys(cs.Values) {
			f, scale, lane := counterFamily(cs.Kind, name)
			if lane != "" {
				s.add(f, float64(cs.Values[name])*scale, port, lane)
				continue
			}
			s.add(f, float64(cs.Values[name])*scale, port)
		}
	}
}

func collectModule(ctx context.Context, s *sink, src Source) error {
	ms, err := src.Modules(ctx)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for _, m := range ms {
		port := strconv.Itoa(m.Port)
		if m.Present != nil {
			s.add(famModPresent, boolf(*m.Present), port)
		}
		if m.OperStatus != "" {
			s.add(famModStatus, 1, port, m.OperStatus, m.ErrorType)
			s.add(famModError, boolf(m.OperStatus == moduleWithError || m.ErrorType != ""), port)
		}
		best := m.Best()
		if best == nil && (m.Present == nil || *m.Present) {
			why := "no usable reading"
			switch {
			case m.EEPROMErr != nil && m.FirmwareErr != nil:
				why = fmt.Sprintf("EEPROM: %v; the firmware's view: %v", m.EEPROMErr, m.FirmwareErr)
			case m.EEPROMErr != nil:
				why = "EEPROM: " + m.EEPROMErr.Error()
			}
			errs = append(errs, fmt.Errorf("port %d module: %s", m.Port, why))
		}
		if best != nil {
			moduleMetrics(s, port, m.Module, best)
		}
	}
	return errors.Join(errs...)
}

// moduleWithError is PMAOS oper_status when the firmware found the module
// faulty (error_type says why).
const moduleWithError = "module_plugged_with_error"

// identifier is the module type by its SFF-8024 name, whichever memory it
// came from: the firmware's view adds its own name to the text, which
// would make the label change with the source.
func identifier(c optics.Code) string {
	if c.Value != 0 {
		return optics.IdentifierName(c.Value).Name
	}
	return c.Name
}

// thresholdNames in the order Limits holds them.
var thresholdNames = [4]string{"high_alarm", "high_warning", "low_warning", "low_alarm"}

func moduleMetrics(s *sink, port string, module int, r *optics.Module) {
	mod := ""
	if module >= 0 {
		mod = strconv.Itoa(module)
	}
	s.add(famModInfo, 1, port, mod, r.Source, r.Standard, identifier(r.Identifier), r.Vendor.Name, r.Vendor.PN, r.Vendor.SN, r.Vendor.Rev, r.Media.Type)
	s.add(famModDDM, boolf(r.DDM), port)
	if !r.DDM {
		return
	}
	noReading := func(q, lane, pattern string) { s.add(famModNoReading, 1, port, q, lane, pattern) }
	if t := r.Temperature; t != nil && !t.Valid() {
		noReading("temperature", "", t.NA)
	}
	if v := r.Voltage; v != nil && !v.Valid() {
		noReading("voltage", "", v.NA)
	}
	if r.Temperature.Valid() {
		s.add(famModTemp, r.Temperature.C, port)
	}
	if r.Voltage.Valid() {
		s.add(famModVolt, r.Voltage.V, port)
	}
	for _, l := range r.Lanes {
		lane := strconv.Itoa(l.Lane)
		for _, x := range []struct {
			q  string
			na string
		}{{"tx_bias", naOf(l.TxBias)}, {"tx_power", naOf(l.TxPower)}, {"rx_power", naOf(l.RxPower)}} {
			if x.na != "" {
				noReading(x.q, lane, x.na)
			}
		}
		if l.TxBias.Valid() {
			s.add(famModBias, l.TxBias.MA/1000, port, lane)
		}
		if l.TxPower.Valid() {
			s.add(famModTxW, l.TxPower.MW/1000, port, lane)
			s.add(famModTxDBm, float64(l.TxPower.DBm), port, lane)
		}
		if l.RxPower.Valid() {
			s.add(famModRxW, l.RxPower.MW/1000, port, lane)
			s.add(famModRxDBm, float64(l.RxPower.DBm), port, lane)
		}
		for _, sig := range []struct {
			name string
			on   *bool
		}{{"tx_fault", l.TxFault}, {"tx_los", l.TxLOS}, {"rx_los", l.RxLOS}, {"tx_cdr_lol", l.TxLOL}, {"rx_cdr_lol", l.RxLOL}} {
			if sig.on != nil {
				s.add(famLaneSignal, boolf(*sig.on), port, lane, sig.name)
			}
		}
		if f := l.Flags; f != nil {
			for _, q := range []struct {
				name string
				f    *optics.Flags
			}{{"tx_bias", f.TxBias}, {"tx_power", f.TxPower}, {"rx_power", f.RxPower}} {
				if q.f != nil {
					flagMetrics(s, famLaneAlarm, famLaneWarning, *q.f, port, lane, q.name)
				}
			}
		}
	}
	if f := r.Flags; f != nil {
		flagMetrics(s, famModAlarm, famModWarning, f.Temperature, port, "temperature")
		flagMetrics(s, famModAlarm, famModWarning, f.Voltage, port, "voltage")
	}
	th := r.Thresholds
	if th == nil {
		return
	}
	if l := th.Temperature; l != nil {
		limits(s, famModTempTh, port, [4]*float64{tempC(l.HighAlarm), tempC(l.HighWarning), tempC(l.LowWarning), tempC(l.LowAlarm)}, 1)
	}
	if l := th.Voltage; l != nil {
		limits(s, famModVoltTh, port, [4]*float64{voltV(l.HighAlarm), voltV(l.HighWarning), voltV(l.LowWarning), voltV(l.LowAlarm)}, 1)
	}
	if l := th.TxBias; l != nil {
		limits(s, famModBiasTh, port, [4]*float64{curMA(l.HighAlarm), curMA(l.HighWarning), curMA(l.LowWarning), curMA(l.LowAlarm)}, 0.001)
	}
	for _, p := range []struct {
		l      *optics.Limits[optics.Power]
		w, dbm family
	}{{th.TxPower, famModTxWTh, famModTxDBmTh}, {th.RxPower, famModRxWTh, famModRxDBmTh}} {
		if p.l == nil {
			continue
		}
		ps := [4]*optics.Power{p.l.HighAlarm, p.l.HighWarning, p.l.LowWarning, p.l.LowAlarm}
		for i, v := range ps {
			if !v.Valid() {
				continue
			}
			s.add(p.w, v.MW/1000, port, thresholdNames[i])
			s.add(p.dbm, float64(v.DBm), port, thresholdNames[i])
		}
	}
}

func limits(s *sink, f family, port string, vals [4]*float64, scale float64) {
	for i, v := range vals {
		if v != nil {
			s.add(f, *v*scale, port, thresholdNames[i])
		}
	}
}

func flagMetrics(s *sink, alarm, warning family, f optics.Flags, labels ...string) {
	s.add(alarm, boolf(f.HighAlarm), append(labels, "high")...)
	s.add(alarm, boolf(f.LowAlarm), append(labels, "low")...)
	s.add(warning, boolf(f.HighWarning), append(labels, "high")...)
	s.add(warning, boolf(f.LowWarning), append(labels, "low")...)
}

// naOf is a reading's no-reading pattern, "" for a reading or none.
func naOf(x interface{ Valid() bool }) string {
	switch v := x.(type) {
	case *optics.Current:
		if v != nil {
			return v.NA
		}
	case *optics.Power:
		if v != nil {
			return v.NA
		}
	}
	return ""
}

func tempC(t *optics.Temperature) *float64 {
	if !t.Valid() {
		return nil
	}
	return &t.C
}

func voltV(v *optics.Voltage) *float64 {
	if !v.Valid() {
		return nil
	}
	return &v.V
}

func curMA(c *optics.Current) *float64 {
	if !c.Valid() {
		return nil
	}
	return &c.MA
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

package exporter

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/optics"
)

// KernelSource reads a device through the read-only kernel backend: sysfs
// (identity, ports, counters, hw_counters), hwmon (temperatures), devlink
// (PSID and firmware versions), rtnetlink (permanent MACs) and ethtool
// netlink (module EEPROM, which needs CAP_NET_ADMIN). It never writes.
type KernelSource struct {
	d *kernel.Device
	// name is the device label: the PCI address.
	name string

	mu    sync.Mutex
	ports []kernel.Port // read once per scrape (ports, counters, rdma)
	read  bool
}

// NewKernelSource wraps an opened kernel device.
func NewKernelSource(d *kernel.Device) *KernelSource {
	return &KernelSource{d: d, name: d.BDF}
}

// Name implements Source.
func (s *KernelSource) Name() string { return s.name }

// Backend implements Source.
func (s *KernelSource) Backend() string { return "kernel" }

// Close implements Source.
func (s *KernelSource) Close() error { return s.d.Close() }

// StartScrape implements ScrapeStarter: the port files are read once per
// scrape and shared by the port, counters and rdma collectors.
func (s *KernelSource) StartScrape() {
	s.mu.Lock()
	s.ports, s.read = nil, false
	s.mu.Unlock()
}

func (s *KernelSource) portsOnce(ctx context.Context) ([]kernel.Port, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.read {
		return s.ports, nil
	}
	ps, err := s.d.Ports(ctx)
	if err != nil {
		return nil, err
	}
	s.ports, s.read = ps, true
	return ps, nil
}

// Info implements Source: sysfs identity, devlink for the PSID and the
// stored firmware, netdevs with their MACs.
func (s *KernelSource) Info(ctx context.Context) (*Info, error) {
	id, err := s.d.Identity(ctx)
	if err != nil {
		return nil, err
	}
	in := &Info{Model: id.Model, HCAType: id.HCAType, PSID: id.BoardID, Firmware: id.FirmwareVersion, NodeGUID: id.NodeGUID,
		SysImageGUID: id.SysImageGUID, HWRev: id.HWRev, NodeDesc: id.NodeDesc, RDMA: id.RDMA}
	if id.DeviceID != 0 {
		in.DeviceID = fmt.Sprintf("0x%04x", id.DeviceID)
	}
	var errs []error
	if dl, err := s.d.DevlinkInfo(ctx); err == nil {
		if in.PSID == "" {
			in.PSID = dl.PSID()
		}
		if in.Firmware == "" {
			in.Firmware = dl.FirmwareRunning()
		}
		in.FirmwareStored = dl.FirmwareStored()
	} else if ctx.Err() != nil {
		return nil, err
	} else if in.PSID == "" || in.Firmware == "" {
		// Without devlink (old kernels) sysfs still names PSID and
		// firmware when mlx5_ib is loaded; only the stored version is
		// missing then, which is not worth a failing collector.
		errs = append(errs, err)
	}
	nds, err := s.d.Netdevs(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range nds {
		in.Netdevs = append(in.Netdevs, Netdev{Name: n.Name, Address: n.Address, PermanentAddress: n.PermanentAddress, OperState: n.OperState})
	}
	return in, errors.Join(errs...)
}

var sensorLabel = regexp.MustCompile(`^sensor([0-9]+)$`)

// Temperatures implements Source from the mlx5 hwmon device.
func (s *KernelSource) Temperatures(ctx context.Context) ([]Temperature, error) {
	th, err := s.d.Temperatures(ctx)
	if err != nil {
		return nil, err
	}
	var out []Temperature
	for _, t := range th.Temps {
		if t.Celsius == nil {
			continue
		}
		o := Temperature{Sensor: t.Label, Kind: t.Kind, Module: -1, Celsius: *t.Celsius, Highest: t.HighestCelsius, High: t.CritCelsius}
		if o.Sensor == "" {
			o.Sensor = "temp" + strconv.Itoa(t.Channel)
		}
		if m := sensorLabel.FindStringSubmatch(t.Label); m != nil && t.Kind == "module" {
			if i, err := strconv.Atoi(m[1]); err == nil && i >= 64 {
				o.Module = i - 64
			}
		}
		out = append(out, o)
	}
	if len(out) == 0 && th.Note != "" {
		return nil, fmt.Errorf("temperatures: %w: %s", ErrUnsupported, th.Note)
	}
	return out, nil
}

// Ports implements Source from sysfs port state and rate.
func (s *KernelSource) Ports(ctx context.Context) ([]Port, error) {
	ps, err := s.portsOnce(ctx)
	if err != nil {
		return nil, err
	}
	var out []Port
	for _, kp := range ps {
		p := Port{Port: kp.Number, Module: -1, LinkLayer: kp.LinkLayer, Netdev: kp.Netdev, State: kp.State, PhysState: kp.PhysState}
		if kp.StateID > 0 {
			id := kp.StateID
			p.StateID = &id
		}
		if kp.PhysStateID > 0 {
			id := kp.PhysStateID
			p.PhysStateID = &id
			up := id == 5 // LinkUp
			p.OperUp = &up
		}
		if kp.Rate != nil {
			bps := float64(kp.Rate.Gbps) * 1e9 / 8
			if p.OperUp != nil && !*p.OperUp {
				bps = 0
			}
			p.SpeedBytesPerSecond = &bps
			p.Lanes = kp.Rate.Width
		}
		out = append(out, p)
	}
	return out, nil
}

// PortCounters implements Source: the IB PMA port counters.
func (s *KernelSource) PortCounters(ctx context.Context) ([]CounterSet, error) {
	return s.counters(ctx, "ib", func(p kernel.Port) map[string]uint64 { return p.Counters })
}

// RDMACounters implements Source: every hw_counters file of each port.
func (s *KernelSource) RDMACounters(ctx context.Context) ([]CounterSet, error) {
	return s.counters(ctx, "rdma", func(p kernel.Port) map[string]uint64 { return p.HWCounters })
}

func (s *KernelSource) counters(ctx context.Context, kind string, pick func(kernel.Port) map[string]uint64) ([]CounterSet, error) {
	ps, err := s.portsOnce(ctx)
	if err != nil {
		return nil, err
	}
	var out []CounterSet
	var problems []string
	for _, p := range ps {
		c := CounterSet{Port: p.Number, Kind: kind, Values: map[string]float64{}}
		for k, v := range pick(p) {
			c.Values[k] = float64(v)
		}
		if len(c.Values) > 0 {
			out = append(out, c)
		}
		for _, f := range sortedKeys(p.Problems) {
			if strings.HasPrefix(f, map[string]string{"ib": "counters/", "rdma": "hw_counters/"}[kind]) {
				problems = append(problems, fmt.Sprintf("port %d %s: %s", p.Number, f, p.Problems[f]))
			}
		}
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("%s counters: %w (the function has no RDMA device; is mlx5_ib loaded?)", kind, ErrUnsupported)
	}
	if len(problems) > 0 {
		return out, errors.New(strings.Join(problems, "; "))
	}
	return out, nil
}

// Modules implements Source: the module of each interface (representors
// share the uplink's), read through ethtool netlink and decoded.
func (s *KernelSource) Modules(ctx context.Context) ([]Module, error) {
	ps, err := s.portsOnce(ctx)
	if err != nil {
		return nil, err
	}
	nds, err := s.d.Netdevs(ctx)
	if err != nil {
		return nil, err
	}
	portOf := map[string]int{}
	for _, p := range ps {
		if p.Netdev != "" {
			portOf[p.Netdev] = p.Number
		}
	}
	var out []Module
	var errs []error
	for _, n := range nds {
		if n.Representor() {
			continue
		}
		port, ok := portOf[n.Name]
		if !ok {
			if len(ps) > 1 {
				continue // cannot tell which port it belongs to
			}
			port = 1
		}
		m := Module{Port: port, Module: -1}
		r, err := s.d.Module(ctx, n.Name)
		var pe *kernel.PermissionError
		switch {
		case errors.As(err, &pe):
			// No CAP_NET_ADMIN: say so once, it is the same for all.
			return out, err
		case err != nil && ctx.Err() != nil:
			return out, err
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", n.Name, err))
			continue
		}
		switch {
		case r.Module != nil && r.Error == "":
			yes := true
			m.Present, m.Reading = &yes, r.Module
		case r.ErrorKind == optics.KindAllZeros:
			m.Err = r.Error
		default:
			m.Err = r.Error
			if r.Module != nil {
				m.Reading = r.Module
			}
		}
		out = append(out, m)
	}
	return out, errors.Join(errs...)
}

package exporter

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"sync"

	"github.com/cxray/cxray/access/regaccess"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/modread"
	"github.com/cxray/cxray/monitor"
	"github.com/cxray/cxray/optics"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/units"
)

// RegisterOptions describe a device read through PRM registers.
type RegisterOptions struct {
	// Name is the device label (the PCI address).
	Name string
	// Backend is "direct" (a PCI function, as root) or "emulator".
	Backend string
	// Open opens the device. It is called again after a failure that
	// may have left the access path in a bad state (a device that went
	// away and came back is freshly reset). The device should be read-only:
	// see ReadOnly.
	Open func(ctx context.Context) (*dev.Device, error)
	// RDMA, when set, reads the RDMA hw_counters of a local port (the
	// kernel's sysfs on a host, the emulator's model); registers have none.
	RDMA func(ctx context.Context, port int) (map[string]uint64, error)
	// RDMADevice and Netdev name the function's RDMA device and interface
	// (for the info metrics), when known.
	RDMADevice, Netdev string
}

// RegisterSource reads a device through PRM registers: MGIR, PGUID and
// MQIS for identity, MTCAP and MTMP for temperatures, PMLP, PAOS and PTYS
// for ports, PPCNT for counters, PMAOS, MCIA and PDDR for modules.
type RegisterSource struct {
	o RegisterOptions

	mu    sync.Mutex
	d     *dev.Device
	ports []regPort // local ports this function reaches (cached)
	// Cached: static facts, read once.
	partNumber *string
	sensors    []int // MTCAP sensor map
}

// regPort is a local port with its module and width (PMLP).
type regPort struct {
	port, module, lanes int
}

// NewRegisterSource makes a register source; nothing is opened until the
// first read.
func NewRegisterSource(o RegisterOptions) *RegisterSource {
	return &RegisterSource{o: o}
}

// Name implements Source.
func (s *RegisterSource) Name() string { return s.o.Name }

// Backend implements Source.
func (s *RegisterSource) Backend() string { return s.o.Backend }

// Close implements Source.
func (s *RegisterSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.d == nil {
		return nil
	}
	err := s.d.Close()
	s.d = nil
	return err
}

// device returns the open device, opening it when needed.
func (s *RegisterSource) device(ctx context.Context) (*dev.Device, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.d != nil {
		return s.d, nil
	}
	if s.o.Open == nil {
		return nil, fmt.Errorf("device %s: nothing to open it with", s.o.Name)
	}
	d, err := s.o.Open(ctx)
	if err != nil {
		return nil, err
	}
	s.d = d
	return d, nil
}

// fail drops the device after an error that is not the firmware's answer
// (a register status): the access path may be mid-transaction, or the
// device gone; the next read opens it afresh.
func (s *RegisterSource) fail(err error) error {
	if err == nil {
		return nil
	}
	var se *regaccess.StatusError
	if errors.As(err, &se) {
		return err
	}
	s.mu.Lock()
	if s.d != nil {
		s.d.Close()
		s.d = nil
	}
	s.mu.Unlock()
	return err
}

// get reads a register with index fields given as name=value.
func (s *RegisterSource) get(ctx context.Context, d *dev.Device, reg string, index ...string) (*dev.Reading, error) {
	var as []prm.Assignment
	for _, kv := range index {
		k, v, _ := strings.Cut(kv, "=")
		as = append(as, prm.Assignment{Path: k, Value: v})
	}
	r, err := d.Get(ctx, reg, as, nil, 0)
	return r, s.fail(err)
}

// Info implements Source: MGIR and PGUID (dev.Identity), MQIS model name.
func (s *RegisterSource) Info(ctx context.Context) (*Info, error) {
	d, err := s.device(ctx)
	if err != nil {
		return nil, err
	}
	id, err := d.Identity(ctx)
	if err != nil {
		return nil, s.fail(err)
	}
	in := &Info{PSID: id.PSID, Firmware: id.Firmware, NodeGUID: id.NodeGUID, RDMA: s.o.RDMADevice}
	if id.DeviceID != 0 {
		in.DeviceID = fmt.Sprintf("0x%04x", id.DeviceID)
		in.HCAType = fmt.Sprintf("MT%d", id.DeviceID)
		in.Model, _ = devname.Model(id.DeviceID)
	}
	if s.o.Netdev != "" {
		in.Netdevs = []Netdev{{Name: s.o.Netdev, PermanentAddress: id.PermanentMAC}}
	}
	if pn, err := s.partNumberOf(ctx, d); err == nil {
		in.PartNumber = pn
	} else if ctx.Err() != nil {
		return nil, err
	}
	return in, nil
}

// partNumberOf reads the MQIS model name once (it does not change while the
// exporter runs); firmware without MQIS has none.
func (s *RegisterSource) partNumberOf(ctx context.Context, d *dev.Device) (string, error) {
	s.mu.Lock()
	pn := s.partNumber
	s.mu.Unlock()
	if pn != nil {
		return *pn, nil
	}
	text, err := ReadMQIS(ctx, d, "MODEL_NAME")
	switch {
	case errors.Is(err, regaccess.ErrRegisterNotSupported):
		text = ""
	case err != nil:
		return "", s.fail(err)
	}
	s.mu.Lock()
	s.partNumber = &text
	s.mu.Unlock()
	return text, nil
}

// ReadMQIS reads one MQIS information string (MODEL_NAME is the adapter's
// part number) in the chunks the register carries.
func ReadMQIS(ctx context.Context, d *dev.Device, infoType string) (string, error) {
	var out []byte
	for off, total := 0, -1; total < 0 || off < total; {
		r, err := d.Get(ctx, "MQIS", []prm.Assignment{{Path: "info_type", Value: infoType}, {Path: "read_offset", Value: strconv.Itoa(off)}}, nil, 0)
		if err != nil {
			return "", err
		}
		n, err := uintField(r.Decoded, "read_length")
		if err != nil {
			return "", err
		}
		t, err := uintField(r.Decoded, "info_length")
		if err != nil {
			return "", err
		}
		total = int(min(t, 1024))
		v, err := r.Decoded.Get("info_string")
		if err != nil {
			return "", err
		}
		raw := v.Raw()
		if n == 0 || int(n) > len(raw) {
			break
		}
		out = append(out, raw[:n]...)
		off += int(n)
	}
	return strings.TrimRight(string(out), "\x00 "), nil
}

func uintField(d *prm.Decoded, path string) (uint64, error) {
	v, err := d.Get(path)
	if err != nil {
		return 0, err
	}
	return v.Uint(), nil
}

// portMap lists the local ports the function reaches (MGIR num_ports, less
// those PMLP says belong to another function), with their modules.
func (s *RegisterSource) portMap(ctx context.Context, d *dev.Device) ([]regPort, error) {
	s.mu.Lock()
	ps := s.ports
	s.mu.Unlock()
	if ps != nil {
		return ps, nil
	}
	n := 1
	if r, err := s.get(ctx, d, "MGIR"); err != nil {
		return nil, err
	} else if v, err := uintField(r.Decoded, "hw_info.num_ports"); err == nil && v > 0 {
		n = int(min(v, 64))
	}
	for p := 1; p <= n; p++ {
		r, err := s.get(ctx, d, "PMLP", "local_port="+strconv.Itoa(p))
		var se *regaccess.StatusError
		switch {
		case err == nil:
			rp := regPort{port: p, module: p - 1}
			if v, err := uintField(r.Decoded, "lane_module_mapping[0].module"); err == nil {
				rp.module = int(v)
			}
			if v, err := uintField(r.Decoded, "width"); err == nil {
				rp.lanes = int(v)
			}
			ps = append(ps, rp)
		case errors.As(err, &se) && se.Status == regaccess.StatusBadParameter:
			// another function's port
		case errors.Is(err, regaccess.ErrRegisterNotSupported):
			ps = append(ps, regPort{port: p, module: p - 1})
		default:
			return nil, err
		}
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("device %s reaches no port (MGIR num_ports %d, PMLP refused every one)", s.o.Name, n)
	}
	s.mu.Lock()
	s.ports = ps
	s.mu.Unlock()
	return ps, nil
}

// Temperatures implements Source: MTMP for every sensor MTCAP lists, and
// for the module of each port (sensor 64 + module).
func (s *RegisterSource) Temperatures(ctx context.Context) ([]Temperature, error) {
	d, err := s.device(ctx)
	if err != nil {
		return nil, err
	}
	sensors, err := s.sensorMap(ctx, d)
	if err != nil {
		return nil, err
	}
	ps, err := s.portMap(ctx, d)
	if err != nil {
		return nil, err
	}
	type sensor struct {
		index, module int
	}
	var want []sensor
	for _, i := range sensors {
		want = append(want, sensor{i, -1})
	}
	seen := map[int]bool{}
	for _, p := range ps {
		if !seen[p.module] {
			seen[p.module] = true
			want = append(want, sensor{64 + p.module, p.module})
		}
	}
	var out []Temperature
	var errs []error
	for _, w := range want {
		t, err := s.mtmp(ctx, d, w.index, w.module)
		if err != nil {
			if ctx.Err() != nil {
				return out, err
			}
			errs = append(errs, fmt.Errorf("sensor %d: %w", w.index, err))
			continue
		}
		if t != nil {
			out = append(out, *t)
		}
	}
	return out, errors.Join(errs...)
}

// sensorMap is MTCAP's sensor_map (ASIC and platform sensors), read once.
func (s *RegisterSource) sensorMap(ctx context.Context, d *dev.Device) ([]int, error) {
	s.mu.Lock()
	got := s.sensors
	s.mu.Unlock()
	if got != nil {
		return got, nil
	}
	got = []int{}
	r, err := s.get(ctx, d, "MTCAP")
	switch {
	case errors.Is(err, regaccess.ErrRegisterNotSupported):
		got = []int{0}
	case err != nil:
		return nil, err
	default:
		m, err := uintField(r.Decoded, "sensor_map")
		if err != nil || m == 0 {
			m = 1
		}
		for m != 0 {
			i := bits.TrailingZeros64(m)
			got = append(got, i)
			m &^= 1 << i
		}
	}
	s.mu.Lock()
	s.sensors = got
	s.mu.Unlock()
	return got, nil
}

// mtmp reads one sensor; a module sensor of an empty cage (status bad
// parameter, or a zero reading with no threshold) gives nil.
func (s *RegisterSource) mtmp(ctx context.Context, d *dev.Device, index, module int) (*Temperature, error) {
	r, err := s.get(ctx, d, "MTMP", "sensor_index="+strconv.Itoa(index))
	var se *regaccess.StatusError
	if module >= 0 && errors.As(err, &se) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c := func(path string) (float64, bool) {
		v, err := r.Decoded.Get(path)
		if err != nil {
			return 0, false
		}
		u, ok := units.Lookup("MTMP", path)
		if !ok {
			return 0, false
		}
		return u.Apply(v.Uint(), v.Step().Width).Value, true
	}
	t := &Temperature{Kind: "asic", Module: module}
	if module >= 0 {
		t.Kind = "module"
	}
	t.Sensor = "sensor" + strconv.Itoa(index)
	if v, err := r.Decoded.Get("sensor_name"); err == nil && v.IsText() {
		if n := strings.TrimSpace(v.TextString()); n != "" {
			t.Sensor = n
		}
	}
	var ok bool
	if t.Celsius, ok = c("temperature"); !ok {
		return nil, fmt.Errorf("MTMP has no temperature field")
	}
	if v, ok := c("max_temperature"); ok {
		t.Highest = &v
	}
	for _, th := range []struct {
		path string
		dst  **float64
	}{{"temperature_threshold_hi", &t.High}, {"temperature_threshold_lo", &t.Low}} {
		if v, ok := c(th.path); ok && v != 0 {
			*th.dst = &v
		}
	}
	return t, nil
}

// Ports implements Source: PAOS and PTYS per local port.
func (s *RegisterSource) Ports(ctx context.Context) ([]Port, error) {
	d, err := s.device(ctx)
	if err != nil {
		return nil, err
	}
	ps, err := s.portMap(ctx, d)
	if err != nil {
		return nil, err
	}
	var out []Port
	var errs []error
	for i, rp := range ps {
		p := Port{Port: rp.port, Module: rp.module, Lanes: rp.lanes, LinkLayer: "Ethernet"}
		if i == 0 {
			p.Netdev = s.o.Netdev
		}
		lp := "local_port=" + strconv.Itoa(rp.port)
		if r, err := s.get(ctx, d, "PAOS", lp); err == nil {
			if v, err := r.Decoded.Get("oper_status"); err == nil {
				up := enumIs(v, "up", 1)
				p.OperUp = &up
			}
			if v, err := r.Decoded.Get("admin_status"); err == nil {
				up := enumIs(v, "up", 1)
				p.AdminUp = &up
			}
		} else {
			if ctx.Err() != nil {
				return out, err
			}
			errs = append(errs, fmt.Errorf("port %d PAOS: %w", rp.port, err))
		}
		if r, err := s.get(ctx, d, "PTYS", lp, "proto_mask=Ethernet"); err == nil {
			if v, err := r.Decoded.Get("data_rate_oper"); err == nil {
				if u, ok := units.Lookup("PTYS", "data_rate_oper"); ok {
					bps := u.Apply(v.Uint(), v.Step().Width).Value * 1e9 / 8
					p.SpeedBytesPerSecond = &bps
				}
			}
		} else {
			if ctx.Err() != nil {
				return out, err
			}
			errs = append(errs, fmt.Errorf("port %d PTYS: %w", rp.port, err))
		}
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

// enumIs says whether an enum field holds the named value (or, in a
// database without the enum, the number).
func enumIs(v prm.Value, name string, num uint64) bool {
	if n, ok := v.EnumName(); ok {
		return n == name
	}
	return v.Uint() == num
}

// PortCounters implements Source with the monitor package's PPCNT
// collector: the IEEE 802.3, RFC 2863 and physical-layer groups, every
// 64-bit counter.
func (s *RegisterSource) PortCounters(ctx context.Context) ([]CounterSet, error) {
	d, err := s.device(ctx)
	if err != nil {
		return nil, err
	}
	ps, err := s.portMap(ctx, d)
	if err != nil {
		return nil, err
	}
	cs, err := monitor.Collectors([]string{"counters"}, nil)
	if err != nil {
		return nil, err
	}
	vals := map[string]float64{}
	errs := cs[0].Collect(ctx, d, len(ps), vals)
	sets := map[int]*CounterSet{}
	for k, v := range vals {
		// "port<N>.ppcnt.<field>"
		pfx, field, ok := strings.Cut(k, ".ppcnt.")
		if !ok || !strings.HasPrefix(pfx, "port") {
			continue
		}
		p, err := strconv.Atoi(strings.TrimPrefix(pfx, "port"))
		if err != nil {
			continue
		}
		if sets[p] == nil {
			sets[p] = &CounterSet{Port: p, Kind: "ppcnt", Values: map[string]float64{}}
		}
		sets[p].Values[field] = v
	}
	var out []CounterSet
	for _, rp := range ps {
		if c := sets[rp.port]; c != nil {
			out = append(out, *c)
		}
	}
	if len(errs) > 0 {
		if len(vals) == 0 {
			// Nothing read: the path may be broken; reopen next time.
			s.fail(errors.New(errs[0]))
		}
		return out, errors.New(strings.Join(errs, "; "))
	}
	return out, nil
}

// RDMACounters implements Source through RegisterOptions.RDMA.
func (s *RegisterSource) RDMACounters(ctx context.Context) ([]CounterSet, error) {
	if s.o.RDMA == nil {
		return nil, fmt.Errorf("RDMA hw_counters: %w (registers have none; they come from the kernel driver's sysfs)", ErrUnsupported)
	}
	d, err := s.device(ctx)
	if err != nil {
		return nil, err
	}
	ps, err := s.portMap(ctx, d)
	if err != nil {
		return nil, err
	}
	var out []CounterSet
	var errs []error
	for _, p := range ps {
		m, err := s.o.RDMA(ctx, p.port)
		if err != nil {
			if errors.Is(err, ErrUnsupported) && len(ps) > 1 {
				continue // a port without an RDMA device (another function's)
			}
			errs = append(errs, fmt.Errorf("port %d: %w", p.port, err))
			continue
		}
		c := CounterSet{Port: p.port, Kind: "rdma", Values: map[string]float64{}}
		for k, v := range m {
			c.Values[k] = float64(v)
		}
		out = append(out, c)
	}
	if len(out) == 0 && len(errs) == 0 {
		return nil, fmt.Errorf("RDMA hw_counters: %w", ErrUnsupported)
	}
	return out, errors.Join(errs...)
}

// Modules implements Source: per port, PMAOS for the cage state, then the
// module's EEPROM through MCIA, decoded; when that fails, the firmware's
// view (PDDR page 3). The same reads as `cxray module`.
func (s *RegisterSource) Modules(ctx context.Context) ([]Module, error) {
	d, err := s.device(ctx)
	if err != nil {
		return nil, err
	}
	ps, err := s.portMap(ctx, d)
	if err != nil {
		return nil, err
	}
	var out []Module
	for _, p := range ps {
		m, err := s.module(ctx, d, p)
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, nil
}

func (s *RegisterSource) module(ctx context.Context, d *dev.Device, p regPort) (Module, error) {
	m := Module{Port: p.port, Module: p.module}
	st, err := s.get(ctx, d, "PMAOS", "module="+strconv.Itoa(p.module))
	switch {
	case err == nil:
		if v, err := st.Decoded.Get("oper_status"); err == nil {
			if n, ok := v.EnumName(); ok {
				m.Status = n
			} else {
				m.Status = strconv.FormatUint(v.Uint(), 10)
			}
		}
	case errors.Is(err, regaccess.ErrRegisterNotSupported):
	default:
		return m, fmt.Errorf("port %d module %d PMAOS: %w", p.port, p.module, err)
	}
	if m.Status == "unplugged" {
		no := false
		m.Present = &no
		return m, nil
	}
	if m.Status != "" {
		yes := true
		m.Present = &yes
	}
	lanes := p.lanes
	var eeErr error
	im, err := optics.ReadImage(ctx, &modread.MCIAReader{Device: d, Module: p.module})
	if err == nil {
		dec, derr := optics.Decode(im)
		if derr == nil {
			m.Reading = dec
			return m, nil
		}
		eeErr = derr
		if dec != nil && dec.Standard != "" && len(dec.Lanes) > 0 {
			lanes = len(dec.Lanes)
		}
	} else {
		if ctx.Err() != nil {
			return m, s.fail(err)
		}
		eeErr = err
	}
	fwm, err := modread.ReadPDDRModule(ctx, d, p.port, lanes)
	switch {
	case err == nil && fwm.CableType != optics.CableUnplugged && fwm.CableType != optics.CableUnidentified:
		m.Reading = fwm
	case err == nil:
		m.Err = fmt.Sprintf("EEPROM: %v; the firmware's view: cable type %s", eeErr, fwm.CableType)
	case ctx.Err() != nil:
		return m, s.fail(err)
	default:
		s.fail(err)
		m.Err = fmt.Sprintf("EEPROM: %v; the firmware's view (PDDR): %v", eeErr, err)
	}
	return m, nil
}

package adapter

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/regpath"
	"github.com/cxray/cxray/prm/units"
)

// The register side: what the PRM registers say, through dev. Every read
// goes through get, which drops the register path after a transport
// failure so that the next read reopens it.

func (a *Adapter) get(ctx context.Context, reg string, index Index) (*dev.Reading, error) {
	d, err := a.Registers(ctx)
	if err != nil {
		return nil, err
	}
	r, err := d.Get(ctx, reg, index.Assignments(), nil, 0)
	return r, a.drop(err)
}

func uintOf(d *prm.Decoded, path string) (uint64, bool) {
	v, err := d.Get(path)
	if err != nil {
		return 0, false
	}
	return v.Uint(), true
}

// registerIdentity: MGIR (firmware, PSID, ports, base MAC, build date,
// pending version), PGUID (node and system image GUIDs), MQIS (part
// number, read once).
func (a *Adapter) registerIdentity(ctx context.Context) (*Identity, error) {
	d, err := a.Registers(ctx)
	if err != nil {
		return nil, err
	}
	r, err := a.staticMGIR(ctx)
	if err != nil {
		return nil, err
	}
	did := d.IdentityOf(ctx, r)
	id := &Identity{PSID: did.PSID, Firmware: did.Firmware, Ports: did.Ports, DeviceID: did.DeviceID,
		BaseMAC: did.BaseMAC, PermanentMAC: did.PermanentMAC, NodeGUID: did.NodeGUID, SysImageGUID: did.SysImageGUID}
	if id.DeviceID != 0 {
		id.HCAType = fmt.Sprintf("MT%d", id.DeviceID)
		id.Model, _ = devname.Model(id.DeviceID)
	}
	id.FirmwareBuilt = buildDate(r.Decoded)
	id.FirmwareStored = a.storedFirmware(ctx)
	if id.FirmwareStored != "" && id.FirmwareStored != id.Firmware {
		id.FirmwarePending = id.FirmwareStored
	}
	if pn, err := a.partNumber(ctx); err == nil {
		id.PartNumber = pn
	} else if ctx.Err() != nil {
		return nil, err
	}
	return id, nil
}

// staticMGIR is an MGIR reading for its static fields (firmware, PSID,
// port count, device ID, base MAC, build date): the first one the adapter
// made, kept until the register path is dropped.
func (a *Adapter) staticMGIR(ctx context.Context) (*dev.Reading, error) {
	a.mu.Lock()
	r := a.mgir
	a.mu.Unlock()
	if r != nil {
		return r, nil
	}
	return a.readMGIR(ctx)
}

// readMGIR reads MGIR now, for its uptime, unless the last reading was
// made at this instant of the device's clock: on a device whose time
// stands still between reads (the emulator's manual clock) that reading
// is what MGIR would answer again.
func (a *Adapter) readMGIR(ctx context.Context) (*dev.Reading, error) {
	now := a.c.Clock.Now()
	a.mu.Lock()
	r, at := a.mgir, a.mgirAt
	a.mu.Unlock()
	if r != nil && at.Equal(now) {
		return r, nil
	}
	r, err := a.get(ctx, "MGIR", nil)
	if err != nil {
		return nil, err
	}
	// The reading is of the moment the firmware answered: a busy
	// firmware's retries move a manual clock too.
	now = a.c.Clock.Now()
	a.mu.Lock()
	a.mgir, a.mgirAt = r, now
	a.mu.Unlock()
	return r, nil
}

// buildDate reads MGIR's build date, whose digits are BCD (0x2023 is the
// year 2023).
func buildDate(r *prm.Decoded) time.Time {
	bcd := func(p string) (int, bool) {
		v, ok := uintOf(r, p)
		if !ok {
			return 0, false
		}
		n, err := strconv.Atoi(strconv.FormatUint(v, 16))
		return n, err == nil
	}
	y, ok1 := bcd(regpath.MGIRFwYear)
	m, ok2 := bcd(regpath.MGIRFwMonth)
	day, ok3 := bcd(regpath.MGIRFwDay)
	if !ok1 || !ok2 || !ok3 || y < 2000 || m < 1 || m > 12 || day < 1 || day > 31 {
		return time.Time{}
	}
	return time.Date(y, time.Month(m), day, 0, 0, 0, 0, time.UTC)
}

// storedFirmware is the version of the boot image in flash, the one that
// runs after the next firmware reset: MCQI's VERSION of component 0 with
// read_pending_component set, as mstflint's query reads it. "" when the
// firmware cannot say.
func (a *Adapter) storedFirmware(ctx context.Context) string {
	d, err := a.Registers(ctx)
	if err != nil {
		return ""
	}
	idx := At("component_index", 0).With("device_index", 0).With("device_type", 0).With("read_pending_component", 1)
	req := At("info_type", 1).With("offset", 0).With("data_size", 0x7c)
	r, err := d.GetFields(ctx, "MCQI", idx.Assignments(), req.Assignments())
	if err != nil {
		a.drop(err)
		return ""
	}
	v, ok := textOf(r.Decoded, "MCQI", regpath.MCQIVersionString)
	if !ok {
		return ""
	}
	return strings.TrimSpace(v)
}

func (a *Adapter) partNumber(ctx context.Context) (string, error) {
	a.mu.Lock()
	pn := a.part
	a.mu.Unlock()
	if pn != nil {
		return *pn, nil
	}
	text, err := a.readMQIS(ctx, "MODEL_NAME")
	switch {
	case errors.Is(err, dev.ErrNotSupported), errors.Is(err, dev.ErrNoSuchInstance):
		text = ""
	case err != nil:
		return "", err
	}
	a.mu.Lock()
	a.part = &text
	a.mu.Unlock()
	return text, nil
}

// readMQIS reads one MQIS information string in the chunks the register
// carries.
func (a *Adapter) readMQIS(ctx context.Context, infoType string) (string, error) {
	var out []byte
	for off, total, n := 0, -1, 0; (total < 0 || off < total) && n < 64; n++ {
		r, err := a.get(ctx, "MQIS", Index{}.Named("info_type", infoType).With("read_offset", uint64(off)))
		if err != nil {
			return "", err
		}
		got, ok1 := uintOf(r.Decoded, regpath.MQISReadLength)
		t, ok2 := uintOf(r.Decoded, regpath.MQISInfoLength)
		if !ok1 || !ok2 {
			return "", errors.New("MQIS has no read_length/info_length in this database")
		}
		total = int(min(t, 1024))
		v, err := r.Decoded.Get(regpath.MQISInfoString)
		if err != nil {
			return "", err
		}
		raw := v.Raw()
		if got == 0 || int(got) > len(raw) {
			break
		}
		out = append(out, raw[:got]...)
		off += int(got)
	}
	return strings.TrimRight(string(out), "\x00 "), nil
}

// registerPorts: local ports 1..MGIR num_ports, less those PMLP says
// belong to another function (the firmware answers "bad parameter" for a
// local port this function does not own), each with its module and width.
func (a *Adapter) registerPorts(ctx context.Context) ([]Port, error) {
	r, err := a.staticMGIR(ctx)
	if err != nil {
		return nil, err
	}
	n := 1
	if v, ok := fieldOf(r.Decoded, "MGIR", regpath.MGIRNumPorts); ok && v > 0 {
		n = int(min(v, 64))
	}
	var ps []Port
	for p := 1; p <= n; p++ {
		rp := Port{Local: p, Module: p - 1, LinkLayer: "Ethernet"}
		r, err := a.get(ctx, "PMLP", LocalPort(p))
		switch {
		case err == nil:
			if v, ok := fieldOf(r.Decoded, "PMLP", regpath.PMLPLane0Module); ok {
				rp.Module = int(v)
			}
			if v, ok := fieldOf(r.Decoded, "PMLP", regpath.PMLPWidth); ok {
				rp.Lanes = int(v)
			}
			if rp.LinkLayer, err = a.registerLinkLayer(ctx, p); err != nil {
				return nil, err
			}
			ps = append(ps, rp)
		case errors.Is(err, dev.ErrNoSuchInstance):
			// another function's port
		case errors.Is(err, dev.ErrNotSupported):
			// No PMLP: port N uses module N-1, the usual wiring.
			ps = append(ps, rp)
		default:
			return nil, fmt.Errorf("port %d (PMLP): %w", p, err)
		}
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("%s reaches no port: MGIR says %d, and PMLP answered none of them", a.c.Name, n)
	}
	return ps, nil
}

// registerLinks: PAOS and PTYS per port (and an InfiniBand port's logical
// state, ib.go).
func (a *Adapter) registerLinks(ctx context.Context, ps []Port, regs map[int]*LinkRegisters) ([]Link, error) {
	var out []Link
	var errs []error
	for _, p := range ps {
		l := Link{Port: p.Local, LinkLayer: p.LinkLayer}
		lr := &LinkRegisters{}
		regs[p.Local] = lr
		lp := LocalPort(p.Local)
		r, err := a.get(ctx, "PAOS", lp)
		lr.PAOSErr = err
		if err == nil {
			lr.PAOS = r.Decoded
			// By number: the values are the PRM's in every revision, the
			// enum names are not (Rev 0.51 has none for oper_status).
			if v, ok := fieldOf(r.Decoded, "PAOS", regpath.PAOSOperStatus); ok {
				up := v == paosUp
				l.OperUp = &up
				l.OperStatus = enumText(r.Decoded, "PAOS", regpath.PAOSOperStatus)
			}
			if v, ok := fieldOf(r.Decoded, "PAOS", regpath.PAOSAdminStatus); ok {
				up := v == paosUp || v == paosUpOnce || v == paosUpLowest
				l.AdminUp = &up
				l.AdminStatus = enumText(r.Decoded, "PAOS", regpath.PAOSAdminStatus)
			}
		} else {
			if ctx.Err() != nil {
				return out, err
			}
			errs = append(errs, fmt.Errorf("port %d PAOS: %w", p.Local, err))
		}
		if p.LinkLayer == LinkInfiniBand {
			if err := a.registerIBLink(ctx, p, &l, lr); err != nil {
				if ctx.Err() != nil {
					return out, err
				}
				errs = append(errs, err)
			}
			out = append(out, l)
			continue
		}
		r, err = a.get(ctx, "PTYS", lp.With("proto_mask", protoEthernet))
		lr.PTYSErr = err
		if err == nil {
			lr.PTYS = r.Decoded
			if v, err := r.Decoded.Get(regpath.PTYSDataRateOper); err == nil {
				if u, ok := units.Lookup("PTYS", regpath.PTYSDataRateOper); ok {
					g := u.Apply(v.Uint(), v.Step().Width).Value
					l.SpeedGbps = &g
				}
			}
			if v, ok := fieldOf(r.Decoded, "PTYS", regpath.PTYSMaxPortRate); ok && v > 0 {
				g := float64(v)
				l.MaxSpeedGbps = &g
			}
		} else if ctx.Err() != nil {
			return out, err
		} else if !errors.Is(err, dev.ErrNotSupported) {
			errs = append(errs, fmt.Errorf("port %d PTYS: %w", p.Local, err))
		}
		out = append(out, l)
	}
	return out, errors.Join(errs...)
}

// PAOS admin and oper status values (the PRM's, in every revision).
const (
	paosUp       = 1
	paosUpOnce   = 3
	paosUpLowest = 5
)

// registerTemperatures: MTMP for every sensor MTCAP lists, and for the
// module of each owned port (sensor 64 + module).
func (a *Adapter) registerTemperatures(ctx context.Context, ps []Port) ([]Temperature, error) {
	sensors, err := a.sensorMap(ctx)
	if err != nil {
		return nil, err
	}
	type sensor struct{ index, module int }
	var want []sensor
	for _, i := range sensors {
		want = append(want, sensor{i, -1})
	}
	seen := map[int]bool{}
	for _, p := range ps {
		if p.Module >= 0 && !seen[p.Module] {
			seen[p.Module] = true
			want = append(want, sensor{64 + p.Module, p.Module})
		}
	}
	var out []Temperature
	var errs []error
	for _, w := range want {
		t, err := a.mtmp(ctx, w.index, w.module)
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
func (a *Adapter) sensorMap(ctx context.Context) ([]int, error) {
	a.mu.Lock()
	got := a.sensors
	a.mu.Unlock()
	if got != nil {
		return got, nil
	}
	got = []int{}
	r, err := a.get(ctx, "MTCAP", nil)
	switch {
	case errors.Is(err, dev.ErrNotSupported):
		got = []int{0}
	case err != nil:
		return nil, err
	default:
		m, ok := uintOf(r.Decoded, regpath.MTCAPSensorMap)
		if !ok || m == 0 {
			m = 1
		}
		for m != 0 {
			i := bits.TrailingZeros64(m)
			got = append(got, i)
			m &^= 1 << i
		}
	}
	a.mu.Lock()
	a.sensors = got
	a.mu.Unlock()
	return got, nil
}

// mtmp reads one sensor; a module sensor of an empty cage (the firmware
// answers a status) gives nil.
func (a *Adapter) mtmp(ctx context.Context, index, module int) (*Temperature, error) {
	r, err := a.get(ctx, "MTMP", At("sensor_index", uint64(index)))
	// A module sensor of an empty cage answers bad parameter or resource
	// not available; any other status (busy ...) is a failed reading.
	if st, isStatus := dev.StatusOf(err); module >= 0 && isStatus && (st == dev.StatusBadParameter || st == dev.StatusResourceNotAvailable) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t := &Temperature{Kind: "asic", Index: index, Module: module, Sensor: "sensor" + strconv.Itoa(index)}
	if module >= 0 {
		t.Kind = "module"
	}
	if v, err := r.Decoded.Get(regpath.MTMPSensorName); err == nil && v.IsText() {
		if n := strings.TrimSpace(v.TextString()); n != "" {
			t.Sensor = n
		}
	}
	c := func(path string) (*float64, bool) {
		v, err := r.Decoded.Get(path)
		if err != nil {
			return nil, false
		}
		u, ok := units.Lookup("MTMP", path)
		if !ok {
			return nil, false
		}
		x := u.Apply(v.Uint(), v.Step().Width).Value
		return &x, true
	}
	raw, ok := uintOf(r.Decoded, regpath.MTMPTemperature)
	if !ok {
		return nil, fmt.Errorf("MTMP has no temperature field in this database")
	}
	switch {
	case raw == 0x8000:
		// The most negative 16-bit value: the "no reading" pattern of a
		// signed field, not -4096 °C.
		t.Invalid = "the sensor reads 0x8000, the pattern of no reading"
	case raw == 0 && module >= 0:
		// The kernel treats a module sensor that reads zero as absent
		// (drivers/net/ethernet/mellanox/mlx5/core/hwmon.c): an empty
		// cage, or a module without a temperature monitor.
		t.Invalid = "the module sensor reads 0: an empty cage, or a module without a temperature monitor"
	default:
		t.Celsius, _ = c(regpath.MTMPTemperature)
	}
	if mte, ok := uintOf(r.Decoded, regpath.MTMPMTE); !ok || mte == 1 {
		t.Highest, _ = c(regpath.MTMPMaxTemperature)
		if v, ok := uintOf(r.Decoded, regpath.MTMPMaxTemperature); ok && (v == 0x8000 || (v == 0 && module >= 0)) {
			t.Highest = nil
		}
	}
	if v, ok := c("temperature_threshold_hi"); ok && *v != 0 {
		t.High = v
	}
	if v, ok := c("temperature_threshold_lo"); ok && *v != 0 {
		t.Low = v
	}
	return t, nil
}

// CounterGroups are the PPCNT groups PortCounters reads: IEEE 802.3, RFC
// 2863 and the physical layer; on an InfiniBand port the physical layer
// only (IBCounterGroups), beside the IB PortCounters (Kind "ib", ib.go).
var (
	CounterGroups   = []uint64{0, 1, 18}
	IBCounterGroups = []uint64{18}
)

// ppcntMember is the counter_set member PPCNT group g selects in the
// built-in database ("" when it cannot tell).
func ppcntMember(g uint64) string {
	db := Reference()
	if db == nil {
		return ""
	}
	r, err := db.Register("PPCNT")
	if err != nil {
		return ""
	}
	p, err := db.RegisterPlan(r)
	if err != nil {
		return ""
	}
	buf := p.NewBuffer()
	if p.Encode(buf, At("grp", g).Assignments()) != nil {
		return ""
	}
	d, err := p.Decode(buf)
	if err != nil {
		return ""
	}
	v, err := d.Get("counter_set")
	if err != nil || v.Member() < 0 || v.Len() != 1 {
		return ""
	}
	return v.Kid(0).Name()
}

// registerCounters: every joined 64-bit counter of the PPCNT groups.
func (a *Adapter) registerCounters(ctx context.Context, ps []Port, regs map[CounterKey]*prm.Decoded) ([]CounterSet, error) {
	var out []CounterSet
	var errs []error
	for _, p := range ps {
		groups := CounterGroups
		if p.LinkLayer == LinkInfiniBand {
			groups = IBCounterGroups
			ib, err := a.registerIBCounters(ctx, p, regs)
			switch {
			case err == nil:
				out = append(out, ib)
			case ctx.Err() != nil:
				return out, err
			default:
				errs = append(errs, err)
			}
		}
		cs := CounterSet{Port: p.Local, Kind: "ppcnt", Values: map[string]uint64{}}
		for _, g := range groups {
			r, err := a.get(ctx, "PPCNT", LocalPort(p.Local).Group(g))
			if err != nil {
				if ctx.Err() != nil {
					return out, err
				}
				errs = append(errs, fmt.Errorf("port %d PPCNT group %d: %w", p.Local, g, err))
				continue
			}
			keep(regs, p.Local, g, r.Decoded)
			// A database whose union has no selector (Rev 0.51) decodes
			// every member: keep the one the group selects, as the built-in
			// database picks it, or fields of other groups' layouts read
			// this group's bytes.
			member := ppcntMember(g)
			for _, row := range r.Decoded.Rows() {
				if row.Value.Kind() != prm.KindJoined || row.Value.IsText() {
					continue
				}
				if member != "" && !strings.Contains(row.Path, "counter_set."+member+".") {
					continue
				}
				cs.Values[row.Path[strings.LastIndexByte(row.Path, '.')+1:]] = row.Value.Uint()
			}
		}
		if len(cs.Values) > 0 {
			out = append(out, cs)
		}
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, errors.Join(errs...)
}

// keep files a PPCNT reading of group g (a number as the PRM writes it).
func keep(regs map[CounterKey]*prm.Decoded, port int, g uint64, d *prm.Decoded) {
	if regs != nil {
		regs[CounterKey{Port: port, Group: g}] = d
	}
}

// Description is the adapter's model description (MQIS MODEL_DESCRIPTION,
// what mlxconfig prints as "Description"); "" when the firmware has none
// or the backend has no registers.
func (a *Adapter) Description(ctx context.Context) (string, error) {
	if !a.HasRegisters() {
		return "", nil
	}
	text, err := a.readMQIS(ctx, "MODEL_DESCRIPTION")
	if errors.Is(err, dev.ErrNotSupported) || errors.Is(err, dev.ErrNoSuchInstance) {
		return "", nil
	}
	return strings.TrimSpace(text), err
}

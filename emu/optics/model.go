// Package optics is the emulator's pluggable modules: one module model per
// cage, from a catalog (QSFP28 SR4 and DAC on SFF-8636, SFP28 LR on
// SFF-8472 with external calibration, QSFP112 and OSFP DR4/SR4 on CMIS 5.0,
// an empty cage). Each model answers MCIA (raw EEPROM pages by I2C address,
// page, bank, offset and size) and PDDR page 3 (the firmware's decoded view,
// what mlxlink -m reads) from the same numbers, and reports plug state and
// module errors through PMAOS. Diagnostic values drift with the emulator
// clock and differ from lane to lane; faults (a hung I2C bus, no DDM,
// frozen monitors, a stale firmware view, an unsupported identifier, a bad
// EEPROM checksum, firmware that does not know the module, a dark lane) can
// be switched per cage at power-on or at run time.
package optics

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
)

// Config is what one cage holds.
type Config struct {
	// Kind is a catalog name (Kinds); "" picks DefaultKind of the cage's
	// media; Empty leaves the cage empty.
	Kind string
	// Faults are fault names (FaultNames).
	Faults []string
}

// Faults of one module.
type Faults struct {
	// I2CHang: every EEPROM byte reads 0xFF, the firmware's monitors read
	// 0xFFFF, PMAOS reports Bus_stuck, and so the module's temperature
	// sensor (MTMP 64+N, read over the same bus) has no reading.
	I2CHang bool
	// NoDDM: the module does not implement diagnostics.
	NoDDM bool
	// FrozenMonitors: the module's monitors stop where they are; the
	// firmware's view keeps that same snapshot.
	FrozenMonitors bool
	// StaleFirmwareView: the module's monitors move on, the firmware's view
	// stays at the moment the fault went on.
	StaleFirmwareView bool
	// UnsupportedIdentifier: the module's identifier byte is vendor
	// specific (0x80); the firmware reports it as an unsupported cable.
	UnsupportedIdentifier bool
	// ChecksumError: the EEPROM's base check code is wrong.
	ChecksumError bool
	// FirmwareUnaware: the firmware does not know this module type (as on
	// firmware older than the module): PMAOS unsupported_cable, PDDR
	// cable_type Unidentified, while the EEPROM is fine.
	FirmwareUnaware bool
	// LowRxPower: lane 1 receives almost no light (loss of signal).
	LowRxPower bool
}

var faultNames = []struct {
	name string
	set  func(*Faults) *bool
}{
	{"i2c_hang", func(f *Faults) *bool { return &f.I2CHang }},
	{"no_ddm", func(f *Faults) *bool { return &f.NoDDM }},
	{"frozen_monitors", func(f *Faults) *bool { return &f.FrozenMonitors }},
	{"stale_firmware_view", func(f *Faults) *bool { return &f.StaleFirmwareView }},
	{"unsupported_identifier", func(f *Faults) *bool { return &f.UnsupportedIdentifier }},
	{"checksum_error", func(f *Faults) *bool { return &f.ChecksumError }},
	{"firmware_unaware", func(f *Faults) *bool { return &f.FirmwareUnaware }},
	{"low_rx_power", func(f *Faults) *bool { return &f.LowRxPower }},
}

// FaultNames lists the fault names scenarios use.
func FaultNames() []string {
	var out []string
	for _, f := range faultNames {
		out = append(out, f.name)
	}
	return out
}

// ParseFaults reads fault names.
func ParseFaults(names []string) (Faults, error) {
	var f Faults
	for _, n := range names {
		found := false
		for _, fn := range faultNames {
			if fn.name == strings.TrimSpace(n) {
				*fn.set(&f) = true
				found = true
			}
		}
		if !found {
			return Faults{}, fmt.Errorf("unknown module fault %q; use one of %s", n, strings.Join(FaultNames(), ", "))
		}
	}
	return f, nil
}

// Names lists the faults that are on.
func (f Faults) Names() []string {
	var out []string
	for _, fn := range faultNames {
		if *fn.set(&f) {
			out = append(out, fn.name)
		}
	}
	return out
}

// pmaosError is the PMAOS error_type the firmware reports for the faults.
func (f Faults) pmaosError() string {
	switch {
	case f.I2CHang:
		return "Bus_stuck"
	case f.UnsupportedIdentifier, f.FirmwareUnaware:
		return "unsupported_cable"
	}
	return ""
}

// Model is the modules of one adapter. Safe for concurrent use. Lock
// order: the firmware's lock, then the model's (handlers run under the
// firmware's); the model never calls into the firmware while it holds its own.
type Model struct {
	fw   *fw.Firmware
	clk  emu.Clock
	seed uint64

	mu    sync.Mutex
	cages []*cage
	// statusMu serialises syncStatus, so concurrent changes to a cage reach
	// PMAOS in the order they were made (handlers never take it).
	statusMu sync.Mutex
	// ownErr marks cages whose PMAOS error the model set (and may clear);
	// an error the scenario set stays.
	ownErr []bool
}

// cage is one cage and its module.
type cage struct {
	index  int
	kind   *Kind // nil: empty
	serial string
	seed   uint64
	lanes  []laneBase
	faults Faults
	// frozenAt is when FrozenMonitors or StaleFirmwareView went on.
	frozenAt time.Time
	boot     time.Time
	// host is what the host wrote into the module's writable bytes.
	host written
}

// laneBase is one lane's operating point and how it wanders.
type laneBase struct {
	biasMA, txMW, rxMW float64
	periods            [3]float64 // seconds, for bias, tx, rx
	phases             [3]float64
}

// Install gives an adapter's firmware its modules: MCIA and PDDR page 3
// answer from the models, and PMAOS follows their plug state and faults.
// cages[i] configures cage i (missing entries: the default module for the
// cage's media; cages the spec marks absent stay empty).
func Install(f *fw.Firmware, clk emu.Clock, cages []Config) (*Model, error) {
	if f == nil {
		return nil, errors.New("emu/optics: no firmware to install the modules in")
	}
	if clk == nil {
		return nil, errors.New("emu/optics: no clock; pass the emulation's clock so the diagnostics drift with it")
	}
	spec := f.Spec()
	if len(cages) > len(spec.Modules) {
		return nil, fmt.Errorf("emu/optics: %d cage configurations for an adapter with %d cages", len(cages), len(spec.Modules))
	}
	m := &Model{fw: f, clk: clk, seed: spec.Seed, cages: make([]*cage, len(spec.Modules)), ownErr: make([]bool, len(spec.Modules))}
	for i, ms := range spec.Modules {
		var cfg Config
		if i < len(cages) {
			cfg = cages[i]
		}
		name := cfg.Kind
		if name == "" {
			name = DefaultKind(ms.Media)
		}
		if ms.Absent {
			name = Empty
		}
		faults, err := ParseFaults(cfg.Faults)
		if err != nil {
			return nil, fmt.Errorf("emu/optics: cage %d: %w", i, err)
		}
		c, err := newCage(i, name, spec.Seed, f.Boot())
		if err != nil {
			return nil, fmt.Errorf("emu/optics: cage %d: %w", i, err)
		}
		c.faults = faults
		c.frozenAt = clk.Now()
		m.cages[i] = c
	}
	if err := f.SetBehaviour("MCIA", fw.Behaviour{Access: m.mcia}); err != nil {
		return nil, fmt.Errorf("emu/optics: %w", err)
	}
	f.SetPDDRPage(3, m.pddrModule)
	f.SetModuleClock(m.sensorTime)
	for i := range m.cages {
		if err := m.syncStatus(i); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func newCage(index int, name string, seed uint64, boot time.Time) (*cage, error) {
	k, err := LookupKind(name)
	if err != nil {
		return nil, err
	}
	c := &cage{index: index, seed: mix(seed, 0x0971C5+uint64(index)), boot: boot}
	if k.Name == Empty {
		return c, nil
	}
	c.kind = &k
	d := k.def
	c.serial = fmt.Sprintf("%s%02d%07d", d.snPrefix, index, c.seed%10_000_000)
	for l := 0; l < d.lanes; l++ {
		r := func(k uint64) float64 { return float64(mix(c.seed, uint64(l)*16+k)%2001)/1000 - 1 } // -1..1
		lb := laneBase{
			biasMA: d.biasMA * (1 + 0.08*r(1)),
			txMW:   fromDBm(d.txDBm + 0.6*r(2)),
			rxMW:   fromDBm(d.rxDBm + 1.0*r(3)),
		}
		for j := range lb.periods {
			lb.periods[j] = 17 + 13*float64(j) + 4.3*float64(l) + 3*r(uint64(4+j))
			lb.phases[j] = math.Pi * r(uint64(8+j))
		}
		c.lanes = append(c.lanes, lb)
	}
	return c, nil
}

// syncStatus reports cage i's plug state and fault to PMAOS. It runs
// outside the model's lock: the firmware takes its own.
func (m *Model) syncStatus(i int) error {
	m.statusMu.Lock()
	defer m.statusMu.Unlock()
	m.mu.Lock()
	c := m.cages[i]
	plugged := c.kind != nil
	want := c.faults.pmaosError()
	own := m.ownErr[i]
	m.mu.Unlock()
	cur, err := m.fw.ModuleStatus(i)
	if err != nil {
		return fmt.Errorf("emu/optics: %w", err)
	}
	next := fw.ModuleStatus{Plugged: plugged, Error: cur.Error}
	switch {
	case !plugged:
		next.Error = ""
	case want != "":
		if cur.Error == "" || own {
			next.Error = want
		}
	case own:
		next.Error = ""
	}
	if next == cur {
		return nil
	}
	if err := m.fw.SetModuleStatus(i, next); err != nil {
		return fmt.Errorf("emu/optics: %w", err)
	}
	m.mu.Lock()
	m.ownErr[i] = next.Error != "" && next.Error == want
	m.mu.Unlock()
	return nil
}

func (m *Model) cage(i int) (*cage, error) {
	if i < 0 || i >= len(m.cages) {
		return nil, fmt.Errorf("emu/optics: cage %d does not exist (cages 0..%d)", i, len(m.cages)-1)
	}
	return m.cages[i], nil
}

// SetFaults replaces a cage's faults at run time. Monitors freeze at the
// moment FrozenMonitors or StaleFirmwareView goes on.
func (m *Model) SetFaults(i int, f Faults) error {
	m.mu.Lock()
	c, err := m.cage(i)
	if err != nil {
		m.mu.Unlock()
		return err
	}
	was := c.faults
	if (f.FrozenMonitors && !was.FrozenMonitors) || (f.StaleFirmwareView && !was.StaleFirmwareView) {
		c.frozenAt = m.clk.Now()
	}
	c.faults = f
	m.mu.Unlock()
	return m.syncStatus(i)
}

// Faults returns a cage's faults.
func (m *Model) Faults(i int) (Faults, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.cage(i)
	if err != nil {
		return Faults{}, err
	}
	return c.faults, nil
}

// Plug puts a catalog module into cage i (Empty unplugs it); its faults
// are cleared.
func (m *Model) Plug(i int, kind string) error {
	m.mu.Lock()
	old, err := m.cage(i)
	if err != nil {
		m.mu.Unlock()
		return err
	}
	// The seed was kept at Install: asking the firmware here, under the
	// model's lock, would invert the lock order handlers use (firmware, then
	// model).
	c, err := newCage(i, kind, m.seed, old.boot)
	if err != nil {
		m.mu.Unlock()
		return fmt.Errorf("emu/optics: cage %d: %w", i, err)
	}
	c.frozenAt = m.clk.Now()
	m.cages[i] = c
	m.mu.Unlock()
	return m.syncStatus(i)
}

// Kind returns the catalog name of what is in cage i.
func (m *Model) Kind(i int) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.cage(i)
	if err != nil {
		return "", err
	}
	if c.kind == nil {
		return Empty, nil
	}
	return c.kind.Name, nil
}

// Cages is the number of cages.
func (m *Model) Cages() int { return len(m.cages) }

// Reading is what a module's monitors say, in physical units, exactly as
// its EEPROM encodes them (after rounding to the counts and, for
// externally calibrated modules, after the calibration): what a correct
// decoder must show.
type Reading struct {
	Kind        string
	Plugged     bool
	DDM         bool
	TempC       float64
	VoltageV    float64
	Lanes       []LaneReading
	Serial      string
	Vendor      string
	PartNumber  string
	Identifier  byte
	LanesActive int
}

// LaneReading is one lane's monitors.
type LaneReading struct {
	BiasMA, TxMW, RxMW float64
	RxLOS              bool
}

// Snapshot is cage i's readings now (the EEPROM's view, so frozen when the
// monitors are).
func (m *Model) Snapshot(i int) (Reading, error) {
	now := m.clk.Now()
	m.mu.Lock()
	c, err := m.cage(i)
	if err != nil {
		m.mu.Unlock()
		return Reading{}, err
	}
	at := c.eepromTime(now)
	m.mu.Unlock()
	milli, ok := m.fw.ModuleTemperature(i, at)
	if !ok {
		milli = defaultMilliC
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r := Reading{Kind: Empty}
	if c.kind == nil {
		return r, nil
	}
	s := c.sample(at, milli)
	r = Reading{Kind: c.kind.Name, Plugged: true, DDM: s.ddm, TempC: s.tempC, VoltageV: s.vccV, Serial: c.serial,
		Vendor: c.kind.def.vendor, PartNumber: c.kind.def.pn, Identifier: c.identifier(), LanesActive: c.kind.def.lanes}
	for l := range s.biasMA {
		r.Lanes = append(r.Lanes, LaneReading{BiasMA: s.biasMA[l], TxMW: s.txMW[l], RxMW: s.rxMW[l], RxLOS: s.rxLOS[l]})
	}
	return r, nil
}

// defaultMilliC is the temperature of a module whose sensor the firmware
// does not model.
const defaultMilliC = 35_000

// eepromTime is the moment the module's monitors show at now.
func (c *cage) eepromTime(now time.Time) time.Time {
	if c.faults.FrozenMonitors && now.After(c.frozenAt) {
		return c.frozenAt
	}
	return now
}

// sensorTime is the moment module i's temperature sensor (MTMP 64+i)
// shows at now: the firmware reads the module's temperature monitor, so
// it shows what the firmware's view shows. Called by the firmware, under
// its lock (the lock order: firmware, then model).
func (m *Model) sensorTime(i int, now time.Time) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i < 0 || i >= len(m.cages) {
		return now
	}
	return m.cages[i].firmwareTime(now)
}

// firmwareTime is the moment the firmware's view shows at now.
func (c *cage) firmwareTime(now time.Time) time.Time {
	if (c.faults.FrozenMonitors || c.faults.StaleFirmwareView) && now.After(c.frozenAt) {
		return c.frozenAt
	}
	return now
}

func (c *cage) identifier() byte {
	if c.kind == nil {
		return 0
	}
	if c.faults.UnsupportedIdentifier {
		return 0x80
	}
	return c.kind.def.id
}

// sample is a module's monitors at one moment: the counts its EEPROM holds
// and the physical values they stand for.
type sample struct {
	ddm                bool
	tempRaw            int16
	vccRaw             uint16
	biasRaw, txRaw     []uint16
	rxRaw              []uint16
	tempC, vccV        float64
	biasMA, txMW, rxMW []float64
	rxLOS              []bool
}

// sample evaluates the monitors at time at, with the module temperature
// (milli-°C) the firmware's thermal model gives.
func (c *cage) sample(at time.Time, milliC int64) sample {
	d := c.kind.def
	s := sample{ddm: d.ddm && !c.faults.NoDDM}
	n := d.lanes
	s.biasRaw, s.txRaw, s.rxRaw = make([]uint16, n), make([]uint16, n), make([]uint16, n)
	s.biasMA, s.txMW, s.rxMW, s.rxLOS = make([]float64, n), make([]float64, n), make([]float64, n), make([]bool, n)
	if !s.ddm {
		return s
	}
	t := at.Sub(c.boot).Seconds()
	tempC := float64(milliC) / 1000
	cal := c.cal()
	s.tempRaw, s.tempC = cal.encodeTemp(tempC)
	s.vccRaw, s.vccV = cal.encodeVcc(d.vcc + 0.012*math.Sin(2*math.Pi*t/47+float64(c.seed%7)))
	for l, lb := range c.lanes {
		wave := func(j int) float64 { return math.Sin(2*math.Pi*t/lb.periods[j] + lb.phases[j]) }
		// Bias rises a little with temperature (the laser driver holds the
		// optical power), and every monitor wanders by a few percent.
		bias := lb.biasMA * (1 + 0.004*(tempC-40) + 0.015*wave(0))
		tx := lb.txMW * (1 + 0.03*wave(1))
		rx := lb.rxMW * (1 + 0.04*wave(2))
		if l == 0 && c.faults.LowRxPower {
			rx = fromDBm(-30) * (1 + 0.1*wave(2))
		}
		s.biasRaw[l], s.biasMA[l] = cal.encodeBias(bias, d.biasMult)
		s.txRaw[l], s.txMW[l] = cal.encodeTx(tx)
		s.rxRaw[l], s.rxMW[l] = cal.encodeRx(rx)
		s.rxLOS[l] = toDBm(s.rxMW[l]) < d.losDBm
	}
	return s
}

func fromDBm(dbm float64) float64 { return math.Pow(10, dbm/10) }

func toDBm(mw float64) float64 {
	if mw <= 0 {
		return math.Inf(-1)
	}
	return 10 * math.Log10(mw)
}

// mix is splitmix64 of seed and k: the model's only source of variety.
func mix(seed, k uint64) uint64 {
	z := seed + 0x9E3779B97F4A7C15*(k+1)
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

package fw

import (
	"math"
	"time"
)

// Sensor indexes: the ASIC is sensor 0; module i is sensor 64+i
// (the PRM's MTMP sensor_index description; MTCAP lists the sensors).
const (
	asicSensor       = 0
	moduleSensorBase = 64
	maxSamples       = 64 // samples between two reads when tracking the maximum
)

// sensor is one temperature sensor. All arithmetic is integer (milli-°C), so
// readings are identical on every platform for a seed and a clock.
type sensor struct {
	index  int
	name   string
	module int // -1 for the ASIC
	seed   uint64

	idle, load, wander int64 // milli-°C
	warmup, period     time.Duration

	// MTMP state.
	mte        bool  // max temperature tracking enabled
	maxRaw     int64 // in 0.125 °C
	maxValid   bool
	lastSample time.Time
	hiRaw      int64 // thresholds in 0.125 °C
	loRaw      int64
	tee, sdee  uint8
}

func milli(c float64) int64 { return int64(math.Round(c * 1000)) }

// defaults fills a thermal spec's zero fields.
func (t Thermal) withDefaults(idle, load, wander, high, low float64, warm, period time.Duration) Thermal {
	if t.IdleC == 0 && t.LoadC == 0 && t.WanderC == 0 {
		t.IdleC, t.LoadC, t.WanderC = idle, load, wander
	}
	if t.Warmup == 0 {
		t.Warmup = warm
	}
	if t.Period == 0 {
		t.Period = period
	}
	if t.HighC == 0 && t.LowC == 0 {
		t.HighC, t.LowC = high, low
	}
	return t
}

func newSensor(index, module int, name string, t Thermal, seed uint64) *sensor {
	return &sensor{
		index: index, module: module, name: name, seed: seed,
		idle: milli(t.IdleC), load: milli(t.LoadC), wander: milli(t.WanderC),
		warmup: t.Warmup, period: t.Period,
		mte:   true,
		hiRaw: milli(t.HighC) * 8 / 1000, loRaw: milli(t.LowC) * 8 / 1000,
	}
}

func (f *Firmware) buildSensors() {
	asic := f.spec.ASIC.withDefaults(48, 12, 3, 105, 100, 10*time.Minute, 90*time.Second)
	f.sensors[asicSensor] = newSensor(asicSensor, -1, "ASIC", asic, mix(f.spec.Seed, 0xA51C))
	for i, m := range f.spec.Modules {
		t := m.Thermal.withDefaults(33, 6, 1.5, 75, 70, 5*time.Minute, 2*time.Minute)
		f.sensors[moduleSensorBase+i] = newSensor(moduleSensorBase+i, i, "", t, mix(f.spec.Seed, uint64(0x300+i)))
	}
}

// milliAt is the sensor's temperature at time t after power-on: a smooth
// warm-up, then a walk between seeded way-points joined by smoothstep curves
// (continuous, with a continuous slope, so readings never jump).
func (s *sensor) milliAt(t time.Duration) int64 {
	if t < 0 {
		t = 0
	}
	const one = 1 << 16
	v := s.idle
	if s.warmup > 0 && t < s.warmup {
		v += s.load * smoothstep(int64(t*one/s.warmup)) / one
	} else {
		v += s.load
	}
	if s.period <= 0 || s.wander == 0 {
		return v
	}
	k := uint64(t / s.period)
	frac := int64((t % s.period) * one / s.period)
	a, b := s.waypoint(k), s.waypoint(k+1)
	return v + a + (b-a)*smoothstep(frac)/one
}

// waypoint is a seeded offset in [-wander, +wander].
func (s *sensor) waypoint(k uint64) int64 {
	r := int64(mix(s.seed, k) % 2001) // 0..2000
	return s.wander * (r - 1000) / 1000
}

// smoothstep maps x in [0, 1<<16] to 3x²-2x³ on the same scale.
func smoothstep(x int64) int64 {
	const one = 1 << 16
	x = min(max(x, 0), one)
	return x * x / one * (3*one - 2*x) / one
}

// raw converts milli-°C to MTMP units of 0.125 °C, rounding to nearest.
func raw(m int64) int64 {
	v := m * 8
	if v >= 0 {
		return (v + 500) / 1000
	}
	return (v - 500) / 1000
}

// reading returns the sensor's current value in 0.125 °C and whether it
// reads at all: a module sensor reads nothing for an empty cage, or for a
// module the firmware cannot reach (moduleUnreachable).
func (f *Firmware) reading(s *sensor, now time.Time) (int64, bool) {
	if s.module >= 0 {
		if st := f.modules[s.module].status; !st.Plugged || moduleUnreachable[st.Error] {
			return 0, false
		}
	}
	at := now
	if s.module >= 0 && f.moduleClock != nil {
		// A module's sensor is the module's own monitor, read over its
		// bus: it stands where the module's monitors stand.
		at = f.moduleClock(s.module, now)
	}
	if f.faults.FreezeTemperatures {
		at = f.frozenAt
	}
	m := s.milliAt(at.Sub(f.boot))
	if s.module < 0 {
		m += milli(f.faults.ASICTemperatureOffsetC)
	}
	return raw(m), true
}

// SetModuleClock makes the module sensors (MTMP 64+N) read their module
// at the moment fn gives for now: the modules' model (emu/optics) says
// when a module's monitors stopped (frozen monitors, a stale firmware
// view), so its sensor stops with them. fn runs with the firmware
// locked; nil reads every module at now.
func (f *Firmware) SetModuleClock(fn func(module int, now time.Time) time.Time) {
	f.mu.Lock()
	f.moduleClock = fn
	f.mu.Unlock()
}

// moduleUnreachable are the PMAOS error_type names of a module whose
// management interface does not answer (the bus is stuck, the EEPROM does
// not respond): the firmware reads its temperature over that interface,
// so its sensor has no reading, as for an empty cage. The other errors
// (too hot, unsupported, shorted) leave the module readable.
var moduleUnreachable = map[string]bool{"Bus_stuck": true, "bad_or_unsupported_EEPROM": true}

// ModuleTemperature is the temperature of module index in milli-°C at time
// at, as its sensor (MTMP 64+index) follows it: the optics model reports the
// same temperature in the module's EEPROM and in PDDR, so MTMP, the module's
// diagnostics and mlxlink agree. ok is false for a cage without a module.
// For handlers, which run with the firmware already locked.
func (c *Call) ModuleTemperature(index int, at time.Time) (milliC int64, ok bool) {
	return c.fw.moduleMilli(index, at)
}

// ModuleTemperature is Call.ModuleTemperature for callers outside a handler.
func (f *Firmware) ModuleTemperature(index int, at time.Time) (milliC int64, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.moduleMilli(index, at)
}

func (f *Firmware) moduleMilli(index int, at time.Time) (int64, bool) {
	s := f.sensors[moduleSensorBase+index]
	if s == nil || s.module < 0 || !f.modules[s.module].status.Plugged {
		return 0, false
	}
	if f.faults.FreezeTemperatures {
		at = f.frozenAt
	}
	return s.milliAt(at.Sub(f.boot)), true
}

// sample updates the sensor's maximum with readings between its last sample
// and now (at most maxSamples of them), so that a peak between two reads is
// not lost. The result depends only on the times of the reads.
func (f *Firmware) sample(s *sensor, now time.Time) {
	cur, ok := f.reading(s, now)
	if !ok {
		s.lastSample = now
		return
	}
	if s.mte {
		if s.maxValid && !s.lastSample.IsZero() && now.After(s.lastSample) {
			gap := now.Sub(s.lastSample)
			step := max(gap/maxSamples, time.Second)
			t := s.lastSample
			for i := 0; i < maxSamples; i++ {
				t = t.Add(step)
				if !t.Before(now) {
					break
				}
				if v, ok := f.reading(s, t); ok && v > s.maxRaw {
					s.maxRaw = v
				}
			}
		}
		if !s.maxValid || cur > s.maxRaw {
			s.maxRaw, s.maxValid = cur, true
		}
	}
	s.lastSample = now
}

// Temperature returns a sensor's reading in °C (sensor 0 is the ASIC,
// 64+i module i); ok is false for a sensor that does not exist or reads
// nothing.
func (f *Firmware) Temperature(index int) (celsius float64, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.sensors[index]
	if s == nil {
		return 0, false
	}
	r, ok := f.reading(s, f.clk.Now())
	return float64(r) / 8, ok
}

// Thresholds returns a sensor's MTMP high and low thresholds in °C; ok is
// false for a sensor that does not exist.
func (f *Firmware) Thresholds(index int) (high, low float64, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.sensors[index]
	if s == nil {
		return 0, 0, false
	}
	return float64(s.hiRaw) / 8, float64(s.loRaw) / 8, true
}

// mix is splitmix64 of seed and k: the model's only source of noise.
func mix(seed, k uint64) uint64 {
	z := seed + 0x9E3779B97F4A7C15*(k+1)
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

package optics

import (
	"fmt"
	"math"
)

// Level says where a reading sits against its thresholds.
type Level int

// Levels, from fine to bad.
const (
	LevelOK Level = iota
	// LevelNear: inside the warning limits but within a tenth of the
	// warning window of one of them.
	LevelNear
	LevelWarning
	LevelAlarm
)

func (l Level) String() string {
	return [...]string{"ok", "near", "warning", "alarm"}[l]
}

// MarshalText writes the level's name in JSON.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// Mark is a reading that is near or past a threshold.
type Mark struct {
	Quantity string  `json:"quantity"` // temperature, voltage, tx bias, tx power, rx power
	Lane     int     `json:"lane,omitempty"`
	Level    Level   `json:"level"`
	High     bool    `json:"high"` // past or near the high side
	Value    float64 `json:"value"`
	Limit    float64 `json:"limit"` // the threshold crossed or approached
	Unit     string  `json:"unit"`
}

func (k Mark) String() string {
	side := "low"
	if k.High {
		side = "high"
	}
	where := k.Quantity
	if k.Lane > 0 {
		where = fmt.Sprintf("lane %d %s", k.Lane, k.Quantity)
	}
	v := fmtNum(k.Value)
	if k.Unit == "dBm" && k.Value <= darkDBm {
		v = "-inf"
	}
	switch k.Level {
	case LevelAlarm, LevelWarning:
		return fmt.Sprintf("%s %s %s is past the %s %s threshold %s %s", where, v, k.Unit, side, k.Level, fmtNum(k.Limit), k.Unit)
	}
	return fmt.Sprintf("%s %s %s is near the %s warning threshold %s %s", where, v, k.Unit, side, fmtNum(k.Limit), k.Unit)
}

// limits are thresholds as plain numbers (NaN: not given).
type limits struct{ ha, la, hw, lw float64 }

func limitsOf[T any](l *Limits[T], val func(*T) float64) limits {
	f := func(p *T) float64 {
		if p == nil || !isValid(p) {
			return math.NaN()
		}
		return val(p)
	}
	if l == nil {
		return limits{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	}
	out := limits{f(l.HighAlarm), f(l.LowAlarm), f(l.HighWarning), f(l.LowWarning)}
	// A module that leaves its thresholds at zero has none.
	if nz := func(v float64) bool { return !math.IsNaN(v) && v != 0 && !math.IsInf(v, 0) }; !nz(out.ha) && !nz(out.la) && !nz(out.hw) && !nz(out.lw) {
		return limits{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	}
	return out
}

// assess places v against l.
func assess(v float64, l limits) (Level, bool, float64) {
	switch {
	case math.IsNaN(v):
		return LevelOK, false, 0
	case !math.IsNaN(l.ha) && v > l.ha:
		return LevelAlarm, true, l.ha
	case !math.IsNaN(l.la) && v < l.la:
		return LevelAlarm, false, l.la
	case !math.IsNaN(l.hw) && v > l.hw:
		return LevelWarning, true, l.hw
	case !math.IsNaN(l.lw) && v < l.lw:
		return LevelWarning, false, l.lw
	}
	hi, lo := l.hw, l.lw
	if math.IsNaN(hi) {
		hi = l.ha
	}
	if math.IsNaN(lo) {
		lo = l.la
	}
	if math.IsNaN(hi) || math.IsNaN(lo) || hi <= lo {
		return LevelOK, false, 0
	}
	margin := (hi - lo) / 10
	switch {
	case v > hi-margin:
		return LevelNear, true, hi
	case v < lo+margin:
		return LevelNear, false, lo
	}
	return LevelOK, false, 0
}

// dbmOf is a power's dBm as a float, with −∞ pulled to a very low number
// so comparisons still order it.
func dbmOf(p *Power) float64 {
	d := float64(p.DBm)
	if math.IsInf(d, -1) {
		return -1e9
	}
	return d
}

// darkDBm stands for −∞ in a Mark (JSON has no infinities).
const darkDBm = -99

// Marks lists every reading near or past a threshold. Powers are judged in
// dBm (a dark lane is past any low threshold).
func Marks(m *Module) []Mark {
	var out []Mark
	if m == nil || m.Thresholds == nil {
		return out
	}
	th := m.Thresholds
	add := func(q string, lane int, v float64, l limits, unit string, shown float64) {
		lv, high, lim := assess(v, l)
		if lv != LevelOK {
			out = append(out, Mark{Quantity: q, Lane: lane, Level: lv, High: high, Value: shown, Limit: lim, Unit: unit})
		}
	}
	if m.Temperature.Valid() {
		add("temperature", 0, m.Temperature.C, limitsOf(th.Temperature, func(t *Temperature) float64 { return t.C }), "°C", m.Temperature.C)
	}
	if m.Voltage.Valid() {
		add("voltage", 0, m.Voltage.V, limitsOf(th.Voltage, func(v *Voltage) float64 { return v.V }), "V", m.Voltage.V)
	}
	bias := limitsOf(th.TxBias, func(c *Current) float64 { return c.MA })
	tx := limitsOf(th.TxPower, dbmOf)
	rx := limitsOf(th.RxPower, dbmOf)
	for _, l := range m.Lanes {
		if l.TxBias.Valid() {
			add("tx bias", l.Lane, l.TxBias.MA, bias, "mA", l.TxBias.MA)
		}
		if l.TxPower.Valid() {
			add("tx power", l.Lane, dbmOf(l.TxPower), tx, "dBm", math.Max(float64(l.TxPower.DBm), darkDBm))
		}
		if l.RxPower.Valid() {
			add("rx power", l.Lane, dbmOf(l.RxPower), rx, "dBm", math.Max(float64(l.RxPower.DBm), darkDBm))
		}
	}
	return out
}

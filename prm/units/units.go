// Package units knows the units of register fields that the ADB gives only
// in prose: MTMP temperatures in 1/8 °C, PDDR module voltage in 100 µV, and
// so on. The table is our own, from the PRM's field descriptions (the
// descr of each field in the register database); values convert to SI-ish
// units people read (°C, mV, mA, dBm, Gb/s, s), rounded to the field's
// resolution.
package units

import (
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/cxray/cxray/prm"
)

// Unit converts a raw field value.
type Unit struct {
	Scale  float64 // multiply the raw value by this
	Symbol string  // of the converted value
	Signed bool    // the raw value is two's complement in its width
}

// Scaled is a converted value.
type Scaled struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// Decimals is how many decimals the unit's resolution has: the exact
// decimals of a scale such as 0.125 or 0.002, else (1/256) enough to show
// one count.
func (u Unit) Decimals() int {
	if u.Scale >= 1 || u.Scale <= 0 {
		return 0
	}
	for d := 1; d <= 4; d++ {
		x := u.Scale * math.Pow10(d)
		if math.Abs(x-math.Round(x)) < 1e-9 {
			return d
		}
	}
	return int(math.Ceil(-math.Log10(u.Scale)))
}

// Apply converts raw (width bits), rounded to the unit's resolution (no
// 49.486000000000004 mA).
func (u Unit) Apply(raw uint64, width int) Scaled {
	v := float64(raw)
	if u.Signed && width > 0 && width < 64 && raw>>(width-1)&1 == 1 {
		v = float64(int64(raw) - int64(1)<<width)
	}
	p := math.Pow10(u.Decimals())
	return Scaled{Value: math.Round(v*u.Scale*p) / p, Unit: u.Symbol}
}

// String prints a scaled value with sensible precision.
func (s Scaled) String() string {
	v := s.Value
	if v == 0 {
		v = 0 // no "-0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + " " + s.Unit
}

// cond picks an entry by another field of the register: PDDR's powers
// are dBm or µW by module_info_ext.
type cond struct {
	field string
	value uint64
}

type entry struct {
	register string
	pattern  string // path.Match pattern over the field path
	unit     Unit
	when     *cond
}

const pddrModule = "page_data.pddr_module_info_ext."

var (
	inDBm = &cond{"module_info_ext", 0}
	inUW  = &cond{"module_info_ext", 1}
)

var table = []entry{
	{"MTMP", "temperature", Unit{0.125, "°C", true}, nil},
	{"MTMP", "max_temperature", Unit{0.125, "°C", true}, nil},
	{"MTMP", "temperature_threshold_hi", Unit{0.125, "°C", true}, nil},
	{"MTMP", "temperature_threshold_lo", Unit{0.125, "°C", true}, nil},
	{"MGIR", "hw_info.uptime", Unit{1, "s", false}, nil},
	{"PTYS", "data_rate_oper", Unit{0.1, "Gb/s", false}, nil},
	{"PTYS", "max_port_rate", Unit{1, "Gb/s", false}, nil},
	{"PMTU", "*_mtu", Unit{1, "bytes", false}, nil},
	// PDDR module-info page (what mlxlink -m prints).
	{"PDDR", pddrModule + "temperature", Unit{1.0 / 256, "°C", true}, nil},
	{"PDDR", pddrModule + "temperature_*_th", Unit{1.0 / 256, "°C", true}, nil},
	{"PDDR", pddrModule + "voltage", Unit{0.1, "mV", false}, nil},
	{"PDDR", pddrModule + "voltage_*_th", Unit{0.1, "mV", false}, nil},
	{"PDDR", pddrModule + "tx_bias_lane*", Unit{0.002, "mA", false}, nil},
	{"PDDR", pddrModule + "tx_bias_*_th", Unit{0.002, "mA", false}, nil},
	// "measured in dBm/uW according to module_info_ext": 0 is dBm as a
	// signed integer, 1 is µW; the thresholds follow ("resolution for
	// rx_power and tx_power in module info page").
	// Lanes and thresholds only: rx_power_type is an enum (OMA or average).
	{"PDDR", pddrModule + "?x_power_lane*", Unit{1, "dBm", true}, inDBm},
	{"PDDR", pddrModule + "?x_power_*_th", Unit{1, "dBm", true}, inDBm},
	{"PDDR", pddrModule + "?x_power_lane*", Unit{1, "µW", false}, inUW},
	{"PDDR", pddrModule + "?x_power_*_th", Unit{1, "µW", false}, inUW},
	{"PDDR", pddrModule + "wavelength", Unit{1, "nm", false}, nil},
	{"PDDR", pddrModule + "cable_length", Unit{1, "m", false}, nil},
	// PPCNT's physical-layer groups: "the time passed since the last
	// counters clear event in msec".
	{"PPCNT", "counter_set.*.time_since_last_clear", Unit{0.001, "s", false}, nil},
}

// berFields pairs PPCNT's BER coefficients with their magnitudes (the
// statistical group 0x16: BER = coef × 10^-magnitude), joined the way
// 'cxray link' reads them (feature/link/ber.go).
var berFields = map[string]string{
	"raw_ber_coef":        "raw_ber_magnitude",
	"effective_ber_coef":  "effective_ber_magnitude",
	"symbol_fec_ber_coef": "symbol_ber_magnitude",
}

// clean is the coefficient and magnitude firmware writes for no errors.
const cleanCoef, cleanMag = 15, 255

// ber joins a PPCNT coefficient with its magnitude: the ratio, and its
// text ("2E-10"; "no errors (15E-255)").
func ber(register, fieldPath string, v prm.Value) (float64, string, bool) {
	if !strings.EqualFold(register, "PPCNT") {
		return 0, "", false
	}
	dir, leaf := "", fieldPath
	if i := strings.LastIndexByte(fieldPath, '.'); i >= 0 {
		dir, leaf = fieldPath[:i+1], fieldPath[i+1:]
	}
	magLeaf, ok := berFields[leaf]
	if !ok || v.Decoded() == nil {
		return 0, "", false
	}
	m, err := v.Decoded().Get(dir + magLeaf)
	if err != nil || m.Kind() != prm.KindUint {
		return 0, "", false
	}
	coef, mag := v.Uint(), m.Uint()
	fw := fmt.Sprintf("%dE-%d", coef, mag)
	if t, err := v.Decoded().Get(dir + "time_since_last_clear"); err == nil && t.Uint() == 0 {
		// Nothing counted yet: not a ratio (link says n/a too).
		return math.NaN(), fmt.Sprintf("n/a: no time since the counters were cleared (%s)", fw), true
	}
	switch {
	case coef == cleanCoef && mag == cleanMag, coef == 0:
		return 0, fmt.Sprintf("no errors (%s, with %s)", fw, magLeaf), true
	case mag > 400:
		return 0, "", false
	}
	return float64(coef) * math.Pow(10, -float64(mag)), fmt.Sprintf("%s (with %s)", fw, magLeaf), true
}

// Lookup returns the unit of a register field, if known. For a field whose
// unit depends on another field, it is the unit of that field's reset
// value (PDDR powers: dBm); LookupIn decides from the register's data.
func Lookup(register, fieldPath string) (Unit, bool) {
	return LookupIn(register, fieldPath, nil)
}

// LookupIn is Lookup deciding conditional units from d.
func LookupIn(register, fieldPath string, d *prm.Decoded) (Unit, bool) {
	reg := strings.ToUpper(register)
	for _, e := range table {
		if e.register != reg {
			continue
		}
		if ok, _ := path.Match(e.pattern, fieldPath); !ok {
			continue
		}
		if e.when != nil {
			v := uint64(0)
			if d != nil {
				if f, err := d.Get(e.when.field); err == nil && f.Kind() == prm.KindUint {
					v = f.Uint()
				}
			}
			if v != e.when.value {
				continue
			}
		}
		return e.unit, true
	}
	return Unit{}, false
}

// Describe is "0.125 °C per unit" for documentation.
func (u Unit) Describe() string {
	s := fmt.Sprintf("%g %s per count", u.Scale, u.Symbol)
	if u.Signed {
		s += ", signed"
	}
	return s
}

// Text is a field's value as `reg get` shows it: prm.FormatValue, and for
// a field with a unit " = " and the value in that unit ("0x0196 (406) =
// 50.75 °C"; a signed field's raw part reads "0xfff6 (-10) = -10 dBm"; a
// PPCNT BER coefficient joined with its magnitude, "2 = 2E-10 (with
// raw_ber_magnitude)"). With raw, the number only (prm.FormatRaw): --raw
// asks for what the register holds, not a conversion. `reg set` shows
// before and after with it, so both read as `reg get` does.
func Text(register, fieldPath string, v prm.Value, raw bool) string {
	if raw {
		return prm.FormatRaw(v)
	}
	text := prm.FormatValue(v)
	if !numeric(v) || v.NotValid() != "" || isEnum(v) {
		return text
	}
	if _, t, ok := ber(register, fieldPath, v); ok {
		return text + " = " + t
	}
	u, ok := LookupIn(register, fieldPath, v.Decoded())
	if !ok {
		return text
	}
	w := v.Step().Width
	if u.Signed {
		if n := signed(v.Uint(), w); n < 0 {
			text = fmt.Sprintf("0x%0*x (%d)", (w+3)/4, v.Uint(), n)
		}
	}
	return text + " = " + u.Apply(v.Uint(), w).String()
}

// numeric: a number field, or halves joined into one (time_since_last_clear).
func numeric(v prm.Value) bool { return v.Kind() == prm.KindUint || v.Kind() == prm.KindJoined }

// Of is a field's value in its unit, if it has one.
func Of(register, fieldPath string, v prm.Value) (Scaled, bool) {
	if !numeric(v) || v.NotValid() != "" || isEnum(v) {
		return Scaled{}, false // a value that means nothing, or names a choice, has no reading
	}
	if r, _, ok := ber(register, fieldPath, v); ok {
		if math.IsNaN(r) {
			return Scaled{}, false // no ratio to give, never a number
		}
		return Scaled{Value: r, Unit: "ratio"}, true
	}
	u, ok := LookupIn(register, fieldPath, v.Decoded())
	if !ok {
		return Scaled{}, false
	}
	return u.Apply(v.Uint(), v.Step().Width), true
}

// Fields maps the paths of a decoded register's fields that have units to
// their values in those units (the "units" object of JSON output).
func Fields(register string, d *prm.Decoded) map[string]Scaled {
	out := map[string]Scaled{}
	for _, row := range d.Rows() {
		if s, ok := Of(register, row.Path, row.Value); ok {
			out[row.Path] = s
		}
	}
	return out
}

// isEnum says the database gives the field named values: an enum always
// wins over a unit inferred from the field's name.
func isEnum(v prm.Value) bool {
	f := v.Step().Field
	return f != nil && len(f.Enum) > 0
}

func signed(v uint64, width int) int64 {
	if width <= 0 || width >= 64 || v>>(width-1)&1 == 0 {
		return int64(v)
	}
	return int64(v) - int64(1)<<width
}

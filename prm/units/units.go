// Package units knows the units of register fields that the ADB gives only
// in prose: MTMP temperatures in 1/8 °C, PDDR module voltage in 100 µV, and
// so on. The table is our own, from the PRM's descriptions (see
// shared/research/adb-and-mstflint-tools.md §3.2); values convert to SI-ish
// units people read (°C, mV, mA, Gb/s, s).
package units

import (
	"fmt"
	"path"
	"strconv"
	"strings"
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

// Apply converts raw (width bits).
func (u Unit) Apply(raw uint64, width int) Scaled {
	v := float64(raw)
	if u.Signed && width > 0 && width < 64 && raw>>(width-1)&1 == 1 {
		v = float64(int64(raw) - int64(1)<<width)
	}
	return Scaled{Value: v * u.Scale, Unit: u.Symbol}
}

// String prints a scaled value with sensible precision.
func (s Scaled) String() string {
	return strconv.FormatFloat(s.Value, 'f', -1, 64) + " " + s.Unit
}

type entry struct {
	register string
	pattern  string // path.Match pattern over the field path
	unit     Unit
}

var table = []entry{
	{"MTMP", "temperature", Unit{0.125, "°C", true}},
	{"MTMP", "max_temperature", Unit{0.125, "°C", true}},
	{"MTMP", "temperature_threshold_hi", Unit{0.125, "°C", true}},
	{"MTMP", "temperature_threshold_lo", Unit{0.125, "°C", true}},
	{"MGIR", "hw_info.uptime", Unit{1, "s", false}},
	{"PTYS", "data_rate_oper", Unit{0.1, "Gb/s", false}},
	{"PTYS", "max_port_rate", Unit{1, "Gb/s", false}},
	{"PMTU", "*_mtu", Unit{1, "bytes", false}},
	// PDDR module-info page (what mlxlink -m prints).
	{"PDDR", "page_data.pddr_module_info_ext.temperature", Unit{1.0 / 256, "°C", true}},
	{"PDDR", "page_data.pddr_module_info_ext.temperature_*_th", Unit{1.0 / 256, "°C", true}},
	{"PDDR", "page_data.pddr_module_info_ext.voltage", Unit{0.1, "mV", false}},
	{"PDDR", "page_data.pddr_module_info_ext.voltage_*_th", Unit{0.1, "mV", false}},
	{"PDDR", "page_data.pddr_module_info_ext.tx_bias_lane*", Unit{0.002, "mA", false}},
	{"PDDR", "page_data.pddr_module_info_ext.tx_bias_*_th", Unit{0.002, "mA", false}},
	{"PDDR", "page_data.pddr_module_info_ext.wavelength", Unit{1, "nm", false}},
	{"PDDR", "page_data.pddr_module_info_ext.cable_length", Unit{1, "m", false}},
}

// Lookup returns the unit of a register field, if known.
func Lookup(register, fieldPath string) (Unit, bool) {
	reg := strings.ToUpper(register)
	for _, e := range table {
		if e.register != reg {
			continue
		}
		if ok, _ := path.Match(e.pattern, fieldPath); ok {
			return e.unit, true
		}
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

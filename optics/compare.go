package optics

import (
	"fmt"
	"math"
	"strings"
)

// Comparison is one quantity read from the module's EEPROM and from the
// firmware's view, and whether they agree within what the two sources can
// resolve.
type Comparison struct {
	Quantity string `json:"quantity"`
	Lane     int    `json:"lane,omitempty"`
	EEPROM   string `json:"eeprom"`
	Firmware string `json:"firmware"`
	// Difference and Tolerance are in Unit (absent for text).
	Difference float64 `json:"difference,omitempty"`
	Tolerance  float64 `json:"tolerance,omitempty"`
	Unit       string  `json:"unit,omitempty"`
	OK         bool    `json:"ok"`
}

// Drift allowances: monitors move between the two reads of a comparison
// (milliseconds apart on hardware), by about this much at most.
const (
	driftTempC    = 0.25
	driftVoltV    = 0.002
	driftRelative = 0.01 // bias and power, as a share of the value
)

// Compare matches an EEPROM decode against the firmware's view. Each
// number agrees when the difference is within half the resolution of each
// source plus the drift allowance (zero for thresholds, which do not move).
func Compare(ee, fw *Module) []Comparison {
	var out []Comparison
	if ee == nil || fw == nil || fw.CableType == CableUnplugged || fw.CableType == CableUnidentified {
		return out // the firmware has no decode of its own to compare
	}
	text := func(q, a, b string) {
		ok := strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
		out = append(out, Comparison{Quantity: q, EEPROM: a, Firmware: b, OK: ok})
	}
	if fw.Identifier.Value != 0 {
		ok := fw.Identifier.Value == ee.Identifier.Value ||
			// The firmware names every SFP form factor the same, and QSFP+ and QSFP28 alike.
			StandardOf(fw.Identifier.Value) == StandardOf(ee.Identifier.Value) && StandardOf(ee.Identifier.Value) == SFF8636
		out = append(out, Comparison{Quantity: "identifier", EEPROM: fmt.Sprintf("0x%02x", ee.Identifier.Value),
			Firmware: fmt.Sprintf("0x%02x", fw.Identifier.Value), OK: ok})
	}
	text("vendor name", ee.Vendor.Name, fw.Vendor.Name)
	text("vendor part number", ee.Vendor.PN, fw.Vendor.PN)
	text("vendor serial number", ee.Vendor.SN, fw.Vendor.SN)
	if fw.Vendor.Rev != "" || ee.Vendor.Rev != "" {
		text("vendor revision", ee.Vendor.Rev, fw.Vendor.Rev)
	}
	// The firmware's view gives no OUI in older databases' page layout
	// (Rev 0.51 has no vendor_oui): nothing to compare then.
	if fw.Vendor.OUI != "00:00:00" && fw.Vendor.OUI != "" {
		text("vendor OUI", ee.Vendor.OUI, fw.Vendor.OUI)
	}
	if ee.Media.WavelengthNM > 0 && fw.Media.WavelengthNM > 0 {
		out = append(out, num("wavelength", 0, ee.Media.WavelengthNM, fw.Media.WavelengthNM, 1, "nm"))
	}
	if !ee.DDM || !fw.DDM {
		if ee.DDM != fw.DDM {
			out = append(out, Comparison{Quantity: "diagnostics implemented", EEPROM: yesNo(ee.DDM), Firmware: yesNo(fw.DDM)})
		}
		return out
	}
	if ee.Temperature.Valid() && fw.Temperature.Valid() {
		out = append(out, num("temperature", 0, ee.Temperature.C, fw.Temperature.C, 1.0/256+driftTempC, "°C"))
	}
	if ee.Voltage.Valid() && fw.Voltage.Valid() {
		out = append(out, num("voltage", 0, ee.Voltage.V, fw.Voltage.V, 0.0001+driftVoltV, "V"))
	}
	bmul := float64(max(ee.BiasMultiplier, 1))
	biasTol := func(v float64, drift bool) float64 {
		t := 0.002 * bmul // half a count of each source
		if drift {
			t += driftRelative * math.Abs(v)
		}
		return t
	}
	for i := 0; i < min(len(ee.Lanes), len(fw.Lanes)); i++ {
		a, b := ee.Lanes[i], fw.Lanes[i]
		if a.TxBias.Valid() && b.TxBias.Valid() {
			out = append(out, num("tx bias", i+1, a.TxBias.MA, b.TxBias.MA, biasTol(a.TxBias.MA, true), "mA"))
		}
		if a.TxPower.Valid() && b.TxPower.Valid() {
			out = append(out, power("tx power", i+1, a.TxPower, b.TxPower, fw.PowerRawUnit, true))
		}
		if a.RxPower.Valid() && b.RxPower.Valid() {
			out = append(out, power("rx power", i+1, a.RxPower, b.RxPower, fw.PowerRawUnit, true))
		}
	}
	if ee.Thresholds != nil && fw.Thresholds != nil {
		et, ft := ee.Thresholds, fw.Thresholds
		if et.Temperature != nil && ft.Temperature != nil {
			pair(&out, "temperature", et.Temperature, ft.Temperature, func(q string, a, b *Temperature) Comparison {
				return num(q, 0, a.C, b.C, 1.0/256, "°C")
			})
		}
		if et.Voltage != nil && ft.Voltage != nil {
			pair(&out, "voltage", et.Voltage, ft.Voltage, func(q string, a, b *Voltage) Comparison {
				return num(q, 0, a.V, b.V, 0.0001, "V")
			})
		}
		if et.TxBias != nil && ft.TxBias != nil {
			pair(&out, "tx bias", et.TxBias, ft.TxBias, func(q string, a, b *Current) Comparison {
				return num(q, 0, a.MA, b.MA, biasTol(a.MA, false), "mA")
			})
		}
		if et.TxPower != nil && ft.TxPower != nil {
			pair(&out, "tx power", et.TxPower, ft.TxPower, func(q string, a, b *Power) Comparison {
				return power(q, 0, a, b, fw.PowerRawUnit, false)
			})
		}
		if et.RxPower != nil && ft.RxPower != nil {
			pair(&out, "rx power", et.RxPower, ft.RxPower, func(q string, a, b *Power) Comparison {
				return power(q, 0, a, b, fw.PowerRawUnit, false)
			})
		}
	}
	return out
}

// pair compares the alarm thresholds (the firmware view has no warnings).
func pair[T any](out *[]Comparison, q string, a, b *Limits[T], cmp func(string, *T, *T) Comparison) {
	if a.HighAlarm != nil && b.HighAlarm != nil && isValid(a.HighAlarm) && isValid(b.HighAlarm) {
		*out = append(*out, cmp(q+" high alarm threshold", a.HighAlarm, b.HighAlarm))
	}
	if a.LowAlarm != nil && b.LowAlarm != nil && isValid(a.LowAlarm) && isValid(b.LowAlarm) {
		*out = append(*out, cmp(q+" low alarm threshold", a.LowAlarm, b.LowAlarm))
	}
}

func num(q string, lane int, a, b, tol float64, unit string) Comparison {
	d := math.Abs(a - b)
	return Comparison{Quantity: q, Lane: lane, EEPROM: fmtNum(a), Firmware: fmtNum(b), Difference: d, Tolerance: tol, Unit: unit, OK: d <= tol+1e-9}
}

// dBmFloor is where the firmware's integer-dBm view bottoms out; any
// power at or under it (including −∞) is "dark" on both sides.
const dBmFloor = -40

// power compares two powers in the firmware's resolution: whole dBm, or µW.
func power(q string, lane int, a, b *Power, fwUnit string, drift bool) Comparison {
	if fwUnit == "dBm" {
		ad, bd := float64(a.DBm), float64(b.DBm)
		c := Comparison{Quantity: q, Lane: lane, EEPROM: a.DBm.String(), Firmware: b.DBm.String(), Unit: "dBm", Tolerance: 0.5 + 0.005}
		if drift {
			c.Tolerance += 10 * math.Log10(1+driftRelative)
		}
		if ad <= dBmFloor && bd <= dBmFloor {
			c.OK = true
			return c
		}
		c.Difference = math.Abs(ad - bd)
		if math.IsInf(c.Difference, 0) || math.IsNaN(c.Difference) {
			c.Difference = 0
			return c // one dark, the other not
		}
		c.OK = c.Difference <= c.Tolerance
		return c
	}
	tol := 0.0005 + 0.00005 // half a µW and half of 0.1 µW, in mW
	if drift {
		tol += driftRelative * a.MW
	}
	return num(q, lane, a.MW, b.MW, tol, "mW")
}

func fmtNum(v float64) string {
	if math.IsInf(v, -1) {
		return "-inf"
	}
	return fmt.Sprintf("%.4g", v)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Monitors lists a module's monitor readings by name with their raw
// counts, for telling whether two reads differ.
func Monitors(m *Module) map[string]int64 {
	out := map[string]int64{}
	if m == nil {
		return out
	}
	if m.Temperature.Valid() {
		out["temperature"] = m.Temperature.Raw
	}
	if m.Voltage.Valid() {
		out["voltage"] = m.Voltage.Raw
	}
	for _, l := range m.Lanes {
		if l.TxBias.Valid() {
			out[fmt.Sprintf("lane %d tx bias", l.Lane)] = l.TxBias.Raw
		}
		if l.TxPower.Valid() {
			out[fmt.Sprintf("lane %d tx power", l.Lane)] = l.TxPower.Raw
		}
		if l.RxPower.Valid() {
			out[fmt.Sprintf("lane %d rx power", l.Lane)] = l.RxPower.Raw
		}
	}
	return out
}

// Changed counts the monitors two reads of one source share and how many
// of them differ.
func Changed(a, b *Module) (changed, total int) {
	ma, mb := Monitors(a), Monitors(b)
	for k, v := range ma {
		if w, ok := mb[k]; ok {
			total++
			if v != w {
				changed++
			}
		}
	}
	return changed, total
}

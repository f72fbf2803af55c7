package optics

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// sfpA0 is an SFP's A0h with the identity every SFF-8472 test shares.
func sfpA0(ddmType byte) *img {
	m := newImg()
	const a = AddrA0
	m.set(a, 0, 0, 0, 0x03).set(a, 0, 0, 2, 0x07)
	m.set(a, 0, 0, 14, 10).set(a, 0, 0, 15, 100)
	m.str(a, 0, 0, 20, 16, "ACME OPTICS")
	m.set(a, 0, 0, 37, 0x00, 0x11, 0x22)
	m.str(a, 0, 0, 40, 16, "ACM-SFP-LR")
	m.str(a, 0, 0, 56, 4, "1A")
	m.u16(a, 0, 0, 60, 1310)
	m.sum(a, 0, 0, 0, 62, 63)
	m.str(a, 0, 0, 68, 16, "SN123")
	m.str(a, 0, 0, 84, 8, "230415AB")
	m.set(a, 0, 0, 92, ddmType, 0xB0, 0x08)
	m.sum(a, 0, 0, 64, 94, 95)
	return m
}

func TestSFF8472Internal(t *testing.T) {
	m := sfpA0(0x68) // DDM, internally calibrated, average Rx power
	const a2 = AddrA2
	// Thresholds in spec order: temperature, Vcc, bias, Tx power, Rx power;
	// each high alarm, low alarm, high warning, low warning.
	temps := []int16{80 * 256, -10 * 256, 75 * 256, -5 * 256}
	for i, v := range temps {
		m.u16(a2, 0, 0, 2*i, uint16(v))
	}
	for i, v := range []uint16{36000, 30000, 35000, 31000} {
		m.u16(a2, 0, 0, 8+2*i, v)
	}
	for i, v := range []uint16{40000, 5000, 35000, 7500} {
		m.u16(a2, 0, 0, 16+2*i, v)
	}
	for i, v := range []uint16{20000, 1259, 15849, 1585} {
		m.u16(a2, 0, 0, 24+2*i, v)
	}
	for i, v := range []uint16{20000, 251, 15849, 398} {
		m.u16(a2, 0, 0, 32+2*i, v)
	}
	m.sum(a2, 0, 0, 0, 94, 95)
	m.u16(a2, 0, 0, 96, uint16(0xFB2E)) // -1234: below zero
	m.u16(a2, 0, 0, 98, 33000)
	m.u16(a2, 0, 0, 100, 17500)
	m.u16(a2, 0, 0, 102, 5012)
	m.u16(a2, 0, 0, 104, 0) // dark
	m.set(a2, 0, 0, 110, 0x06)
	m.set(a2, 0, 0, 112, 0x88, 0x40)
	m.set(a2, 0, 0, 116, 0x20, 0x80)
	mod := mustDecode(t, m.image())

	if mod.Standard != SFF8472 || mod.Revision != "12.3" || mod.Identifier.Value != 0x03 || mod.Connector.Name != "LC" {
		t.Errorf("identity %+v", mod)
	}
	v := mod.Vendor
	if v.Name != "ACME OPTICS" || v.OUI != "00:11:22" || v.PN != "ACM-SFP-LR" || v.Rev != "1A" || v.SN != "SN123" || v.Date != "2023-04-15" || v.Lot != "AB" {
		t.Errorf("vendor %+v", v)
	}
	if mod.Media.Type != "optical-smf" || mod.Media.WavelengthNM != 1310 || len(mod.Media.Lengths) != 1 || mod.Media.Lengths[0].Meters != 10000 {
		t.Errorf("media %+v", mod.Media)
	}
	if !mod.DDM || mod.Calibration != "internal" || mod.RxPowerType != "average" || !mod.ChecksumsOK() {
		t.Errorf("ddm %v %q %q checksums %+v", mod.DDM, mod.Calibration, mod.RxPowerType, mod.Checksums)
	}
	near(t, "temperature", mod.Temperature.C, -1234.0/256, 1e-9)
	near(t, "voltage", mod.Voltage.V, 33000*100e-6, 1e-9)
	l := mod.Lanes[0]
	near(t, "bias", l.TxBias.MA, 17500*2e-3, 1e-9)
	near(t, "tx mW", l.TxPower.MW, mwOf(5012), 1e-12)
	near(t, "tx dBm", float64(l.TxPower.DBm), 10*math.Log10(mwOf(5012)), 1e-9)
	if !math.IsInf(float64(l.RxPower.DBm), -1) || l.RxPower.MW != 0 {
		t.Errorf("a dark lane is -inf dBm: %+v", l.RxPower)
	}
	if *l.TxFault != true || *l.RxLOS != true {
		t.Errorf("status bits: fault %v los %v", *l.TxFault, *l.RxLOS)
	}
	th := mod.Thresholds
	near(t, "temp HA", th.Temperature.HighAlarm.C, 80, 1e-9)
	near(t, "temp LW", th.Temperature.LowWarning.C, -5, 1e-9)
	near(t, "vcc LA", th.Voltage.LowAlarm.V, 3.0, 1e-9)
	near(t, "bias HW", th.TxBias.HighWarning.MA, 70, 1e-9)
	near(t, "tx HA", th.TxPower.HighAlarm.MW, 2.0, 1e-12)
	near(t, "rx LW", th.RxPower.LowWarning.MW, mwOf(398), 1e-12)
	f := mod.Flags
	if !f.Temperature.HighAlarm || f.Temperature.LowAlarm || !f.Voltage.HighWarning || !l.Flags.TxBias.HighAlarm || !l.Flags.RxPower.LowAlarm || !l.Flags.RxPower.HighWarning || l.Flags.TxPower.Any() {
		t.Errorf("flags %+v lane %+v %+v %+v", f, l.Flags.TxBias, l.Flags.TxPower, l.Flags.RxPower)
	}
	// −∞ is null in JSON, and reads back as −∞.
	b, _ := json.Marshal(l.RxPower)
	if !strings.Contains(string(b), `"dbm":null`) {
		t.Errorf("dark power JSON %s", b)
	}
	var back Power
	if err := json.Unmarshal(b, &back); err != nil || !math.IsInf(float64(back.DBm), -1) {
		t.Errorf("round trip %v %+v", err, back)
	}
}

func f32(v float32) []byte {
	bits := math.Float32bits(v)
	return []byte{byte(bits >> 24), byte(bits >> 16), byte(bits >> 8), byte(bits)}
}

// External calibration: slope·ADC + offset for temperature, Vcc, bias and
// Tx power, and the full fourth-order polynomial for Rx power, applied to
// monitors and thresholds alike (SFF-8472 §9.3).
func TestSFF8472External(t *testing.T) {
	m := sfpA0(0x58) // DDM, externally calibrated, average Rx power
	const a2 = AddrA2
	rx := [5]float32{-2, 1.5, 3e-7, 2e-12, 1e-16} // Rx_PWR(0)..(4)
	for i := 0; i < 5; i++ {
		m.set(a2, 0, 0, 56+4*i, f32(rx[4-i])...)
	}
	m.set(a2, 0, 0, 76, 1, 0x80).u16(a2, 0, 0, 78, uint16(0xFF38)) // bias slope 1.5, offset -200
	m.set(a2, 0, 0, 80, 0, 0xC0).u16(a2, 0, 0, 82, 30)             // Tx slope 0.75, offset 30
	m.set(a2, 0, 0, 84, 1, 0x40).u16(a2, 0, 0, 86, uint16(0xFE00)) // temperature slope 1.25, offset -512
	m.set(a2, 0, 0, 88, 0, 0xFA).u16(a2, 0, 0, 90, 100)            // Vcc slope 250/256, offset 100
	m.u16(a2, 0, 0, 16, 40000)                                     // bias high alarm, in ADC counts
	m.u16(a2, 0, 0, 34, 1000)                                      // Rx power low alarm
	m.u16(a2, 0, 0, 96, 8000).u16(a2, 0, 0, 98, 32000).u16(a2, 0, 0, 100, 20000)
	m.u16(a2, 0, 0, 102, 6000).u16(a2, 0, 0, 104, 9000)
	mod := mustDecode(t, m.image())
	if mod.Calibration != "external" {
		t.Fatalf("calibration %q", mod.Calibration)
	}
	poly := func(x float64) float64 {
		s := 0.0
		for i, c := range rx {
			s += float64(c) * math.Pow(x, float64(i))
		}
		return s // 0.1 µW
	}
	near(t, "temperature", mod.Temperature.C, (1.25*8000-512)/256, 1e-9)
	near(t, "voltage", mod.Voltage.V, (250.0/256*32000+100)*100e-6, 1e-9)
	l := mod.Lanes[0]
	near(t, "bias", l.TxBias.MA, (1.5*20000-200)*2e-3, 1e-9)
	near(t, "tx", l.TxPower.MW, (0.75*6000+30)*1e-4, 1e-12)
	near(t, "rx", l.RxPower.MW, poly(9000)*1e-4, 1e-9)
	if l.RxPower.Raw != 9000 || l.TxBias.Raw != 20000 {
		t.Errorf("raw counts are the ADC values: %+v %+v", l.RxPower, l.TxBias)
	}
	// ethtool 6.11 drops Rx_PWR(4) and the powers of ADC: a decoder that
	// does the same shows another number here.
	ethtoolish := (float64(rx[0]) + (float64(rx[1])+float64(rx[2])+float64(rx[3]))*9000) * 1e-4
	if math.Abs(ethtoolish-l.RxPower.MW) < 1e-3 {
		t.Errorf("the test module does not tell the full polynomial from ethtool's shortcut")
	}
	near(t, "bias high alarm", mod.Thresholds.TxBias.HighAlarm.MA, (1.5*40000-200)*2e-3, 1e-9)
	near(t, "rx low alarm", mod.Thresholds.RxPower.LowAlarm.MW, poly(1000)*1e-4, 1e-9)
}

func TestSFF8472NoDDM(t *testing.T) {
	m := sfpA0(0x00)
	mod := mustDecode(t, m.image())
	if mod.DDM || mod.Temperature != nil || len(mod.Lanes) != 1 || mod.Lanes[0].RxPower != nil {
		t.Errorf("no DDM: %+v", mod)
	}
	// A module that claims DDM but whose A2h was not read says so.
	mod = mustDecode(t, sfpA0(0x68).image())
	if !mod.DDM || mod.Temperature != nil || !strings.Contains(strings.Join(mod.Notes, ";"), "A2h") {
		t.Errorf("missing A2h: %+v", mod)
	}
	// A broken check code is reported, not fatal.
	m = sfpA0(0x00)
	m.set(AddrA0, 0, 0, 63, 0x00)
	mod = mustDecode(t, m.image())
	if mod.ChecksumsOK() || mod.Checksums[0].Name != "CC_BASE" || mod.Checksums[0].OK {
		t.Errorf("checksums %+v", mod.Checksums)
	}
}

// TestSFF8472CopperLength: on a 1000BASE-T SFP (RJ45) byte 18 is the
// copper length in metres, not an OM4 length in 10 m.
func TestSFF8472CopperLength(t *testing.T) {
	m := newImg()
	const a = AddrA0
	m.set(a, 0, 0, 0, 0x03).set(a, 0, 0, 2, 0x22) // SFP, RJ45
	m.set(a, 0, 0, 6, 0x08)                       // 1000BASE-T
	m.set(a, 0, 0, 18, 100)
	m.str(a, 0, 0, 20, 16, "ACME COPPER")
	m.sum(a, 0, 0, 0, 62, 63)
	m.sum(a, 0, 0, 64, 94, 95)
	mod := mustDecode(t, m.image())
	if mod.Media.Type != "base-t" || len(mod.Media.Lengths) != 1 || mod.Media.Lengths[0].Medium != "copper" || mod.Media.Lengths[0].Meters != 100 {
		t.Errorf("1000BASE-T: %+v", mod.Media)
	}
	// The same byte on an optical SFP is OM4, in 10 m.
	o := sfpA0(0x00)
	o.set(a, 0, 0, 14, 0).set(a, 0, 0, 15, 0).set(a, 0, 0, 18, 10)
	o.sum(a, 0, 0, 0, 62, 63)
	mod = mustDecode(t, o.image())
	found := false
	for _, l := range mod.Media.Lengths {
		if l.Medium == "om4" && l.Meters == 100 {
			found = true
		}
		if l.Medium == "copper" {
			t.Errorf("optical module has a copper length: %+v", mod.Media)
		}
	}
	if !found {
		t.Errorf("optical: %+v", mod.Media)
	}
}

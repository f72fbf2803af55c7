package optics

import (
	"math"
)

// SFF-8472 (SFP, SFP+, SFP28): identification in A0h bytes 0..95,
// diagnostics in A2h bytes 0..127. One lane.

// sff8472Revisions names A0h byte 94 (SFF-8472 compliance).
var sff8472Revisions = map[uint8]string{
	0x01: "9.3", 0x02: "9.5", 0x03: "10.2", 0x04: "10.4", 0x05: "11.0",
	0x06: "11.3", 0x07: "11.4", 0x08: "12.3", 0x09: "12.4",
}

func decode8472(im *Image, m *Module) {
	a0 := im.view(AddrA0, 0, 0, false)
	m.Standard = SFF8472
	if r, ok := sff8472Revisions[a0.u8(94)]; ok {
		m.Revision = r
	}
	m.Connector = ConnectorName(a0.u8(2))
	m.Vendor = Vendor{Name: a0.str(20, 16), OUI: oui(a0, 37), PN: a0.str(40, 16), Rev: a0.str(56, 4), SN: a0.str(68, 16)}
	m.Vendor.DateCode, m.Vendor.Date, m.Vendor.Lot = dateCode(a0, 84)
	m.checksum("CC_BASE", a0, 0, 62, 63)
	m.checksum("CC_EXT", a0, 64, 94, 95)

	// Media: byte 8 says whether it is a cable; lengths and wavelength
	// say the rest.
	cable := a0.u8(8)
	eth, conn := a0.u8(6), a0.u8(2)
	switch {
	case cable&0x04 != 0:
		m.Media.Type = "passive-copper"
	case cable&0x08 != 0:
		m.Media.Type = "active-cable"
	case eth&0x08 != 0 || conn == 0x22:
		// 1000BASE-T (byte 6 bit 3), or an RJ45 connector.
		m.Media.Type = "base-t"
	case eth&0x04 != 0 || conn == 0x21:
		// 1000BASE-CX (byte 6 bit 2), or a copper pigtail.
		m.Media.Type = "passive-copper"
	}
	// Byte 18 is the OM4 length in 10 m for optics, and the copper
	// length in metres for copper modules (SFF-8472 §8.4).
	copperLen := m.Media.Type != ""
	add := func(medium string, v byte, unit float64) {
		if v != 0 {
			m.Media.Lengths = append(m.Media.Lengths, Length{Medium: medium, Meters: float64(v) * unit})
		}
	}
	if km := a0.u8(14); km != 0 {
		add("smf", km, 1000)
	} else {
		add("smf", a0.u8(15), 100)
	}
	add("om2", a0.u8(16), 10)
	add("om1", a0.u8(17), 10)
	if copperLen {
		add("copper", a0.u8(18), 1)
	} else {
		add("om4", a0.u8(18), 10)
	}
	add("om3", a0.u8(19), 10)
	if !copperLen {
		if wl := a0.u16(60); wl != 0 {
			m.Media.WavelengthNM = float64(wl)
		}
		m.Media.Type = "optical"
		for _, l := range m.Media.Lengths {
			switch {
			case l.Medium == "smf":
				m.Media.Type = "optical-smf"
			case m.Media.Type == "optical":
				m.Media.Type = "optical-mmf"
			}
		}
		if m.Media.Type == "optical" && m.Media.WavelengthNM > 0 {
			m.Media.Type = "optical-smf"
			if m.Media.WavelengthNM < 1000 {
				m.Media.Type = "optical-mmf"
			}
		}
	}

	m.Lanes = []Lane{{Lane: 1}}
	ddmType, enh := a0.u8(92), a0.u8(93)
	m.DDM = ddmType&0x40 != 0
	m.RxPowerType = "OMA"
	if ddmType&0x08 != 0 {
		m.RxPowerType = "average"
	}
	switch {
	case ddmType&0x10 != 0:
		m.Calibration = "external"
	case ddmType&0x20 != 0:
		m.Calibration = "internal"
	}
	if !m.DDM {
		m.RxPowerType = ""
		return
	}
	if ddmType&0x04 != 0 {
		m.note("the module asks for an address change before A2h can be read; its diagnostics may be wrong")
	}
	a2 := im.view(AddrA2, 0, 0, false)
	if a2.n == 0 {
		m.note("A2h (diagnostics) was not read")
		return
	}
	if !a2.ok() {
		m.note("A2h is truncated (%d of 128 bytes)", a2.n)
	}
	m.PowerRawUnit = "0.1uW"
	cal := read8472Cal(a2, m.Calibration == "external")

	m.Temperature = cal.temp(a2.u16(96))
	m.Voltage = cal.volt(a2.u16(98))
	l := &m.Lanes[0]
	l.TxBias = cal.bias(a2.u16(100))
	l.TxPower = cal.tx(a2.u16(102))
	l.RxPower = cal.rx(a2.u16(104))
	status := a2.u8(110)
	if enh&0x20 != 0 {
		l.TxFault = boolp(status&0x04 != 0)
	}
	if enh&0x10 != 0 {
		l.RxLOS = boolp(status&0x02 != 0)
	}

	th := &Thresholds{}
	th.Temperature = fourLimits(a2, 0, func(a int) *Temperature { return cal.temp(a2.u16(a)) })
	th.Voltage = fourLimits(a2, 8, func(a int) *Voltage { return cal.volt(a2.u16(a)) })
	th.TxBias = fourLimits(a2, 16, func(a int) *Current { return cal.bias(a2.u16(a)) })
	th.TxPower = fourLimits(a2, 24, func(a int) *Power { return cal.tx(a2.u16(a)) })
	th.RxPower = fourLimits(a2, 32, func(a int) *Power { return cal.rx(a2.u16(a)) })
	m.Thresholds = th

	if enh&0x80 != 0 {
		al, al2, wa, wa2 := a2.u8(112), a2.u8(113), a2.u8(116), a2.u8(117)
		pair := func(a, w byte, hi, lo byte) Flags {
			return Flags{HighAlarm: a&hi != 0, LowAlarm: a&lo != 0, HighWarning: w&hi != 0, LowWarning: w&lo != 0}
		}
		m.Flags = &ModuleFlags{Temperature: pair(al, wa, 0x80, 0x40), Voltage: pair(al, wa, 0x20, 0x10)}
		bias, tx, rx := pair(al, wa, 0x08, 0x04), pair(al, wa, 0x02, 0x01), pair(al2, wa2, 0x80, 0x40)
		l.Flags = &LaneFlags{TxBias: &bias, TxPower: &tx, RxPower: &rx}
	}
	m.checksum("CC_DMI", a2, 0, 94, 95)
}

// cal8472 converts A2h counts, internally or externally calibrated.
type cal8472 struct {
	ext                   bool
	rxPoly                [5]float64 // Rx_PWR(0)..(4)
	biasSlope, biasOffset float64
	txSlope, txOffset     float64
	tempSlope, tempOffset float64
	voltSlope, voltOffset float64
}

func read8472Cal(a2 half, ext bool) cal8472 {
	c := cal8472{ext: ext}
	if !ext {
		return c
	}
	// Rx_PWR(4) is stored first, at 56; Rx_PWR(0) last, at 72.
	for i := 0; i < 5; i++ {
		at := 72 - 4*i
		bits := uint32(a2.u16(at))<<16 | uint32(a2.u16(at+2))
		c.rxPoly[i] = float64(math.Float32frombits(bits))
	}
	slope := func(at int) float64 { return float64(a2.u8(at)) + float64(a2.u8(at+1))/256 }
	offset := func(at int) float64 { return float64(a2.s16(at)) }
	c.biasSlope, c.biasOffset = slope(76), offset(78)
	c.txSlope, c.txOffset = slope(80), offset(82)
	c.tempSlope, c.tempOffset = slope(84), offset(86)
	c.voltSlope, c.voltOffset = slope(88), offset(90)
	return c
}

// finite replaces what a nonsense calibration can produce (NaN, ±Inf) by
// zero, so no value breaks JSON or arithmetic downstream.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func (c cal8472) temp(raw uint16) *Temperature {
	if !c.ext || sentinel16(raw, true) != "" {
		return tempOf(int16(raw))
	}
	v := c.tempSlope*float64(int16(raw)) + c.tempOffset
	return &Temperature{C: finite(v / 256), Raw: int64(int16(raw))}
}

func (c cal8472) volt(raw uint16) *Voltage {
	if !c.ext || sentinel16(raw, false) != "" {
		return voltOf(raw)
	}
	v := max(c.voltSlope*float64(raw)+c.voltOffset, 0)
	return &Voltage{V: finite(v / 10000), Raw: int64(raw)}
}

func (c cal8472) bias(raw uint16) *Current {
	if !c.ext || sentinel16(raw, false) != "" {
		return biasOf(raw, 1)
	}
	v := max(c.biasSlope*float64(raw)+c.biasOffset, 0)
	return &Current{MA: finite(v * 0.002), Raw: int64(raw)}
}

func (c cal8472) tx(raw uint16) *Power {
	if !c.ext || sentinel16(raw, false) != "" {
		return powerRaw(raw)
	}
	v := c.txSlope*float64(raw) + c.txOffset
	return powerOf(finite(v)/10000, int64(raw))
}

// rx applies the Rx power polynomial: the sum of Rx_PWR(i)·ADCⁱ for i = 0..4
// (SFF-8472 §9.3), in 0.1 µW.
func (c cal8472) rx(raw uint16) *Power {
	if !c.ext || sentinel16(raw, false) != "" {
		return powerRaw(raw)
	}
	x := float64(raw)
	v := c.rxPoly[0] + c.rxPoly[1]*x + c.rxPoly[2]*x*x + c.rxPoly[3]*x*x*x + c.rxPoly[4]*x*x*x*x
	return powerOf(finite(v)/10000, int64(raw))
}

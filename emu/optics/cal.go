package optics

import "math"

// calib turns physical values into the counts a module stores. Internally
// calibrated modules store the value in the standard units (1/256 °C,
// 100 µV, 2 µA, 0.1 µW); externally calibrated SFF-8472 modules store ADC
// counts that the reader converts with slope·ADC + offset (and a
// polynomial for Rx power), so the model finds the count whose conversion
// is closest to the value, and reports the converted value as the truth.
type calib struct {
	ext bool
	// Slopes are unsigned 8.8 fixed point, offsets signed 16-bit, in the
	// standard units; kept as the bytes the EEPROM holds.
	tSlope, vSlope, bSlope, pSlope     uint16
	tOffset, vOffset, bOffset, pOffset int16
	// rx are Rx_PWR(0)..(4), stored as IEEE-754 single precision.
	rx [5]float32
}

func (c *cage) cal() calib {
	if c.kind == nil || !c.kind.def.extCal {
		return calib{}
	}
	// Coefficients of a plausible 25G LR module: every quantity needs its
	// calibration (none is the identity), and the Rx polynomial has every
	// term, so a reader that drops one (ethtool drops Rx_PWR(4) and the
	// powers) shows a different number.
	return calib{ext: true,
		tSlope: 0x0100, tOffset: 128, // +0.5 °C
		vSlope: 0x00FA, vOffset: 120,
		bSlope: 0x0140, bOffset: -100,
		pSlope: 0x00CD, pOffset: 50,
		rx: [5]float32{5, 0.9, 2e-6, 1e-11, 1e-16},
	}
}

func slopeOf(s uint16) float64 { return float64(s>>8) + float64(s&0xFF)/256 }

func roundClamp(v, lo, hi float64) float64 {
	if math.IsNaN(v) {
		return lo
	}
	return math.Min(math.Max(math.Round(v), lo), hi)
}

// linear finds the count for target (standard units) under slope·x+offset.
func linear(target float64, slope uint16, offset int16, lo, hi float64) (float64, float64) {
	s, o := slopeOf(slope), float64(offset)
	x := roundClamp((target-o)/s, lo, hi)
	return x, s*x + o
}

func (c calib) encodeTemp(celsius float64) (int16, float64) {
	if !c.ext {
		r := roundClamp(celsius*256, math.MinInt16, math.MaxInt16)
		return int16(r), r / 256
	}
	x, v := linear(celsius*256, c.tSlope, c.tOffset, math.MinInt16, math.MaxInt16)
	return int16(x), v / 256
}

func (c calib) encodeVcc(volts float64) (uint16, float64) {
	if !c.ext {
		r := roundClamp(volts*10000, 0, 65535)
		return uint16(r), r / 10000
	}
	x, v := linear(volts*10000, c.vSlope, c.vOffset, 0, 65535)
	return uint16(x), math.Max(v, 0) / 10000
}

func (c calib) encodeBias(ma float64, mult int) (uint16, float64) {
	if mult < 1 {
		mult = 1
	}
	unit := 0.002 * float64(mult)
	if !c.ext {
		r := roundClamp(ma/unit, 0, 65535)
		return uint16(r), r * unit
	}
	x, v := linear(ma/0.002, c.bSlope, c.bOffset, 0, 65535)
	return uint16(x), math.Max(v, 0) * 0.002
}

func (c calib) encodeTx(mw float64) (uint16, float64) {
	if !c.ext {
		r := roundClamp(mw*10000, 0, 65535)
		return uint16(r), r / 10000
	}
	x, v := linear(mw*10000, c.pSlope, c.pOffset, 0, 65535)
	return uint16(x), math.Max(v, 0) / 10000
}

// rxPoly is the SFF-8472 Rx power conversion, in 0.1 µW.
func (c calib) rxPoly(adc float64) float64 {
	r0, r1, r2, r3, r4 := float64(c.rx[0]), float64(c.rx[1]), float64(c.rx[2]), float64(c.rx[3]), float64(c.rx[4])
	x := adc
	return r0 + r1*x + r2*x*x + r3*x*x*x + r4*x*x*x*x
}

func (c calib) encodeRx(mw float64) (uint16, float64) {
	if !c.ext {
		r := roundClamp(mw*10000, 0, 65535)
		return uint16(r), r / 10000
	}
	target := mw * 10000
	// The polynomial rises over the whole range: bisect for the first count
	// at or above the target, then take the closer neighbour (17 steps).
	lo, hi := 0.0, 65535.0
	for i := 0; i < 20 && hi-lo > 1; i++ {
		mid := math.Floor((lo + hi) / 2)
		if c.rxPoly(mid) < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	x := hi
	if math.Abs(c.rxPoly(lo)-target) <= math.Abs(c.rxPoly(hi)-target) {
		x = lo
	}
	return uint16(x), math.Max(c.rxPoly(x), 0) / 10000
}

package optics

import (
	"math"
)

// The module's memory, built per read from its definition and a sample of
// its monitors. mem is indexed by absolute address: bytes 0..127 are the
// lower half, 128..255 the selected upper page. The offsets are the memory
// maps of SFF-8472 (§4, A0h and A2h), SFF-8636 (§6) and CMIS (§8), written here
// independently of the decoders in package optics so that each checks the
// other.
type mem [256]byte

func (m *mem) put16(at int, v uint16) { m[at], m[at+1] = byte(v>>8), byte(v) }

func (m *mem) putStr(at, n int, s string) {
	for i := 0; i < n; i++ {
		c := byte(' ')
		if i < len(s) {
			c = s[i]
		}
		m[at+i] = c
	}
}

func (m *mem) sum(from, to int) byte {
	var s byte
	for i := from; i <= to; i++ {
		s += m[i]
	}
	return s
}

// MCIA module status codes (PRM mcia status field).
const (
	mciaGood         = 0x0
	mciaNoEEPROM     = 0x1
	mciaNotConnected = 0x3
	mciaI2CError     = 0x9
	mciaPageFailed   = 0x11
)

// memory returns the 256 bytes visible at (i2c, bank, page), or an MCIA
// status saying why the module does not answer there.
func (c *cage) memory(i2c, bank, page uint8, s sample) (mem, uint8) {
	var m mem
	if c.kind == nil {
		return m, mciaNotConnected
	}
	if c.faults.I2CHang {
		for i := range m {
			m[i] = 0xFF
		}
		return m, mciaGood
	}
	d := c.kind.def
	switch d.mapping {
	case mapSFF8472:
		switch i2c {
		case 0x50:
			c.sff8472A0(&m)
		case 0x51:
			if !s.ddm {
				return m, mciaNoEEPROM
			}
			c.sff8472A2(&m, s)
		default:
			return m, mciaNoEEPROM
		}
		return m, mciaGood
	case mapSFF8636:
		if i2c != 0x50 {
			return m, mciaNoEEPROM
		}
		if bank != 0 || (page != 0 && (d.medium == "copper" || page != 3)) {
			return m, mciaPageFailed
		}
		c.sff8636Lower(&m, s)
		if page == 0 {
			c.sff8636Page00(&m)
		} else {
			c.sff8636Page03(&m)
		}
		return m, mciaGood
	case mapCMIS:
		if i2c != 0x50 {
			return m, mciaNoEEPROM
		}
		flat := d.medium == "copper"
		switch {
		case bank != 0 && page == 0x11, bank != 0 && page >= 0x10:
			return m, mciaPageFailed // one bank: 8 lanes or fewer
		case page == 0:
		case flat:
			return m, mciaPageFailed
		case page == 1, page == 2, page == 0x11:
		default:
			return m, mciaPageFailed
		}
		c.cmisLower(&m, s)
		switch page {
		case 0:
			c.cmisPage00(&m)
		case 1:
			c.cmisPage01(&m, s)
		case 2:
			c.cmisPage02(&m)
		case 0x11:
			c.cmisPage11(&m, s)
		}
		return m, mciaGood
	}
	return m, mciaNoEEPROM
}

// ---- SFF-8472

func (c *cage) sff8472A0(m *mem) {
	d := c.kind.def
	m[0] = c.identifier()
	m[1] = 0x04 // extended identifier: serial ID defined by 2-wire
	m[2] = d.connector
	m[3] = 0x20  // 10GBASE-LR compliance bit (the closest the base codes have)
	m[11] = 0x06 // 64B/66B
	m[12] = 0xFF // nominal rate in byte 66 (above 25.4 GBd)
	m[14] = byte(d.smfM / 1000)
	m[15] = byte(math.Min(d.smfM/100, 255))
	m.putStr(20, 16, d.vendor)
	m[36] = 0x03 // 25GBASE-LR
	copy(m[37:40], d.oui[:])
	m.putStr(40, 16, d.pn)
	m.putStr(56, 4, d.rev)
	m.put16(60, uint16(d.wavelengthNM))
	m[63] = m.sum(0, 62)
	m[65] = 0x1A // options: TX_DISABLE, TX_FAULT, LOS
	m[66] = 103  // 25.78 GBd in 250 MBd units
	m.putStr(68, 16, c.serial)
	m.putStr(84, 8, d.date+"00")
	ddm := byte(0x08) // Rx power measured as average
	if d.ddm && !c.faults.NoDDM {
		ddm |= 0x40
		if d.extCal {
			ddm |= 0x10
		} else {
			ddm |= 0x20
		}
	}
	m[92] = ddm
	m[93] = 0xF0 // alarm flags, soft TX_DISABLE, TX_FAULT and RX_LOS implemented
	m[94] = d.revision
	m[95] = m.sum(64, 94)
	if c.faults.ChecksumError {
		m[63]++
	}
}

func (c *cage) sff8472A2(m *mem, s sample) {
	d := c.kind.def
	cal := c.cal()
	four := func(at int, th [4]float64, enc func(float64) uint16) {
		for i, v := range th {
			m.put16(at+2*i, enc(v))
		}
	}
	four(0, d.tempTh, func(v float64) uint16 { r, _ := cal.encodeTemp(v); return uint16(r) })
	four(8, d.vccTh, func(v float64) uint16 { r, _ := cal.encodeVcc(v); return r })
	four(16, d.biasTh, func(v float64) uint16 { r, _ := cal.encodeBias(v, 1); return r })
	four(24, d.txTh, func(v float64) uint16 { r, _ := cal.encodeTx(fromDBm(v)); return r })
	four(32, d.rxTh, func(v float64) uint16 { r, _ := cal.encodeRx(fromDBm(v)); return r })
	if cal.ext {
		for i := 0; i < 5; i++ { // Rx_PWR(4) first
			bits := math.Float32bits(cal.rx[4-i])
			at := 56 + 4*i
			m.put16(at, uint16(bits>>16))
			m.put16(at+2, uint16(bits))
		}
		m.put16(76, cal.bSlope)
		m.put16(78, uint16(cal.bOffset))
		m.put16(80, cal.pSlope)
		m.put16(82, uint16(cal.pOffset))
		m.put16(84, cal.tSlope)
		m.put16(86, uint16(cal.tOffset))
		m.put16(88, cal.vSlope)
		m.put16(90, uint16(cal.vOffset))
	}
	m[95] = m.sum(0, 94)
	m.put16(96, uint16(s.tempRaw))
	m.put16(98, s.vccRaw)
	m.put16(100, s.biasRaw[0])
	m.put16(102, s.txRaw[0])
	m.put16(104, s.rxRaw[0])
	if s.rxLOS[0] {
		m[110] |= 0x02
	}
	f := c.flags(s)
	bits := func(fl flagSet, hi, lo byte) (alarm, warn byte) {
		if fl.ha {
			alarm |= hi
		}
		if fl.la {
			alarm |= lo
		}
		if fl.hw {
			warn |= hi
		}
		if fl.lw {
			warn |= lo
		}
		return
	}
	set := func(a, w int, fl flagSet, hi, lo byte) {
		al, wa := bits(fl, hi, lo)
		m[a] |= al
		m[w] |= wa
	}
	set(112, 116, f.temp, 0x80, 0x40)
	set(112, 116, f.vcc, 0x20, 0x10)
	set(112, 116, f.bias[0], 0x08, 0x04)
	set(112, 116, f.tx[0], 0x02, 0x01)
	set(113, 117, f.rx[0], 0x80, 0x40)
}

// ---- SFF-8636

func (c *cage) sff8636Lower(m *mem, s sample) {
	d := c.kind.def
	m[0] = c.identifier()
	m[1] = d.revision
	if d.medium == "copper" {
		m[2] = 0x04 // flat memory
	}
	if !s.ddm {
		return
	}
	f := c.flags(s)
	for l := 0; l < d.lanes; l++ {
		if s.rxLOS[l] {
			m[3] |= 1 << l
		}
	}
	m[6] = f.temp.high()
	m[7] = f.vcc.high()
	for l := 0; l < d.lanes; l++ {
		shift := 4 * (1 - l%2) // lane 1 in the high nibble
		m[9+l/2] |= f.rx[l].high() >> 4 << shift
		m[11+l/2] |= f.bias[l].high() >> 4 << shift
		m[13+l/2] |= f.tx[l].high() >> 4 << shift
	}
	m.put16(22, uint16(s.tempRaw))
	m.put16(26, s.vccRaw)
	for l := 0; l < d.lanes; l++ {
		m.put16(34+2*l, s.rxRaw[l])
		m.put16(42+2*l, s.biasRaw[l])
		m.put16(50+2*l, s.txRaw[l])
	}
}

func (c *cage) sff8636Page00(m *mem) {
	d := c.kind.def
	m[128] = c.identifier()
	switch {
	case d.powerClass >= 5 && d.powerClass <= 7:
		m[129] = 0xC0 | byte(d.powerClass-4)
	case d.powerClass >= 1 && d.powerClass <= 4:
		m[129] = byte(d.powerClass-1) << 6
	}
	m[130] = d.connector
	if d.medium == "copper" {
		m[131] = 0x08 // 40GBASE-CR4 (base code)
		m[192] = 0x0B // 100GBASE-CR4
		m[146] = byte(d.copperM)
		m[186], m[187] = 3, 5 // attenuation at 2.5 and 5 GHz, dB
	} else {
		m[131] = 0x80 // extended compliance in byte 192
		m[192] = 0x02 // 100GBASE-SR4
		m[143] = byte(d.om3M / 2)
		m[146] = byte(d.om4M / 2)
		m.put16(186, uint16(math.Round(d.wavelengthNM/0.05)))
		m.put16(188, uint16(math.Round(d.toleranceNM/0.005)))
	}
	m[139] = 0x05 // 64B/66B
	m[140] = 0xFF // nominal rate above 25.4 Gb/s (byte 222)
	m[147] = d.tech << 4
	m.putStr(148, 16, d.vendor)
	copy(m[165:168], d.oui[:])
	m.putStr(168, 16, d.pn)
	m.putStr(184, 2, d.rev)
	m[190] = 70 // maximum case temperature
	m[191] = m.sum(128, 190)
	m.putStr(196, 16, c.serial)
	m.putStr(212, 8, d.date+"00")
	if d.ddm && !c.faults.NoDDM {
		m[220] = 0x3C // temperature and supply monitors, average Rx power, Tx power
	}
	m[221] = 0x10 // initialisation complete flag implemented
	m[222] = 103  // 25.78 Gb/s per lane in 250 Mb/s units
	m[223] = m.sum(192, 222)
	if c.faults.ChecksumError {
		m[191]++
	}
}

func (c *cage) sff8636Page03(m *mem) {
	d := c.kind.def
	if !d.ddm || c.faults.NoDDM {
		return // thresholds of a module without monitors read zero
	}
	cal := c.cal()
	four := func(at int, th [4]float64, enc func(float64) uint16) {
		for i, v := range th {
			m.put16(at+2*i, enc(v))
		}
	}
	four(128, d.tempTh, func(v float64) uint16 { r, _ := cal.encodeTemp(v); return uint16(r) })
	four(144, d.vccTh, func(v float64) uint16 { r, _ := cal.encodeVcc(v); return r })
	four(176, d.rxTh, func(v float64) uint16 { r, _ := cal.encodeRx(fromDBm(v)); return r })
	four(184, d.biasTh, func(v float64) uint16 { r, _ := cal.encodeBias(v, 1); return r })
	four(192, d.txTh, func(v float64) uint16 { r, _ := cal.encodeTx(fromDBm(v)); return r })
}

// ---- CMIS

func (c *cage) cmisLower(m *mem, s sample) {
	d := c.kind.def
	m[0] = c.identifier()
	m[1] = d.revision
	if d.medium == "copper" {
		m[2] = 0x80 // flat memory
	}
	m[3] = 3 << 1 // ModuleReady
	m[39], m[40] = d.fwMajor, d.fwMinor
	switch d.medium {
	case "mmf":
		m[85] = 1
	case "smf":
		m[85] = 2
	case "copper":
		m[85] = 3
	}
	for i, a := range d.apps {
		at := 86 + 4*i
		m[at], m[at+1] = a.host, a.media
		m[at+2] = byte(a.hostLanes)<<4 | byte(a.mediaLanes)
		m[at+3] = a.hostAssign
	}
	if at := 86 + 4*len(d.apps); at < 118 {
		m[at] = 0xFF // end of the application list
	}
	if !s.ddm {
		return
	}
	f := c.flags(s)
	m[9] = f.temp.low() | f.vcc.low()<<4
	m.put16(14, uint16(s.tempRaw))
	m.put16(16, s.vccRaw)
}

func (c *cage) cmisPage00(m *mem) {
	d := c.kind.def
	m[128] = c.identifier()
	m.putStr(129, 16, d.vendor)
	copy(m[145:148], d.oui[:])
	m.putStr(148, 16, d.pn)
	m.putStr(164, 2, d.rev)
	m.putStr(166, 16, c.serial)
	m.putStr(182, 8, d.date+"00")
	m.putStr(190, 10, "")
	if d.powerClass >= 1 {
		m[200] = byte(d.powerClass-1) << 5
	}
	m[201] = byte(math.Round(d.maxPowerW / 0.25))
	if d.copperM > 0 {
		m[202] = 1<<6 | byte(d.copperM) // 1 m units
	}
	m[203] = d.connector
	m[212] = d.tech
	m[222] = m.sum(128, 221)
	if c.faults.ChecksumError {
		m[222]++
	}
}

func (c *cage) cmisPage01(m *mem, s sample) {
	d := c.kind.def
	m[128], m[129] = d.fwMajor, d.fwMinor-1 // the other image: one release older
	if d.smfM > 0 {
		m[132] = byte(d.smfM / 100) // 100 m units (multiplier 00b)
	}
	m[134] = byte(d.om4M / 2)
	m[135] = byte(d.om3M / 2)
	m.put16(138, uint16(math.Round(d.wavelengthNM/0.05)))
	m.put16(140, uint16(math.Round(d.toleranceNM/0.005)))
	m[142] = 0x00 // bank 0 only
	m[151] = 0x10 // Rx power measured as average
	m[157] = 0x07 // Tx fault, Tx LOS, Tx CDR LOL flags
	m[158] = 0x03 // Rx LOS, Rx CDR LOL flags
	if s.ddm {
		m[159] = 0x03 // temperature and supply monitors
		m[160] = 0x07 // bias, Tx power, Rx power monitors
		switch d.biasMult {
		case 2:
			m[160] |= 1 << 3
		case 4:
			m[160] |= 2 << 3
		}
	}
}

func (c *cage) cmisPage02(m *mem) {
	d := c.kind.def
	if !d.ddm || c.faults.NoDDM {
		return
	}
	cal := c.cal()
	four := func(at int, th [4]float64, enc func(float64) uint16) {
		for i, v := range th {
			m.put16(at+2*i, enc(v))
		}
	}
	four(128, d.tempTh, func(v float64) uint16 { r, _ := cal.encodeTemp(v); return uint16(r) })
	four(136, d.vccTh, func(v float64) uint16 { r, _ := cal.encodeVcc(v); return r })
	four(176, d.txTh, func(v float64) uint16 { r, _ := cal.encodeTx(fromDBm(v)); return r })
	four(184, d.biasTh, func(v float64) uint16 { r, _ := cal.encodeBias(v, d.biasMult); return r })
	four(192, d.rxTh, func(v float64) uint16 { r, _ := cal.encodeRx(fromDBm(v)); return r })
}

func (c *cage) cmisPage11(m *mem, s sample) {
	d := c.kind.def
	active := byte(1)<<d.lanes - 1
	for l := 0; l < 8; l++ {
		state := byte(1) // DPDeactivated
		if active&(1<<l) != 0 {
			state = 4 // DPActivated
		}
		m[128+l/2] |= state << (4 * (l % 2))
	}
	// Lanes 1..n run application 1 (AppSel in bits 7..4, data path from lane 1).
	for l := 0; l < d.lanes; l++ {
		m[206+l] = 1 << 4
	}
	if !s.ddm {
		return
	}
	f := c.flags(s)
	for l := 0; l < d.lanes; l++ {
		bit := byte(1) << l
		if s.rxLOS[l] {
			m[147] |= bit
			m[148] |= bit // the CDR cannot lock without a signal
		}
		or := func(at int, fl flagSet) {
			for i, on := range []bool{fl.ha, fl.la, fl.hw, fl.lw} {
				if on {
					m[at+i] |= bit
				}
			}
		}
		or(139, f.tx[l])
		or(143, f.bias[l])
		or(149, f.rx[l])
		m.put16(154+2*l, s.txRaw[l])
		m.put16(170+2*l, s.biasRaw[l])
		m.put16(186+2*l, s.rxRaw[l])
	}
}

// ---- flags

type flagSet struct{ ha, la, hw, lw bool }

// high packs HA, LA, HW, LW into bits 7..4 (SFF-8636 order).
func (f flagSet) high() byte {
	var b byte
	for i, on := range []bool{f.ha, f.la, f.hw, f.lw} {
		if on {
			b |= 0x80 >> i
		}
	}
	return b
}

// low packs them into bits 0..3 (CMIS order).
func (f flagSet) low() byte {
	var b byte
	for i, on := range []bool{f.ha, f.la, f.hw, f.lw} {
		if on {
			b |= 1 << i
		}
	}
	return b
}

type moduleFlags struct {
	temp, vcc    flagSet
	bias, tx, rx []flagSet
}

// flags compares the sample with the thresholds. Real modules latch
// these until read; the model raises them while the condition holds,
// which is what a reader polling the module sees.
func (c *cage) flags(s sample) moduleFlags {
	d := c.kind.def
	judge := func(v float64, th [4]float64) flagSet {
		return flagSet{ha: v > th[0], la: v < th[1], hw: v > th[2], lw: v < th[3]}
	}
	f := moduleFlags{temp: judge(s.tempC, d.tempTh), vcc: judge(s.vccV, d.vccTh)}
	for l := range s.biasMA {
		f.bias = append(f.bias, judge(s.biasMA[l], d.biasTh))
		f.tx = append(f.tx, judge(toDBm(s.txMW[l]), d.txTh))
		f.rx = append(f.rx, judge(toDBm(s.rxMW[l]), d.rxTh))
	}
	return f
}

package optics

// SFF-8636 (QSFP, QSFP+, QSFP28): monitors and flags in the lower page,
// identification in upper page 00h, thresholds in upper page 03h (absent
// when the module has flat memory). Four lanes.

var sff8636Revisions = map[uint8]string{
	0x01: "SFF-8436 4.8 or earlier",
	0x02: "SFF-8436 4.8 with parts of SFF-8636",
	0x03: "1.3 or earlier",
	0x04: "1.4",
	0x05: "1.5",
	0x06: "2.0",
	0x07: "2.5, 2.6 or 2.7",
}

// qsfpPowerClass: classes 1..4 in byte 129 bits 7..6, maximum power in W.
var qsfpClassPower = [...]float64{1: 1.5, 2: 2.0, 3: 2.5, 4: 3.5, 5: 4.0, 6: 4.5, 7: 5.0}

func decode8636(im *Image, m *Module) {
	lo := im.view(AddrA0, 0, 0, false)
	up := im.view(AddrA0, 0, 0, true)
	m.Standard = SFF8636
	m.Revision = sff8636Revisions[lo.u8(1)]
	status := lo.u8(2)
	m.FlatMemory = status&0x04 != 0
	if status&0x01 != 0 {
		m.note("the module says its data is not ready yet (Data_Not_Ready); read again in a moment")
	}
	if up.n == 0 {
		m.note("upper page 00h (identification) was not read")
	}
	if up.u8(128) != 0 && up.u8(128) != lo.u8(0) {
		m.note("the identifier in page 00h (0x%02x) differs from the lower page's (0x%02x)", up.u8(128), lo.u8(0))
	}
	m.Connector = ConnectorName(up.u8(130))
	m.Vendor = Vendor{Name: up.str(148, 16), OUI: oui(up, 165), PN: up.str(168, 16), Rev: up.str(184, 2), SN: up.str(196, 16)}
	m.Vendor.DateCode, m.Vendor.Date, m.Vendor.Lot = dateCode(up, 212)
	m.checksum("CC_BASE", up, 128, 190, 191)
	m.checksum("CC_EXT", up, 192, 222, 223)

	ext := up.u8(129)
	m.PowerClass = int(ext>>6) + 1
	if c := ext & 0x03; c != 0 {
		m.PowerClass = int(c) + 4
	}
	m.MaxPowerW = qsfpClassPower[m.PowerClass]
	if ext&0x20 != 0 {
		m.PowerClass = 8
		m.MaxPowerW = float64(lo.u8(107)) * 0.1
	}

	tech := up.u8(147) >> 4
	m.Media.Technology = techName(tech)
	copper := tech >= 0xA
	add := func(medium string, v byte, unit float64) {
		if v != 0 {
			m.Media.Lengths = append(m.Media.Lengths, Length{Medium: medium, Meters: float64(v) * unit})
		}
	}
	add("smf", up.u8(142), 1000)
	add("om3", up.u8(143), 2)
	add("om2", up.u8(144), 1)
	add("om1", up.u8(145), 1)
	if copper {
		add("copper", up.u8(146), 1)
	} else {
		add("om4", up.u8(146), 2)
		m.Media.WavelengthNM = float64(up.u16(186)) * 0.05
		m.Media.ToleranceNM = float64(up.u16(188)) * 0.005
	}
	m.Media.Type = mediaFromTechnology(tech)
	if !copper {
		for _, l := range m.Media.Lengths {
			if l.Medium == "smf" {
				m.Media.Type = "optical-smf"
				break
			}
			m.Media.Type = "optical-mmf"
		}
	}

	diag := up.u8(220)
	m.DDM = diag&0x3C != 0
	const lanes = 4
	m.Lanes = make([]Lane, lanes)
	for i := range m.Lanes {
		m.Lanes[i].Lane = i + 1
	}
	if !m.FlatMemory {
		los, fault, lol := lo.u8(3), lo.u8(4), lo.u8(5)
		for i := range m.Lanes {
			l := &m.Lanes[i]
			l.RxLOS = boolp(los&(1<<i) != 0)
			l.TxLOS = boolp(los&(0x10<<i) != 0)
			l.TxFault = boolp(fault&(1<<i) != 0)
			l.RxLOL = boolp(lol&(1<<i) != 0)
			l.TxLOL = boolp(lol&(0x10<<i) != 0)
		}
	}
	if !m.DDM {
		return
	}
	m.PowerRawUnit = "0.1uW"
	m.RxPowerType = "OMA"
	if diag&0x08 != 0 {
		m.RxPowerType = "average"
	}
	txPower := diag&0x04 != 0
	m.Temperature = tempOf(lo.s16(22))
	m.Voltage = voltOf(lo.u16(26))
	m.Flags = &ModuleFlags{Temperature: flagsHigh(lo.u8(6)), Voltage: flagsHigh(lo.u8(7))}
	// Lane flags: two lanes per byte, the lower-numbered lane in the high nibble.
	laneFlags := func(base, i int) *Flags {
		b := lo.u8(base + i/2)
		if i%2 == 1 {
			b <<= 4
		}
		f := flagsHigh(b)
		return &f
	}
	for i := range m.Lanes {
		l := &m.Lanes[i]
		l.RxPower = powerRaw(lo.u16(34 + 2*i))
		l.TxBias = biasOf(lo.u16(42+2*i), 1)
		l.Flags = &LaneFlags{RxPower: laneFlags(9, i), TxBias: laneFlags(11, i)}
		if txPower {
			l.TxPower = powerRaw(lo.u16(50 + 2*i))
			l.Flags.TxPower = laneFlags(13, i)
		}
	}
	if m.FlatMemory {
		m.note("flat memory: the module has no page 03h, so no thresholds")
		return
	}
	p3 := im.view(AddrA0, 0, 3, true)
	if p3.n == 0 {
		m.note("page 03h (thresholds) was not read")
		return
	}
	th := &Thresholds{
		Temperature: fourLimits(p3, 128, func(a int) *Temperature { return tempOf(p3.s16(a)) }),
		Voltage:     fourLimits(p3, 144, func(a int) *Voltage { return voltOf(p3.u16(a)) }),
		RxPower:     fourLimits(p3, 176, func(a int) *Power { return powerRaw(p3.u16(a)) }),
		TxBias:      fourLimits(p3, 184, func(a int) *Current { return biasOf(p3.u16(a), 1) }),
	}
	if txPower {
		th.TxPower = fourLimits(p3, 192, func(a int) *Power { return powerRaw(p3.u16(a)) })
	}
	m.Thresholds = th
}

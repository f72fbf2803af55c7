package optics

import "fmt"

// CMIS 4.0 and 5.x (QSFP-DD, OSFP, QSFP112, ...): module monitors in the
// lower page, identification in page 00h, advertising in 01h, thresholds in
// 02h, lane monitors and flags in 11h (one bank per 8 lanes). Flat-memory
// modules (passive copper) have only page 00h.

var cmisStates = map[uint8]string{1: "LowPwr", 2: "PwrUp", 3: "Ready", 4: "PwrDn", 5: "Fault"}

var cmisFaultCauses = map[uint8]string{1: "TEC runaway", 2: "data memory corrupted", 3: "program memory corrupted"}

var cmisMediaTypes = map[uint8]string{1: "optical-mmf", 2: "optical-smf", 3: "passive-copper", 4: "active-cable", 5: "base-t"}

// cmisBanks is the number of lane banks page 01h byte 142 advertises.
func cmisBanks(b byte) int {
	switch b & 0x03 {
	case 1:
		return 2
	case 2:
		return 4
	}
	return 1
}

// cmisApps reads the application descriptors of the lower page (up to 8,
// ending at host interface 0xFF).
func cmisApps(lo half) []Application {
	var apps []Application
	table := cmisMediaTable(lo.u8(85))
	for i := 0; i < 8; i++ {
		at := 86 + 4*i
		host := lo.u8(at)
		if host == 0xFF || (host == 0 && lo.u8(at+1) == 0) {
			break
		}
		lanes := lo.u8(at + 2)
		apps = append(apps, Application{Index: i + 1, Host: named(hostInterfaceNames, host), Media: named(table, lo.u8(at+1)),
			HostLanes: int(lanes >> 4), MediaLanes: int(lanes & 0x0F)})
	}
	return apps
}

func cmisMediaTable(mediaType uint8) map[uint8]string {
	switch mediaType {
	case 1:
		return mmfInterfaceNames
	case 2:
		return smfInterfaceNames
	}
	return nil
}

// cmisActive reads the active control set (page 11h bytes 206..213 of each
// bank: the AppSel code in bits 7..4 and the data path's first lane in bits
// 3..1) and returns the application of the first data path and the number
// of media lanes all data paths use: the lanes with monitors. One
// 400GAUI-8 to DR4 path gives 4; four 100G breakout paths give 4 as well.
func cmisActive(lo half, banks []half) (*Application, int, string) {
	apps := cmisApps(lo)
	var first *Application
	lanes := 0
	seen := map[[3]int]bool{}
	for bank, p11 := range banks {
		if p11.n == 0 {
			continue
		}
		for j := 0; j < 8; j++ {
			b := p11.u8(206 + j)
			sel, dp := int(b>>4), int(b>>1&0x07)
			if sel == 0 || seen[[3]int{bank, sel, dp}] {
				continue
			}
			seen[[3]int{bank, sel, dp}] = true
			if sel > len(apps) {
				return nil, 8, fmt.Sprintf("bank %d lane %d runs application %d, which the module does not advertise; assuming 8 lanes", bank, j+1, sel)
			}
			a := apps[sel-1]
			a.Active = true
			if first == nil {
				first = &a
			}
			n := a.MediaLanes
			if n == 0 {
				n = a.HostLanes // a cable without separate media lanes
			}
			lanes += n
		}
	}
	if first != nil {
		return first, min(lanes, 8*len(banks)), ""
	}
	if len(apps) == 0 {
		return nil, 8, "the module advertises no application; assuming 8 lanes"
	}
	a := apps[0]
	a.Note = "no lane has an active application; lanes taken from the first advertised one"
	n := a.MediaLanes
	if n == 0 {
		n = a.HostLanes
	}
	if n == 0 {
		n = 8
	}
	return &a, n, ""
}

// cmisBankPages are the page 11h halves of the first n banks.
func cmisBankPages(im *Image, n int) []half {
	out := make([]half, max(n, 1))
	for b := range out {
		out[b] = im.view(AddrA0, uint8(b), 0x11, true)
	}
	return out
}

func decodeCMIS(im *Image, m *Module) {
	lo := im.view(AddrA0, 0, 0, false)
	p0 := im.view(AddrA0, 0, 0, true)
	m.Standard = CMIS
	rev := lo.u8(1)
	m.Revision = fmt.Sprintf("%d.%d", rev>>4, rev&0x0F)
	if rev>>4 < 4 {
		m.note("CMIS revision %s is older than 4.0; decoded as 4.0", m.Revision)
	}
	m.FlatMemory = lo.u8(2)&0x80 != 0
	state := (lo.u8(3) >> 1) & 0x07
	m.ModuleState = cmisStates[state]
	if m.ModuleState == "" {
		m.ModuleState = fmt.Sprintf("reserved (%d)", state)
	}
	if state == 5 {
		if c, ok := cmisFaultCauses[lo.u8(41)]; ok {
			m.FaultCause = c
		} else if c := lo.u8(41); c != 0 {
			m.FaultCause = fmt.Sprintf("0x%02x", c)
		}
	}
	if maj, mn := lo.u8(39), lo.u8(40); maj != 0 || mn != 0 {
		m.Firmware = fmt.Sprintf("%d.%d", maj, mn)
	}
	if p0.n == 0 {
		m.note("page 00h (identification) was not read")
	}
	m.Connector = ConnectorName(p0.u8(203))
	m.Vendor = Vendor{Name: p0.str(129, 16), OUI: oui(p0, 145), PN: p0.str(148, 16), Rev: p0.str(164, 2), SN: p0.str(166, 16)}
	m.Vendor.DateCode, m.Vendor.Date, m.Vendor.Lot = dateCode(p0, 182)
	m.checksum("page 00h", p0, 128, 221, 222)
	m.PowerClass = int(p0.u8(200)>>5) + 1
	m.MaxPowerW = float64(p0.u8(201)) * 0.25
	tech := p0.u8(212)
	if tech <= 0x0F {
		m.Media.Technology = techName(tech)
	}
	m.Media.Type = cmisMediaTypes[lo.u8(85)]
	if m.Media.Type == "" {
		m.Media.Type = "unknown"
	}
	if cl := p0.u8(202); cl != 0 {
		mult := [...]float64{0.1, 1, 10, 100}[cl>>6]
		m.Media.Lengths = append(m.Media.Lengths, Length{Medium: "cable", Meters: float64(cl&0x3F) * mult})
	}
	banks := 1
	p1 := im.view(AddrA0, 0, 1, true)
	if p1.n > 0 {
		banks = cmisBanks(p1.u8(142))
	}
	app, lanes, why := cmisActive(lo, cmisBankPages(im, banks))
	if why != "" {
		m.note("%s", why)
	}
	m.Application = app
	if m.FlatMemory {
		m.Lanes = make([]Lane, lanes)
		for i := range m.Lanes {
			m.Lanes[i].Lane = i + 1
		}
		m.note("flat memory: the module has no pages 01h, 02h or 11h, so no monitors, thresholds or lane flags")
		return
	}

	if p1.n == 0 {
		m.note("page 01h (advertising) was not read; monitors are not decoded")
		m.Lanes = []Lane{}
		return
	}
	if maj, mn := p1.u8(128), p1.u8(129); maj != 0 || mn != 0 {
		m.InactiveFirmware = fmt.Sprintf("%d.%d", maj, mn)
	}
	if smf := p1.u8(132); smf&0x3F != 0 {
		unit := [...]float64{100, 1000, 0, 0}[smf>>6]
		if unit == 0 {
			m.note("page 01h byte 132 uses a reserved length multiplier")
		} else {
			m.Media.Lengths = append(m.Media.Lengths, Length{Medium: "smf", Meters: float64(smf&0x3F) * unit})
		}
	}
	for i, om := range []struct {
		name string
		unit float64
	}{{"om5", 2}, {"om4", 2}, {"om3", 2}, {"om2", 1}} {
		if v := p1.u8(133 + i); v != 0 {
			m.Media.Lengths = append(m.Media.Lengths, Length{Medium: om.name, Meters: float64(v) * om.unit})
		}
	}
	if wl := p1.u16(138); wl != 0 {
		m.Media.WavelengthNM = float64(wl) * 0.05
		m.Media.ToleranceNM = float64(p1.u16(140)) * 0.005
	}
	if lanes > banks*8 {
		m.note("the application uses %d lanes but the module advertises %d bank(s) of 8", lanes, banks)
		lanes = banks * 8
	}
	modMon, laneMon := p1.u8(159), p1.u8(160)
	m.DDM = modMon&0x03 != 0 || laneMon&0x07 != 0
	mult := 1
	switch (laneMon >> 3) & 0x03 {
	case 1:
		mult = 2
	case 2:
		mult = 4
	case 3:
		m.note("page 01h byte 160 gives a reserved Tx bias multiplier; bias is shown unscaled")
	}
	m.BiasMultiplier = mult
	if m.DDM {
		m.PowerRawUnit = "0.1uW"
		m.RxPowerType = "OMA"
		if p1.u8(151)&0x10 != 0 {
			m.RxPowerType = "average"
		}
	}
	if modMon&0x01 != 0 {
		m.Temperature = tempOf(lo.s16(14))
	}
	if modMon&0x02 != 0 {
		m.Voltage = voltOf(lo.u16(16))
	}
	if modMon&0x03 != 0 {
		mf := lo.u8(9)
		m.Flags = &ModuleFlags{Temperature: flagsLow(mf), Voltage: flagsLow(mf >> 4)}
	}

	m.Lanes = make([]Lane, lanes)
	for i := range m.Lanes {
		l := &m.Lanes[i]
		l.Lane = i + 1
		bank := uint8(i / 8)
		b := im.view(AddrA0, bank, 0x11, true)
		if b.n == 0 {
			if i%8 == 0 {
				m.note("page 11h of bank %d (lane monitors) was not read", bank)
			}
			continue
		}
		j := i % 8
		bit := byte(1) << j
		set := func(at int) *bool { return boolp(b.u8(at)&bit != 0) }
		flags := func(at int) *Flags {
			return &Flags{HighAlarm: b.u8(at)&bit != 0, LowAlarm: b.u8(at+1)&bit != 0,
				HighWarning: b.u8(at+2)&bit != 0, LowWarning: b.u8(at+3)&bit != 0}
		}
		l.TxFault, l.TxLOS, l.TxLOL = set(135), set(136), set(137)
		l.RxLOS, l.RxLOL = set(147), set(148)
		lf := &LaneFlags{}
		if laneMon&0x02 != 0 {
			l.TxPower = powerRaw(b.u16(154 + 2*j))
			lf.TxPower = flags(139)
		}
		if laneMon&0x01 != 0 {
			l.TxBias = biasOf(b.u16(170+2*j), mult)
			lf.TxBias = flags(143)
		}
		if laneMon&0x04 != 0 {
			l.RxPower = powerRaw(b.u16(186 + 2*j))
			lf.RxPower = flags(149)
		}
		if laneMon&0x07 != 0 {
			l.Flags = lf
		}
	}

	p2 := im.view(AddrA0, 0, 2, true)
	if p2.n == 0 {
		m.note("page 02h (thresholds) was not read")
		return
	}
	th := &Thresholds{}
	if modMon&0x01 != 0 {
		th.Temperature = fourLimits(p2, 128, func(a int) *Temperature { return tempOf(p2.s16(a)) })
	}
	if modMon&0x02 != 0 {
		th.Voltage = fourLimits(p2, 136, func(a int) *Voltage { return voltOf(p2.u16(a)) })
	}
	if laneMon&0x02 != 0 {
		th.TxPower = fourLimits(p2, 176, func(a int) *Power { return powerRaw(p2.u16(a)) })
	}
	if laneMon&0x01 != 0 {
		th.TxBias = fourLimits(p2, 184, func(a int) *Current { return biasOf(p2.u16(a), mult) })
	}
	if laneMon&0x04 != 0 {
		th.RxPower = fourLimits(p2, 192, func(a int) *Power { return powerRaw(p2.u16(a)) })
	}
	m.Thresholds = th
}

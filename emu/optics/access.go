package optics

import (
	"fmt"
	"math"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
)

// mcia answers module EEPROM reads: size bytes (1..128) at device_address
// of page page_number, bank bank_number, I2C address i2c_device_address.
// The module status (field status) says why a module does not answer;
// the data come in dword[], first byte in the most significant position.
func (m *Model) mcia(c *fw.Call) uint8 {
	if si := c.Req("slot_index"); si != 0 {
		return c.Fail(fw.StatusBadParam, "slot_index %d: an adapter has no line cards (use 0)", si)
	}
	idx := int(c.Req("module"))
	i2c := uint8(c.Req("i2c_device_address"))
	page, bank := uint8(c.Req("page_number")), uint8(c.Req("bank_number"))
	off, size := int(c.Req("device_address")), int(c.Req("size"))
	m.mu.Lock()
	defer m.mu.Unlock()
	cg, err := m.cage(idx)
	if err != nil {
		return c.Fail(fw.StatusBadParam, "module %d does not exist (modules 0..%d)", idx, len(m.cages)-1)
	}
	if size < 1 || size > 128 {
		return c.Fail(fw.StatusBadParam, "MCIA size %d: read 1..128 bytes at a time", size)
	}
	if off+size > 256 {
		return c.Fail(fw.StatusBadParam, "MCIA reads %d bytes at offset %d, past the end of the page (256)", size, off)
	}
	if st, ok := c.Module(idx); !ok || !st.Plugged || cg.kind == nil {
		c.Put("status", mciaNotConnected)
		return fw.StatusOK
	}
	if off+size <= 128 {
		page, bank = 0, 0 // the lower half is there whatever page is selected
	}
	if c.Method == emu.MethodSet {
		return cg.write(c, i2c, bank, page, off, size)
	}
	at := cg.eepromTime(c.Now)
	milli, ok := c.ModuleTemperature(idx, at)
	if !ok {
		milli = defaultMilliC
	}
	mem, st := cg.memory(i2c, bank, page, cg.sample(at, milli))
	c.Put("status", st)
	if st != mciaGood {
		return fw.StatusOK
	}
	cg.overlay(&mem, i2c, bank, page)
	data := mem[off : off+size]
	for i := 0; i*4 < len(data); i++ {
		var w uint32
		for j := 0; j < 4; j++ {
			w <<= 8
			if k := i*4 + j; k < len(data) {
				w |= uint32(data[k])
			}
		}
		c.Put(fmt.Sprintf("dword[%d]", i), w)
	}
	return fw.StatusOK
}

// pddrPrefix is the module page inside PDDR.
const pddrPrefix = "page_data.pddr_module_info_ext."

// pddrModule is PDDR page 3 (pddr_module_info_ext): the firmware's decoded
// copy of the module's identity and monitors. Powers follow the request's
// module_info_ext: 0 reports whole dBm (what mstlink 4.21 reads), 1 µW.
func (m *Model) pddrModule(c *fw.Call) uint8 {
	lp := int(c.Req("local_port"))
	if c.Has("lp_msb") {
		lp |= int(c.Req("lp_msb")) << 8
	}
	ps, ok := c.Port(lp)
	if !ok {
		return c.Fail(fw.StatusBadParam, "local_port %d does not exist here", lp)
	}
	microwatts := c.Has("module_info_ext") && c.Req("module_info_ext") == 1
	has := func(path string) bool { _, err := c.Plan.Resolve(path, c.Out); return err == nil }
	put := func(name string, v any) {
		if has(pddrPrefix + name) {
			c.Put(pddrPrefix+name, v)
		}
	}
	if has("module_info_ext") {
		c.Put("module_info_ext", c.Req("module_info_ext"))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cg, err := m.cage(ps.Module)
	if err != nil {
		return c.Fail(fw.StatusInternalError, "port %d uses module %d, which the optics model lacks", lp, ps.Module)
	}
	st, _ := c.Module(ps.Module)
	if cg.kind == nil || !st.Plugged {
		put("cable_type", "Cable_unplugged")
		return fw.StatusOK
	}
	d := cg.kind.def
	if cg.faults.FirmwareUnaware || cg.faults.UnsupportedIdentifier {
		put("cable_type", "Unidentified")
		return fw.StatusOK
	}

	// Identity: what the firmware read when the module was plugged.
	switch {
	case d.medium == "copper":
		put("cable_type", "Passive_copper_cable")
	default:
		put("cable_type", "Optical_Module")
	}
	put("cable_identifier", d.pddrID)
	put("cable_vendor", "Other")
	put("connector_type", d.connector)
	put("vendor_name", pad16(d.vendor))
	put("vendor_pn", pad16(d.pn))
	put("vendor_sn", pad16(cg.serial))
	put("vendor_rev", beUint(d.rev, 4))
	put("date_code", beUint(d.date+"00", 8))
	put("vendor_oui", uint32(d.oui[0])<<16|uint32(d.oui[1])<<8|uint32(d.oui[2]))
	put("memory_map_rev", d.revision)
	switch d.mapping {
	case mapSFF8636:
		put("cable_power_class", d.powerClass)
		put("cable_technology", d.tech<<4)
		if d.medium == "copper" {
			put("ext_ethernet_compliance_code", 0x0B)
			put("cable_length", uint8(d.copperM))
			put("cable_attenuation_5g", 4)
			put("cable_attenuation_7g", 5)
			put("cable_attenuation_12g", 7)
		} else {
			put("ethernet_compliance_code", 0x80)
			put("ext_ethernet_compliance_code", 0x02)
		}
	case mapCMIS:
		put("cable_power_class", d.powerClass)
		put("max_power", uint8(math.Round(d.maxPowerW/0.25)))
		put("cable_technology", d.tech)
		put("fw_version", uint32(d.fwMajor)<<24|uint32(d.fwMinor)<<16)
		put("module_st", "Ready_state")
		if len(d.apps) > 0 {
			put("ext_ethernet_compliance_code", d.apps[0].host)
			put("active_set_host_compliance_code", d.apps[0].host)
			put("active_set_media_compliance_code", d.apps[0].media)
		}
		// Only dp_st_lane0 carries the state names in the database; the
		// other lanes use the same numbers.
		activated, ok1 := enumOf(c, pddrPrefix+"dp_st_lane0", "DPActivated")
		deactivated, ok2 := enumOf(c, pddrPrefix+"dp_st_lane0", "DPDeactivated")
		for l := 0; l < 8 && ok1 && ok2; l++ {
			if l < d.lanes {
				put(fmt.Sprintf("dp_st_lane%d", l), activated)
			} else {
				put(fmt.Sprintf("dp_st_lane%d", l), deactivated)
			}
		}
	case mapSFF8472:
		put("ext_ethernet_compliance_code", 0x03)
	}
	if ps.LinkType == fw.LinkInfiniBand {
		// In a port that runs InfiniBand the firmware names the IB widths
		// the module's lanes carry (ib_width, a bitmask: bit 0 1x, bit 1
		// 2x, bit 2 4x, as PTYS's widths).
		w := 0
		for b, lanes := range []int{1, 2, 4, 8} {
			if lanes <= d.lanes {
				w |= 1 << b
			}
		}
		put("ib_width", w)
	}
	if d.medium != "copper" {
		put("wavelength", uint16(d.wavelengthNM))
		put("wavelength_tolerance", uint16(math.Round(d.toleranceNM/0.005)))
		omUnit := 2.0
		if d.mapping == mapSFF8472 {
			omUnit = 10
		}
		if d.om3M > 0 {
			put("length_om3", uint8(d.om3M/omUnit))
		}
		if d.om4M > 0 {
			put("length_om4", uint8(d.om4M/omUnit))
		}
		switch {
		case d.smfM >= 1000 && math.Mod(d.smfM, 1000) == 0:
			put("smf_length", uint16(d.smfM/1000)) // km (bits 9..8 = 00)
		case d.smfM > 0:
			put("smf_length", 1<<8|uint16(d.smfM/100)) // 100 m units
		}
	}

	// Monitors, from the moment the firmware last refreshed its copy.
	s := sample{}
	if d.ddm && !cg.faults.NoDDM {
		at := cg.firmwareTime(c.Now)
		milli, ok := c.ModuleTemperature(ps.Module, at)
		if !ok {
			milli = defaultMilliC
		}
		s = cg.sample(at, milli)
	}
	if !s.ddm {
		return fw.StatusOK
	}
	put("rx_power_type", "Average_power")
	put("monitor_cap_mask", 0x1F) // temperature, voltage, Tx power, Rx power, bias
	if cg.faults.I2CHang {
		// The bus answers nothing: the firmware's monitors read all ones.
		for _, f := range []string{"temperature", "voltage", "temperature_high_th", "temperature_low_th", "voltage_high_th", "voltage_low_th",
			"tx_bias_high_th", "tx_bias_low_th", "tx_power_high_th", "tx_power_low_th", "rx_power_high_th", "rx_power_low_th"} {
			put(f, 0xFFFF)
		}
		for l := 0; l < 8; l++ {
			put(fmt.Sprintf("tx_bias_lane%d", l), 0xFFFF)
			put(fmt.Sprintf("tx_power_lane%d", l), 0xFFFF)
			put(fmt.Sprintf("rx_power_lane%d", l), 0xFFFF)
		}
		return fw.StatusOK
	}
	power := func(mw float64) int64 {
		if microwatts {
			return int64(roundClamp(mw*1000, 0, 65535))
		}
		if mw <= 0 {
			return -40 // the firmware's floor for no light
		}
		return int64(roundClamp(10*math.Log10(mw), -40, 40))
	}
	put("temperature", int64(roundClamp(s.tempC*256, math.MinInt16, math.MaxInt16)))
	put("voltage", int64(roundClamp(s.vccV*10000, 0, 65535)))
	// Bias in 2 µA; a database with tx_bias_scaling_factor gets the
	// module's own count and its multiplier instead.
	scaled := has(pddrPrefix + "tx_bias_scaling_factor")
	biasCount := func(ma float64) int64 {
		if scaled {
			return int64(roundClamp(ma/(0.002*float64(max(d.biasMult, 1))), 0, 65535))
		}
		return int64(roundClamp(ma/0.002, 0, 65535))
	}
	if scaled {
		put("tx_bias_scaling_factor", map[int]int{1: 0, 2: 1, 4: 2}[max(d.biasMult, 1)])
	}
	rxLive := 0
	for l := 0; l < d.lanes; l++ {
		put(fmt.Sprintf("tx_bias_lane%d", l), biasCount(s.biasMA[l]))
		put(fmt.Sprintf("tx_power_lane%d", l), power(s.txMW[l]))
		put(fmt.Sprintf("rx_power_lane%d", l), power(s.rxMW[l]))
		if !s.rxLOS[l] {
			rxLive |= 1 << l
		}
	}
	if d.mapping == mapCMIS {
		put("rx_output_valid", rxLive)
	}
	cal := cg.cal()
	eff := func(f func(float64) (uint16, float64), v float64) float64 { _, e := f(v); return e }
	put("temperature_high_th", int64(roundClamp(effTemp(cal, d.tempTh[0])*256, math.MinInt16, math.MaxInt16)))
	put("temperature_low_th", int64(roundClamp(effTemp(cal, d.tempTh[1])*256, math.MinInt16, math.MaxInt16)))
	put("voltage_high_th", int64(roundClamp(eff(cal.encodeVcc, d.vccTh[0])*10000, 0, 65535)))
	put("voltage_low_th", int64(roundClamp(eff(cal.encodeVcc, d.vccTh[1])*10000, 0, 65535)))
	bias := func(v float64) float64 { _, e := cal.encodeBias(v, d.biasMult); return e }
	put("tx_bias_high_th", biasCount(bias(d.biasTh[0])))
	put("tx_bias_low_th", biasCount(bias(d.biasTh[1])))
	tx := func(dbm float64) float64 { _, e := cal.encodeTx(fromDBm(dbm)); return e }
	rx := func(dbm float64) float64 { _, e := cal.encodeRx(fromDBm(dbm)); return e }
	put("tx_power_high_th", power(tx(d.txTh[0])))
	put("tx_power_low_th", power(tx(d.txTh[1])))
	put("rx_power_high_th", power(rx(d.rxTh[0])))
	put("rx_power_low_th", power(rx(d.rxTh[1])))
	return fw.StatusOK
}

// enumOf looks up a value of a field's enum by name.
func enumOf(c *fw.Call, path, name string) (uint64, bool) {
	t, err := c.Plan.Resolve(path, c.Out)
	if err != nil || t.Step.Field == nil {
		return 0, false
	}
	return t.Step.Field.EnumValueOf(name)
}

func effTemp(c calib, v float64) float64 { _, e := c.encodeTemp(v); return e }

// pad16 pads ID text with spaces, as modules store it.
func pad16(s string) string {
	for len(s) < 16 {
		s += " "
	}
	return s[:16]
}

// beUint packs ASCII right-aligned into n bytes (NUL padding on the left),
// as PDDR carries vendor_rev and date_code.
func beUint(s string, n int) uint64 {
	if len(s) > n {
		s = s[:n]
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		v = v<<8 | uint64(s[i])
	}
	return v
}

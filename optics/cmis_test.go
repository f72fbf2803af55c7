package optics

import (
	"strings"
	"testing"
)

// cmisModule builds a CMIS 5.0 QSFP-DD: 400GAUI-8 host, 400GBASE-DR4 media
// (application 1) and 100GAUI-1 / 100GBASE-DR breakout (application 2).
func cmisModule(mult byte) *img {
	m := newImg()
	const a = AddrA0
	m.set(a, 0, 0, 0, 0x18, 0x50, 0x00, 3<<1)
	m.set(a, 0, 0, 9, 0x01|0x20)       // temperature high alarm (bit 0), Vcc low alarm (bit 5)
	m.u16(a, 0, 0, 14, uint16(0xFF00)) // -1 °C
	m.u16(a, 0, 0, 16, 33100)
	m.set(a, 0, 0, 39, 3, 4)
	m.set(a, 0, 0, 85, 0x02)
	m.set(a, 0, 0, 86, 0x11, 0x1C, 0x84, 0x01)
	m.set(a, 0, 0, 90, 0x4B, 0x14, 0x11, 0xFF)
	m.set(a, 0, 0, 94, 0xFF)
	m.set(a, 0, 0, 128, 0x18)
	m.str(a, 0, 0, 129, 16, "ACME CMIS")
	m.set(a, 0, 0, 145, 0x01, 0x02, 0x03)
	m.str(a, 0, 0, 148, 16, "QDD-DR4")
	m.str(a, 0, 0, 164, 2, "C1")
	m.str(a, 0, 0, 166, 16, "CSN9")
	m.str(a, 0, 0, 182, 8, "25063099")
	m.set(a, 0, 0, 200, 0xE0, 48) // class 8, 12 W
	m.set(a, 0, 0, 203, 0x0C)
	m.set(a, 0, 0, 212, 0x06)
	m.sum(a, 0, 0, 128, 221, 222)
	m.set(a, 0, 1, 128, 3, 2)
	m.set(a, 0, 1, 132, 0x05)       // 5 x 100 m
	m.u16(a, 0, 1, 138, 26220)      // 1311 nm
	m.set(a, 0, 1, 151, 0x10)       // average Rx power
	m.set(a, 0, 1, 159, 0x03, 0x07) // temperature, Vcc; bias, Tx and Rx power
	m.set(a, 0, 1, 160, 0x07|mult<<3)
	// Page 02h: temperature, Vcc, (aux), Tx power, bias, Rx power.
	m.u16(a, 0, 2, 128, 70*256)
	m.u16(a, 0, 2, 136, 36300)
	m.u16(a, 0, 2, 176, 39811).u16(a, 0, 2, 178, 2291)
	m.u16(a, 0, 2, 184, 30000).u16(a, 0, 2, 186, 5000)
	m.u16(a, 0, 2, 192, 39811).u16(a, 0, 2, 194, 912)
	return m
}

// activate sets the active control set of bank 0: lanes [from, to) run
// application sel in one data path starting at from.
func activate(m *img, bank uint8, from, to int, sel byte, perLanePath bool) {
	for l := from; l < to; l++ {
		dp := byte(from)
		if perLanePath {
			dp = byte(l)
		}
		m.set(AddrA0, bank, 0x11, 206+l, sel<<4|dp<<1)
	}
}

func TestCMIS(t *testing.T) {
	m := cmisModule(1) // bias multiplier x2
	const a = AddrA0
	activate(m, 0, 0, 8, 1, false) // 8 host lanes, one 400GAUI-8 path: 4 media lanes
	m.set(a, 0, 0x11, 135, 0x02)   // Tx fault lane 2
	m.set(a, 0, 0x11, 136, 0x04)   // Tx LOS lane 3
	m.set(a, 0, 0x11, 139, 0x01)   // Tx power high alarm lane 1
	m.set(a, 0, 0x11, 145, 0x04)   // bias high warning lane 3
	m.set(a, 0, 0x11, 147, 0x08)   // Rx LOS lane 4
	m.set(a, 0, 0x11, 148, 0x08)   // Rx CDR LOL lane 4
	m.set(a, 0, 0x11, 152, 0x08)   // Rx power low warning lane 4
	for l := 0; l < 4; l++ {
		m.u16(a, 0, 0x11, 154+2*l, uint16(10000+l))
		m.u16(a, 0, 0x11, 170+2*l, uint16(20000+l))
		m.u16(a, 0, 0x11, 186+2*l, uint16(8000+l))
	}
	mod := mustDecode(t, m.image())
	if mod.Standard != CMIS || mod.Revision != "5.0" || mod.ModuleState != "Ready" || mod.Firmware != "3.4" || mod.InactiveFirmware != "3.2" {
		t.Errorf("identity %+v", mod)
	}
	if mod.PowerClass != 8 || mod.MaxPowerW != 12 || mod.Connector.Name != "MPO 1x12" || mod.Media.Type != "optical-smf" || mod.Media.Technology != "1310 nm EML" {
		t.Errorf("power/media %+v", mod)
	}
	near(t, "wavelength", mod.Media.WavelengthNM, 1311, 1e-9)
	if mod.Vendor.Name != "ACME CMIS" || mod.Vendor.PN != "QDD-DR4" || mod.Vendor.Date != "2025-06-30" || !mod.ChecksumsOK() {
		t.Errorf("vendor %+v checksums %+v", mod.Vendor, mod.Checksums)
	}
	if a := mod.Application; a == nil || !a.Active || a.Host.Name != "400GAUI-8 C2M" || a.Media.Name != "400GBASE-DR4" || a.HostLanes != 8 || a.MediaLanes != 4 {
		t.Errorf("application %+v", mod.Application)
	}
	if len(mod.Lanes) != 4 {
		t.Fatalf("lanes from the active application: %d, want 4", len(mod.Lanes))
	}
	if mod.BiasMultiplier != 2 {
		t.Errorf("multiplier %d", mod.BiasMultiplier)
	}
	near(t, "temperature", mod.Temperature.C, -1, 1e-9)
	near(t, "voltage", mod.Voltage.V, 3.31, 1e-9)
	for i, l := range mod.Lanes {
		// The multiplier multiplies: 2 µA × 2 per count (ethtool 6.11 divides).
		near(t, "bias", l.TxBias.MA, float64(20000+i)*0.002*2, 1e-9)
		near(t, "tx", l.TxPower.MW, mwOf(uint16(10000+i)), 1e-12)
		near(t, "rx", l.RxPower.MW, mwOf(uint16(8000+i)), 1e-12)
	}
	near(t, "bias threshold", mod.Thresholds.TxBias.HighAlarm.MA, 30000*0.002*2, 1e-9)
	near(t, "tx threshold", mod.Thresholds.TxPower.LowAlarm.MW, mwOf(2291), 1e-12)
	near(t, "rx threshold", mod.Thresholds.RxPower.LowAlarm.MW, mwOf(912), 1e-12)
	near(t, "temperature threshold", mod.Thresholds.Temperature.HighAlarm.C, 70, 1e-9)
	if !mod.Flags.Temperature.HighAlarm || mod.Flags.Temperature.LowAlarm || !mod.Flags.Voltage.LowAlarm || mod.Flags.Voltage.HighAlarm {
		t.Errorf("module flags (CMIS bit order) %+v", mod.Flags)
	}
	l := mod.Lanes
	if *l[1].TxFault != true || *l[0].TxFault || *l[2].TxLOS != true || *l[3].RxLOS != true || *l[3].RxLOL != true || *l[0].RxLOS {
		t.Errorf("signals")
	}
	if !l[0].Flags.TxPower.HighAlarm || !l[2].Flags.TxBias.HighWarning || !l[3].Flags.RxPower.LowWarning || l[1].Flags.RxPower.Any() {
		t.Errorf("lane flags")
	}
}

func TestCMISLaneCounts(t *testing.T) {
	// Breakout: four one-lane data paths of application 2.
	m := cmisModule(0)
	activate(m, 0, 0, 4, 2, true)
	mod := mustDecode(t, m.image())
	if len(mod.Lanes) != 4 || mod.Application.Index != 2 || mod.BiasMultiplier != 1 {
		t.Errorf("breakout: %d lanes, app %+v", len(mod.Lanes), mod.Application)
	}
	near(t, "unscaled bias", mod.Thresholds.TxBias.HighAlarm.MA, 60, 1e-9)
	// No active application: the first advertised one, with a note.
	m = cmisModule(0)
	m.touch(AddrA0, 0, 0x11, 200)
	mod = mustDecode(t, m.image())
	if len(mod.Lanes) != 4 || mod.Application.Active || mod.Application.Note == "" {
		t.Errorf("inactive: %d lanes, %+v", len(mod.Lanes), mod.Application)
	}
	// Two banks, each with an 8-lane data path: 16 lanes, the second eight
	// from bank 1's page 11h.
	m = cmisModule(0)
	m.set(AddrA0, 0, 0, 86, 0x11, 0x1A, 0x88, 0x01) // 8 media lanes
	m.set(AddrA0, 0, 1, 142, 0x01)                  // banks 0 and 1
	activate(m, 0, 0, 8, 1, false)
	activate(m, 1, 0, 8, 1, false)
	m.u16(AddrA0, 1, 0x11, 186+2*3, 4321) // bank 1 lane 4 = module lane 12
	mod = mustDecode(t, m.image())
	if len(mod.Lanes) != 16 {
		t.Fatalf("banks: %d lanes", len(mod.Lanes))
	}
	if mod.Lanes[11].RxPower.Raw != 4321 {
		t.Errorf("lane 12 reads bank 1: %+v", mod.Lanes[11].RxPower)
	}
}

func TestCMISFlat(t *testing.T) {
	m := newImg()
	const a = AddrA0
	m.set(a, 0, 0, 0, 0x1E, 0x50, 0x80, 3<<1)
	m.set(a, 0, 0, 85, 0x03)
	m.set(a, 0, 0, 86, 0x4F, 0x01, 0x40, 0x01, 0xFF)
	m.set(a, 0, 0, 128, 0x1E)
	m.set(a, 0, 0, 202, 1<<6|3) // 3 m
	m.set(a, 0, 0, 203, 0x23)
	m.sum(a, 0, 0, 128, 221, 222)
	mod := mustDecode(t, m.image())
	if !mod.FlatMemory || mod.DDM || mod.Media.Type != "passive-copper" || len(mod.Lanes) != 4 || mod.Temperature != nil {
		t.Errorf("flat %+v", mod)
	}
	if mod.Media.Lengths[0] != (Length{"cable", 3}) || !strings.Contains(strings.Join(mod.Notes, ";"), "flat memory") {
		t.Errorf("flat %+v %v", mod.Media, mod.Notes)
	}
}

package optics

import (
	"math"
	"testing"
)

// qsfp builds an SFF-8636 module: lower page with monitors and flags,
// page 00h identity, page 03h thresholds.
func qsfp(flat bool) *img {
	m := newImg()
	const a = AddrA0
	m.set(a, 0, 0, 0, 0x11, 0x07)
	if flat {
		m.set(a, 0, 0, 2, 0x04)
	}
	m.set(a, 0, 0, 128, 0x11, 0xC0, 0x0C) // identifier, power class 4, MPO 1x12
	m.set(a, 0, 0, 143, 35).set(a, 0, 0, 146, 50)
	m.set(a, 0, 0, 147, 0x00) // 850 nm VCSEL
	m.str(a, 0, 0, 148, 16, "ACME")
	m.set(a, 0, 0, 165, 0xAA, 0xBB, 0xCC)
	m.str(a, 0, 0, 168, 16, "Q28-SR4")
	m.str(a, 0, 0, 184, 2, "B0")
	m.u16(a, 0, 0, 186, 17000) // 850 nm in 0.05 nm
	m.u16(a, 0, 0, 188, 2000)  // 10 nm in 0.005 nm
	m.sum(a, 0, 0, 128, 190, 191)
	m.str(a, 0, 0, 196, 16, "QSN1")
	m.str(a, 0, 0, 212, 8, "24010203")
	m.set(a, 0, 0, 220, 0x3C)
	m.sum(a, 0, 0, 192, 222, 223)
	return m
}

func TestSFF8636(t *testing.T) {
	m := qsfp(false)
	const a = AddrA0
	m.set(a, 0, 0, 3, 0x21)  // Rx LOS lane 1, Tx LOS lane 2
	m.set(a, 0, 0, 4, 0x08)  // Tx fault lane 4
	m.set(a, 0, 0, 5, 0x42)  // Rx LOL lane 2, Tx LOL lane 3
	m.set(a, 0, 0, 6, 0x80)  // temperature high alarm
	m.set(a, 0, 0, 7, 0x10)  // Vcc low warning
	m.set(a, 0, 0, 9, 0x04)  // Rx power: lane 2 low alarm (low nibble: lane 2)
	m.set(a, 0, 0, 10, 0x10) // Rx power: lane 3 low warning
	m.set(a, 0, 0, 12, 0x02) // bias: lane 4 high warning
	m.set(a, 0, 0, 13, 0x80) // Tx power: lane 1 high alarm
	m.u16(a, 0, 0, 22, uint16(45*256+128))
	m.u16(a, 0, 0, 26, 32950)
	rx := []uint16{7000, 0, 123, 65535}
	bias := []uint16{3500, 3600, 3700, 3800}
	tx := []uint16{9000, 9100, 9200, 9300}
	for i := 0; i < 4; i++ {
		m.u16(a, 0, 0, 34+2*i, rx[i]).u16(a, 0, 0, 42+2*i, bias[i]).u16(a, 0, 0, 50+2*i, tx[i])
	}
	// Page 03h: temperature, Vcc, then Rx power, bias, Tx power (SFF-8636
	// order, unlike CMIS).
	m.u16(a, 0, 3, 128, 75*256).u16(a, 0, 3, 130, uint16(0xFB00)) // 75, -5 °C
	m.u16(a, 0, 3, 144, 36300).u16(a, 0, 3, 146, 29700)
	m.u16(a, 0, 3, 176, 34674).u16(a, 0, 3, 178, 575)
	m.u16(a, 0, 3, 184, 6000).u16(a, 0, 3, 186, 500)
	m.u16(a, 0, 3, 192, 31623).u16(a, 0, 3, 194, 912)
	mod := mustDecode(t, m.image())

	if mod.Standard != SFF8636 || mod.FlatMemory || mod.PowerClass != 4 || mod.MaxPowerW != 3.5 || mod.Connector.Name != "MPO 1x12" {
		t.Errorf("identity %+v", mod)
	}
	if mod.Vendor.Name != "ACME" || mod.Vendor.OUI != "aa:bb:cc" || mod.Vendor.PN != "Q28-SR4" || mod.Vendor.SN != "QSN1" || mod.Vendor.Date != "2024-01-02" {
		t.Errorf("vendor %+v", mod.Vendor)
	}
	near(t, "wavelength", mod.Media.WavelengthNM, 850, 1e-9)
	near(t, "tolerance", mod.Media.ToleranceNM, 10, 1e-9)
	if mod.Media.Type != "optical-mmf" || mod.Media.Technology != "850 nm VCSEL" || len(mod.Media.Lengths) != 2 || mod.Media.Lengths[1].Meters != 100 {
		t.Errorf("media %+v", mod.Media)
	}
	if !mod.DDM || mod.RxPowerType != "average" || len(mod.Lanes) != 4 || !mod.ChecksumsOK() {
		t.Fatalf("ddm %+v", mod)
	}
	near(t, "temperature", mod.Temperature.C, 45.5, 1e-9)
	near(t, "voltage", mod.Voltage.V, 3.295, 1e-9)
	for i, l := range mod.Lanes {
		if rx[i] == 0xFFFF {
			// All ones is the pattern of no reading, not 6.5535 mW.
			if l.RxPower.Valid() || l.RxPower.NA != "0xFFFF" {
				t.Errorf("lane %d rx 0xFFFF read as %+v", i+1, l.RxPower)
			}
		} else {
			near(t, "rx", l.RxPower.MW, mwOf(rx[i]), 1e-12)
		}
		near(t, "bias", l.TxBias.MA, float64(bias[i])*0.002, 1e-12)
		near(t, "tx", l.TxPower.MW, mwOf(tx[i]), 1e-12)
	}
	if !math.IsInf(float64(mod.Lanes[1].RxPower.DBm), -1) {
		t.Errorf("lane 2 is dark: %v", mod.Lanes[1].RxPower.DBm)
	}
	want := []struct{ rxLOS, txLOS, fault, rxLOL, txLOL bool }{{true, false, false, false, false}, {false, true, false, true, false},
		{false, false, false, false, true}, {false, false, true, false, false}}
	for i, w := range want {
		l := mod.Lanes[i]
		if *l.RxLOS != w.rxLOS || *l.TxLOS != w.txLOS || *l.TxFault != w.fault || *l.RxLOL != w.rxLOL || *l.TxLOL != w.txLOL {
			t.Errorf("lane %d signals: los %v/%v fault %v lol %v/%v", i+1, *l.RxLOS, *l.TxLOS, *l.TxFault, *l.RxLOL, *l.TxLOL)
		}
	}
	if !mod.Flags.Temperature.HighAlarm || !mod.Flags.Voltage.LowWarning || mod.Flags.Voltage.HighAlarm {
		t.Errorf("module flags %+v", mod.Flags)
	}
	if !mod.Lanes[1].Flags.RxPower.LowAlarm || mod.Lanes[0].Flags.RxPower.Any() || !mod.Lanes[2].Flags.RxPower.LowWarning ||
		!mod.Lanes[3].Flags.TxBias.HighWarning || !mod.Lanes[0].Flags.TxPower.HighAlarm {
		t.Errorf("lane flags %+v %+v %+v %+v", mod.Lanes[0].Flags.RxPower, mod.Lanes[1].Flags.RxPower, mod.Lanes[2].Flags.RxPower, mod.Lanes[3].Flags.TxBias)
	}
	th := mod.Thresholds
	near(t, "temp LA", th.Temperature.LowAlarm.C, -5, 1e-9)
	near(t, "vcc HA", th.Voltage.HighAlarm.V, 3.63, 1e-9)
	near(t, "rx HA", th.RxPower.HighAlarm.MW, mwOf(34674), 1e-12)
	near(t, "rx LA", th.RxPower.LowAlarm.MW, mwOf(575), 1e-12)
	near(t, "bias HA", th.TxBias.HighAlarm.MA, 12, 1e-12)
	near(t, "bias LA", th.TxBias.LowAlarm.MA, 1, 1e-12)
	near(t, "tx HA", th.TxPower.HighAlarm.MW, mwOf(31623), 1e-12)
}

func TestSFF8636Flat(t *testing.T) {
	m := qsfp(true)
	m.set(AddrA0, 0, 0, 220, 0x00)
	m.sum(AddrA0, 0, 0, 192, 222, 223)
	m.set(AddrA0, 0, 0, 147, 0xA0) // copper, unequalized
	m.set(AddrA0, 0, 0, 146, 3)
	m.sum(AddrA0, 0, 0, 128, 190, 191)
	mod := mustDecode(t, m.image())
	if !mod.FlatMemory || mod.DDM || mod.Thresholds != nil || mod.Media.Type != "passive-copper" || mod.Temperature != nil {
		t.Errorf("flat copper %+v", mod)
	}
	if len(mod.Media.Lengths) == 0 || mod.Media.Lengths[len(mod.Media.Lengths)-1] != (Length{"copper", 3}) {
		t.Errorf("lengths %+v", mod.Media.Lengths)
	}
	if mod.Lanes[0].RxLOS != nil {
		t.Errorf("a flat module reports no lane signals")
	}
}

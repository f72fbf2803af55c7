package optics

import (
	"math"
	"strconv"
	"testing"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

// pddrPage encodes a PDDR module page through the codec, by field name.
func pddrPage(t *testing.T, kv ...string) *prm.Decoded {
	t.Helper()
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	r, err := db.Register("PDDR")
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.RegisterPlan(r)
	if err != nil {
		t.Fatal(err)
	}
	buf := p.NewBuffer()
	as := []prm.Assignment{{Path: "page_select", Value: "Module_info_page"}}
	for i := 0; i+1 < len(kv); i += 2 {
		path := kv[i]
		if path != "module_info_ext" && path != "page_select" {
			path = PDDRPrefix + path
		}
		as = append(as, prm.Assignment{Path: path, Value: kv[i+1]})
	}
	if err := p.Encode(buf, as); err != nil {
		t.Fatal(err)
	}
	d, err := p.Decode(buf)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestPDDRMicrowatts(t *testing.T) {
	d := pddrPage(t, "module_info_ext", "1",
		"cable_type", "Optical_Module", "cable_identifier", "7", "connector_type", "12",
		"vendor_name", "ACME", "vendor_pn", "PN-1", "vendor_sn", "SN-1", "vendor_rev", "0x00004132",
		"vendor_oui", "0x0a0b0c", "date_code", "0x3234303131373030", "fw_version", "0x02070000",
		"wavelength", "1311", "smf_length", strconv.Itoa(1<<8|5), "module_st", "Ready_state",
		"rx_power_type", "Average_power", "monitor_cap_mask", "0x1f",
		"temperature", "-300", "voltage", "33000",
		"tx_bias_lane0", "27500", "tx_bias_lane1", "100", "rx_power_lane0", "881", "rx_power_lane1", "0",
		"tx_power_lane0", "1568", "temperature_high_th", strconv.Itoa(75*256), "temperature_low_th", strconv.Itoa(-5*256),
		"voltage_high_th", "36300", "rx_power_low_th", "91", "tx_bias_high_th", "55000")
	m, err := FromPDDR(d, 4)
	if err != nil {
		t.Fatal(err)
	}
	if m.Source != SourceFirmware || m.Identifier.Value != 0x1E || m.Standard != CMIS || m.CableType != "Optical_Module" || m.ModuleState != "Ready" {
		t.Errorf("identity %+v", m)
	}
	if m.Vendor.Name != "ACME" || m.Vendor.PN != "PN-1" || m.Vendor.SN != "SN-1" || m.Vendor.Rev != "A2" || m.Vendor.OUI != "0a:0b:0c" || m.Vendor.Date != "2024-01-17" || m.Firmware != "2.7" {
		t.Errorf("vendor %+v fw %q", m.Vendor, m.Firmware)
	}
	if m.Media.Type != "optical-smf" || m.Media.WavelengthNM != 1311 || m.Media.Lengths[0] != (Length{"smf", 500}) {
		t.Errorf("media %+v", m.Media)
	}
	if !m.DDM || m.PowerRawUnit != "uW" || m.RxPowerType != "average" || len(m.Lanes) != 4 {
		t.Fatalf("ddm %+v", m)
	}
	near(t, "temperature", m.Temperature.C, -300.0/256, 1e-9)
	near(t, "voltage", m.Voltage.V, 3.3, 1e-9)
	// Lane 0 sits in the high half of its dword (the codec knows by name).
	near(t, "bias lane 1", m.Lanes[0].TxBias.MA, 55, 1e-9)
	near(t, "bias lane 2", m.Lanes[1].TxBias.MA, 0.2, 1e-9)
	near(t, "rx lane 1", m.Lanes[0].RxPower.MW, 0.881, 1e-12)
	near(t, "tx lane 1", m.Lanes[0].TxPower.MW, 1.568, 1e-12)
	if !math.IsInf(float64(m.Lanes[1].RxPower.DBm), -1) {
		t.Errorf("0 µW is -inf dBm: %v", m.Lanes[1].RxPower.DBm)
	}
	th := m.Thresholds
	near(t, "temp HA", th.Temperature.HighAlarm.C, 75, 1e-9)
	near(t, "temp LA", th.Temperature.LowAlarm.C, -5, 1e-9)
	near(t, "vcc HA", th.Voltage.HighAlarm.V, 3.63, 1e-9)
	near(t, "rx LA", th.RxPower.LowAlarm.MW, 0.091, 1e-12)
	near(t, "bias HA", th.TxBias.HighAlarm.MA, 110, 1e-9)
	if th.Temperature.HighWarning != nil {
		t.Errorf("PDDR has no warning thresholds")
	}
}

func TestPDDRDBm(t *testing.T) {
	d := pddrPage(t, "cable_type", "Optical_Module", "cable_identifier", "0", "temperature", "5000",
		"rx_power_lane0", "-3", "tx_power_lane0", "2", "rx_power_low_th", "-13", "monitor_cap_mask", "0x1f")
	m, err := FromPDDR(d, 0)
	if err != nil {
		t.Fatal(err)
	}
	if m.PowerRawUnit != "dBm" || len(m.Lanes) != 8 || m.Identifier.Value != 0x11 {
		t.Fatalf("%+v", m)
	}
	near(t, "rx dBm", float64(m.Lanes[0].RxPower.DBm), -3, 0)
	near(t, "rx mW", m.Lanes[0].RxPower.MW, math.Pow(10, -0.3), 1e-12)
	near(t, "tx dBm", float64(m.Lanes[0].TxPower.DBm), 2, 0)
	near(t, "rx LA", float64(m.Thresholds.RxPower.LowAlarm.DBm), -13, 0)
}

func TestPDDRUnpluggedAndErrors(t *testing.T) {
	m, err := FromPDDR(pddrPage(t, "cable_type", "Cable_unplugged"), 4)
	if err != nil || m.CableType != CableUnplugged || m.DDM {
		t.Errorf("unplugged: %v %+v", err, m)
	}
	m, err = FromPDDR(pddrPage(t, "cable_type", "Optical_Module"), 4)
	if err != nil || m.DDM || m.Temperature != nil {
		t.Errorf("no monitors: %v %+v", err, m)
	}
	if _, err := FromPDDR(pddrPage(t, "page_select", "Operational_info_page"), 4); err == nil {
		t.Error("page 0 decoded as the module page")
	}
	if _, err := FromPDDR(nil, 4); err == nil {
		t.Error("nil decoded")
	}
}

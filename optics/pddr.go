package optics

import (
	"fmt"
	"strings"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/regpath"
)

// The firmware's view of a module: PDDR with page_select=Module_info_page
// (pddr_module_info_ext), decoded through the PRM codec by field name. Units
// (the PDDR Module Info page's field descriptions in the PRM; mstflint's
// mlxlink/modules/mlxlink_commander.cpp converts the same way): temperature 1/256 °C signed, voltage
// 100 µV, bias 2 µA (times 2^tx_bias_scaling_factor where the database has
// that field), powers and power thresholds in dBm (signed integers) when
// module_info_ext is 0 and in µW when it is 1. Thresholds are alarms only.

// PDDRPrefix is the path of the module page inside PDDR.
const PDDRPrefix = "page_data.pddr_module_info_ext."

// pddrIdentifiers maps PDDR cable_identifier to the SFF-8024 identifier of
// the same form factor (0: no SFF-8024 equivalent).
var pddrIdentifiers = map[uint64]struct {
	sff  uint8
	name string
}{
	0: {0x11, "QSFP28"}, 1: {0x0D, "QSFP+"}, 2: {0x03, "SFP28/SFP+"}, 3: {0x03, "QSA (QSFP to SFP)"},
	4: {0, "Backplane"}, 5: {0x1A, "SFP-DD"}, 6: {0x18, "QSFP-DD"}, 7: {0x1E, "QSFP CMIS"},
	8: {0x19, "OSFP"}, 9: {0, "C2C"}, 10: {0x1B, "DSFP"}, 11: {0x11, "QSFP split cable"},
}

// PDDR cable_type values as the module's presence and medium.
const (
	CableUnidentified = "Unidentified"
	CableUnplugged    = "Cable_unplugged"
)

// PDDRPowerUnit says how a PDDR module page reports powers.
func PDDRPowerUnit(d *prm.Decoded) string {
	if v, err := d.Get(regpath.PDDRModInfoExt); err == nil && v.Uint() == 1 {
		return "uW"
	}
	return "dBm"
}

// FromPDDR decodes a PDDR module-info page into a Module. lanes is how many
// lanes to report (the port width or the module's own count); 0 means 8.
func FromPDDR(d *prm.Decoded, lanes int) (*Module, error) {
	if d == nil {
		return nil, fmt.Errorf("no PDDR reply to decode")
	}
	if v, err := d.Get(regpath.PDDRModPageSelect); err == nil {
		if name, ok := v.EnumName(); ok && name != "Module_info_page" || !ok && v.Uint() != 3 {
			return nil, fmt.Errorf("PDDR reply is page %d, not the module info page (3)", v.Uint())
		}
	}
	if _, err := d.Get(regpath.PDDRModCableType); err != nil {
		return nil, fmt.Errorf("PDDR reply has no module info page in this database: %v", err)
	}
	get := func(path string) (uint64, bool) {
		v, err := d.Get(path)
		if err != nil {
			return 0, false
		}
		return v.Uint(), true
	}
	u := func(path string) uint64 { v, _ := get(path); return v }
	text := func(path string) string {
		v, err := d.Get(path)
		if err != nil {
			return ""
		}
		if v.IsText() {
			return cleanText(v.Raw())
		}
		return ""
	}
	m := &Module{Source: SourceFirmware, Lanes: []Lane{}}
	if v, err := d.Get(regpath.PDDRModCableType); err == nil {
		if n, ok := v.EnumName(); ok {
			m.CableType = n
		} else {
			m.CableType = fmt.Sprintf("%d", v.Uint())
		}
	}
	if m.CableType == CableUnplugged {
		return m, nil
	}
	id := u(regpath.PDDRModCableIdentifier)
	if e, ok := pddrIdentifiers[id]; ok && e.sff != 0 {
		m.Identifier = IdentifierName(e.sff)
		m.Identifier.Name += " (firmware: " + e.name + ")"
	} else {
		m.Identifier = Code{Name: fmt.Sprintf("firmware cable_identifier %d", id)}
	}
	m.Standard = StandardOf(m.Identifier.Value)
	if m.CableType == CableUnidentified {
		m.Standard = ""
	}
	m.Connector = ConnectorName(uint8(u(regpath.PDDRModConnectorType)))
	m.Vendor = Vendor{Name: text(regpath.PDDRModVendorName), PN: text(regpath.PDDRModVendorPN), SN: text(regpath.PDDRModVendorSN)}
	if o, ok := get(regpath.PDDRModVendorOUI); ok {
		m.Vendor.OUI = fmt.Sprintf("%02x:%02x:%02x", o>>16&0xFF, o>>8&0xFF, o&0xFF)
	}
	m.Vendor.Rev = cleanText(beBytes(u(regpath.PDDRModVendorRev), 4))
	if dc, ok := get(regpath.PDDRModDateCode); ok {
		var h half
		h.n = copy(h.data[:], beBytes(dc, 8))
		m.Vendor.DateCode, m.Vendor.Date, m.Vendor.Lot = dateCode(h, 0)
	}
	if fv := u(regpath.PDDRModFwVersion); fv != 0 {
		m.Firmware = fmt.Sprintf("%d.%d", fv>>24, fv>>16&0xFF)
		if fv&0xFFFF != 0 {
			m.Firmware += fmt.Sprintf(".%d", fv&0xFFFF)
		}
	}
	switch m.CableType {
	case "Optical_Module":
		m.Media.Type = "optical"
	case "Passive_copper_cable":
		m.Media.Type = "passive-copper"
	case "Active_cable":
		m.Media.Type = "active-cable"
	case "Twisted_pair":
		m.Media.Type = "base-t"
	default:
		m.Media.Type = "unknown"
	}
	if wl := u(regpath.PDDRModWavelength); wl != 0 && m.Media.Type == "optical" {
		m.Media.WavelengthNM = float64(wl)
		m.Media.ToleranceNM = float64(u(regpath.PDDRModWavelengthTolerance)) * 0.005
	}
	if smf := u(regpath.PDDRModSMFLength); smf&0xFF != 0 {
		unit := 1000.0
		if smf>>8&0x3 == 1 {
			unit = 100
		}
		m.Media.Lengths = append(m.Media.Lengths, Length{Medium: "smf", Meters: float64(smf&0xFF) * unit})
		if m.Media.Type == "optical" {
			m.Media.Type = "optical-smf"
		}
	}
	omUnit := 2.0
	if m.Identifier.Value == 0x03 {
		omUnit = 10 // SFP counts multimode lengths in 10 m
	}
	for _, om := range []struct {
		f      string
		unit   float64
		medium string
	}{{regpath.PDDRModLengthOM5, omUnit, "om5"}, {regpath.PDDRModLengthOM4, omUnit, "om4"}, {regpath.PDDRModLengthOM3, omUnit, "om3"}, {regpath.PDDRModLengthOM2, max(omUnit/2, 1), "om2"}} {
		if v := u(om.f); v != 0 {
			m.Media.Lengths = append(m.Media.Lengths, Length{Medium: om.medium, Meters: float64(v) * om.unit})
			if m.Media.Type == "optical" {
				m.Media.Type = "optical-mmf"
			}
		}
	}
	if cl := u(regpath.PDDRModCableLength); cl != 0 && (m.Media.Type == "passive-copper" || m.Media.Type == "active-cable") {
		meters := float64(cl)
		if m.Standard == CMIS {
			meters = float64(cl&0x3F) * [...]float64{0.1, 1, 10, 100}[cl>>6&3]
		}
		m.Media.Lengths = append(m.Media.Lengths, Length{Medium: "cable", Meters: meters})
	}
	m.PowerClass = int(u(regpath.PDDRModPowerClass))
	if mp := u(regpath.PDDRModMaxPower); mp != 0 {
		m.MaxPowerW = float64(mp) * 0.25
	}
	if v, err := d.Get(regpath.PDDRModState); err == nil && v.Uint() != 0 {
		if n, ok := v.EnumName(); ok {
			m.ModuleState = strings.TrimSuffix(n, "_state")
		}
	}

	mask, hasMask := get(regpath.PDDRModMonitorCapMask)
	temp := u(regpath.PDDRModTemperature)
	m.DDM = (hasMask && mask != 0) || temp != 0
	if lanes <= 0 || lanes > 8 {
		lanes = 8
	}
	m.Lanes = make([]Lane, lanes)
	for i := range m.Lanes {
		m.Lanes[i].Lane = i + 1
	}
	if !m.DDM {
		return m, nil
	}
	if v, err := d.Get(regpath.PDDRModRxPowerType); err == nil {
		if v.Uint() == 1 {
			m.RxPowerType = "average"
		} else {
			m.RxPowerType = "OMA"
		}
	}
	unit := PDDRPowerUnit(d)
	m.PowerRawUnit = unit
	power := func(raw uint64) *Power {
		// The firmware's "not available" for a power is all ones in µW
		// and the most negative dBm.
		if na := sentinel16(uint16(raw), unit != "uW"); na != "" && raw <= 0xFFFF {
			return &Power{Raw: int64(raw), NA: na}
		}
		if unit == "uW" {
			return powerOf(float64(raw)/1000, int64(raw))
		}
		dbm := int64(int16(raw))
		// A nonsense reading (+327 dBm) would be an infinite mW: keep it finite.
		return &Power{MW: finite(FromDBm(float64(dbm))), DBm: DBm(dbm), Raw: dbm}
	}
	mult := 1
	// tx_bias_scaling_factor comes after the built-in database (Rev
	// 0.57), so it has no generated constant; it is read where the
	// decoding database has it.
	if sf, ok := get(PDDRPrefix + "tx_bias_scaling_factor"); ok && sf < 3 {
		mult = 1 << sf
		m.BiasMultiplier = mult
	}
	bias := func(raw uint64) *Current {
		if na := sentinel16(uint16(raw), false); na != "" && raw <= 0xFFFF {
			return &Current{Raw: int64(raw), NA: na}
		}
		return &Current{MA: float64(raw) * float64(mult) * 0.002, Raw: int64(raw)}
	}
	// Each capability bit says a monitor exists; without the mask (an
	// older database) every monitor is taken as present, as mlxlink does.
	has := func(bit uint) bool { return !hasMask || mask&(1<<bit) != 0 }
	if has(0) {
		m.Temperature = tempOf(int16(temp))
	}
	if has(1) {
		m.Voltage = voltOf(uint16(u(regpath.PDDRModVoltage)))
	}
	for i := range m.Lanes {
		l := &m.Lanes[i]
		if has(4) {
			l.TxBias = bias(u(regpath.PDDRModTxBiasLane[i]))
		}
		if has(2) {
			l.TxPower = power(u(regpath.PDDRModTxPowerLane[i]))
		}
		if has(3) {
			l.RxPower = power(u(regpath.PDDRModRxPowerLane[i]))
		}
	}
	th := &Thresholds{}
	if has(0) {
		th.Temperature = &Limits[Temperature]{HighAlarm: tempOf(int16(u(regpath.PDDRModTemperatureHigh))), LowAlarm: tempOf(int16(u(regpath.PDDRModTemperatureLow)))}
	}
	if has(1) {
		th.Voltage = &Limits[Voltage]{HighAlarm: voltOf(uint16(u(regpath.PDDRModVoltageHigh))), LowAlarm: voltOf(uint16(u(regpath.PDDRModVoltageLow)))}
	}
	if has(4) {
		th.TxBias = &Limits[Current]{HighAlarm: bias(u(regpath.PDDRModTxBiasHigh)), LowAlarm: bias(u(regpath.PDDRModTxBiasLow))}
	}
	if has(2) {
		th.TxPower = &Limits[Power]{HighAlarm: power(u(regpath.PDDRModTxPowerHigh)), LowAlarm: power(u(regpath.PDDRModTxPowerLow))}
	}
	if has(3) {
		th.RxPower = &Limits[Power]{HighAlarm: power(u(regpath.PDDRModRxPowerHigh)), LowAlarm: power(u(regpath.PDDRModRxPowerLow))}
	}
	m.Thresholds = th
	return m, nil
}

// beBytes is the n low bytes of v, most significant first.
func beBytes(v uint64, n int) []byte {
	b := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return b
}

// cleanText keeps the printable ASCII of b without NUL or space padding on
// either side (the firmware pads vendor_rev with NULs on the left).
func cleanText(b []byte) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		switch {
		case c == 0:
			c = ' '
		case c < 0x20 || c >= 0x7f:
			c = '?'
		}
		out = append(out, c)
	}
	return strings.TrimSpace(string(out))
}

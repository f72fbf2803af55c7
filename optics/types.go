// Package optics decodes what a pluggable module says about itself: its ID
// and digital diagnostics (DDM) from the raw EEPROM pages (SFF-8472 for SFP,
// SFF-8636 for QSFP/QSFP28, CMIS 4.0/5.x for QSFP-DD, OSFP, QSFP112), and the
// adapter firmware's decoded view of the same module (PDDR page 3, what
// mlxlink -m prints). Both decode into Module, so the two sources can be
// compared number by number (Compare) and diagnosed (Diagnose).
//
// The decoders are pure: they take bytes (an Image) or a decoded register
// and never do I/O. ReadImage walks a module's memory through a PageReader
// the caller provides (MCIA on an adapter or the emulator, ethtool netlink
// on the kernel path), reading only the pages the module says it has.
//
// Units: temperature in °C, supply voltage in V, bias in mA, optical power in
// mW and dBm. A power of zero is −∞ dBm: math.Inf(-1) in Go, null in JSON,
// "-inf" in text. Every value keeps the raw number it was computed from.
package optics

import (
	"encoding/json"
	"math"
	"strconv"
)

// Standards a module's memory map follows.
const (
	SFF8472 = "SFF-8472"
	SFF8636 = "SFF-8636"
	CMIS    = "CMIS"
)

// Sources of a Module.
const (
	SourceEEPROM   = "eeprom"   // the module's own memory (MCIA or ethtool)
	SourceFirmware = "firmware" // the adapter firmware's view (PDDR page 3)
)

// Module is what a module says about itself, from one source.
type Module struct {
	Source string `json:"source"`
	// Standard is SFF-8472, SFF-8636 or CMIS ("" when not known: the
	// firmware view, an unsupported identifier).
	Standard string `json:"standard,omitempty"`
	// Revision is the memory map revision as the module states it
	// ("5.0" for CMIS, the SFF-8636/8472 compliance byte in words).
	Revision   string `json:"revision,omitempty"`
	Identifier Code   `json:"identifier"`
	Connector  Code   `json:"connector"`
	Vendor     Vendor `json:"vendor"`
	Media      Media  `json:"media"`
	// PowerClass is the module's power class (1..8); MaxPowerW its
	// maximum power when it states one.
	PowerClass int     `json:"power_class,omitempty"`
	MaxPowerW  float64 `json:"max_power_w,omitempty"`
	// ModuleState is the CMIS module state (LowPwr, PwrUp, Ready, PwrDn, Fault).
	ModuleState string `json:"module_state,omitempty"`
	// FaultCause is the CMIS module fault cause when the state is Fault.
	FaultCause string `json:"fault_cause,omitempty"`
	// Firmware is the module's active firmware version (CMIS), Inactive
	// the version in its other bank.
	Firmware         string `json:"firmware_version,omitempty"`
	InactiveFirmware string `json:"inactive_firmware_version,omitempty"`
	// Application is the CMIS application the lanes run (it sets the lane count).
	Application *Application `json:"application,omitempty"`
	// FlatMemory: the module has no upper pages beyond 00h (no thresholds
	// or lane flags; passive copper cables).
	FlatMemory bool `json:"flat_memory"`
	// DDM says the module implements diagnostic monitoring.
	DDM bool `json:"ddm"`
	// Calibration is "internal" or "external" (SFF-8472).
	Calibration string `json:"calibration,omitempty"`
	// RxPowerType is "average" or "OMA".
	RxPowerType string `json:"rx_power_type,omitempty"`
	// PowerRawUnit says what the raw numbers of powers count: "0.1uW" in
	// the EEPROM, "uW" or "dBm" in the firmware view.
	PowerRawUnit string `json:"power_raw_unit,omitempty"`
	// BiasMultiplier is the CMIS Tx bias scaling (1, 2 or 4), already
	// applied to every bias value.
	BiasMultiplier int `json:"bias_multiplier,omitempty"`

	Temperature *Temperature `json:"temperature,omitempty"`
	Voltage     *Voltage     `json:"voltage,omitempty"`
	Lanes       []Lane       `json:"lanes"`
	Thresholds  *Thresholds  `json:"thresholds,omitempty"`
	// Flags are the module-level latched alarm and warning flags.
	Flags *ModuleFlags `json:"flags,omitempty"`
	// CableType is the firmware's cable type (PDDR cable_type).
	CableType string `json:"cable_type,omitempty"`
	// Checksums are the EEPROM check codes and whether they match.
	Checksums []Checksum `json:"checksums,omitempty"`
	// Notes say what could not be decoded and why.
	Notes []string `json:"notes,omitempty"`
}

// Code is a number from a table (SFF-8024) with its name.
type Code struct {
	Value uint8  `json:"value"`
	Name  string `json:"name"`
}

// Vendor holds the ID strings, trimmed of their padding.
type Vendor struct {
	Name string `json:"name"`
	OUI  string `json:"oui"` // xx:xx:xx
	PN   string `json:"part_number"`
	Rev  string `json:"revision"`
	SN   string `json:"serial_number"`
	// DateCode is the raw YYMMDDLL code; Date is it as 20YY-MM-DD when it
	// parses.
	DateCode string `json:"date_code"`
	Date     string `json:"date,omitempty"`
	Lot      string `json:"lot,omitempty"`
}

// Media is what the module drives and how far.
type Media struct {
	// Type is optical-mmf, optical-smf, optical, passive-copper,
	// active-cable, base-t or unknown.
	Type string `json:"type"`
	// Technology is the transmitter (850 nm VCSEL, 1310 nm DFB, copper ...).
	Technology   string   `json:"technology,omitempty"`
	WavelengthNM float64  `json:"wavelength_nm,omitempty"`
	ToleranceNM  float64  `json:"wavelength_tolerance_nm,omitempty"`
	Lengths      []Length `json:"lengths,omitempty"`
}

// Length is a supported link length on one medium.
type Length struct {
	Medium string  `json:"medium"` // smf, om1..om5, copper, cable
	Meters float64 `json:"m"`
}

// Application is a CMIS application: host and media interfaces and lanes.
type Application struct {
	Index      int    `json:"index"` // AppSel code, 1-based
	Host       Code   `json:"host_interface"`
	Media      Code   `json:"media_interface"`
	HostLanes  int    `json:"host_lanes"`
	MediaLanes int    `json:"media_lanes"`
	Active     bool   `json:"active"` // from the active control set, not assumed
	Note       string `json:"note,omitempty"`
}

// Temperature in °C; Raw is the signed count (1/256 °C when internal).
// NA, when set, says the raw count is the pattern of no reading ("0xFFFF"):
// the value is not a reading and is null in JSON.
type Temperature struct {
	C   float64 `json:"c"`
	Raw int64   `json:"raw"`
	NA  string  `json:"na,omitempty"`
}

// Voltage in volts; Raw is the count (100 µV when internal).
type Voltage struct {
	V   float64 `json:"v"`
	Raw int64   `json:"raw"`
	NA  string  `json:"na,omitempty"`
}

// Current in mA; Raw is the count (2 µA, times the CMIS multiplier).
type Current struct {
	MA  float64 `json:"ma"`
	Raw int64   `json:"raw"`
	NA  string  `json:"na,omitempty"`
}

// Power in mW and dBm; Raw is the count (Module.PowerRawUnit).
type Power struct {
	MW  float64 `json:"mw"`
	DBm DBm     `json:"dbm"`
	Raw int64   `json:"raw"`
	NA  string  `json:"na,omitempty"`
}

// A reading whose raw count is its field's "no reading" pattern (all
// ones, as a hung I2C bus reads; the most negative value of a signed
// field) is not a number: it marshals with null values, and every
// consumer (marks, comparisons, monitors, metrics) leaves it out.

// MarshalJSON writes null for the value of a reading that is not one.
func (t Temperature) MarshalJSON() ([]byte, error) {
	type plain Temperature
	if t.NA != "" {
		return json.Marshal(struct {
			C   *float64 `json:"c"`
			Raw int64    `json:"raw"`
			NA  string   `json:"na"`
		}{nil, t.Raw, t.NA})
	}
	return json.Marshal(plain(t))
}

// MarshalJSON writes null for the value of a reading that is not one.
func (v Voltage) MarshalJSON() ([]byte, error) {
	type plain Voltage
	if v.NA != "" {
		return json.Marshal(struct {
			V   *float64 `json:"v"`
			Raw int64    `json:"raw"`
			NA  string   `json:"na"`
		}{nil, v.Raw, v.NA})
	}
	return json.Marshal(plain(v))
}

// MarshalJSON writes null for the value of a reading that is not one.
func (c Current) MarshalJSON() ([]byte, error) {
	type plain Current
	if c.NA != "" {
		return json.Marshal(struct {
			MA  *float64 `json:"ma"`
			Raw int64    `json:"raw"`
			NA  string   `json:"na"`
		}{nil, c.Raw, c.NA})
	}
	return json.Marshal(plain(c))
}

// MarshalJSON writes null for the value of a reading that is not one.
func (p Power) MarshalJSON() ([]byte, error) {
	type plain Power
	if p.NA != "" {
		return json.Marshal(struct {
			MW  *float64 `json:"mw"`
			DBm *float64 `json:"dbm"`
			Raw int64    `json:"raw"`
			NA  string   `json:"na"`
		}{nil, nil, p.Raw, p.NA})
	}
	return json.Marshal(plain(p))
}

// sentinel16 is the "no reading" pattern a 16-bit monitor count holds, or
// "": all ones (0xFFFF), and for a signed field also 0x8000.
func sentinel16(raw uint16, signed bool) string {
	switch {
	case raw == 0xFFFF:
		return "0xFFFF"
	case signed && raw == 0x8000:
		return "0x8000"
	}
	return ""
}

// isValid says a reading of any of the four kinds is a number.
func isValid(x any) bool {
	switch v := x.(type) {
	case *Temperature:
		return v.Valid()
	case *Voltage:
		return v.Valid()
	case *Current:
		return v.Valid()
	case *Power:
		return v.Valid()
	}
	return x != nil
}

// Valid says a reading is a number (not nil, not a no-reading pattern).
func (t *Temperature) Valid() bool { return t != nil && t.NA == "" }

// Valid says a reading is a number.
func (v *Voltage) Valid() bool { return v != nil && v.NA == "" }

// Valid says a reading is a number.
func (c *Current) Valid() bool { return c != nil && c.NA == "" }

// Valid says a reading is a number.
func (p *Power) Valid() bool { return p != nil && p.NA == "" }

// DBm is a power in dBm that may be −∞ (a reading of zero).
type DBm float64

// MarshalJSON writes −∞ (and NaN) as null: JSON has no infinities.
func (d DBm) MarshalJSON() ([]byte, error) {
	f := float64(d)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads null back as −∞.
func (d *DBm) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*d = DBm(math.Inf(-1))
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*d = DBm(f)
	return nil
}

// String prints the value with two decimals, or -inf.
func (d DBm) String() string {
	f := float64(d)
	switch {
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

// ToDBm converts milliwatts to dBm; zero or less is −∞ (not an error:
// a dark fibre reads zero).
func ToDBm(mw float64) DBm {
	if !(mw > 0) {
		return DBm(math.Inf(-1))
	}
	return DBm(10 * math.Log10(mw))
}

// FromDBm converts dBm to milliwatts.
func FromDBm(dbm float64) float64 { return math.Pow(10, dbm/10) }

// powerOf builds a Power from milliwatts and the raw count.
func powerOf(mw float64, raw int64) *Power {
	if !(mw >= 0) || math.IsInf(mw, 0) { // negative, NaN or infinite: no light
		mw = 0
	}
	return &Power{MW: mw, DBm: ToDBm(mw), Raw: raw}
}

// Lane is one lane's monitors and signals; nil means the module does not
// report it.
type Lane struct {
	Lane    int      `json:"lane"` // 1-based
	TxBias  *Current `json:"tx_bias,omitempty"`
	TxPower *Power   `json:"tx_power,omitempty"`
	RxPower *Power   `json:"rx_power,omitempty"`
	TxFault *bool    `json:"tx_fault,omitempty"`
	TxLOS   *bool    `json:"tx_los,omitempty"`
	RxLOS   *bool    `json:"rx_los,omitempty"`
	TxLOL   *bool    `json:"tx_cdr_lol,omitempty"`
	RxLOL   *bool    `json:"rx_cdr_lol,omitempty"`
	// Flags are the lane's latched alarm and warning flags.
	Flags *LaneFlags `json:"flags,omitempty"`
}

// Limits are a quantity's alarm and warning thresholds; nil: not given.
type Limits[T any] struct {
	HighAlarm   *T `json:"high_alarm,omitempty"`
	LowAlarm    *T `json:"low_alarm,omitempty"`
	HighWarning *T `json:"high_warning,omitempty"`
	LowWarning  *T `json:"low_warning,omitempty"`
}

// Thresholds are the module's limits; one set applies to every lane.
type Thresholds struct {
	Temperature *Limits[Temperature] `json:"temperature,omitempty"`
	Voltage     *Limits[Voltage]     `json:"voltage,omitempty"`
	TxBias      *Limits[Current]     `json:"tx_bias,omitempty"`
	TxPower     *Limits[Power]       `json:"tx_power,omitempty"`
	RxPower     *Limits[Power]       `json:"rx_power,omitempty"`
}

// Flags are latched alarm and warning flags of one quantity.
type Flags struct {
	HighAlarm   bool `json:"high_alarm"`
	LowAlarm    bool `json:"low_alarm"`
	HighWarning bool `json:"high_warning"`
	LowWarning  bool `json:"low_warning"`
}

// Any says whether a flag is set.
func (f Flags) Any() bool { return f.HighAlarm || f.LowAlarm || f.HighWarning || f.LowWarning }

// ModuleFlags are the module-level flags.
type ModuleFlags struct {
	Temperature Flags `json:"temperature"`
	Voltage     Flags `json:"voltage"`
}

// LaneFlags are a lane's flags.
type LaneFlags struct {
	TxBias  *Flags `json:"tx_bias,omitempty"`
	TxPower *Flags `json:"tx_power,omitempty"`
	RxPower *Flags `json:"rx_power,omitempty"`
}

// Checksum is one EEPROM check code.
type Checksum struct {
	Name string `json:"name"` // CC_BASE, CC_EXT, page 00h ...
	Want uint8  `json:"stored"`
	Got  uint8  `json:"computed"`
	OK   bool   `json:"ok"`
}

func boolp(b bool) *bool { return &b }

package optics

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// opticalModule is a small decoded module with thresholds, for verdicts.
func opticalModule(rxDBm float64, tempC float64) *Module {
	p := func(dbm float64) *Power { return powerOf(FromDBm(dbm), int64(FromDBm(dbm)*10000)) }
	return &Module{Source: SourceEEPROM, Standard: SFF8636, Identifier: IdentifierName(0x11), DDM: true,
		Media:       Media{Type: "optical-mmf"},
		Temperature: &Temperature{C: tempC, Raw: int64(tempC * 256)},
		Voltage:     &Voltage{V: 3.3, Raw: 33000},
		Lanes:       []Lane{{Lane: 1, RxPower: p(rxDBm), TxPower: p(0), TxBias: &Current{MA: 7, Raw: 3500}}},
		Thresholds: &Thresholds{
			Temperature: &Limits[Temperature]{HighAlarm: &Temperature{C: 75}, LowAlarm: &Temperature{C: -5}, HighWarning: &Temperature{C: 70}, LowWarning: &Temperature{C: 0}},
			RxPower:     &Limits[Power]{HighAlarm: p(5), LowAlarm: p(-12), HighWarning: p(3), LowWarning: p(-10)},
		},
	}
}

func codes(vs []Verdict) map[string]string {
	out := map[string]string{}
	for _, v := range vs {
		out[v.Code] = v.Category
		if v.NextStep == "" || v.Summary == "" {
			panic("a verdict without a summary or next step: " + v.Code)
		}
	}
	return out
}

func TestMarks(t *testing.T) {
	m := opticalModule(-11, 72)
	ks := Marks(m)
	got := map[string]Level{}
	for _, k := range ks {
		got[k.Quantity] = k.Level
	}
	if got["rx power"] != LevelWarning || got["temperature"] != LevelWarning {
		t.Errorf("marks %+v", ks)
	}
	m = opticalModule(-9.5, 66) // inside, but close to the warnings
	for _, k := range Marks(m) {
		if k.Level != LevelNear {
			t.Errorf("near: %+v", k)
		}
	}
	if len(Marks(m)) != 2 {
		t.Errorf("near marks %+v", Marks(m))
	}
	dark := opticalModule(-99, 40)
	dark.Lanes[0].RxPower = powerOf(0, 0)
	ks = Marks(dark)
	if len(ks) != 1 || ks[0].Level != LevelAlarm || ks[0].High || ks[0].String() == "" {
		t.Errorf("dark lane %+v", ks)
	}
}

func TestDiagnose(t *testing.T) {
	ok := opticalModule(-2, 40)
	cases := []struct {
		name string
		o    Observation
		want map[string]string
	}{
		{"fine", Observation{OperStatus: "plugged_enabled", EEPROM: ok, Firmware: ok}, map[string]string{}},
		{"unplugged", Observation{OperStatus: "unplugged"}, map[string]string{VerdictNoModule: Hardware}},
		{"hung bus", Observation{OperStatus: "module_plugged_with_error", ErrorType: "Bus_stuck",
			EEPROM: &Module{}, EEPROMErr: &DecodeError{Kind: KindAllOnes, Msg: "ones"}}, map[string]string{VerdictI2CHang: Hardware}},
		{"unknown id", Observation{OperStatus: "module_plugged_with_error", ErrorType: "unsupported_cable",
			EEPROM: &Module{}, EEPROMErr: &DecodeError{Kind: KindUnsupported, Msg: "0x80"}}, map[string]string{VerdictUnsupported: Hardware}},
		{"old firmware", Observation{OperStatus: "module_plugged_with_error", ErrorType: "unsupported_cable", EEPROM: ok,
			Firmware: &Module{CableType: CableUnidentified}}, map[string]string{VerdictFirmwareTooOld: Firmware}},
		{"no ddm", Observation{OperStatus: "plugged_enabled", EEPROM: &Module{Standard: CMIS, Media: Media{Type: "optical-smf"}}},
			map[string]string{VerdictNoDDM: Hardware}},
		{"dac without ddm", Observation{OperStatus: "plugged_enabled", EEPROM: &Module{Standard: SFF8636, Media: Media{Type: "passive-copper"}}},
			map[string]string{}},
		{"checksum", Observation{OperStatus: "plugged_enabled", EEPROM: &Module{Standard: SFF8636, Media: Media{Type: "passive-copper"},
			Checksums: []Checksum{{Name: "CC_BASE", Want: 1, Got: 2}}}}, map[string]string{VerdictChecksum: Hardware}},
		{"dark fibre", Observation{OperStatus: "plugged_enabled", EEPROM: opticalModule(-20, 40)}, map[string]string{VerdictThresholdAlarm: Hardware}},
		{"hot", Observation{OperStatus: "plugged_enabled", EEPROM: opticalModule(-2, 72)}, map[string]string{VerdictThresholdWarning: Hardware}},
		{"high temperature error", Observation{OperStatus: "module_plugged_with_error", ErrorType: "High_Temperature", EEPROM: ok},
			map[string]string{VerdictModuleError: Hardware}},
		{"disabled", Observation{OperStatus: "plugged_disabled", EEPROM: ok}, map[string]string{VerdictModuleDisabled: Firmware}},
		{"third party", Observation{OperStatus: "module_plugged_with_error", ErrorType: "Enforce_part_number_list", EEPROM: ok},
			map[string]string{VerdictUnsupported: Hardware}},
		{"disagree", Observation{OperStatus: "plugged_enabled", EEPROM: ok, Firmware: ok, Verified: true,
			Comparisons: []Comparison{{Quantity: "temperature", OK: false}}, EEPROM2: opticalModule(-2.1, 41), Firmware2: opticalModule(-2.1, 41)},
			map[string]string{VerdictSourcesDisagree: Software}},
		{"frozen", Observation{OperStatus: "plugged_enabled", EEPROM: ok, Firmware: ok, Verified: true, EEPROM2: ok, Firmware2: ok, Interval: time.Second},
			map[string]string{VerdictFrozen: Hardware}},
		{"stale firmware", Observation{OperStatus: "plugged_enabled", EEPROM: ok, Firmware: ok, Verified: true,
			EEPROM2: opticalModule(-2.1, 41), Firmware2: ok, Interval: time.Second}, map[string]string{VerdictStaleFirmware: Firmware}},
		{"unreadable", Observation{OperStatus: "plugged_enabled", EEPROMErr: errors.New("MCIA status 9"), Firmware: ok},
			map[string]string{VerdictModuleNotReadable: Hardware}},
		{"mcia missing", Observation{OperStatus: "plugged_enabled", EEPROMErr: errors.New("no MCIA"), FirmwareUnsupportsEE: true, Firmware: ok},
			map[string]string{}},
	}
	for _, c := range cases {
		got := codes(Diagnose(c.o))
		if len(got) != len(c.want) {
			t.Errorf("%s: verdicts %v, want %v", c.name, got, c.want)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: verdicts %v, want %v", c.name, got, c.want)
			}
		}
	}
}

func TestCompareResolution(t *testing.T) {
	ee := opticalModule(-2, 40)
	fw := opticalModule(-2, 40)
	fw.Source, fw.PowerRawUnit = SourceFirmware, "dBm"
	// The firmware's whole-dBm view of -2.4 dBm is -2: within resolution.
	ee.Lanes[0].RxPower = powerOf(FromDBm(-2.4), 0)
	fw.Lanes[0].RxPower = &Power{MW: FromDBm(-2), DBm: -2}
	for _, c := range Compare(ee, fw) {
		if !c.OK {
			t.Errorf("%+v", c)
		}
	}
	fw.Lanes[0].RxPower = &Power{MW: FromDBm(-4), DBm: -4}
	bad := 0
	for _, c := range Compare(ee, fw) {
		if !c.OK {
			bad++
		}
	}
	if bad != 1 {
		t.Errorf("a 1.6 dB difference is out of resolution: %d mismatches", bad)
	}
	// Dark on both sides agrees (−∞ and the firmware's −40 floor).
	ee.Lanes[0].RxPower = powerOf(0, 0)
	fw.Lanes[0].RxPower = &Power{MW: FromDBm(-40), DBm: -40}
	for _, c := range Compare(ee, fw) {
		if !c.OK {
			t.Errorf("dark: %+v", c)
		}
	}
	if ToDBm(0) != DBm(math.Inf(-1)) || ToDBm(1).String() != "0.00" || ToDBm(0).String() != "-inf" {
		t.Error("ToDBm")
	}
}

// A read that failed on its way to the module is the reader's problem:
// category software with the reader's next step, never "reseat".
func TestDiagnosePathError(t *testing.T) {
	vs := Diagnose(Observation{Module: -1, Port: 1, EEPROMErr: &PathError{Err: errors.New("kernel: no such device"), Next: "check the interface with ip link"}})
	if len(vs) != 1 || vs[0].Code != VerdictModuleNotReadable || vs[0].Category != Software || vs[0].NextStep != "check the interface with ip link" {
		t.Errorf("%+v", vs)
	}
	vs = Diagnose(Observation{Module: 0, EEPROMErr: errors.New("MCIA status 0x3")})
	if len(vs) != 1 || vs[0].Category != Hardware || !strings.Contains(vs[0].NextStep, "reseat") {
		t.Errorf("a module read failure: %+v", vs)
	}
}

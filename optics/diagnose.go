package optics

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cxray/cxray/prm"
)

// Verdict categories: who has to act.
const (
	// Hardware: the module, the cage or the fibre.
	Hardware = "hardware"
	// Firmware: the adapter firmware (or its configuration).
	Firmware = "firmware"
	// Software: cxray (or another reader) misreads the module.
	Software = "software"
	// Database: the register database cxray decodes with does not match
	// what the firmware answers (a field it lacks or lays out otherwise):
	// nothing is wrong with the module or the adapter.
	Database = "database"
)

// Verdict codes.
const (
	VerdictNoModule          = "no_module"
	VerdictNoDDM             = "no_ddm"
	VerdictUnsupported       = "unsupported_module"
	VerdictI2CHang           = "i2c_hang"
	VerdictBlank             = "eeprom_blank"
	VerdictChecksum          = "eeprom_checksum"
	VerdictFrozen            = "frozen_monitors"
	VerdictStaleFirmware     = "stale_firmware_view"
	VerdictFirmwareTooOld    = "firmware_too_old"
	VerdictModuleError       = "module_error"
	VerdictModuleDisabled    = "module_disabled"
	VerdictThresholdAlarm    = "threshold_alarm"
	VerdictThresholdWarning  = "threshold_warning"
	VerdictSourcesDisagree   = "sources_disagree"
	VerdictModuleFault       = "module_fault"
	VerdictModuleNotReadable = "eeprom_unreadable"
	VerdictDatabase          = "database_mismatch"
)

// Verdict is a problem found with a module, who should act on it, and what
// to do next.
type Verdict struct {
	Code     string   `json:"code"`
	Category string   `json:"category"`
	Summary  string   `json:"summary"`
	Evidence []string `json:"evidence,omitempty"`
	NextStep string   `json:"next_step"`
}

// Observation is everything read about one module.
type Observation struct {
	// Module is the cage number (PMAOS module); -1 when the source does
	// not know it (the kernel backend), and Port names the module then.
	Module int
	// Port is the local port the module serves (0: not known).
	Port int
	// OperStatus and ErrorType are PMAOS oper_status and error_type by
	// enum name ("" when not read).
	OperStatus string
	ErrorType  string
	// EEPROM is the decode of the module's memory (nil when it could not be
	// read); EEPROMErr why not, or the DecodeError.
	EEPROM    *Module
	EEPROMErr error
	// Firmware is the firmware's view (nil when not read).
	Firmware    *Module
	FirmwareErr error
	// Verify: the comparisons of the two sources, and the second reads
	// Interval later (nil when not verifying).
	Verified           bool
	Comparisons        []Comparison
	EEPROM2, Firmware2 *Module
	Interval           time.Duration
	// DeviceStill says the device's own clock (its firmware's uptime) did
	// not move between the two reads although the interval passed: its
	// time stood still (an emulator on a manual clock), so monitors that
	// did not move say nothing about the module.
	DeviceStill          bool
	AdapterFirmware      string
	FirmwareUnsupportsEE bool // the firmware refuses MCIA: only its view is available
	// Database names the register database the reads used ("Rev 0.51"),
	// for verdicts about it.
	Database string
}

// cage names the module in verdicts: "module 0", or by its port when the
// cage number is not known ("the module of port 1").
func (o Observation) cage() string {
	switch {
	case o.Module >= 0:
		return fmt.Sprintf("module %d", o.Module)
	case o.Port > 0:
		return fmt.Sprintf("the module of port %d", o.Port)
	}
	return "the module"
}

// Diagnose turns an observation into verdicts; none means nothing is wrong.
// A problem that makes the rest meaningless (no module, a hung bus) is
// reported alone.
func Diagnose(o Observation) []Verdict {
	var out []Verdict
	add := func(v Verdict) { out = append(out, v) }
	cage := o.cage()
	var de *DecodeError
	decodeKind := ""
	if errors.As(o.EEPROMErr, &de) {
		decodeKind = de.Kind
	}

	// Nothing plugged.
	if o.OperStatus == "unplugged" || (o.Firmware != nil && o.Firmware.CableType == CableUnplugged) {
		ev := []string{}
		if o.OperStatus != "" {
			ev = append(ev, "PMAOS oper_status "+o.OperStatus)
		}
		if o.Firmware != nil && o.Firmware.CableType != "" {
			ev = append(ev, "PDDR cable_type "+o.Firmware.CableType)
		}
		return []Verdict{{Code: VerdictNoModule, Category: Hardware, Summary: fmt.Sprintf("no module in the cage of %s", cage), Evidence: ev,
			NextStep: "plug a module or cable in; if one is plugged, reseat it until the latch clicks, then run cxray module again"}}
	}

	// A hung I2C bus reads all ones.
	fwOnes := o.Firmware != nil && allOnesMonitors(o.Firmware)
	// The EEPROM's own monitors reading 0xFFFF (a dump taken while the bus
	// hung: identity bytes cached, monitors all ones) is the same fault.
	eeOnes := o.EEPROM != nil && o.EEPROMErr == nil && allOnesEEPROM(o.EEPROM)
	if decodeKind == KindAllOnes || o.ErrorType == "Bus_stuck" || fwOnes || eeOnes {
		var ev []string
		if decodeKind == KindAllOnes {
			ev = append(ev, "the EEPROM reads 0xFF in every byte")
		}
		if eeOnes {
			ev = append(ev, "the EEPROM's monitors (temperature, voltage) read 0xFFFF")
		}
		if fwOnes {
			ev = append(ev, "the firmware's monitors read 0xFFFF")
		}
		if o.ErrorType != "" {
			ev = append(ev, "PMAOS error_type "+o.ErrorType)
		}
		return []Verdict{{Code: VerdictI2CHang, Category: Hardware, Summary: fmt.Sprintf("the I2C bus of %s is stuck: every read returns all ones", cage), Evidence: ev,
			NextStep: "reseat the module (or reset it: cxray reg set PMAOS --index module=N rst=1 --yes); if reads stay all ones, move it to another cage to tell a bad module from a bad cage, and replace the one that fails"}}
	}

	switch decodeKind {
	case KindAllZeros:
		add(Verdict{Code: VerdictBlank, Category: Hardware, Summary: fmt.Sprintf("the EEPROM of %s reads all zeros: the module did not answer", cage),
			Evidence: []string{o.EEPROMErr.Error()}, NextStep: "reseat the module and read again; if it stays blank the module's management interface is dead: replace it"})
	case KindUnsupported:
		ev := []string{o.EEPROMErr.Error()}
		if o.ErrorType != "" {
			ev = append(ev, "PMAOS error_type "+o.ErrorType)
		}
		add(Verdict{Code: VerdictUnsupported, Category: Hardware, Summary: fmt.Sprintf("%s is a module type cxray and the adapter do not support", cage), Evidence: ev,
			NextStep: "use a module of a supported form factor (SFP, QSFP28, QSFP112/QSFP-DD/OSFP with CMIS) from the adapter's qualified list; `cxray module --raw` shows its memory for the vendor"})
	}

	eeOK := o.EEPROM != nil && o.EEPROMErr == nil
	if eeOK && !o.EEPROM.ChecksumsOK() {
		var ev []string
		for _, c := range o.EEPROM.Checksums {
			if !c.OK {
				ev = append(ev, fmt.Sprintf("%s stored 0x%02x, computed 0x%02x", c.Name, c.Want, c.Got))
			}
		}
		add(Verdict{Code: VerdictChecksum, Category: Hardware, Summary: fmt.Sprintf("the ID EEPROM of %s fails its checksum: its identity data is corrupt or was rewritten", cage), Evidence: ev,
			NextStep: "treat the vendor, part number and serial as unreliable; replace the module, and report it to its vendor with `cxray module --raw -o json`"})
	}

	// Errors the firmware reports through PMAOS.
	fwUnknown := o.Firmware != nil && o.Firmware.CableType == CableUnidentified
	eeKnown := eeOK && o.EEPROM.Standard != ""
	switch {
	case eeKnown && o.EEPROM.ChecksumsOK() && (fwUnknown || o.ErrorType == "unsupported_cable" || o.ErrorType == "bad_or_unsupported_EEPROM"):
		ev := []string{fmt.Sprintf("the EEPROM decodes as %s (%s %s)", o.EEPROM.Identifier.Name, o.EEPROM.Standard, o.EEPROM.Revision)}
		if fwUnknown {
			ev = append(ev, "PDDR cable_type "+CableUnidentified)
		}
		if o.ErrorType != "" {
			ev = append(ev, "PMAOS error_type "+o.ErrorType)
		}
		fwv := "the adapter firmware"
		if o.AdapterFirmware != "" {
			fwv += " " + o.AdapterFirmware
		}
		add(Verdict{Code: VerdictFirmwareTooOld, Category: Firmware, Summary: fmt.Sprintf("%s does not recognise %s although the module is valid", fwv, cage), Evidence: ev,
			NextStep: "update the adapter firmware to a release that supports this module (see its release notes), then reset the module"})
	case o.ErrorType == "Long_Range_for_non_MLNX_cable_or_module" || o.ErrorType == "Enforce_part_number_list":
		add(Verdict{Code: VerdictUnsupported, Category: Hardware, Summary: fmt.Sprintf("the firmware refuses %s: it is a third-party module its policy does not allow", cage),
			Evidence: []string{"PMAOS error_type " + o.ErrorType}, NextStep: "use an NVIDIA-qualified module, or one on the adapter's allowed part-number list"})
	case o.ErrorType != "" && decodeKind != KindUnsupported && o.ErrorType != "unsupported_cable" && o.ErrorType != "bad_or_unsupported_EEPROM":
		cat, step := Hardware, moduleErrorSteps[o.ErrorType]
		if o.ErrorType == "PMD_type_is_not_enabled" {
			cat = Firmware
		}
		if step == "" {
			step = "reseat the module; if the error stays, try another module"
		}
		add(Verdict{Code: VerdictModuleError, Category: cat, Summary: fmt.Sprintf("the firmware reports %s plugged with an error: %s", cage, o.ErrorType),
			Evidence: []string{"PMAOS oper_status " + o.OperStatus, "PMAOS error_type " + o.ErrorType}, NextStep: step})
	case o.OperStatus == "plugged_disabled":
		add(Verdict{Code: VerdictModuleDisabled, Category: Firmware, Summary: fmt.Sprintf("%s is disabled in the firmware (PMAOS admin_status)", cage),
			Evidence: []string{"PMAOS oper_status plugged_disabled"}, NextStep: "enable it: cxray reg set PMAOS --index module=N admin_status=enabled ase=1 --yes"})
	}

	dbProblem := prm.IsDatabaseProblem(o.EEPROMErr) || prm.IsDatabaseProblem(o.FirmwareErr)
	if dbProblem {
		var ev []string
		for _, e := range []error{o.EEPROMErr, o.FirmwareErr} {
			if prm.IsDatabaseProblem(e) {
				ev = append(ev, e.Error())
			}
		}
		db := o.Database
		if db == "" {
			db = "in use"
		}
		add(Verdict{Code: VerdictDatabase, Category: Database, Summary: fmt.Sprintf("cxray could not read %s with the register database %s: it lays out a register otherwise than the firmware answers", cage, db),
			Evidence: ev, NextStep: "use a register database that matches the firmware (--adb with NVIDIA MFT's newest, or --adb builtin); see what changed with 'cxray prm diff builtin FILE.adb MCIA PDDR PMAOS'"})
	}
	var pathErr *PathError
	switch {
	case o.EEPROMErr != nil && errors.As(o.EEPROMErr, &pathErr):
		// The reader never reached the module: nothing says the module
		// is at fault, so no reseating.
		add(Verdict{Code: VerdictModuleNotReadable, Category: Software, Summary: fmt.Sprintf("the EEPROM of %s could not be read: the way to it failed, not the module", cage),
			Evidence: []string{o.EEPROMErr.Error()}, NextStep: pathErr.Next})
	case o.EEPROMErr != nil && decodeKind == "" && !o.FirmwareUnsupportsEE && !prm.IsDatabaseProblem(o.EEPROMErr):
		add(Verdict{Code: VerdictModuleNotReadable, Category: Hardware, Summary: fmt.Sprintf("the EEPROM of %s could not be read", cage),
			Evidence: []string{o.EEPROMErr.Error()}, NextStep: "reseat the module and read again; the firmware's view below may still be current"})
	}

	// Diagnostics: which view to judge.
	view := o.EEPROM
	if !eeOK {
		view = nil
		if o.Firmware != nil && !fwUnknown {
			view = o.Firmware
		}
	}
	if view != nil && !view.DDM && isOptical(view) {
		add(Verdict{Code: VerdictNoDDM, Category: Hardware, Summary: fmt.Sprintf("%s is an optical module without diagnostics (DDM): its temperature, bias and powers cannot be watched", cage),
			Evidence: []string{fmt.Sprintf("%s view: diagnostics not implemented", view.Source)},
			NextStep: "nothing to fix if you do not monitor optics; otherwise replace it with a module that implements DDM (genuine modules do)"})
	}
	if view != nil && view.ModuleState == "Fault" {
		ev := []string{"CMIS module state Fault"}
		if view.FaultCause != "" {
			ev = append(ev, "fault cause: "+view.FaultCause)
		}
		add(Verdict{Code: VerdictModuleFault, Category: Hardware, Summary: fmt.Sprintf("%s reports a fault", cage), Evidence: ev,
			NextStep: "reset the module (reseat it); if it returns to Fault, replace it"})
	}
	if view != nil && view.DDM {
		for _, k := range Marks(view) {
			if k.Level < LevelWarning {
				continue
			}
			code := VerdictThresholdWarning
			if k.Level == LevelAlarm {
				code = VerdictThresholdAlarm
			}
			add(Verdict{Code: code, Category: Hardware, Summary: k.String(), Evidence: []string{fmt.Sprintf("%s view, thresholds from the module", view.Source)}, NextStep: thresholdStep(k)})
		}
	}

	if o.Verified {
		var bad []string
		for _, c := range o.Comparisons {
			if !c.OK {
				q := c.Quantity
				if c.Lane > 0 {
					q = fmt.Sprintf("lane %d %s", c.Lane, q)
				}
				bad = append(bad, fmt.Sprintf("%s: EEPROM %s, firmware %s %s", q, c.EEPROM, c.Firmware, c.Unit))
			}
		}
		if len(bad) > 0 {
			add(Verdict{Code: VerdictSourcesDisagree, Category: Software, Summary: fmt.Sprintf("the EEPROM and the firmware's view of %s disagree on %d value(s) beyond their resolution", cage, len(bad)), Evidence: bad,
				NextStep: "one of the two decoders misreads this module; report it to the cxray project with the output of `cxray module --verify --raw -o json`"})
		}
		if v, ok := frozen(o); ok {
			add(v)
		}
	}
	return out
}

var moduleErrorSteps = map[string]string{
	"Power_Budget_Exceeded":           "the module needs more power than the cage allows: use a module of a lower power class, or check the adapter's power budget",
	"pcie_system_power_slot_Exceeded": "the PCIe slot cannot power this module: use a lower power class module or a slot that supplies more power",
	"High_Temperature":                "the module overheated and was shut down: check airflow and fans, let it cool, then reseat it",
	"bad_cable":                       "the firmware judged the cable bad: replace it",
	"PMD_type_is_not_enabled":         "the firmware's configuration does not enable this module's media type: enable it in the adapter configuration (mlxconfig) or use another module",
	"Enforce_part_number_list":        "use a module on the adapter's allowed part-number list",
}

func thresholdStep(k Mark) string {
	switch {
	case k.Quantity == "rx power" && !k.High:
		return "little light arrives: clean the connectors at both ends, check the fibre for bends or breaks, and check the far end's transmitter"
	case k.Quantity == "rx power":
		return "too much light arrives: add an attenuator (short single-mode links) or check that the far end is the right module type"
	case k.Quantity == "tx power" && !k.High, k.Quantity == "tx bias" && k.High:
		return "the laser is wearing out: plan to replace the module"
	case k.Quantity == "temperature" && k.High:
		return "the module runs hot: check airflow, fan speed and blocked vents; a module that stays hot should be replaced"
	case k.Quantity == "voltage":
		return "the cage's supply is off: try the module in another cage; if the voltage follows the cage, the adapter needs service"
	}
	return "compare with the far end and with other modules of the same type; replace the module if it keeps drifting"
}

// frozen judges the second reads: monitors that do not move at all over
// the interval have stopped, either in the module (both views frozen) or in
// the firmware (the EEPROM moves, the firmware's copy does not).
func frozen(o Observation) (Verdict, bool) {
	if o.DeviceStill {
		return Verdict{}, false
	}
	iv := o.Interval.String()
	eeChanged, eeTotal := Changed(o.EEPROM, o.EEPROM2)
	fwChanged, fwTotal := Changed(o.Firmware, o.Firmware2)
	if o.Firmware != nil && !o.Firmware.DDM {
		fwTotal = 0
	}
	if o.EEPROM != nil && !o.EEPROM.DDM {
		eeTotal = 0
	}
	eeFrozen := eeTotal > 0 && eeChanged == 0
	fwFrozen := fwTotal > 0 && fwChanged == 0
	switch {
	case eeFrozen:
		ev := []string{fmt.Sprintf("none of %d EEPROM monitors changed in %s", eeTotal, iv)}
		if fwTotal > 0 {
			ev = append(ev, fmt.Sprintf("%d of %d firmware monitors changed", fwChanged, fwTotal))
		}
		return Verdict{Code: VerdictFrozen, Category: Hardware, Summary: "the monitors of " + o.cage() + " have stopped updating", Evidence: ev,
			NextStep: "reset the module (reseat it, or cxray reg set PMAOS --index module=N rst=1 --yes); if the values stay frozen, replace it: its diagnostics no longer follow the laser"}, true
	case fwFrozen && eeTotal > 0:
		return Verdict{Code: VerdictStaleFirmware, Category: Firmware, Summary: "the firmware's view of " + o.cage() + " is stale: the module's monitors move, the firmware's copy does not",
			Evidence: []string{fmt.Sprintf("%d of %d EEPROM monitors changed in %s", eeChanged, eeTotal, iv), fmt.Sprintf("none of %d firmware monitors changed", fwTotal)},
			NextStep: "tools that use the firmware's view (mlxlink -m, the driver's hwmon) show old values; reset the module, and update the adapter firmware if it recurs"}, true
	case fwFrozen:
		return Verdict{Code: VerdictFrozen, Category: Hardware, Summary: "the monitors of " + o.cage() + " have stopped updating (firmware view; the EEPROM could not be read to tell who is stuck)",
			Evidence: []string{fmt.Sprintf("none of %d firmware monitors changed in %s", fwTotal, iv)},
			NextStep: "reset the module (reseat it); if the values stay frozen, replace it"}, true
	}
	return Verdict{}, false
}

// allOnesMonitors says the firmware's monitors read 0xFFFF.
func allOnesMonitors(m *Module) bool {
	if m.Temperature == nil || m.Temperature.Raw != -1 {
		return false
	}
	return m.Voltage == nil || m.Voltage.Raw == 0xFFFF
}

// allOnesEEPROM says the module's own monitors read all ones: the
// temperature (signed, or unsigned with external calibration) and the
// supply voltage both 0xFFFF.
func allOnesEEPROM(m *Module) bool {
	if m.Temperature == nil || m.Voltage == nil {
		return false
	}
	return (m.Temperature.Raw == -1 || m.Temperature.Raw == 0xFFFF) && m.Voltage.Raw == 0xFFFF
}

func isOptical(m *Module) bool {
	return strings.HasPrefix(m.Media.Type, "optical") || m.CableType == "Optical_Module"
}

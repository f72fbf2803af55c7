package optics

import "fmt"

// VerdictModuleGone: the module was there at the first read of a verify
// and gone at the second (pulled, or fell out of its cage): the readings
// cannot be compared, and "no problem found" would be false.
const VerdictModuleGone = "module_gone"

// Present says a read found a module in the cage: PMAOS does not say
// unplugged and the EEPROM decoded or the firmware identifies a cable.
func Present(o Observation) bool {
	if o.OperStatus == "unplugged" || (o.Firmware != nil && o.Firmware.CableType == CableUnplugged) {
		return false
	}
	return o.EEPROM != nil || (o.Firmware != nil && o.Firmware.CableType != CableUnidentified)
}

// Gone is the verdict of a module present at the first read (first) and
// not at the second (second), Interval apart.
func Gone(first, second Observation) Verdict {
	ev := []string{"present at the first read"}
	if second.OperStatus != "" {
		ev = append(ev, "PMAOS oper_status "+second.OperStatus+" at the second")
	}
	if second.Firmware != nil && second.Firmware.CableType != "" {
		ev = append(ev, "PDDR cable_type "+second.Firmware.CableType+" at the second")
	}
	if second.EEPROMErr != nil {
		ev = append(ev, "the EEPROM could not be read at the second: "+second.EEPROMErr.Error())
	}
	return Verdict{Code: VerdictModuleGone, Category: Hardware,
		Summary:  fmt.Sprintf("%s went away between the two reads, %v apart: it was pulled or is not seated", first.cage(), first.Interval),
		Evidence: ev,
		NextStep: "check the cage: plug the module in (or reseat it until the latch clicks), then run cxray module --verify again"}
}

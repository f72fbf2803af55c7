package modules

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cxray/cxray/optics"
)

// table writes aligned columns.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	if len(header) > 0 {
		t.row(header...)
	}
	return t
}

func (t *table) row(cols ...string) { fmt.Fprintln(t.tw, strings.Join(cols, "\t")) }

func (t *table) flush() { t.tw.Flush() }

// WriteText prints one report as `cxray module` shows it; raw adds the
// EEPROM pages read.
func WriteText(w io.Writer, r *Report, raw bool) {
	head := fmt.Sprintf("Port %d · module %d", r.Port, r.Module)
	if r.Netdev != "" {
		head = fmt.Sprintf("Port %d · %s", r.Port, r.Netdev)
	}
	if r.OperStatus != "" {
		head += " · " + r.OperStatus
	}
	if r.ErrorType != "" {
		head += " (" + r.ErrorType + ")"
	}
	fmt.Fprintln(w, head)
	m, src := r.Shown()
	if r.EEPROMError != "" && (m == nil || m == r.Firmware) {
		fmt.Fprintf(w, "  EEPROM: %s\n", r.EEPROMError)
	}
	if m != nil {
		printModuleIdentity(w, m, src)
		printModuleMonitors(w, m, r.Marks)
	}
	if r.Firmware != nil && m != r.Firmware {
		fmt.Fprintf(w, "  Firmware view  %s\n", moduleFirmwareSummary(r.Firmware))
	} else if r.FirmwareError != "" {
		fmt.Fprintf(w, "  Firmware view  not read: %s\n", r.FirmwareError)
	}
	if r.Verify != nil {
		printModuleVerify(w, r.Verify)
	}
	if raw && r.Raw != nil {
		printModuleRaw(w, r.Raw, r.EEPROMAccess)
	}
	if len(r.Verdicts) == 0 {
		fmt.Fprintln(w, "  Verdict        no problem found")
		return
	}
	fmt.Fprintln(w, "  Verdicts")
	for _, v := range r.Verdicts {
		fmt.Fprintf(w, "    [%s] %s: %s\n", v.Category, v.Code, v.Summary)
		for _, e := range v.Evidence {
			fmt.Fprintf(w, "        - %s\n", e)
		}
		fmt.Fprintf(w, "        next: %s\n", v.NextStep)
	}
}

func printModuleIdentity(w io.Writer, m *optics.Module, src string) {
	kv := func(k, v string) {
		if strings.TrimSpace(v) != "" {
			fmt.Fprintf(w, "  %-14s %s\n", k, v)
		}
	}
	kv("Source", src)
	id := fmt.Sprintf("%s (0x%02x)", m.Identifier.Name, m.Identifier.Value)
	if m.Standard != "" {
		id += ", " + m.Standard
		if m.Revision != "" {
			id += " " + m.Revision
		}
	}
	kv("Identifier", id)
	kv("Connector", fmt.Sprintf("%s (0x%02x)", m.Connector.Name, m.Connector.Value))
	v := m.Vendor
	vendor := v.Name
	for _, p := range []struct{ k, v string }{{"OUI", v.OUI}, {"PN", v.PN}, {"rev", v.Rev}, {"SN", v.SN}} {
		if p.v != "" {
			vendor += "  " + p.k + " " + p.v
		}
	}
	if v.Date != "" {
		vendor += "  date " + v.Date
	} else if v.DateCode != "" {
		vendor += "  date code " + v.DateCode
	}
	kv("Vendor", vendor)
	media := m.Media.Type
	if m.Media.Technology != "" {
		media += ", " + m.Media.Technology
	}
	if m.Media.WavelengthNM > 0 {
		media += fmt.Sprintf(", %s nm", strconv.FormatFloat(m.Media.WavelengthNM, 'f', -1, 64))
	}
	var ls []string
	for _, l := range m.Media.Lengths {
		ls = append(ls, fmt.Sprintf("%s %s m", l.Medium, strconv.FormatFloat(l.Meters, 'f', -1, 64)))
	}
	if len(ls) > 0 {
		media += "; " + strings.Join(ls, ", ")
	}
	kv("Media", media)
	if a := m.Application; a != nil {
		s := fmt.Sprintf("%s / %s, %d host lanes, %d media lanes", a.Host.Name, a.Media.Name, a.HostLanes, a.MediaLanes)
		if !a.Active {
			s += " (assumed: none active)"
		}
		kv("Application", s)
	}
	if m.PowerClass > 0 || m.MaxPowerW > 0 {
		p := fmt.Sprintf("class %d", m.PowerClass)
		if m.MaxPowerW > 0 {
			p += fmt.Sprintf(", max %.2f W", m.MaxPowerW)
		}
		kv("Power", p)
	}
	state := m.ModuleState
	if m.FaultCause != "" {
		state += " (" + m.FaultCause + ")"
	}
	if m.Firmware != "" {
		state = strings.TrimPrefix(state+"; firmware "+m.Firmware, "; ")
		if m.InactiveFirmware != "" {
			state += " (inactive " + m.InactiveFirmware + ")"
		}
	}
	kv("Module", state)
	ddm := "no"
	if m.DDM {
		ddm = "yes"
		var extra []string
		if m.Calibration != "" {
			extra = append(extra, m.Calibration+" calibration")
		}
		if m.RxPowerType != "" {
			extra = append(extra, "Rx power "+m.RxPowerType)
		}
		if m.BiasMultiplier > 1 {
			extra = append(extra, fmt.Sprintf("bias multiplier x%d", m.BiasMultiplier))
		}
		if len(extra) > 0 {
			ddm += " (" + strings.Join(extra, ", ") + ")"
		}
	} else if m.Media.Type == "passive-copper" {
		ddm = "no (passive copper: none expected)"
	}
	kv("Diagnostics", ddm)
	for _, c := range m.Checksums {
		if !c.OK {
			kv("Checksum", fmt.Sprintf("%s stored 0x%02x, computed 0x%02x: MISMATCH", c.Name, c.Want, c.Got))
		}
	}
	for _, n := range m.Notes {
		kv("Note", n)
	}
}

// markOf is the mark of a reading: ! past alarm, * past warning, ~ near.
func moduleMark(marks []optics.Mark, quantity string, lane int) string {
	best := optics.LevelOK
	for _, k := range marks {
		if k.Quantity == quantity && k.Lane == lane && k.Level > best {
			best = k.Level
		}
	}
	return [...]string{"", "~", "*", "!"}[best]
}

func printModuleMonitors(w io.Writer, m *optics.Module, marks []optics.Mark) {
	if !m.DDM {
		return
	}
	th := m.Thresholds
	if th == nil {
		th = &optics.Thresholds{}
	}
	lim := func(ha, la, hw, lw *float64, f string) string {
		s := func(p *float64) string {
			if p == nil {
				return "-"
			}
			return fmt.Sprintf(f, *p)
		}
		out := ""
		if ha != nil || la != nil {
			out += "alarm " + s(la) + " .. " + s(ha)
		}
		if hw != nil || lw != nil {
			out += "   warning " + s(lw) + " .. " + s(hw)
		}
		return out
	}
	if t := m.Temperature; t != nil {
		var ha, la, hw, lw *float64
		if l := th.Temperature; l != nil {
			ha, la, hw, lw = modTempC(l.HighAlarm), modTempC(l.LowAlarm), modTempC(l.HighWarning), modTempC(l.LowWarning)
		}
		val := na(t.NA)
		if t.Valid() {
			val = fmt.Sprintf("%.2f °C%s", t.C, moduleMark(marks, "temperature", 0))
		}
		fmt.Fprintf(w, "  %-14s %-12s %s\n", "Temperature", val, lim(ha, la, hw, lw, "%.2f"))
	}
	if v := m.Voltage; v != nil {
		var ha, la, hw, lw *float64
		if l := th.Voltage; l != nil {
			ha, la, hw, lw = modVoltV(l.HighAlarm), modVoltV(l.LowAlarm), modVoltV(l.HighWarning), modVoltV(l.LowWarning)
		}
		val := na(v.NA)
		if v.Valid() {
			val = fmt.Sprintf("%.4f V%s", v.V, moduleMark(marks, "voltage", 0))
		}
		fmt.Fprintf(w, "  %-14s %-12s %s\n", "Voltage", val, lim(ha, la, hw, lw, "%.4f"))
	}
	if len(m.Lanes) == 0 {
		return
	}
	hdr := []string{"  LANE"}
	for _, l := range m.Lanes {
		hdr = append(hdr, strconv.Itoa(l.Lane))
	}
	hdr = append(hdr, "LOW ALARM", "LOW WARN", "HIGH WARN", "HIGH ALARM")
	var tb bytes.Buffer
	tw := newTable(&tb, hdr...)
	row := func(name string, cell func(optics.Lane) string, limits [4]string) {
		cols := []string{"  " + name}
		any := false
		for _, l := range m.Lanes {
			c := cell(l)
			if c != "" {
				any = true
			} else {
				c = "-"
			}
			cols = append(cols, c)
		}
		if !any {
			return
		}
		tw.row(append(cols, limits[:]...)...)
	}
	four := func(vals [4]*float64, f string) [4]string {
		var out [4]string
		for i, v := range vals {
			out[i] = "-"
			if v != nil {
				out[i] = fmt.Sprintf(f, *v)
			}
		}
		return out
	}
	var biasL, txL, rxL [4]*float64
	if l := th.TxBias; l != nil {
		biasL = [4]*float64{modCurMA(l.LowAlarm), modCurMA(l.LowWarning), modCurMA(l.HighWarning), modCurMA(l.HighAlarm)}
	}
	if l := th.TxPower; l != nil {
		txL = [4]*float64{modPowDBm(l.LowAlarm), modPowDBm(l.LowWarning), modPowDBm(l.HighWarning), modPowDBm(l.HighAlarm)}
	}
	if l := th.RxPower; l != nil {
		rxL = [4]*float64{modPowDBm(l.LowAlarm), modPowDBm(l.LowWarning), modPowDBm(l.HighWarning), modPowDBm(l.HighAlarm)}
	}
	row("Tx bias (mA)", func(l optics.Lane) string {
		switch {
		case l.TxBias == nil:
			return ""
		case !l.TxBias.Valid():
			return na(l.TxBias.NA)
		}
		return fmt.Sprintf("%.3f%s", l.TxBias.MA, moduleMark(marks, "tx bias", l.Lane))
	}, four(biasL, "%.3f"))
	row("Tx power (dBm)", func(l optics.Lane) string {
		switch {
		case l.TxPower == nil:
			return ""
		case !l.TxPower.Valid():
			return na(l.TxPower.NA)
		}
		return l.TxPower.DBm.String() + moduleMark(marks, "tx power", l.Lane)
	}, four(txL, "%.2f"))
	row("Tx power (mW)", func(l optics.Lane) string {
		if !l.TxPower.Valid() {
			return ""
		}
		return fmt.Sprintf("%.4f", l.TxPower.MW)
	}, [4]string{"", "", "", ""})
	rxName := "Rx power"
	if m.RxPowerType == "OMA" {
		rxName = "Rx OMA"
	}
	row(rxName+" (dBm)", func(l optics.Lane) string {
		switch {
		case l.RxPower == nil:
			return ""
		case !l.RxPower.Valid():
			return na(l.RxPower.NA)
		}
		return l.RxPower.DBm.String() + moduleMark(marks, "rx power", l.Lane)
	}, four(rxL, "%.2f"))
	row(rxName+" (mW)", func(l optics.Lane) string {
		if !l.RxPower.Valid() {
			return ""
		}
		return fmt.Sprintf("%.4f", l.RxPower.MW)
	}, [4]string{"", "", "", ""})
	yes := func(b *bool) string {
		switch {
		case b == nil:
			return ""
		case *b:
			return "YES"
		}
		return "no"
	}
	none := [4]string{"", "", "", ""}
	row("Tx fault", func(l optics.Lane) string { return yes(l.TxFault) }, none)
	row("Tx LOS", func(l optics.Lane) string { return yes(l.TxLOS) }, none)
	row("Tx CDR LOL", func(l optics.Lane) string { return yes(l.TxLOL) }, none)
	row("Rx LOS", func(l optics.Lane) string { return yes(l.RxLOS) }, none)
	row("Rx CDR LOL", func(l optics.Lane) string { return yes(l.RxLOL) }, none)
	row("Flags", func(l optics.Lane) string { return moduleLaneFlags(l.Flags) }, none)
	tw.flush()
	moduleWriteTrimmed(w, tb.String())
	var mf []string
	if m.Flags != nil {
		for _, q := range []struct {
			n string
			f optics.Flags
		}{{"temperature", m.Flags.Temperature}, {"voltage", m.Flags.Voltage}} {
			if s := moduleFlagText(q.f); s != "" {
				mf = append(mf, q.n+" "+s)
			}
		}
	}
	if len(mf) > 0 {
		fmt.Fprintf(w, "  %-14s %s\n", "Module flags", strings.Join(mf, ", "))
	}
	if len(marks) > 0 {
		fmt.Fprintln(w, "  (! past an alarm threshold, * past a warning threshold, ~ near a warning threshold)")
	}
}

// na is how a no-reading pattern is shown: "n/a (0xFFFF)".
func na(pattern string) string { return "n/a (" + pattern + ")" }

func modTempC(t *optics.Temperature) *float64 {
	if !t.Valid() {
		return nil
	}
	return &t.C
}

func modVoltV(v *optics.Voltage) *float64 {
	if !v.Valid() {
		return nil
	}
	return &v.V
}

func modCurMA(c *optics.Current) *float64 {
	if !c.Valid() {
		return nil
	}
	return &c.MA
}

func modPowDBm(p *optics.Power) *float64 {
	if !p.Valid() {
		return nil
	}
	d := float64(p.DBm)
	if math.IsInf(d, 0) {
		d = math.Inf(-1)
	}
	return &d
}

func moduleFlagText(f optics.Flags) string {
	var s []string
	for _, x := range []struct {
		on bool
		n  string
	}{{f.HighAlarm, "HA"}, {f.LowAlarm, "LA"}, {f.HighWarning, "HW"}, {f.LowWarning, "LW"}} {
		if x.on {
			s = append(s, x.n)
		}
	}
	return strings.Join(s, "+")
}

func moduleLaneFlags(f *optics.LaneFlags) string {
	if f == nil {
		return ""
	}
	var s []string
	for _, q := range []struct {
		n string
		f *optics.Flags
	}{{"bias", f.TxBias}, {"tx", f.TxPower}, {"rx", f.RxPower}} {
		if q.f != nil {
			if t := moduleFlagText(*q.f); t != "" {
				s = append(s, q.n+":"+t)
			}
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, " ")
}

func moduleFirmwareSummary(m *optics.Module) string {
	switch m.CableType {
	case optics.CableUnplugged:
		return "no cable (" + m.CableType + ")"
	case optics.CableUnidentified:
		return "the firmware does not identify this module (cable_type " + m.CableType + ")"
	}
	s := fmt.Sprintf("%s, %s %s", m.Identifier.Name, m.Vendor.Name, m.Vendor.PN)
	if m.DDM {
		if m.Temperature.Valid() {
			s += fmt.Sprintf(", %.2f °C", m.Temperature.C)
		}
		if m.Voltage.Valid() {
			s += fmt.Sprintf(", %.4f V", m.Voltage.V)
		}
		var rx []string
		for _, l := range m.Lanes {
			if l.RxPower.Valid() {
				rx = append(rx, l.RxPower.DBm.String())
			}
		}
		if len(rx) > 0 {
			s += ", rx dBm " + strings.Join(rx, " ")
		}
		s += " (powers in " + m.PowerRawUnit + ")"
	} else {
		s += ", no diagnostics"
	}
	return s
}

func printModuleVerify(w io.Writer, v *Verify) {
	state := "the EEPROM and the firmware's view agree"
	if !v.Agree {
		state = "the EEPROM and the firmware's view DISAGREE"
	}
	if len(v.Comparisons) == 0 {
		state = "nothing to compare (one of the sources was not read)"
	}
	fmt.Fprintf(w, "  Verify         %s; after %s: %d of %d EEPROM and %d of %d firmware monitors changed\n", state,
		time.Duration(v.IntervalS*float64(time.Second)), v.EEPROMChanged, v.EEPROMMonitors, v.FirmwareChanged, v.FirmwareMonitors)
	if v.DeviceClockStill {
		fmt.Fprintf(w, "                 the device's clock did not move meanwhile (its uptime stood still: an emulator on a manual clock), so unchanged monitors are not judged frozen\n")
	}
	if len(v.Comparisons) == 0 {
		return
	}
	var tb bytes.Buffer
	t := newTable(&tb, "    QUANTITY", "EEPROM", "FIRMWARE", "UNIT", "DIFF", "TOLERANCE", "OK")
	for _, c := range v.Comparisons {
		q := c.Quantity
		if c.Lane > 0 {
			q = fmt.Sprintf("lane %d %s", c.Lane, q)
		}
		ok := "yes"
		if !c.OK {
			ok = "NO"
		}
		diff, tol := "", ""
		if c.Unit != "" {
			diff, tol = strconv.FormatFloat(c.Difference, 'g', 3, 64), strconv.FormatFloat(c.Tolerance, 'g', 3, 64)
		}
		t.row("    "+q, c.EEPROM, c.Firmware, c.Unit, diff, tol, ok)
	}
	t.flush()
	moduleWriteTrimmed(w, tb.String())
}

// writeTrimmed copies a table without the blanks tabwriter leaves after
// empty trailing cells.
func moduleWriteTrimmed(w io.Writer, s string) {
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		fmt.Fprintln(w, strings.TrimRight(l, " "))
	}
}

func printModuleRaw(w io.Writer, im *optics.Image, access string) {
	fmt.Fprintf(w, "  Raw pages (%s)\n", access)
	for _, p := range im.Pages {
		for off := 0; off < len(p.Data); off += 16 {
			label := ""
			if off == 0 {
				label = p.PageAddr.String()
			}
			end := min(off+16, len(p.Data))
			var hx []string
			for _, b := range p.Data[off:end] {
				hx = append(hx, fmt.Sprintf("%02x", b))
			}
			fmt.Fprintf(w, "    %-22s 0x%02x: %s\n", label, int(p.Offset)+off, strings.Join(hx, " "))
		}
	}
	for _, e := range im.Errors {
		fmt.Fprintf(w, "    %-22s not read: %s\n", e.PageAddr.String(), e.Err)
	}
}

// WriteRaw prints a module image as hex, sixteen bytes a line, page by
// page (as module --raw does), with the pages that could not be read.
func WriteRaw(w io.Writer, im *optics.Image, access string) { printModuleRaw(w, im, access) }

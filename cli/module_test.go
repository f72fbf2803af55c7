package cli

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	emuoptics "github.com/cxray/cxray/emu/optics"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/modules"
	"github.com/cxray/cxray/optics"
)

// moduleJSON is the part of `cxray module -o json` the tests read.
type moduleJSON struct {
	Modules []struct {
		Port       int             `json:"port"`
		Module     int             `json:"module"`
		OperStatus string          `json:"oper_status"`
		ErrorType  string          `json:"error_type"`
		EEPROM     *optics.Module  `json:"eeprom"`
		EEPROMErr  string          `json:"eeprom_error"`
		Firmware   *optics.Module  `json:"firmware"`
		Raw        json.RawMessage `json:"raw"`
		Verify     *modules.Verify `json:"verify"`
		Verdicts   []optics.Verdict
	} `json:"modules"`
	Verdicts int `json:"verdicts"`
}

// moduleScenario writes a manual-clock scenario with cage 0 as given.
func moduleScenario(t *testing.T, cage0 string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.yaml")
	body := "clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n    modules:\n      - module: 0\n" + cage0
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// model builds the scenario's emulation on its own, for the model's values
// at power-on (a manual clock starts at the same instant every time).
func model(t *testing.T, file string, cage int) emuoptics.Reading {
	t.Helper()
	sc, err := scenario.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	e, err := scenario.Build(sc, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Adapters[0].Optics.Snapshot(cage)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol+1e-12 {
		t.Errorf("%s = %v, the model says %v (±%v)", what, got, want, tol)
	}
}

// On every catalog module the EEPROM decode and the firmware's view agree,
// and the JSON values are the model's within each source's resolution.
func TestModuleCatalogJSON(t *testing.T) {
	for _, kind := range emuoptics.Kinds() {
		if kind == emuoptics.Empty {
			continue
		}
		t.Run(kind, func(t *testing.T) {
			sc := moduleScenario(t, "        type: "+kind+"\n")
			out, errs, code := cli(t, "", "--adb", "builtin", "module", "-d", "emu:"+sc, "--verify", "-o", "json")
			if code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, errs, out)
			}
			var j moduleJSON
			mustJSON(t, out, &j)
			if len(j.Modules) != 1 || j.Verdicts != 0 {
				t.Fatalf("%s", out)
			}
			m := j.Modules[0]
			if m.Verify == nil || !m.Verify.Agree || len(m.Verify.Comparisons) < 5 {
				t.Errorf("verify %+v", m.Verify)
			}
			want := model(t, sc, 0)
			ee, fw := m.EEPROM, m.Firmware
			if ee == nil || fw == nil {
				t.Fatalf("sources missing: %s", out)
			}
			if ee.Vendor.SN != want.Serial || fw.Vendor.SN != want.Serial || ee.Vendor.PN != want.PartNumber || ee.Identifier.Value != want.Identifier {
				t.Errorf("identity: eeprom %+v firmware %+v model %+v", ee.Vendor, fw.Vendor, want)
			}
			if ee.DDM != want.DDM || fw.DDM != want.DDM {
				t.Fatalf("ddm: eeprom %v firmware %v model %v", ee.DDM, fw.DDM, want.DDM)
			}
			if !want.DDM {
				return
			}
			// The EEPROM holds the model's counts: exact. The firmware view
			// rounds to 1/256 °C, 100 µV, 2 µA and 1 µW.
			within(t, "eeprom temperature", ee.Temperature.C, want.TempC, 0)
			within(t, "firmware temperature", fw.Temperature.C, want.TempC, 1.0/512)
			within(t, "eeprom voltage", ee.Voltage.V, want.VoltageV, 0)
			within(t, "firmware voltage", fw.Voltage.V, want.VoltageV, 0.00005)
			for i, l := range want.Lanes {
				e, f := ee.Lanes[i], fw.Lanes[i]
				within(t, "eeprom bias", e.TxBias.MA, l.BiasMA, 0)
				within(t, "eeprom tx", e.TxPower.MW, l.TxMW, 0)
				within(t, "eeprom rx", e.RxPower.MW, l.RxMW, 0)
				within(t, "firmware bias", f.TxBias.MA, l.BiasMA, 0.001)
				within(t, "firmware tx", f.TxPower.MW, l.TxMW, 0.0005)
				within(t, "firmware rx", f.RxPower.MW, l.RxMW, 0.0005)
				if math.Abs(float64(e.RxPower.DBm)-10*math.Log10(l.RxMW)) > 1e-9 {
					t.Errorf("dBm %v for %v mW", e.RxPower.DBm, l.RxMW)
				}
			}
		})
	}
}

// Every fault yields its verdict and category, and exit 1.
func TestModuleFaultVerdicts(t *testing.T) {
	cases := []struct {
		cage0    string
		verify   bool
		code     string
		category string
	}{
		{"        plugged: false\n", false, optics.VerdictNoModule, optics.Hardware},
		{"        type: empty\n", false, optics.VerdictNoModule, optics.Hardware},
		{"        faults: [i2c_hang]\n", false, optics.VerdictI2CHang, optics.Hardware},
		{"        faults: [no_ddm]\n", false, optics.VerdictNoDDM, optics.Hardware},
		{"        type: sfp28-25g-lr\n        faults: [no_ddm]\n", false, optics.VerdictNoDDM, optics.Hardware},
		{"        faults: [frozen_monitors]\n", true, optics.VerdictFrozen, optics.Hardware},
		{"        faults: [stale_firmware_view]\n", true, optics.VerdictStaleFirmware, optics.Firmware},
		{"        faults: [unsupported_identifier]\n", false, optics.VerdictUnsupported, optics.Hardware},
		{"        faults: [checksum_error]\n", false, optics.VerdictChecksum, optics.Hardware},
		{"        type: qsfp28-100g-sr4\n        faults: [checksum_error]\n", false, optics.VerdictChecksum, optics.Hardware},
		{"        faults: [firmware_unaware]\n", true, optics.VerdictFirmwareTooOld, optics.Firmware},
		{"        faults: [low_rx_power]\n", false, optics.VerdictThresholdAlarm, optics.Hardware},
		{"        temperature: {idle: 80, load: 0, wander: 0}\n", false, optics.VerdictThresholdAlarm, optics.Hardware},
		{"        error: High_Temperature\n", false, optics.VerdictModuleError, optics.Hardware},
	}
	for _, c := range cases {
		sc := moduleScenario(t, c.cage0)
		args := []string{"--adb", "builtin", "module", "-d", "emu:" + sc, "-o", "json"}
		if c.verify {
			args = append(args, "--verify")
		}
		out, errs, code := cli(t, "", args...)
		name := strings.TrimSpace(c.cage0)
		if code != 1 {
			t.Errorf("%s: exit %d (%s)", name, code, errs)
			continue
		}
		var j moduleJSON
		mustJSON(t, out, &j)
		found := false
		for _, v := range j.Modules[0].Verdicts {
			if v.Code == c.code && v.Category == c.category && v.NextStep != "" {
				found = true
			}
		}
		if !found || j.Verdicts != len(j.Modules[0].Verdicts) {
			t.Errorf("%s: want %s/%s, got %+v", name, c.code, c.category, j.Modules[0].Verdicts)
		}
		// A fault leaves the other verdicts out: each names one problem.
		if len(j.Modules[0].Verdicts) != 1 && c.code != optics.VerdictThresholdAlarm {
			t.Errorf("%s: more than one verdict: %+v", name, j.Modules[0].Verdicts)
		}
	}
}

func TestModuleTable(t *testing.T) {
	sc := moduleScenario(t, "        faults: [low_rx_power]\n")
	out, _, code := cli(t, "", "--adb", "builtin", "module", "-d", "emu:"+sc, "--all", "--raw", "--verify")
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"Port 1 · module 0 · plugged_enabled", "Port 2 · module 1", "EMU-Q112-DR4", "EMU-Q112-SR4",
		"LANE", "LOW ALARM", "HIGH ALARM", "Rx power (dBm)", "!", "past an alarm threshold",
		"[hardware] threshold_alarm", "next: ", "Raw pages (MCIA)", "page 00h lower", "page 11h upper",
		"the EEPROM and the firmware's view agree", "QUANTITY",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	// A DAC has no diagnostics and that is fine.
	sc = moduleScenario(t, "        type: qsfp28-100g-dac\n")
	out, _, code = cli(t, "", "--adb", "builtin", "module", "-d", "emu:"+sc)
	if code != 0 || !strings.Contains(out, "passive copper: none expected") || !strings.Contains(out, "no problem found") {
		t.Errorf("DAC: exit %d\n%s", code, out)
	}
	// The real clock: a short --verify interval sees moving monitors.
	out, errs, code := cli(t, "", "--adb", "builtin", "module", "-d", "emu", "--verify", "--interval", "300ms")
	if code != 0 {
		t.Errorf("real clock verify: exit %d %s\n%s", code, errs, out)
	}
}

// Without MCIA the firmware's view is all there is, and that is said.
func TestModuleWithoutMCIA(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nomcia.yaml")
	os.WriteFile(p, []byte("devices:\n  - profile: cx7-2p400g\n    faults:\n      unsupported: [MCIA]\n"), 0o644)
	out, errs, code := cli(t, "", "--adb", "builtin", "module", "-d", "emu:"+p, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d %s\n%s", code, errs, out)
	}
	var j moduleJSON
	mustJSON(t, out, &j)
	m := j.Modules[0]
	if m.EEPROM != nil || !strings.Contains(m.EEPROMErr, "does not offer MCIA") || m.Firmware == nil || !m.Firmware.DDM {
		t.Errorf("%+v", m)
	}
	out, _, _ = cli(t, "", "--adb", "builtin", "module", "-d", "emu:"+p)
	if !strings.Contains(out, "firmware view (PDDR page 3)") || !strings.Contains(out, "Tx bias (mA)") {
		t.Errorf("table without MCIA:\n%s", out)
	}
}

func TestModuleUsage(t *testing.T) {
	for _, args := range [][]string{
		{"module", "-d", "emu", "--port", "0"},
		{"module", "-d", "emu", "--port", "2", "--all"},
		{"module", "-d", "emu", "--verify", "--interval", "0s"},
		{"module"},
	} {
		if _, errs, code := cli(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d %s", args, code, errs)
		}
	}
	// A port the function does not have is a usage error naming it.
	_, errs, code := cli(t, "", "--adb", "builtin", "module", "-d", "emu", "--port", "9")
	if code != 2 || !strings.Contains(errs, "no local port 9") {
		t.Errorf("port 9: exit %d %s", code, errs)
	}
}

// TestSentinelsAreNotReadings: with an I2C hang the monitors read 0xFFFF.
// The module report shows n/a with the pattern and null in JSON, monitor
// leaves them out (and says why), and the exporter publishes no value but
// a no-reading status for each.
func TestSentinelsAreNotReadings(t *testing.T) {
	sc := moduleScenario(t, "        faults: [i2c_hang]\n")
	out, _, code := cli(t, "", "module", "-d", "emu:"+sc)
	if code != cmdutil.ExitProblem || !strings.Contains(out, "n/a (0xFFFF)") || strings.Contains(out, "6.5535") || strings.Contains(out, "-0.00") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
	out, _, _ = cli(t, "", "module", "-d", "emu:"+sc, "-o", "json")
	var r struct {
		Modules []struct {
			Firmware struct {
				Temperature map[string]any `json:"temperature"`
				Voltage     map[string]any `json:"voltage"`
				Lanes       []struct {
					TxBias  map[string]any `json:"tx_bias"`
					RxPower map[string]any `json:"rx_power"`
				} `json:"lanes"`
			} `json:"firmware"`
		} `json:"modules"`
	}
	mustJSON(t, out, &r)
	fwv := r.Modules[0].Firmware
	if fwv.Temperature["c"] != nil || fwv.Temperature["na"] != "0xFFFF" || fwv.Voltage["v"] != nil || len(fwv.Lanes) == 0 ||
		fwv.Lanes[0].TxBias["ma"] != nil || fwv.Lanes[0].RxPower["mw"] != nil || fwv.Lanes[0].RxPower["dbm"] != nil {
		t.Errorf("JSON carries sentinels as values: %+v", fwv)
	}
	out, _, _ = cli(t, "", "monitor", "-d", "emu:"+sc, "--what", "module", "--count", "1", "-o", "json")
	var s struct {
		Values map[string]float64 `json:"values"`
		Errors []string           `json:"errors"`
	}
	mustJSON(t, strings.SplitN(out, "\n", 2)[0], &s)
	for k := range s.Values {
		if strings.HasPrefix(k, "port1.module.") && !strings.Contains(k, "threshold") {
			t.Errorf("monitor sampled a sentinel: %s = %v", k, s.Values[k])
		}
	}
	if !strings.Contains(strings.Join(s.Errors, ";"), "no reading (0xFFFF)") {
		t.Errorf("monitor does not say why: %v", s.Errors)
	}
}

// TestExporterLeavesOutSentinels: no module voltage, temperature, bias or
// power metric carries a 0xFFFF reading; each is a no-reading status.
func TestExporterLeavesOutSentinels(t *testing.T) {
	sc := moduleScenario(t, "        faults: [i2c_hang]\n")
	r := startExporter(t, "-d", "emu:"+sc)
	s, _ := scrapeURL(t, r.url)
	for _, fam := range []string{"cxray_module_voltage_volts", "cxray_module_temperature_celsius", "cxray_module_tx_bias_amperes", "cxray_module_rx_power_watts"} {
		if n := len(s.Find(fam, "port", "1")); n != 0 {
			t.Errorf("%s published for a hung module (%d samples)", fam, n)
		}
	}
	if v, ok := s.Value("cxray_module_no_reading", "port", "1", "quantity", "voltage", "pattern", "0xFFFF"); !ok || v != 1 {
		t.Errorf("no no-reading status for the voltage: %v %v", v, ok)
	}
	if n := len(s.Find("cxray_module_no_reading", "port", "1", "quantity", "rx_power")); n == 0 {
		t.Error("no no-reading status for the lanes' rx power")
	}
}

// moduleFileScenario is a scenario with an SFP28 and a QSFP28 module.
const moduleFileScenario = `devices:
  - {profile: cx6dx-2p100g, modules: [{module: 0, type: sfp28-25g-lr}, {module: 1, type: qsfp28-100g-sr4}]}
`

// ethtoolDump lays pages out as ethtool -m DEV raw on prints them.
func ethtoolDump(t *testing.T, pages []optics.Page, std string) []byte {
	t.Helper()
	size := map[string]int{optics.SFF8472: 512, optics.SFF8636: 640, optics.CMIS: 256}[std]
	b := make([]byte, size)
	for _, p := range pages {
		off := -1
		switch {
		case std == optics.SFF8472 && p.I2C == optics.AddrA0:
			off = int(p.Offset)
		case std == optics.SFF8472 && p.I2C == optics.AddrA2:
			off = 256 + int(p.Offset)
		case p.Offset == 0 && p.Page == 0:
			off = 0
		case p.Page <= 3 && std == optics.SFF8636, p.Page == 0:
			off = 128 * (int(p.Page) + 1)
		}
		if off >= 0 && off+len(p.Data) <= size {
			copy(b[off:], p.Data)
		}
	}
	return b
}

// A module dump from ethtool decodes offline to what the device read
// shows: identity, monitors, lanes and verdicts, from binary and hex.
func TestModuleFromEthtoolDump(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "mods.yaml")
	if err := os.WriteFile(scen, []byte(moduleFileScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	for port := 1; port <= 2; port++ {
		out, errs, code := cli(t, "", "module", "-d", "emu:"+scen, "--port", fmt.Sprint(port), "--raw", "-o", "json")
		if code > 1 {
			t.Fatalf("port %d: exit %d %s", port, code, errs)
		}
		var dev struct {
			Modules []struct {
				EEPROM   json.RawMessage `json:"eeprom"`
				Verdicts []optics.Verdict
				Raw      struct {
					Pages []struct {
						I2C, Bank, Page, Offset uint8
						Data                    string
					}
				}
			}
		}
		mustJSON(t, out, &dev)
		m := dev.Modules[0]
		var pages []optics.Page
		for _, p := range m.Raw.Pages {
			data, _ := hex.DecodeString(p.Data)
			pages = append(pages, optics.Page{PageAddr: optics.PageAddr{I2C: p.I2C, Bank: p.Bank, Page: p.Page, Offset: p.Offset}, Data: data})
		}
		var std struct{ Standard string }
		json.Unmarshal(m.EEPROM, &std)
		dump := ethtoolDump(t, pages, std.Standard)
		bin := filepath.Join(dir, fmt.Sprintf("port%d.bin", port))
		os.WriteFile(bin, dump, 0o644)
		// ethtool -m DEV hex on: "Offset\t\tValues" then rows of 16 bytes.
		var hx strings.Builder
		hx.WriteString("Offset\t\tValues\n------\t\t------\n")
		for off := 0; off < len(dump); off += 16 {
			fmt.Fprintf(&hx, "0x%04x:\t\t", off)
			for _, c := range dump[off : off+16] {
				fmt.Fprintf(&hx, "%02x ", c)
			}
			hx.WriteString("\n")
		}
		txt := filepath.Join(dir, fmt.Sprintf("port%d.txt", port))
		os.WriteFile(txt, []byte(hx.String()), 0o644)
		for _, f := range []string{bin, txt} {
			fout, ferrs, fcode := cli(t, "", "module", "--file", f, "-o", "json")
			if fcode != code {
				t.Errorf("%s: exit %d, the device read %d: %s", f, fcode, code, ferrs)
			}
			var got struct {
				Modules []struct {
					EEPROM   json.RawMessage `json:"eeprom"`
					Verdicts []optics.Verdict
				}
			}
			mustJSON(t, fout, &got)
			var a, b map[string]any
			json.Unmarshal(m.EEPROM, &a)
			json.Unmarshal(got.Modules[0].EEPROM, &b)
			if d := cmp.Diff(a, b); d != "" {
				t.Errorf("%s (%s): decode differs from the device read (-device +file):\n%s", f, std.Standard, d)
			}
			if len(got.Modules[0].Verdicts) != len(m.Verdicts) {
				t.Errorf("%s: %d verdicts, the device read %d", f, len(got.Modules[0].Verdicts), len(m.Verdicts))
			}
		}
	}
	_, errs, code := cli(t, "", "module", "--file", filepath.Join(dir, "mods.yaml"))
	if code != 2 {
		t.Errorf("a YAML file as a dump: exit %d %s", code, errs)
	}
	_, errs, code = cli(t, "", "module", "--file", filepath.Join(dir, "port1.bin"), "-d", "emu")
	if code != 2 || !strings.Contains(errs, "leave out -d") {
		t.Errorf("--file with -d: exit %d %s", code, errs)
	}
}

// deviceDump reads a port's module on the emulator and lays its pages out
// as ethtool -m DEV raw on does.
func deviceDump(t *testing.T, scen string, port int) []byte {
	t.Helper()
	out, errs, code := cli(t, "", "module", "-d", "emu:"+scen, "--port", fmt.Sprint(port), "--raw", "-o", "json")
	if code > 1 {
		t.Fatalf("port %d: exit %d %s", port, code, errs)
	}
	var dev struct {
		Modules []struct {
			EEPROM struct{ Standard string }
			Raw    struct {
				Pages []struct {
					I2C, Bank, Page, Offset uint8
					Data                    string
				}
			}
		}
	}
	mustJSON(t, out, &dev)
	var pages []optics.Page
	for _, p := range dev.Modules[0].Raw.Pages {
		data, _ := hex.DecodeString(p.Data)
		pages = append(pages, optics.Page{PageAddr: optics.PageAddr{I2C: p.I2C, Bank: p.Bank, Page: p.Page, Offset: p.Offset}, Data: data})
	}
	return ethtoolDump(t, pages, dev.Modules[0].EEPROM.Standard)
}

// hexdumpC prints b as hexdump -C does, from offset from, folding repeated
// lines into '*'.
func hexdumpC(b []byte, from int) string {
	var s strings.Builder
	var prev []byte
	star := false
	for off := from; off < len(b); off += 16 {
		row := b[off:min(off+16, len(b))]
		if prev != nil && string(row) == string(prev) && len(row) == 16 {
			if !star {
				s.WriteString("*\n")
				star = true
			}
			continue
		}
		star = false
		fmt.Fprintf(&s, "%08x ", off)
		for i, c := range row {
			if i == 8 {
				s.WriteString(" ")
			}
			fmt.Fprintf(&s, " %02x", c)
		}
		s.WriteString("  |................|\n")
		prev = row
	}
	fmt.Fprintf(&s, "%08x\n", len(b))
	return s.String()
}

// Inputs that cannot be judged get an input verdict and exit 2, never a
// hardware verdict: a hexdump -C that starts at 0xb0 (with '*' lines),
// random bytes, a register dump. A dump whose monitors read 0xFFFF gets
// the I2C-hang verdict the device read gives.
func TestModuleFileInputVerdicts(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "mods.yaml")
	if err := os.WriteFile(scen, []byte(moduleFileScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	qsfp := deviceDump(t, scen, 2)
	rnd := make([]byte, 256)
	for i := range rnd {
		rnd[i] = byte(i*131 + 7)
	}
	rnd[0] = 0x42
	hung := append([]byte{}, qsfp...)
	// SFF-8636 lower page: temperature 22..23, supply voltage 26..27, and
	// the lanes' monitors 34..57 all ones, as a hung bus reads them.
	for i := 22; i < 58; i++ {
		hung[i] = 0xff
	}
	cases := []struct {
		name, text string
		bin        []byte
		code       int
		verdict    string
		says       string
	}{
		{name: "from-0xb0", text: hexdumpC(qsfp[:256], 0xb0), code: 2, verdict: "partial_dump", says: "covers bytes 0xb0–0xff only: identifier and vendor fields missing"},
		{name: "cut", text: hexdumpC(qsfp[:160], 0), code: 2, verdict: "partial_dump", says: "vendor fields (bytes 0x94–0xc3) missing"},
		{name: "random", bin: rnd, code: 2, verdict: "not_a_module", says: "byte 0 is 0x42"},
		{name: "register", text: "Field Name | Data\n======\nlocal_port | 0x00000001\nstatus | 0x00000000\n", code: 2, verdict: "not_a_module", says: "register fields"},
		{name: "hung", bin: hung, code: 1, verdict: "i2c_hang", says: "read 0xFFFF"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := filepath.Join(dir, c.name)
			data := c.bin
			if data == nil {
				data = []byte(c.text)
			}
			os.WriteFile(f, data, 0o644)
			for _, mode := range []string{"table", "json"} {
				out, errs, code := cli(t, "", "module", "--file", f, "-o", mode)
				if code != c.code {
					t.Errorf("%s: exit %d, want %d\n%s%s", mode, code, c.code, out, errs)
				}
				if mode == "table" {
					if !strings.Contains(out, c.says) {
						t.Errorf("the report does not say %q:\n%s", c.says, out)
					}
					continue
				}
				var got struct {
					Modules []struct{ Verdicts []optics.Verdict }
				}
				mustJSON(t, out, &got)
				var codes []string
				for _, v := range got.Modules[0].Verdicts {
					codes = append(codes, v.Code+"/"+v.Category)
				}
				want := c.verdict + "/input"
				if c.verdict == "i2c_hang" {
					want = "i2c_hang/hardware"
				}
				if d := cmp.Diff([]string{want}, codes); d != "" {
					t.Errorf("verdicts (-want +got):\n%s", d)
				}
			}
		})
	}
}

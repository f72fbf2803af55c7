package conformance

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mlxlinkASCII is a text field the way mlxlink 4.21 prints it
// (MlxlinkRegParser::getAscii): every NUL and space dropped, even inside,
// and N/A when nothing is left.
func mlxlinkASCII(s string) string {
	s = strings.NewReplacer(" ", "", "\x00", "").Replace(s)
	if s == "" {
		return "N/A"
	}
	return s
}

// The module fields mstlink prints as text, and their PDDR page 3 leaves.
var moduleText = []struct{ label, leaf string }{
	{"Vendor Name", "vendor_name"},
	{"Vendor Part Number", "vendor_pn"},
	{"Vendor Serial Number", "vendor_sn"},
}

const pddrModule = "page_data.pddr_module_info_ext."

// TestMstlinkModuleVsPDDR: `mstlink -m` takes the module's information from
// PDDR page 3 (module info) and PMAOS; cxray reads the same page. mlxlink
// shows the module fields only when cable_type is neither unidentified (0)
// nor unplugged (4); either way both readings must say the same.
func TestMstlinkModuleVsPDDR(t *testing.T) {
	need(t, "mstlink")
	const sc = "cx7.yaml"
	bdfs := scenarios[0].bdfs
	var script strings.Builder
	for i, bdf := range bdfs {
		fmt.Fprintf(&script, "run linkm%d mstlink -d %s -m --json\n", i, bdf)
		fmt.Fprintf(&script, "run pddr3_%d cxray reg get PDDR -d %s --index page_select=3 -o json --raw\n", i, bdf)
	}
	s := emuRun(t, sc, script.String(), 2*time.Minute)
	for i, bdf := range bdfs {
		t.Run(strings.ReplaceAll(bdf, ":", "_"), func(t *testing.T) {
			link := s.ok(t, fmt.Sprintf("linkm%d", i))
			out, err := ParseMstlinkJSON([]byte(link.stdout))
			if err != nil {
				t.Fatal(err)
			}
			mod, ok := out["Module Info"]
			if !ok {
				t.Fatalf("mstlink -m printed no Module Info:\n%s", link.stdout)
			}
			var doc map[string]any
			cxrayJSON(t, s.ok(t, fmt.Sprintf("pddr3_%d", i)), &doc)
			page, _ := jget(doc, "fields")
			cableType := juint(t, page, pddrModule+"cable_type")
			valid := cableType != 0 && cableType != 4
			for _, f := range moduleText {
				want := "N/A"
				if valid {
					v, ok := jget(page, pddrModule+f.leaf)
					if !ok {
						t.Fatalf("cxray's PDDR page 3 has no %s", f.leaf)
					}
					txt, isText := v.(string)
					if !isText {
						txt = "" // not ASCII: mlxlink would print bytes; not expected from a module
					}
					want = mlxlinkASCII(txt)
				}
				if got := mod[f.label].Text; got != want {
					t.Errorf("%s: mstlink -m %q, cxray's PDDR page 3 %s gives %q (cable_type %d)", f.label, got, f.leaf, want, cableType)
				}
			}
			if !valid {
				for label, v := range mod {
					if v.Text != "" && v.Text != "N/A" {
						t.Errorf("cxray reads cable_type %d (no module info) but mstlink -m shows %s = %q", cableType, label, v.Text)
					}
				}
				// An empty page 3 leaves mstlink nothing to compare: our only
				// independent oracle here, so that is a failure, not a skip.
				t.Errorf("the emulated module reports cable_type %d in PDDR page 3, so mstlink -m shows N/A everywhere: the module's values cannot be compared", cableType)
			}
		})
	}
}

// TestMstlinkModuleVsCxrayModule: `mstlink -m` and `cxray module` on the
// same emulated modules. mstlink 4.21 prints the firmware's view (PDDR
// page 3, dBm as integers, module_info_ext 0); cxray module shows that view
// next to the EEPROM's (MCIA), and the firmware view is compared here, each
// value converted the way mlxlink converts the raw register value
// (mlxlink/modules/mlxlink_commander.cpp): temperature raw/256 truncated, voltage
// raw/10 mV, bias raw/500 mA, powers in dBm rounded to integers, with the
// alarm thresholds in brackets; vendor text with its spaces dropped.
func TestMstlinkModuleVsCxrayModule(t *testing.T) {
	need(t, "mstlink")
	if !hasCommand(t, "module") {
		t.Fatal("cxray module does not exist in this build")
	}
	bdfs := scenarios[0].bdfs
	var script strings.Builder
	for i, bdf := range bdfs {
		fmt.Fprintf(&script, "run linkm%d mstlink -d %s -m --json\nrun module%d cxray module -d %s -o json\n", i, bdf, i, bdf)
	}
	s := emuRun(t, "cx7.yaml", script.String(), 2*time.Minute)
	for i, bdf := range bdfs {
		t.Run(strings.ReplaceAll(bdf, ":", "_"), func(t *testing.T) {
			out, err := ParseMstlinkJSON([]byte(s.ok(t, fmt.Sprintf("linkm%d", i)).stdout))
			if err != nil {
				t.Fatal(err)
			}
			mod := s.step(t, fmt.Sprintf("module%d", i))
			if mod.rc != 0 && mod.rc != 1 { // 1: a verdict (a module error, say) was raised
				t.Fatalf("cxray module failed:\n%s", mod)
			}
			var doc any
			cxrayJSON(t, mod, &doc)
			fwView, ok := jget(doc, "modules[0].firmware")
			if !ok {
				t.Fatalf("cxray module -o json has no firmware view (modules[0].firmware):\n%s", mod.stdout)
			}
			n := compareModule(t, out["Module Info"], fwView)
			if n < 12 {
				t.Errorf("only %d of mstlink's module values compared", n)
			}
		})
	}
}

// compareModule compares mstlink's Module Info with cxray's firmware view
// of the module and returns how many values it compared.
func compareModule(t *testing.T, ml map[string]MstlinkValue, fv any) int {
	t.Helper()
	n := 0
	str := func(path string) string {
		v, _ := jget(fv, path)
		s, _ := v.(string)
		return s
	}
	num := func(path string) float64 {
		v, ok := jget(fv, path)
		if !ok {
			t.Errorf("cxray's firmware view has no %s", path)
			return math.NaN()
		}
		f, err := strconv.ParseFloat(fmt.Sprint(v), 64)
		if err != nil {
			t.Errorf("cxray's %s: %v", path, err)
		}
		return f
	}
	text := func(label, want string) {
		t.Helper()
		n++
		if got := ml[label].Text; got != want {
			t.Errorf("%s: mstlink -m %q, cxray module gives %q", label, got, want)
		} else {
			t.Logf("%-24s %q", label, got)
		}
	}
	for _, f := range []struct{ label, path string }{
		{"Vendor Name", "vendor.name"}, {"Vendor Part Number", "vendor.part_number"},
		{"Vendor Serial Number", "vendor.serial_number"}, {"Rev", "vendor.revision"},
	} {
		text(f.label, mlxlinkASCII(str(f.path)))
	}
	text("Wavelength [nm]", fmt.Sprint(num("media.wavelength_nm")))
	ddm := "No"
	if v, _ := jget(fv, "ddm"); v == true {
		ddm = "Yes"
	}
	text("Digital Diagnostic Monitoring", ddm)
	// mlxlink prints the module firmware as major.minor.build.
	if got, fw := ml["FW Version"].Text, str("firmware_version"); !strings.HasPrefix(got+".", fw+".") {
		t.Errorf("FW Version: mstlink -m %q, cxray module %q", got, fw)
	} else {
		n++
	}
	if got, want := ml["Power Class"].Text, fmt.Sprintf("%.1f W max", num("max_power_w")); got != want {
		t.Errorf("Power Class: mstlink -m %q, cxray module's max power gives %q", got, want)
	} else {
		n++
	}
	// mlxlink names the identifier QSFP_CMIS; cxray says which name the
	// firmware gave it ("... (firmware: QSFP CMIS)").
	if id := strings.ReplaceAll(ml["Identifier"].Text, "_", " "); !strings.Contains(str("identifier.name"), id) {
		t.Errorf("Identifier: mstlink -m %q, cxray module %q", ml["Identifier"].Text, str("identifier.name"))
	} else {
		n++
	}

	// Diagnostics: "v1,v2,... [low..high]".
	lanes := 0
	if l, ok := jget(fv, "lanes"); ok {
		lanes = len(l.([]any))
	}
	type conv struct {
		label, quantity, key string
		value                func(raw float64) float64
		tol                  float64
	}
	trunc := func(x float64) float64 { return math.Trunc(x) }
	for _, c := range []conv{
		{"Temperature [C]", "temperature", "", func(r float64) float64 { return trunc(r / 256) }, 0},
		{"Voltage [mV]", "voltage", "", func(r float64) float64 { return r / 10 }, 0.051},
		{"Bias Current [mA]", "tx_bias", "ma", func(r float64) float64 { return r / 500 }, 0.0011},
		{"Tx Power Current [dBm]", "tx_power", "dbm", nil, 0.5},
		{"Rx Power Current [dBm]", "rx_power", "dbm", nil, 0.5},
	} {
		vals, lo, hi, err := parseDDM(ml[c.label].Text)
		if err != nil {
			t.Errorf("%s: %v", c.label, err)
			continue
		}
		var want []float64
		if c.key == "" { // module-wide: raw in the firmware's units
			want = []float64{c.value(num(c.quantity + ".raw"))}
		} else {
			for l := 0; l < lanes; l++ {
				if c.value != nil {
					want = append(want, c.value(num(fmt.Sprintf("lanes[%d].%s.raw", l, c.quantity))))
				} else {
					want = append(want, num(fmt.Sprintf("lanes[%d].%s.%s", l, c.quantity, c.key)))
				}
			}
		}
		th := func(which string) float64 {
			if c.value != nil {
				return c.value(num("thresholds." + c.quantity + "." + which + ".raw"))
			}
			return num("thresholds." + c.quantity + "." + which + "." + c.key)
		}
		want = append(want, th("low_alarm"), th("high_alarm"))
		got := append(vals, lo, hi)
		if len(got) != len(want) {
			t.Errorf("%s: mstlink -m shows %d values, cxray module %d lanes", c.label, len(vals), lanes)
			continue
		}
		for k := range got {
			if math.Abs(got[k]-want[k]) > c.tol+1e-9 {
				t.Errorf("%s: mstlink -m %q, cxray module's firmware view gives %v (value %d)", c.label, ml[c.label].Text, want, k)
				break
			}
		}
		n++
		t.Logf("%-24s %q = %v", c.label, ml[c.label].Text, want)
	}
	return n
}

// parseDDM reads mstlink's "v1,v2 [low..high]".
func parseDDM(s string) (vals []float64, lo, hi float64, err error) {
	v, rng, ok := strings.Cut(s, " [")
	if !ok || !strings.HasSuffix(rng, "]") {
		return nil, 0, 0, fmt.Errorf("%q is not `values [low..high]`", s)
	}
	l, h, ok := strings.Cut(strings.TrimSuffix(rng, "]"), "..")
	if !ok {
		return nil, 0, 0, fmt.Errorf("%q: no low..high", s)
	}
	if lo, err = strconv.ParseFloat(l, 64); err != nil {
		return nil, 0, 0, err
	}
	if hi, err = strconv.ParseFloat(h, 64); err != nil {
		return nil, 0, 0, err
	}
	for _, x := range strings.Split(v, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("%q: %v", s, err)
		}
		vals = append(vals, f)
	}
	return vals, lo, hi, nil
}

// mstconfig q's parameter lines: 9 spaces, or '*' and 8 spaces when the
// value differs from the default (only with -e), the name, then Next Boot,
// or with -e Default, Current and Next Boot.
var (
	mstconfigParam  = regexp.MustCompile(`^ {9}(\S+)\s+(\S+)\s*$`)
	mstconfigParamE = regexp.MustCompile(`^([* ]) {8}(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$`)
)

type nvParam struct {
	modified             bool
	deflt, current, next string
}

// parseMstconfigQuery reads `mstconfig -d DEV [-e] q`; without -e only
// next is set.
func parseMstconfigQuery(out string, e bool) map[string]nvParam {
	m := map[string]nvParam{}
	inConf := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "Configurations:") {
			inConf = true
			continue
		}
		if !inConf {
			continue
		}
		if e {
			if p := mstconfigParamE.FindStringSubmatch(line); p != nil {
				m[p[2]] = nvParam{p[1] == "*", p[3], p[4], p[5]}
			}
		} else if p := mstconfigParam.FindStringSubmatch(line); p != nil {
			m[p[1]] = nvParam{next: p[2]}
		}
	}
	return m
}

// The parameters compared with -e (default, current, next boot and the
// modified mark): those the scenario's NV profile changes, and a few more.
var configDetail = []string{"SRIOV_EN", "NUM_OF_VFS", "NUM_OF_PF", "LINK_TYPE_P1", "LINK_TYPE_P2", "LOG_TX_PSN_WINDOW"}

// TestMstconfigVsConfigQuery: `mstconfig q` and `cxray config query -e` on
// the same emulated NV store list the same parameters with the same Next
// Boot values; for a handful (mstconfig -e takes minutes for all of them
// through FUSE), Default, Current and the "modified" mark agree too.
func TestMstconfigVsConfigQuery(t *testing.T) {
	need(t, "mstconfig")
	if !hasCommand(t, "config") {
		t.Fatal("cxray config does not exist in this build")
	}
	bdf := scenarios[0].bdfs[0]
	script := fmt.Sprintf("TMO=120 run q mstconfig -d %s q\nTMO=120 run qe mstconfig -d %s -e q %s\nrun c cxray config query -e -d %s -o json\nrun ct cxray config q -d %s\n",
		bdf, bdf, strings.Join(configDetail, " "), bdf, bdf)
	s := emuRun(t, "cx7.yaml", script, 4*time.Minute)
	peer := parseMstconfigQuery(s.ok(t, "q").stdout, false)
	if len(peer) == 0 {
		t.Fatal("mstconfig q lists no parameters: the emulator answers no NV store, so nothing can be compared")
	}
	detail := parseMstconfigQuery(s.ok(t, "qe").stdout, true)
	if len(detail) != len(configDetail) {
		t.Errorf("mstconfig -e q %s listed %d parameters:\n%s", strings.Join(configDetail, " "), len(detail), s.ok(t, "qe").stdout)
	}
	var doc struct {
		Parameters []struct {
			Name                   string
			Modified               bool
			Default, Current, Next struct{ Text string }
		}
	}
	cxrayJSON(t, s.ok(t, "c"), &doc)
	ours := map[string]nvParam{}
	for _, p := range doc.Parameters {
		ours[p.Name] = nvParam{p.Modified, p.Default.Text, p.Current.Text, p.Next.Text}
	}
	for name, pv := range peer {
		ov, ok := ours[name]
		switch {
		case !ok:
			t.Errorf("%s: mstconfig shows %q, cxray config query does not list it", name, pv.next)
		case ov.next != pv.next:
			t.Errorf("%s: Next Boot: mstconfig %q, cxray %q", name, pv.next, ov.next)
		}
	}
	for name := range ours {
		if _, ok := peer[name]; !ok {
			t.Errorf("%s: cxray config query lists it, mstconfig q does not", name)
		}
	}
	for name, pv := range detail {
		if ov := ours[name]; ov != pv {
			t.Errorf("%s: mstconfig -e %+v, cxray %+v", name, pv, ov)
		} else {
			t.Logf("%-20s default %-10s current %-10s next %-10s modified %v: both", name, pv.deflt, pv.current, pv.next, pv.modified)
		}
	}
	t.Logf("%d parameters compared (Next Boot), %d in detail", len(peer), len(detail))
	// The header mlxconfig users read first: the same device type, name
	// and description.
	theirs, mine := headerLines(s.ok(t, "q").stdout), headerLines(s.ok(t, "ct").stdout)
	for _, k := range []string{"Device type", "Name", "Description"} {
		if theirs[k] == "" || theirs[k] != mine[k] {
			t.Errorf("%s: mstconfig %q, cxray %q", k, theirs[k], mine[k])
		}
	}
}

// headerLines reads "Key:   value" lines of a query header.
func headerLines(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && !strings.HasPrefix(k, " ") {
			if _, seen := m[k]; !seen {
				m[k] = strings.TrimSpace(v)
			}
		}
	}
	return m
}

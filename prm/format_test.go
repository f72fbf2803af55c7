package prm_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

// Every database tells the same formats: the ADBs from their descriptions,
// the built-in one from the facts our generator derived from them.
func TestFormatsFromTheDatabase(t *testing.T) {
	want := map[string]prm.Format{
		"MGIR fw_info.year":  prm.FormatBCD,
		"MGIR fw_info.month": prm.FormatBCD,
		"MGIR fw_info.day":   prm.FormatBCD,
		"MGIR fw_info.hour":  prm.FormatBCD,
		"MGIR fw_info.major": prm.FormatNone,
		"MTMP temperature":   prm.FormatSigned,
		"MTMP sensor_index":  prm.FormatNone,
		"PDDR page_data.pddr_module_info_ext.vendor_rev":              prm.FormatText,
		"PDDR page_data.pddr_module_info_ext.date_code":               prm.FormatText,
		"PDDR page_data.pddr_module_info_ext.vendor_name":             prm.FormatText,
		"PDDR page_data.pddr_module_info_ext.rx_power_low_th":         prm.FormatSigned,
		"PDDR page_data.pddr_troubleshooting_page_ext.status_message": prm.FormatText,
	}
	for _, db := range databases(t) {
		for key, f := range want {
			reg, path, _ := strings.Cut(key, " ")
			r, err := db.Register(reg)
			if err != nil {
				t.Fatal(err)
			}
			p, err := db.RegisterPlan(r)
			if err != nil {
				t.Fatal(err)
			}
			tg, err := p.Resolve(path, p.NewBuffer())
			if err != nil {
				if strings.Contains(err.Error(), "no field") {
					continue // not in this revision
				}
				t.Fatalf("%s %s: %v", db.Revision, key, err)
			}
			if db.FieldDescr(tg.Step.Field) == "" && db.HasDescriptions {
				continue // this revision does not describe it: the database cannot tell
			}
			if got := tg.Step.Field.Format; got != f {
				t.Errorf("%s (%s) %s: format %q, want %q", db.Revision, db.Source, key, got, f)
			}
		}
	}
}

func decodeWith(t *testing.T, reg string, as ...string) *prm.Decoded {
	t.Helper()
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	r, err := db.Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.RegisterPlan(r)
	if err != nil {
		t.Fatal(err)
	}
	buf := p.NewBuffer()
	a, err := prm.ParseAssignments(as)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Encode(buf, a); err != nil {
		t.Fatal(err)
	}
	d, err := p.Decode(buf)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func rowText(t *testing.T, d *prm.Decoded) map[string]string {
	out := map[string]string{}
	for _, r := range d.Rows() {
		out[r.Path] = r.Text
	}
	return out
}

func jsonOf(t *testing.T, d *prm.Decoded, raw bool) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(d.AppendJSON(nil, prm.JSONOptions{Raw: raw}), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// MGIR's build date and time are BCD: 2023-10-05 12:34, in tables and
// JSON; --raw gives the numbers.
func TestBCDDate(t *testing.T) {
	d := decodeWith(t, "MGIR", "fw_info.year=0x2023", "fw_info.month=0x10", "fw_info.day=5", "fw_info.hour=0x1234")
	rows := rowText(t, d)
	for path, want := range map[string]string{
		"fw_info.year": "2023 (0x2023)", "fw_info.month": "10 (0x10)", "fw_info.day": "5",
		"fw_info.hour": "12:34 (0x1234)", "fw_info.date": "2023-10-05 (0x10052023)",
	} {
		if rows[path] != want {
			t.Errorf("%s: %q, want %q", path, rows[path], want)
		}
	}
	fw := jsonOf(t, d, false)["fw_info"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"year": 2023.0, "month": 10.0, "day": 5.0, "hour": "12:34", "date": "2023-10-05"},
		map[string]any{"year": fw["year"], "month": fw["month"], "day": fw["day"], "hour": fw["hour"], "date": fw["date"]}); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
	raw := jsonOf(t, d, true)["fw_info"].(map[string]any)
	if raw["year"] != float64(0x2023) || raw["hour"] != float64(0x1234) || raw["date"] != float64(0x10052023) {
		t.Errorf("raw JSON: year %v hour %v date %v", raw["year"], raw["hour"], raw["date"])
	}
	v, _ := d.Get("fw_info.year")
	if s := prm.FormatRaw(v); s != "0x2023 (8227)" {
		t.Errorf("raw year: %q", s)
	}
	// The joined date encodes back.
	d2 := decodeWith(t, "MGIR", "fw_info.date=2024-02-29")
	if r := rowText(t, d2); r["fw_info.year"] != "2024 (0x2024)" || r["fw_info.month"] != "2" || r["fw_info.day"] != "29 (0x29)" {
		t.Errorf("date=2024-02-29: %v %v %v", r["fw_info.year"], r["fw_info.month"], r["fw_info.day"])
	}
	// Not BCD (a nibble above 9): the number, not a wrong date.
	d3 := decodeWith(t, "MGIR", "fw_info.year=0x20a3", "fw_info.month=1", "fw_info.day=1")
	if r := rowText(t, d3); r["fw_info.year"] != "0x20a3 (8355)" || !strings.HasPrefix(r["fw_info.date"], "0x") {
		t.Errorf("not BCD: %q %q", r["fw_info.year"], r["fw_info.date"])
	}
}

func TestTextAndSigned(t *testing.T) {
	d := decodeWith(t, "PDDR", "page_select=Module_info_page",
		"page_data.pddr_module_info_ext.vendor_rev=0x4132",
		"page_data.pddr_module_info_ext.date_code=0x3234303131373030",
		"page_data.pddr_module_info_ext.vendor_name[0]=0x4e564944", "page_data.pddr_module_info_ext.vendor_name[1]=0x49412020",
		"page_data.pddr_module_info_ext.rx_power_low_th=-10",
		"page_data.pddr_module_info_ext.rx_power_high_th=6")
	rows := rowText(t, d)
	for path, want := range map[string]string{
		"page_data.pddr_module_info_ext.vendor_rev":       `"A2" (0x00004132)`,
		"page_data.pddr_module_info_ext.date_code":        `"24011700" (0x3234303131373030)`,
		"page_data.pddr_module_info_ext.vendor_name":      `"NVIDIA  "`, // padding kept: it reads back
		"page_data.pddr_module_info_ext.rx_power_low_th":  "0xfff6 (-10)",
		"page_data.pddr_module_info_ext.rx_power_high_th": "6",
	} {
		if rows[path] != want {
			t.Errorf("%s: %q, want %q", path, rows[path], want)
		}
	}
	m := jsonOf(t, d, false)["page_data"].(map[string]any)["pddr_module_info_ext"].(map[string]any)
	if m["vendor_rev"] != "A2" || m["date_code"] != "24011700" || m["vendor_name"] != "NVIDIA" || m["rx_power_low_th"] != -10.0 {
		t.Errorf("JSON: %v %v %q %v", m["vendor_rev"], m["date_code"], m["vendor_name"], m["rx_power_low_th"])
	}
	// PDDR page 1's status message is text, not 59 dwords.
	d = decodeWith(t, "PDDR", "page_select=Troubleshooting_info_page", "page_data.pddr_troubleshooting_page_ext.status_message=Link is up")
	if r := rowText(t, d); r["page_data.pddr_troubleshooting_page_ext.status_message"] != `"Link is up"` {
		t.Errorf("status_message: %q", r["page_data.pddr_troubleshooting_page_ext.status_message"])
	}
	// MTMP temperature, "2's complement" in the PRM.
	d = decodeWith(t, "MTMP", "temperature=-26")
	if r := rowText(t, d); r["temperature"] != "0xffe6 (-26)" {
		t.Errorf("temperature: %q", r["temperature"])
	}
	if jsonOf(t, d, false)["temperature"] != -26.0 || jsonOf(t, d, true)["temperature"] != float64(0xffe6) {
		t.Error("temperature JSON")
	}
}

// PGUID's GUIDs are joined as cxray status prints them; JSON shows the
// GUID in the array's place (no two keys of one name).
func TestGUIDs(t *testing.T) {
	d := decodeWith(t, "PGUID", "node_guid[2]=0xb83fd203", "node_guid[3]=0x00d20a20")
	if r := rowText(t, d); r["node_guid"] != "b83f:d203:00d2:0a20" || r["node_guid[2]"] != "0xb83fd203 (3091190275)" {
		t.Errorf("rows: %q %q", r["node_guid"], r["node_guid[2]"])
	}
	js := string(d.AppendJSON(nil, prm.JSONOptions{}))
	if strings.Count(js, `"node_guid"`) != 1 || !strings.Contains(js, `"node_guid":"b83f:d203:00d2:0a20"`) {
		t.Errorf("JSON: %s", js)
	}
	// The device's identity code still finds the array by name.
	v, err := d.Get("node_guid")
	if err != nil || v.Kind() != prm.KindArray || v.Len() != 4 {
		t.Errorf("Get(node_guid): %v %v", v.Kind(), err)
	}
	d2 := decodeWith(t, "PGUID", "node_guid=b83f:d203:00d2:0a21")
	if r := rowText(t, d2); r["node_guid[3]"] != "0x00d20a21 (13765153)" {
		t.Errorf("node_guid=...: %q", r["node_guid[3]"])
	}
}

func TestDetectFormat(t *testing.T) {
	// Our own phrasings of what the PRM says.
	for descr, want := range map[string]prm.Format{
		"":                                       prm.FormatNone,
		"Part number, an ASCII string":           prm.FormatText,
		"Minutes, e.g. 12:30 is coded as 0x1230": prm.FormatBCD,
		"Kept in BCD":                            prm.FormatBCD,
		"Offset, in two's complement":            prm.FormatSigned,
		"Low alarm threshold in dBm.":            prm.FormatSigned,
		"Power in dBm/uW by the mode field":      prm.FormatNone, // decided by another field: prm/units
		"Set when the firmware is signed":        prm.FormatNone,
	} {
		if got := prm.DetectFormat(descr); got != want {
			t.Errorf("%q: %q, want %q", descr, got, want)
		}
	}
}

func TestCompositeValueText(t *testing.T) {
	d := decodeWith(t, "MGIR")
	v, err := d.Get("fw_info")
	if err != nil {
		t.Fatal(err)
	}
	if s := prm.FormatValue(v); strings.HasPrefix(s, "0x") {
		t.Errorf("a structure formats as %q", s)
	}
	if p := v.Path(); p != "fw_info" {
		t.Errorf("Path: %q", p)
	}
	if v, _ := d.Get("FW_INFO.PSID"); v.Path() != "fw_info.psid" {
		t.Errorf("Path of FW_INFO.PSID: %q", v.Path())
	}
}

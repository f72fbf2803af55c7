package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

// The fixtures are outputs of mstreg 4.21 and cxray for the scenario
// testdata/cx7.yaml (captured with `cxray emu run`); the comparison logic is
// tested on them without a device.

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func plan(t *testing.T, reg string) *prm.Plan {
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
	return p
}

func cxrayFields(t *testing.T, js string) map[string]any {
	t.Helper()
	var out struct {
		Fields map[string]any `json:"fields"`
	}
	if err := DecodeJSON([]byte(js), &out); err != nil || out.Fields == nil {
		t.Fatalf("cxray JSON: %v", err)
	}
	return out.Fields
}

func compareFixture(t *testing.T, reg, base, show string, edit func(string) string) *RegComparison {
	t.Helper()
	get := fixture(t, base+".get")
	if edit != nil {
		get = edit(get)
	}
	vals, err := ParseMstregGet(get)
	if err != nil {
		t.Fatal(err)
	}
	layout, err := ParseMstregShowReg(fixture(t, show))
	if err != nil {
		t.Fatal(err)
	}
	c, err := CompareRegister(reg, plan(t, reg), vals, layout, cxrayFields(t, fixture(t, base+".json")))
	if err != nil {
		t.Fatal(err)
	}
	t.Log(c.Report())
	return c
}

func TestCompareFixturesAgree(t *testing.T) {
	for _, c := range []struct {
		reg, base, show string
		minCompared     int
		notShown        bool
	}{
		{"MGIR", "mgir", "mgir.show", 70, false},
		{"PDDR", "pddr0", "pddr.show", 29, true}, // every other page is a union member cxray does not show
		{"PMLP", "pmlp", "pmlp.show", 37, false},
	} {
		r := compareFixture(t, c.reg, c.base, c.show, nil)
		if !r.OK() || r.Compared < c.minCompared {
			t.Errorf("%s: want agreement on at least %d leaves:\n%s", c.reg, c.minCompared, r.Report())
		}
		if c.notShown != (len(r.NotShown) > 0) {
			t.Errorf("%s: %d rows not shown by cxray", c.reg, len(r.NotShown))
		}
	}
}

// A changed value, a changed PSID byte and a changed PSID padding byte are
// each caught, with the path cxray prints them at.
func TestCompareFindsMismatches(t *testing.T) {
	for _, c := range []struct {
		old, new, path string
	}{
		{"extended_sub_minor              | 0x000007d0", "extended_sub_minor              | 0x000007d1", "fw_info.extended_sub_minor"},
		{"psid[12]                        | 0x00000039", "psid[12]                        | 0x00000038", "fw_info.psid[12]"},
		{"psid[15]                        | 0x00000000", "psid[15]                        | 0x00000041", "fw_info.psid[15]"},
		{"manufacturing_base_mac_31_0     | 0xd2a1b2c0", "manufacturing_base_mac_31_0     | 0xd2a1b2c1", "hw_info.manufacturing_base_mac_31_0"},
	} {
		r := compareFixture(t, "MGIR", "mgir", "mgir.show", func(s string) string {
			if !strings.Contains(s, c.old) {
				t.Fatalf("fixture lacks %q", c.old)
			}
			return strings.Replace(s, c.old, c.new, 1)
		})
		if len(r.Mismatches) != 1 || r.Mismatches[0].Path != c.path {
			t.Errorf("%s: want one mismatch at %s, got %v", c.new, c.path, r.Mismatches)
		}
	}
	// PSID padding may be a NUL or a space: cxray drops both.
	r := compareFixture(t, "MGIR", "mgir", "mgir.show", func(s string) string {
		return strings.Replace(s, "psid[14]                        | 0x00000000", "psid[14]                        | 0x00000020", 1)
	})
	if !r.OK() {
		t.Errorf("space padding: %v", r.Mismatches)
	}
}

// A row at a place cxray's layout has nothing of that name is a layout
// problem, not silently skipped.
func TestCompareLayoutProblems(t *testing.T) {
	vals, _ := ParseMstregGet(fixture(t, "mgir.get"))
	layout, _ := ParseMstregShowReg(fixture(t, "mgir.show"))
	layout[0].LSB = 8 // device_id moved
	c, err := CompareRegister("MGIR", plan(t, "MGIR"), vals, layout, cxrayFields(t, fixture(t, "mgir.json")))
	if err != nil {
		t.Fatal(err)
	}
	if c.OK() || len(c.Problems) != 2 { // the moved row, and cxray's device_id left without a row
		t.Errorf("want 2 layout problems:\n%s", c.Report())
	}
	layout[0].LSB = 0
	layout[1].Name = "other"
	if _, err := CompareRegister("MGIR", plan(t, "MGIR"), vals, layout, nil); err == nil {
		t.Error("rows of --get and --show_reg that do not pair up must be an error")
	}
}

func TestParseMstregErrors(t *testing.T) {
	for _, s := range []string{
		"",
		"-E- Failed to send access register: Bad parameter\n",
		"Field Name | Data\n=====\nx | 0x1\n",           // not closed
		"Field Name | Data\n=====\nx | banana\n=====\n", // not a number
		"Field Name | Data\n=====\n=====\n",             // empty
	} {
		if _, err := ParseMstregGet(s); err == nil {
			t.Errorf("%q: want an error", s)
		}
	}
	if _, err := ParseMstregShowReg("a | 0x0 | 30 | 8 | RO\n"); err == nil {
		t.Error("show_reg without rules: want an error")
	}
	if _, err := ParseMstregShowReg("h\n===\na | 0x0 | 30 | 8 | RO\n===\n"); err == nil {
		t.Error("a field crossing its dword: want an error")
	}
}

func TestParseFlintQuery(t *testing.T) {
	q, err := ParseFlintQuery(fixture(t, "flint-q.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for label, want := range map[string]string{
		"FW Version": "28.41.2000", "PSID": "MT_0000000999", "Orig Base MAC": "b83fd2a1b2c0",
		"Base GUID": "N/A", "FW Release Date": "14.3.2024", "Image type": "FS4",
	} {
		if q[label] != want {
			t.Errorf("%s: %q, want %q", label, q[label], want)
		}
	}
	if _, err := ParseFlintQuery("-E- Cannot open Device: 0000:03:00.0. FwInit has failed!\n"); err == nil {
		t.Error("an error message parsed as a query")
	}
	if got := NormalizeHexID("B8:3F:D2:a1:b2:c0"); got != "b83fd2a1b2c0" {
		t.Errorf("NormalizeHexID: %q", got)
	}
}

func TestParseMstlinkJSON(t *testing.T) {
	out, err := ParseMstlinkJSON([]byte(fixture(t, "mstlink-p2.json")))
	if err != nil {
		t.Fatal(err)
	}
	if got := out["Operational Info"]["State"].Text; got != "Disable" {
		t.Errorf("State %q", got)
	}
	v := out["Supported Info"]["Enabled Link Speed (Ext.)"]
	if m, err := v.MaskValue(); err != nil || m != 0x13ff2 || len(v.Values) != 12 || v.Values[0] != "400G_4X" {
		t.Errorf("speeds: %+v %v", v, err)
	}
	if m, err := ParseMstlinkJSON([]byte(fixture(t, "mstlink-m.json"))); err != nil || m["Module Info"]["Vendor Name"].Text != "N/A" {
		t.Errorf("mstlink -m: %v", err)
	}
	if _, err := ParseMstlinkJSON([]byte(`{"result":{"output":{}},"status":{"code":1,"message":"No such device"}}`)); err == nil ||
		!strings.Contains(err.Error(), "No such device") {
		t.Errorf("a failed status: %v", err)
	}
}

func TestParseDDM(t *testing.T) {
	v, lo, hi, err := parseDDM("49.998,54.726 [20..110]")
	if err != nil || len(v) != 2 || v[1] != 54.726 || lo != 20 || hi != 110 {
		t.Errorf("%v %v %v %v", v, lo, hi, err)
	}
	if _, _, _, err := parseDDM("N/A"); err == nil {
		t.Error("N/A parsed as values")
	}
	if mlxlinkASCII("CXRAY EMULATED\x00\x00") != "CXRAYEMULATED" || mlxlinkASCII("  ") != "N/A" {
		t.Error("mlxlinkASCII")
	}
}

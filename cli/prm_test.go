package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"github.com/cxray/cxray/prm/ifc"
)

// cli runs cxray in-process and returns stdout, stderr and the exit code.
func cli(t testing.TB, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
}

type showOut struct {
	Name           string `json:"name"`
	ID             uint32 `json:"id"`
	SizeBytes      int    `json:"size_bytes"`
	SourceRevision string `json:"source_revision"`
	Fields         []struct {
		Path      string            `json:"path"`
		BitOffset int               `json:"bit_offset"`
		BitWidth  int               `json:"bit_width"`
		Access    string            `json:"access"`
		Enum      map[string]uint64 `json:"enum"`
	} `json:"fields"`
}

// The acceptance check of the PRM issue: PMAOS as mlx5_ifc.h lays it out.
func TestShowPMAOSJSON(t *testing.T) {
	out, errs, code := cli(t, "", "--adb", "builtin", "prm", "show", "PMAOS", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var s showOut
	mustJSON(t, out, &s)
	if s.Name != "PMAOS" || s.ID != 0x5012 || s.SizeBytes != 16 || s.SourceRevision != "Rev 0.57" {
		t.Errorf("header %+v", s)
	}
	got := map[string][2]int{}
	for _, f := range s.Fields {
		got[f.Path] = [2]int{f.BitOffset, f.BitWidth}
		switch f.Access {
		case "RO", "RW", "WO", "INDEX", "OP":
		default:
			t.Errorf("%s: access %q", f.Path, f.Access)
		}
		if f.Enum == nil {
			t.Errorf("%s: enum must be an object, even when empty", f.Path)
		}
	}
	if got["module"] != [2]int{8, 8} || got["oper_status"] != [2]int{28, 4} {
		t.Errorf("module %v oper_status %v; want 8/8 and 28/4", got["module"], got["oper_status"])
	}
}

func TestShowTableAndDiagram(t *testing.T) {
	out, _, code := cli(t, "", "--adb", "builtin", "prm", "show", "PAOS")
	if code != 0 {
		t.Fatal(out)
	}
	for _, want := range []string{"PAOS  register 0x5006", "admin_status", "[11:8]", "up=1", "|31          24|", "0x00  |swid"} {
		if !strings.Contains(out, want) {
			t.Errorf("show PAOS lacks %q:\n%s", want, out)
		}
	}
	// A union member drawn on request.
	out, _, code = cli(t, "", "--adb", "builtin", "prm", "show", "PDDR", "--path", "page_data.pddr_module_info_ext", "--brief")
	if code != 0 || !strings.Contains(out, "when page_select == Module_info_page (0x3):") || !strings.Contains(out, "temperature") {
		t.Errorf("PDDR module page:\n%s", out)
	}
}

func TestShowErrors(t *testing.T) {
	_, errs, code := cli(t, "", "--adb", "builtin", "prm", "show", "PMAOZ")
	if code != 2 || !strings.Contains(errs, "did you mean PMAOS") {
		t.Errorf("exit %d, %q", code, errs)
	}
	_, errs, code = cli(t, "", "--adb", "builtin", "prm", "show", "PAOS", "--path", "nothing")
	if code != 2 || !strings.Contains(errs, `no field under "nothing"`) {
		t.Errorf("exit %d, %q", code, errs)
	}
	_, errs, code = cli(t, "", "--adb", "/nonexistent.adb", "prm", "info")
	if code != 2 || !strings.Contains(errs, "--adb FILE") {
		t.Errorf("exit %d, %q", code, errs)
	}
	_, errs, code = cli(t, "", "-o", "yaml", "prm", "info")
	if code != 2 || !strings.Contains(errs, "table or json") {
		t.Errorf("exit %d, %q", code, errs)
	}
	bad := filepath.Join(t.TempDir(), "bad.adb")
	os.WriteFile(bad, []byte("<NodesDefinition>\n<node name=\"x\" size=\"0x4.0\">\n<field name=\"y\" offset=\"0x0.0\" size=\"zz\"/>\n</node>\n</NodesDefinition>\n"), 0o644)
	_, errs, code = cli(t, "", "--adb", bad, "prm", "info")
	if code != 2 || !strings.Contains(errs, "bad.adb:3:") {
		t.Errorf("malformed ADB: exit %d, %q", code, errs)
	}
}

func TestInfoAndList(t *testing.T) {
	out, _, code := cli(t, "", "--adb", "builtin", "prm", "info", "-o", "json")
	var info struct {
		Source    string `json:"source"`
		Revision  string `json:"revision"`
		Registers int    `json:"registers"`
	}
	mustJSON(t, out, &info)
	if code != 0 || info.Source != "built-in" || info.Revision != "Rev 0.57" || info.Registers != 192 {
		t.Errorf("info %+v", info)
	}
	out, _, _ = cli(t, "", "--adb", "builtin", "prm", "list", "--filter", "^pma", "-o", "json")
	var list struct {
		Registers []struct {
			Name string `json:"name"`
			ID   uint32 `json:"id"`
		} `json:"registers"`
	}
	mustJSON(t, out, &list)
	if len(list.Registers) == 0 || list.Registers[0].Name != "PMAOS" || list.Registers[0].ID != 0x5012 {
		t.Errorf("list %+v", list)
	}
	// The revision from $CXRAY_ADB.
	t.Setenv("CXRAY_ADB", filepath.Join(prmhistorytest.Require(t), "hca-ext-rev0.64.adb"))
	out, _, _ = cli(t, "", "prm", "info", "-o", "json")
	mustJSON(t, out, &info)
	if info.Revision != "Rev 0.64" || info.Registers != 206 {
		t.Errorf("CXRAY_ADB ignored: %+v", info)
	}
}

func TestEncodeDecodeCLI(t *testing.T) {
	out, errs, code := cli(t, "", "--adb", "builtin", "prm", "encode", "PAOS", "local_port=1", "admin_status=up", "ase=1", "-o", "json")
	if code != 0 {
		t.Fatal(errs)
	}
	var enc struct {
		Dwords []string `json:"dwords"`
		Hex    string   `json:"hex"`
	}
	mustJSON(t, out, &enc)
	if strings.Join(enc.Dwords, " ") != "0x00010100 0x80000000 0x00000000 0x00000000" {
		t.Errorf("dwords %v", enc.Dwords)
	}
	// The dwords decode back; also from standard input.
	out, errs, code = cli(t, strings.Join(enc.Dwords, "\n"), "--adb", "builtin", "prm", "decode", "PAOS", "-o", "json")
	if code != 0 {
		t.Fatal(errs)
	}
	var dec struct {
		Name   string         `json:"name"`
		Fields map[string]any `json:"fields"`
	}
	mustJSON(t, out, &dec)
	if dec.Fields["admin_status"] != "up" || dec.Fields["local_port"] != float64(1) || dec.Fields["ase"] != float64(1) {
		t.Errorf("decoded %v", dec.Fields)
	}
	out, _, _ = cli(t, "", "--adb", "builtin", "prm", "decode", "PAOS", enc.Hex, "--field", "admin_status")
	if strings.TrimSpace(out) != "up (1)" {
		t.Errorf("--field: %q", out)
	}
	out, _, _ = cli(t, "", "--adb", "builtin", "prm", "decode", "PAOS", enc.Hex, "--raw", "-o", "json")
	if !strings.Contains(out, `"admin_status": 1`) && !strings.Contains(out, `"admin_status":1`) {
		t.Errorf("--raw: %s", out)
	}
}

func TestDecodeErrors(t *testing.T) {
	_, errs, code := cli(t, "", "--adb", "builtin", "prm", "decode", "MGIR", "0x00000218", "0x0")
	if code != 2 || !strings.Contains(errs, "MGIR is 160 bytes (40 dwords); got 8 bytes") || !strings.Contains(errs, "--pad") {
		t.Errorf("short: exit %d %q", code, errs)
	}
	_, _, code = cli(t, "", "--adb", "builtin", "prm", "decode", "MGIR", "0x00000218", "--pad")
	if code != 0 {
		t.Errorf("--pad refused")
	}
	_, errs, code = cli(t, "", "--adb", "builtin", "prm", "decode", "PAOS", strings.Repeat("00", 20))
	if code != 2 || !strings.Contains(errs, "got 20 bytes") {
		t.Errorf("long: exit %d %q", code, errs)
	}
	_, errs, code = cli(t, "", "--adb", "builtin", "prm", "decode", "PAOS", "0xzz")
	if code != 2 || !strings.Contains(errs, "not hex") {
		t.Errorf("bad hex: exit %d %q", code, errs)
	}
	_, errs, code = cli(t, "", "--adb", "builtin", "prm", "encode", "PAOS", "admin_status=9999")
	if code != 2 || !strings.Contains(errs, "does not fit in 4 bits") {
		t.Errorf("too wide: exit %d %q", code, errs)
	}
	_, errs, code = cli(t, "", "--adb", "builtin", "prm", "encode", "PAOS", "bogus=1")
	if code != 2 || !strings.Contains(errs, "valid here: oper_status, admin_status") {
		t.Errorf("unknown field: exit %d %q", code, errs)
	}
}

func TestSearch(t *testing.T) {
	out, _, code := cli(t, "", "--adb", "builtin", "prm", "search", "^temperature$", "-o", "json")
	var res struct {
		Hits []struct {
			Register string `json:"register"`
			Path     string `json:"path"`
			Kind     string `json:"kind"`
		} `json:"hits"`
	}
	mustJSON(t, out, &res)
	found := false
	for _, h := range res.Hits {
		if h.Register == "MTMP" && h.Path == "temperature" && h.Kind == "field" {
			found = true
		}
	}
	if code != 0 || !found {
		t.Errorf("MTMP.temperature not found: %s", out)
	}
	_, _, code = cli(t, "", "--adb", "builtin", "prm", "search", "no_such_thing_anywhere")
	if code != 1 {
		t.Errorf("no match: exit %d, want 1", code)
	}
	// Descriptions are searched when an ADB is present.
	t.Setenv("CXRAY_ADB", filepath.Join(prmhistorytest.Require(t), "hca-ext-rev0.57.adb"))
	out, _, _ = cli(t, "", "prm", "search", "Module state", "-o", "json")
	if !strings.Contains(out, `"kind": "description"`) {
		t.Errorf("descriptions not searched: %.400s", out)
	}
}

// BenchmarkStartupShowPDDR runs the real binary, as a user would.
func BenchmarkStartupShowPDDR(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "cxray")
	// Built as shipped: static, without cgo (README).
	build := exec.Command("go", "build", "-o", bin, "../cmd/cxray")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	for _, src := range []string{"builtin", ""} {
		name := "builtin"
		if src == "" {
			name = "default"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(bin, "prm", "show", "PDDR")
				cmd.Env = append(os.Environ(), "CXRAY_ADB="+src)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
			}
		})
	}
}

// The acceptance check: config_item from Rev 0.57 to Rev 0.64.
func TestDiffConfigItem(t *testing.T) {
	dir := prmhistorytest.Require(t)
	out, errs, code := cli(t, "", "prm", "diff", filepath.Join(dir, "hca-ext-rev0.57.adb"), filepath.Join(dir, "hca-ext-rev0.64.adb"), "config_item", "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d (want 1: differences): %s", code, errs)
	}
	var rep struct {
		Changed []struct {
			Name   string `json:"name"`
			Fields []struct {
				Kind  string `json:"kind"`
				Path  string `json:"path"`
				Parts []struct {
					Path string `json:"path"`
				} `json:"parts"`
			} `json:"fields"`
		} `json:"changed"`
	}
	mustJSON(t, out, &rep)
	if len(rep.Changed) != 1 {
		t.Fatalf("%s", out)
	}
	added := map[string]bool{}
	merged := ""
	for _, f := range rep.Changed[0].Fields {
		switch f.Kind {
		case "added":
			added[f.Path] = true
		case "merged":
			var parts []string
			for _, p := range f.Parts {
				parts = append(parts, p.Path)
			}
			merged = strings.Join(parts, "+") + "->" + f.Path
		}
	}
	if !added["rd_en"] || !added["ovr_en"] || !added["priority"] {
		t.Errorf("added %v, want rd_en, ovr_en, priority", added)
	}
	if merged != "type_class+type_index->type" {
		t.Errorf("merged %q", merged)
	}
	// Built-in against the installed ADB it came from: no change, exit 0.
	_, _, code = cli(t, "", "prm", "diff", "builtin", filepath.Join(dir, "hca-ext-rev0.57.adb"))
	if code != 0 {
		t.Errorf("builtin vs Rev 0.57: exit %d, want 0", code)
	}
}

func TestCrosscheckCLI(t *testing.T) {
	if _, err := ifc.Find(); err != nil {
		t.Skipf("SKIP: %v", err)
	}
	out, errs, code := cli(t, "", "--adb", "builtin", "prm", "crosscheck", "-o", "json")
	var r struct {
		Registers  int  `json:"registers"`
		Matched    int  `json:"matched"`
		Mismatches int  `json:"mismatches"`
		Failed     bool `json:"failed"`
	}
	mustJSON(t, out, &r)
	if code != 0 || r.Failed || r.Mismatches != 0 || r.Registers < 40 || r.Matched < 500 {
		t.Errorf("exit %d %s: %+v", code, errs, r)
	}
}

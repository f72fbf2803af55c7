package ifc

import (
	"github.com/google/go-cmp/cmp"

	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cxray/cxray/prm"
)

// leafMap compiles node with prm and lists its leaves as "path" →
// "bit/width" (MSB-first, "bit/countxwidth" for scalar arrays, "[]" for
// variable ones), so expectations are written the way the header reads.
func leafMap(t *testing.T, h *Header, node string) map[string]string {
	t.Helper()
	db, err := h.DB()
	if err != nil {
		t.Fatalf("DB: %v", err)
	}
	p, err := db.Plan(node)
	if err != nil {
		t.Fatalf("Plan(%s): %v", node, err)
	}
	if err := checkPlan(h, p); err != nil {
		t.Fatalf("round trip: %v", err)
	}
	out := map[string]string{}
	for _, l := range p.Leaves() {
		if l.Joined {
			continue
		}
		v := fmt.Sprintf("0x%x/%d", l.Bit, l.Width)
		switch {
		case l.Variable:
			v = fmt.Sprintf("0x%x/[]x%d", l.Bit, l.Width)
		case l.Count > 0:
			v = fmt.Sprintf("0x%x/%dx%d", l.Bit, l.Count, l.Width)
		}
		out[l.Path] = v
	}
	return out
}

// checkPlan verifies that prm's compiled plan puts every field exactly where
// the header does: the ADB offsets the parser produced convert back without
// loss.
func checkPlan(h *Header, p *prm.Plan) error {
	var walk func(s *prm.Step, where string) error
	walk = func(s *prm.Step, where string) error {
		for _, c := range s.Children {
			if c.Field == nil {
				continue // derived (joined halves)
			}
			name := where + "." + c.Name
			want, ok := h.Bit(c.Field)
			if !ok {
				return fmt.Errorf("%s: field not laid out by the parser", name)
			}
			if c.Bit != want {
				return fmt.Errorf("%s: prm puts it at bit 0x%x, the header at 0x%x (ADB offset %d, element %d bits)", name, c.Bit, want, c.Field.Offset, c.Field.ElemSize())
			}
			wantW := c.Field.Size
			if c.Kind == prm.KindArray {
				if c.Elem.Width != c.Field.ElemSize() {
					return fmt.Errorf("%s: element width %d, want %d", name, c.Elem.Width, c.Field.ElemSize())
				}
				if c.Elem.Bit != 0 {
					return fmt.Errorf("%s: element template at bit %d, want 0", name, c.Elem.Bit)
				}
			}
			if c.Width != wantW {
				return fmt.Errorf("%s: width %d, want %d", name, c.Width, wantW)
			}
			if err := walk(c, name); err != nil {
				return err
			}
			if c.Elem != nil {
				if err := walk(c.Elem, name+"[]"); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(p.Root, p.Node.Name)
}

func parse(t *testing.T, src string) *Header {
	t.Helper()
	h, err := Parse("test.h", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return h
}

func field(t *testing.T, h *Header, node, name string) *prm.Field {
	t.Helper()
	n := h.Nodes[node]
	if n == nil {
		t.Fatalf("no node %s (have %v)", node, keys(h.Nodes))
	}
	f := n.Field(name)
	if f == nil {
		t.Fatalf("node %s has no field %s", node, name)
	}
	return f
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sameMap(t *testing.T, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("missing leaf %s (want %s)", k, w)
		} else if g != w {
			t.Errorf("leaf %s = %s, want %s", k, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected leaf %s = %s", k, g)
		}
	}
}

const elemSrc = `
struct mlx5_ifc_elem_bits {
	u8         x[0x4];
	u8         y[0xc];
	u8         z[0x10];
};
`

func TestParseLayouts(t *testing.T) {
	tests := []struct {
		name string
		src  string
		node string
		size int
		want map[string]string
	}{{
		name: "scalars, reserved gaps and a 64-bit field",
		src: `struct mlx5_ifc_foo_bits {
	u8         a[0x1];
	u8         reserved_at_1[0x7];
	u8         b[0x8];
	u8         c[0x10];

	u8         d[0x40];

	u8         e[0x4];
	u8         reserved_at_64[0x1c];
};`,
		node: "foo", size: 0x80,
		want: map[string]string{"a": "0x0/1", "b": "0x8/8", "c": "0x10/16", "d": "0x20/64", "e": "0x60/4"},
	}, {
		name: "arrays of bytes that cross dwords, and of wide elements",
		src: `struct mlx5_ifc_arr_bits {
	u8         reserved_at_0[0x10];
	u8         mac[6][0x8];
	u8         nibbles[8][0x4];
	u8         pas[2][0x40];
};`,
		node: "arr", size: 0x10 + 48 + 32 + 128,
		want: map[string]string{"mac": "0x10/6x8", "nibbles": "0x40/8x4", "pas": "0x60/2x64"},
	}, {
		name: "a wide field that does not start on a dword",
		src: `struct mlx5_ifc_wide_bits {
	u8         a[0x10];
	u8         w[0x30];
	u8         b[0x8];
	u8         c[0x18];
};`,
		node: "wide", size: 0x60,
		want: map[string]string{"a": "0x0/16", "w": "0x10/48", "b": "0x40/8", "c": "0x48/24"},
	}, {
		name: "nested struct array",
		src: elemSrc + `struct mlx5_ifc_outer_bits {
	u8         hdr[0x20];
	struct mlx5_ifc_elem_bits e[3];
	u8         tail[0x20];
};`,
		node: "outer", size: 0xa0,
		want: map[string]string{
			"hdr":    "0x0/32",
			"e[0].x": "0x20/4", "e[0].y": "0x24/12", "e[0].z": "0x30/16",
			"e[1].x": "0x40/4", "e[1].y": "0x44/12", "e[1].z": "0x50/16",
			"e[2].x": "0x60/4", "e[2].y": "0x64/12", "e[2].z": "0x70/16",
			"tail": "0x80/32",
		},
	}, {
		name: "named inline union with narrow, wide and struct members",
		src: elemSrc + `struct mlx5_ifc_u_bits {
	u8         sel[0x8];
	u8         reserved_at_8[0x18];

	union {
		struct mlx5_ifc_elem_bits as_elem;
		u8         raw[0x40];
		u8         small[0x8];
	} payload;

	u8         after[0x20];
};`,
		node: "u", size: 0x80,
		want: map[string]string{
			"sel":               "0x0/8",
			"payload.as_elem.x": "0x20/4",
			"payload.as_elem.y": "0x24/12",
			"payload.as_elem.z": "0x30/16",
			"payload.raw":       "0x20/64",
			"payload.small":     "0x20/8",
			"after":             "0x60/32",
		},
	}, {
		name: "anonymous union holding an anonymous struct",
		src: `struct mlx5_ifc_anon_bits {
	u8         a[0x10];
	union {
		u8         b[0x10];
		struct {
			u8         c[0x8];
			u8         d[0x8];
		};
	};
	u8         e[0x20];
};`,
		node: "anon", size: 0x40,
		want: map[string]string{"a": "0x0/16", "b": "0x10/16", "c": "0x10/8", "d": "0x18/8", "e": "0x20/32"},
	}, {
		name: "flexible array of wide elements",
		src: `struct mlx5_ifc_flex_bits {
	u8         n[0x20];
	u8         pas[][0x40];
};`,
		node: "flex", size: 0x20,
		want: map[string]string{"n": "0x0/32", "pas": "0x20/[]x64"},
	}, {
		name: "flexible array of structs",
		src: elemSrc + `struct mlx5_ifc_flex2_bits {
	u8         n[0x18];
	u8         m[0x8];
	struct mlx5_ifc_elem_bits items[];
};`,
		node: "flex2", size: 0x20,
		want: map[string]string{"n": "0x0/24", "m": "0x18/8", "items[0].x": "0x20/4", "items[0].y": "0x24/12", "items[0].z": "0x30/16"},
	}, {
		name: "untyped flexible array",
		src: `struct mlx5_ifc_flex3_bits {
	u8         n[0x20];
	u8         data[];
};`,
		node: "flex3", size: 0x20,
		want: map[string]string{"n": "0x0/32", "data": "0x20/[]x1"},
	}, {
		name: "union definition used by a struct",
		src: elemSrc + `union mlx5_ifc_un_bits {
	struct mlx5_ifc_elem_bits e;
	u8         r[0x60];
};
struct mlx5_ifc_holder_bits {
	u8         k[0x20];
	union mlx5_ifc_un_bits u;
};`,
		node: "holder", size: 0x80,
		want: map[string]string{"k": "0x0/32", "u.e.x": "0x20/4", "u.e.y": "0x24/12", "u.e.z": "0x30/16", "u.r": "0x20/96"},
	}, {
		name: "a node narrower than a dword, in an array",
		src: `struct mlx5_ifc_tiny_bits {
	u8         e[0x1];
	u8         reserved_at_1[0x7];
	u8         p[0x4];
	u8         reserved_at_c[0x4];
};
struct mlx5_ifc_tinyarr_bits {
	u8         hdr[0x20];
	struct mlx5_ifc_tiny_bits t[3];
	u8         reserved_at_50[0x10];
};`,
		node: "tinyarr", size: 0x60,
		want: map[string]string{
			"hdr":    "0x0/32",
			"t[0].e": "0x20/1", "t[0].p": "0x28/4",
			"t[1].e": "0x30/1", "t[1].p": "0x38/4",
			"t[2].e": "0x40/1", "t[2].p": "0x48/4",
		},
	}, {
		name: "comments, preprocessor lines, enums and macro sizes",
		src: `/* struct mlx5_ifc_fake_bits { u8 x[0x1]; }; */
#define N_ITEMS (2 + \
	1) /* three */
#define WIDE (0x10 << 1)
enum {
	MLX5_FOO = 1, // struct mlx5_ifc_fake2_bits {
};
// struct mlx5_ifc_fake3_bits {
struct mlx5_ifc_m_bits {
	u8         v[N_ITEMS][WIDE]; // trailing comment
	u8         a[0x8], b[0x8];
	u8         c[16UL];
	u8         z[0];
};`,
		node: "m", size: 3*32 + 32,
		// A GNU zero-length array is a flexible one.
		want: map[string]string{"v": "0x0/3x32", "a": "0x60/8", "b": "0x68/8", "c": "0x70/16", "z": "0x80/[]x1"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := parse(t, tc.src)
			if n := h.Nodes[tc.node]; n == nil || n.Size != tc.size {
				t.Fatalf("node %s: %+v, want size %d", tc.node, n, tc.size)
			}
			sameMap(t, leafMap(t, h, tc.node), tc.want)
			for _, n := range h.Nodes {
				if strings.HasPrefix(n.Name, "fake") {
					t.Errorf("parsed %s out of a comment", n.Name)
				}
			}
		})
	}
}

// The ADB offsets themselves, for the cases the brief's formula covers:
// Offset = 32*(p/32) + (32 - p%32 - w) below 32 bits, p otherwise.
func TestADBOffsets(t *testing.T) {
	h := parse(t, `struct mlx5_ifc_foo_bits {
	u8         a[0x1];
	u8         reserved_at_1[0x7];
	u8         b[0x8];
	u8         c[0x10];
	u8         d[0x40];
	u8         e[0x4];
	u8         reserved_at_64[0xc];
	u8         mac[2][0x8];
};
struct mlx5_ifc_tiny_bits {
	u8         e[0x1];
	u8         reserved_at_1[0x7];
	u8         p[0x4];
	u8         reserved_at_c[0x4];
};
union mlx5_ifc_un_bits {
	u8         small[0x8];
	u8         big[0x40];
};`)
	for _, c := range []struct {
		node, field    string
		offset, size   int
		array          bool
		low, high      int
		union, fieldOK bool
	}{
		{node: "foo", field: "a", offset: 31, size: 1},
		{node: "foo", field: "b", offset: 16, size: 8},
		{node: "foo", field: "c", offset: 0, size: 16},
		{node: "foo", field: "d", offset: 0x20, size: 64},
		{node: "foo", field: "e", offset: 0x60 + 28, size: 4},
		// Element 0 at MSB-first 0x70 in the dword at 0x60: LSB-based bit 8.
		{node: "foo", field: "mac", offset: 0x60 + 8, size: 16, array: true, low: 0, high: 1},
		// Nodes narrower than a dword number bits inside their own size.
		{node: "tiny", field: "e", offset: 15, size: 1},
		{node: "tiny", field: "p", offset: 4, size: 4},
		{node: "un", field: "small", offset: 24, size: 8},
		{node: "un", field: "big", offset: 0, size: 64},
	} {
		f := field(t, h, c.node, c.field)
		if f.Offset != c.offset || f.Size != c.size || f.IsArray != c.array || f.LowBound != c.low || f.HighBound != c.high {
			t.Errorf("%s.%s: offset %d size %d array %v [%d..%d], want %d %d %v [%d..%d]", c.node, c.field,
				f.Offset, f.Size, f.IsArray, f.LowBound, f.HighBound, c.offset, c.size, c.array, c.low, c.high)
		}
		if f.Access != prm.AccessNone {
			t.Errorf("%s.%s: access %v, want none", c.node, c.field, f.Access)
		}
	}
	if !h.Nodes["un"].Union || h.Nodes["un"].Size != 64 {
		t.Errorf("union un: %+v", h.Nodes["un"])
	}
	if len(h.Nodes["foo"].Fields) != 6 {
		t.Errorf("foo has %d fields, want 6 (reserved ones left out)", len(h.Nodes["foo"].Fields))
	}
}

func TestParseNames(t *testing.T) {
	h := parse(t, elemSrc+`struct mlx5_ifc_qcam_access_reg_cap_mask {
	u8         bits_127_to_1[0x7f];
	u8         qpts[0x1];
};
struct mlx5_ifc_pmaos_reg_bits {
	union {
		struct mlx5_ifc_qcam_access_reg_cap_mask reg_cap;
		u8         reserved_at_0[0x80];
	} mask;
};`)
	want := []string{"elem", "pmaos_reg", "qcam_access_reg_cap_mask"}
	if fmt.Sprint(h.Types) != fmt.Sprint(want) {
		t.Errorf("Types = %v, want %v", h.Types, want)
	}
	if _, ok := h.Nodes["pmaos_reg.mask"]; !ok {
		t.Errorf("inline union node missing: %v", keys(h.Nodes))
	}
	if got := h.Where("pmaos_reg"); !strings.HasPrefix(got, "test.h:") {
		t.Errorf("Where = %q", got)
	}
	if NodeName("mlx5_ifc_pmaos_reg_bits") != "pmaos_reg" {
		t.Error("NodeName")
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"struct mlx5_ifc_a_bits {\n\tstruct mlx5_ifc_nope_bits x;\n};", "test.h:2: layout mlx5_ifc_nope(_bits) is not defined"},
		{"struct mlx5_ifc_e_bits {\n};\nstruct mlx5_ifc_a_bits {\n\tstruct mlx5_ifc_e_bits x;\n};", "test.h:4: a.x: has zero width"},
		{"struct mlx5_ifc_a_bits {\n\tu8 x[4][0x0];\n};", "test.h:2: mlx5_ifc_a_bits: member x has no element width"},
		{"struct mlx5_ifc_a_bits {\n\tu8 x[0x1];\n", "test.h:1: mlx5_ifc_a_bits: body is not closed"},
		{"struct mlx5_ifc_a_bits {\n\tu8 x[0x10];\n\tu8 y[0x18];\n};", "test.h:3: a.y: 24 bits at bit 0x10 cross a dword boundary"},
		{"struct mlx5_ifc_a_bits {\n\tu8 x[0x1];\n\tu8 x[0x1];\n};", "member x is declared twice"},
		{"struct mlx5_ifc_a_bits {\n\tstruct mlx5_ifc_a_bits self;\n};", "layout a contains itself"},
		{"struct mlx5_ifc_a_bits {\n\tu8 x;\n};", "u8 x has no bit width"},
		{"struct mlx5_ifc_a_bits {\n\tint x;\n};", `test.h:2: mlx5_ifc_a_bits: unexpected "int"`},
		{"struct mlx5_ifc_a_bits {\n\tu8 x[NOPE];\n};", "NOPE is not a number or a #define"},
		{"struct mlx5_ifc_a_bits {\n\tu8 x[0x1];\n}", `expected ";" after the definition`},
		{"struct mlx5_ifc_a_bits { u8 x[0x20]; };\nstruct mlx5_ifc_a { u8 y[0x20]; };", "is defined twice"},
		{"struct mlx5_ifc_a_bits { union mlx5_ifc_b_bits u; };\nstruct mlx5_ifc_b_bits { u8 y[0x20]; };", "declared as union b but defined as a struct"},
		{"/* open", "comment is not closed"},
		{"#define A (A+1)\nstruct mlx5_ifc_a_bits { u8 x[A]; };", "too deep"},
	} {
		_, err := Parse("test.h", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) error = %v, want it to contain %q", c.src, err, c.want)
		}
	}
}

func TestReservedNameWarning(t *testing.T) {
	h := parse(t, "struct mlx5_ifc_a_bits {\n\tu8 x[0x4];\n\tu8 reserved_at_8[0x1c];\n};")
	if len(h.Warnings) != 1 || !strings.Contains(h.Warnings[0], "test.h:3: a.reserved_at_8 is at bit 0x4") {
		t.Errorf("Warnings = %q", h.Warnings)
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"6.1.0-9", "6.1.0-57", "5.10.0-30"} {
		p := filepath.Join(dir, "linux-headers-"+v+"-common", "include/linux/mlx5")
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "mlx5_ifc.h"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := SearchGlobs
	defer func() { SearchGlobs = old }()
	SearchGlobs = []string{filepath.Join(dir, "*/include/linux/mlx5/mlx5_ifc.h")}
	got, err := Find()
	if err != nil || !strings.Contains(got, "6.1.0-57") {
		t.Errorf("Find = %q, %v; want the 6.1.0-57 header", got, err)
	}
	if KernelVersion(got) != "linux-headers-6.1.0-57-common" {
		t.Errorf("KernelVersion(%q) = %q", got, KernelVersion(got))
	}
	SearchGlobs = []string{filepath.Join(dir, "none/*.h")}
	if _, err := Find(); err == nil || !strings.Contains(err.Error(), "apt-get install linux-headers-amd64") {
		t.Errorf("Find with nothing installed: %v", err)
	}
}

func TestLoadFileFollowsIncludes(t *testing.T) {
	dir := t.TempDir()
	main := filepath.Join(dir, "mlx5_ifc.h")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(main, "#include \"mlx5_ifc_fpga.h\"\n#include <linux/types.h>\nstruct mlx5_ifc_a_bits { struct mlx5_ifc_fpga_x_bits f; };\n")
	write(filepath.Join(dir, "mlx5_ifc_fpga.h"), "struct mlx5_ifc_fpga_x_bits { u8 v[0x20]; };\n")
	write(filepath.Join(dir, "driver.h"), "enum {\n\tMLX5_REG_PMAOS = 0x5012,\n\tMLX5_REG_MCIA\t = 0x9014,\n};\n")
	h, err := LoadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	if h.Nodes["a"] == nil || h.Nodes["fpga_x"] == nil {
		t.Errorf("nodes %v", keys(h.Nodes))
	}
	if h.RegisterIDs["PMAOS"] != 0x5012 || h.RegisterIDs["MCIA"] != 0x9014 {
		t.Errorf("RegisterIDs = %v", h.RegisterIDs)
	}
	if _, err := Parse(main, []byte("struct mlx5_ifc_a_bits { struct mlx5_ifc_fpga_x_bits f; };")); err == nil {
		t.Error("Parse resolved a type from a file it did not read")
	}
	if _, err := LoadFile(filepath.Join(dir, "missing.h")); err == nil || !strings.Contains(err.Error(), "linux-headers-amd64") {
		t.Errorf("LoadFile(missing) = %v", err)
	}
}

func TestVersionLess(t *testing.T) {
	in := []string{"linux-headers-6.1.0-57", "linux-headers-6.1.0-9", "linux-headers-6.10.0-1", "linux-headers-5.10.0-30"}
	sort.Slice(in, func(i, j int) bool { return versionLess(in[i], in[j]) })
	want := "[linux-headers-5.10.0-30 linux-headers-6.1.0-9 linux-headers-6.1.0-57 linux-headers-6.10.0-1]"
	if fmt.Sprint(in) != want {
		t.Errorf("order %v, want %s", in, want)
	}
}

// installedHeader loads the real header or skips, naming the package.
func installedHeader(t *testing.T) *Header {
	t.Helper()
	path, err := Find()
	if err != nil {
		t.Skipf("SKIPPED, no kernel header to test against: %v", err)
	}
	h, err := LoadFile(path)
	if err != nil {
		t.Fatalf("the installed kernel header does not parse: %v", err)
	}
	return h
}

// Every layout of the real header compiles with prm, and prm puts every
// field exactly where the header does.
func TestInstalledHeaderRoundTrip(t *testing.T) {
	h := installedHeader(t)
	if len(h.Types) < 500 {
		t.Errorf("only %d layouts parsed from %s", len(h.Types), h.Source)
	}
	db, err := h.DB()
	if err != nil {
		t.Fatal(err)
	}
	fields := 0
	for _, name := range h.Types {
		p, err := db.Plan(name)
		if err != nil {
			t.Errorf("%s (%s): %v", name, h.Where(name), err)
			continue
		}
		if err := checkPlan(h, p); err != nil {
			t.Errorf("%s (%s): %v", name, h.Where(name), err)
		}
		fields += len(h.Nodes[name].Fields)
	}
	// Spot checks against values read off the header by hand.
	want := map[string]map[string]string{
		"pmaos_reg": {"module": "0x8/8", "admin_status": "0x14/4", "oper_status": "0x1c/4", "ase": "0x20/1", "e": "0x3e/2"},
		"mcia_reg":  {"l": "0x0/1", "status": "0x18/8", "i2c_device_address": "0x20/8", "size": "0x50/16"},
		"pmlp_reg":  {"width": "0x18/8", "lane0_module_mapping": "0x20/32", "lane3_module_mapping": "0x80/32"},
	}
	for node, fs := range want {
		got := leafMap(t, h, node)
		for k, v := range fs {
			if got[k] != v {
				t.Errorf("%s.%s = %q, want %q", node, k, got[k], v)
			}
		}
	}
	t.Logf("%s: %d layouts, %d fields, %d warnings", h.Source, len(h.Types), fields, len(h.Warnings))
	for _, w := range h.Warnings {
		t.Logf("warning: %s", w)
	}
}

func TestDBNamesDifferingInCase(t *testing.T) {
	h := parse(t, "struct mlx5_ifc_A_bits { u8 x[0x20]; };\nstruct mlx5_ifc_a_bits { u8 y[0x20]; };")
	db, err := h.DB()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"A", "a"} {
		if _, err := db.Plan(n); err != nil {
			t.Errorf("Plan(%s): %v", n, err)
		}
	}
}

// The forms 6.12's header brings: DECLARE_FLEX_ARRAY inside a union, a
// struct that is only a flexible array (left out), and a misspelt reserved
// field that crosses a dword (split into reserved pieces).
func TestNewerHeaderForms(t *testing.T) {
	h, err := Parse("test.h", []byte(`
struct mlx5_ifc_e_bits { u8 v[0x20]; };
struct mlx5_ifc_only_flex_bits { struct mlx5_ifc_e_bits pas[0]; };
struct mlx5_ifc_a_bits {
	u8 head[0x20];
	union {
		DECLARE_FLEX_ARRAY(struct mlx5_ifc_e_bits, list);
		DECLARE_FLEX_ARRAY(struct mlx5_ifc_e_bits, other);
	};
};
union mlx5_ifc_u_bits {
	struct mlx5_ifc_only_flex_bits gone;
	struct mlx5_ifc_e_bits kept;
};
struct mlx5_ifc_r_bits {
	u8 x[0x14];
	u8 resereved_at_14[0x14];
	u8 y[0x18];
};
`))
	if err != nil {
		t.Fatal(err)
	}
	type f struct {
		Name         string
		Offset, Size int
		Array, Var   bool
		Sub          string
	}
	got := map[string][]f{}
	for _, n := range []string{"a", "u", "r"} {
		for _, x := range h.Nodes[n].Fields {
			got[n] = append(got[n], f{x.Name, x.Offset, x.Size, x.IsArray, x.Variable, x.Subnode})
		}
	}
	want := map[string][]f{
		"a": {{"head", 0, 32, false, false, ""}, {"list", 32, 32, true, true, "e"}, {"other", 32, 32, true, true, "e"}},
		"u": {{"kept", 0, 32, false, false, "e"}},
		// x: bits 0..19; the reserved run 0x14..0x27 splits at 0x20.
		"r": {{"x", 12, 20, false, false, ""}, {"reserved_at_14", 0, 12, false, false, ""}, {"reserved_at_20", 56, 8, false, false, ""}, {"y", 32, 24, false, false, ""}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
	if _, err := Parse("test.h", []byte("struct mlx5_ifc_a_bits {\n\tDECLARE_FLEX_ARRAY(int, x);\n};")); err == nil || !strings.Contains(err.Error(), "only arrays of mlx5_ifc") {
		t.Errorf("DECLARE_FLEX_ARRAY of int: %v", err)
	}
}

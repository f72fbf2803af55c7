package ifc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScanEnums(t *testing.T) {
	src := `
#define BASE 0x10
enum tagged {
	A_ZERO,            /* 0 */
	A_ONE,
	A_FIVE = 5,
	A_SIX,
	A_BASE = BASE + 1,
	A_NEXT,
	A_SHIFT = (1ULL << A_FIVE),
	A_UNKNOWN = NOT_DEFINED,
	A_AFTER_UNKNOWN,
	A_AGAIN = 0x20,
};
enum { B_X = -1, B_Y };
enum tagged t;   /* a use, not a definition */
struct mlx5_ifc_s_bits { u8 a[0x20]; };
`
	got, err := ScanEnums("t.h", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	type nv struct {
		Name  string
		Value int64
		Enum  string
		Block int
	}
	var have []nv
	for _, e := range got {
		have = append(have, nv{e.Name, e.Value, e.Enum, e.Block})
	}
	want := []nv{
		{"A_ZERO", 0, "tagged", 0}, {"A_ONE", 1, "tagged", 0}, {"A_FIVE", 5, "tagged", 0}, {"A_SIX", 6, "tagged", 0},
		{"A_BASE", 0x11, "tagged", 0}, {"A_NEXT", 0x12, "tagged", 0}, {"A_SHIFT", 32, "tagged", 0},
		{"A_AGAIN", 0x20, "tagged", 0},
		{"B_X", -1, "", 1}, {"B_Y", 0, "", 1},
	}
	if d := cmp.Diff(want, have); d != "" {
		t.Errorf("enumerators (-want +got):\n%s", d)
	}
	if v, ok := Lookup(got, "A_SIX"); !ok || v != 6 {
		t.Errorf("Lookup A_SIX = %d, %v", v, ok)
	}
	if w := WithPrefix(got, "A_"); len(w) != 8 || w[0].Name != "ZERO" {
		t.Errorf("WithPrefix: %v", w)
	}
}

// The enumerators the command database is built from read as the kernel
// defines them, in mlx5_ifc.h and in device.h next to it.
func TestInstalledEnums(t *testing.T) {
	h := installedHeader(t)
	es := h.Enumerators()
	for name, want := range map[string]int64{
		"MLX5_CMD_OP_QUERY_HCA_CAP": 0x100, "MLX5_CMD_OP_QUERY_ADAPTER": 0x101, "MLX5_CMD_OP_ACCESS_REG": 0x805,
		"MLX5_CMD_OP_QUERY_QP": 0x50b, "MLX5_CMD_OP_QUERY_MKEY": 0x201, "MLX5_CMD_OP_QUERY_ESW_FUNCTIONS": 0x740,
		"MLX5_CMD_OP_QUERY_VPORT_STATE": 0x750, "MLX5_CMD_OP_QUERY_Q_COUNTER": 0x773,
		"MLX5_REG_PMAOS": 0x5012,
	} {
		if v, ok := Lookup(es, name); !ok || v != want {
			t.Errorf("%s = %#x (found %v), want %#x", name, v, ok, want)
		}
	}
	src, err := os.ReadFile(filepath.Join(filepath.Dir(h.Source), "device.h"))
	if err != nil {
		t.Skipf("SKIPPED device.h checks: %v", err)
	}
	dev, err := ScanEnums("device.h", src)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{
		"MLX5_CAP_GENERAL": 0, "MLX5_CAP_ROCE": 4, "MLX5_CAP_ESWITCH": 9, "MLX5_CAP_IPSEC": 0x15,
		"MLX5_CAP_GENERAL_2": 0x20, "MLX5_CMD_STAT_BAD_OUTP_LEN_ERR": 0x51, "MLX5_CMD_STAT_IX_ERR": 0xa,
		"MLX5_EVENT_TYPE_ESW_FUNCTIONS_CHANGED": 0xe,
	} {
		if v, ok := Lookup(dev, name); !ok || v != want {
			t.Errorf("device.h %s = %#x (found %v), want %#x", name, v, ok, want)
		}
	}
}

// FuzzScanEnums: the scanner never panics, and what it reads written back
// as explicit enumerators reads back the same (names, values, blocks).
//
//	go test -fuzz=FuzzScanEnums ./prm/ifc
func FuzzScanEnums(f *testing.F) {
	f.Add([]byte("enum t { A, B = 5, C, D = B + 1 };\nenum { X = 1 << 3, Y };\n"))
	f.Add([]byte("#define N 4\nenum { P = N * 2, Q = (P - 1), R = UNKNOWN, S };\n"))
	f.Add([]byte("enum mlx5_cap_type cap; enum { };"))
	f.Add([]byte("enum { BIG = 1 << 40, NEXT };"))
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 1<<14 {
			return
		}
		es, err := ScanEnums("f.h", src)
		if err != nil {
			return
		}
		var b strings.Builder
		block := -1
		for _, e := range es {
			if e.Block != block {
				if block >= 0 {
					b.WriteString("};\n")
				}
				block = e.Block
				b.WriteString("enum {\n")
			}
			fmt.Fprintf(&b, "%s = %d,\n", e.Name, e.Value)
		}
		if block >= 0 {
			b.WriteString("};\n")
		}
		back, err := ScanEnums("back.h", []byte(b.String()))
		if err != nil {
			t.Fatalf("rewritten enums do not scan: %v\n%s", err, b.String())
		}
		if len(back) != len(es) {
			t.Fatalf("%d enumerators read back as %d", len(es), len(back))
		}
		for i := range es {
			if back[i].Name != es[i].Name || back[i].Value != es[i].Value {
				t.Fatalf("%v read back as %v", es[i], back[i])
			}
		}
	})
}

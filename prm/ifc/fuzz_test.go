package ifc

import (
	"testing"
)

// FuzzParse: arbitrary input never panics or hangs, and whatever parses
// compiles with prm to exactly the positions the parser worked out.
//
//	go test -fuzz=FuzzParse ./prm/ifc
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		elemSrc,
		"struct mlx5_ifc_a_bits {\n\tu8 a[0x1];\n\tu8 reserved_at_1[0x1f];\n\tu8 b[0x40];\n};\n",
		"struct mlx5_ifc_a_bits { u8 m[6][0x8]; u8 n[4][0x4]; u8 p[][0x40]; };",
		elemSrc + "struct mlx5_ifc_o_bits { u8 h[0x20]; struct mlx5_ifc_elem_bits e[3]; struct mlx5_ifc_elem_bits f[]; };",
		elemSrc + "union mlx5_ifc_u_bits { struct mlx5_ifc_elem_bits e; u8 r[0x40]; };\nstruct mlx5_ifc_h_bits { union mlx5_ifc_u_bits u; u8 t[0x20]; };",
		"struct mlx5_ifc_x_bits { u8 a[0x10]; union { u8 b[0x10]; struct { u8 c[0x8]; u8 d[0x8]; }; }; u8 e[0x20]; };",
		"struct mlx5_ifc_x_bits { union { u8 s[0x8]; u8 w[0x40]; } named; u8 d[];\n};",
		"struct mlx5_ifc_t_bits { u8 e[0x1]; u8 reserved_at_1[0x7]; u8 p[0x4]; u8 q[0x4]; };\nstruct mlx5_ifc_ta_bits { struct mlx5_ifc_t_bits t[5]; };",
		"/* c */ // d\n#define N (2 + \\\n 1)\nenum { A = 1, };\nstruct mlx5_ifc_m_bits { u8 v[N][0x20]; u8 a[0x8], b[0x18]; };",
		"#include \"x.h\"\nstruct foo { int x; };\nstatic inline int f(void) { return sizeof(struct mlx5_ifc_a_bits); }\n",
		"enum {\n\tMLX5_REG_PMAOS = 0x5012,\n};\n",
		"struct mlx5_ifc_w_bits { u8 a[0x10]; u8 w[0x30]; u8 b[0x8]; u8 c[0x18]; };",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		h, err := Parse("fuzz.h", src)
		if err != nil {
			return
		}
		db, err := h.DB()
		if err != nil {
			t.Fatalf("parsed layouts do not form a database: %v", err)
		}
		for _, name := range h.Types {
			// Large layouts take long to list; the round trip is the same.
			if h.Nodes[name].Size > 1<<12 {
				continue
			}
			p, err := db.Plan(name)
			if err != nil {
				continue // nesting prm refuses (deeper than it compiles)
			}
			if err := checkPlan(h, p); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			_ = p.Leaves()
		}
	})
}

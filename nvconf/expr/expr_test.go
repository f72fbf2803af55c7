package expr_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/cxray/cxray/nvconf/expr"
)

func TestExpr(t *testing.T) {
	vars := map[string]float64{"nv_global_pci_cap.max_vfs_per_pf_valid": 1, "nv_global_pci_cap.max_vfs_per_pf": 127, "a": 4, "b": 0}
	env := func(n string) (float64, error) {
		v, ok := vars[n]
		if !ok {
			return 0, errors.New("unknown " + n)
		}
		return v, nil
	}
	cases := map[string]float64{
		"$nv_global_pci_cap.max_vfs_per_pf_valid==1 ? $nv_global_pci_cap.max_vfs_per_pf : 0": 127,
		"1+2*3":                  7,
		"(1+2)*3":                9,
		"2^3^2":                  512, // right associative
		"-2^2":                   -4,  // power binds tighter than unary minus
		"$a/8":                   0.5,
		"log2($a)":               2,
		"$b==0 || $nope":         1, // short-circuit: $nope is never read
		"$b!=0 && $nope":         0,
		"($a >= 4) + ($a < 4)":   1,
		"!$b":                    1,
		"0x10 + 1":               17,
		"min($a, 3) + max(1, 2)": 5,
		"$b ? 1 : $a ? 2 : 3":    2,
		"($a)^2":                 16,
		"7 % 4":                  3,
	}
	for src, want := range cases {
		x, err := expr.Parse(src)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		got, err := x.Eval(env)
		if err != nil || math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v %v, want %v", src, got, err, want)
		}
	}
	for _, bad := range []string{"", "1+", "(1", "1)", "$", "foo(1)", "log2(1,2)", "1 ? 2", "1 $a", "#"} {
		if _, err := expr.Parse(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	x, _ := expr.Parse("$a + $nope")
	if _, err := x.Eval(env); err == nil {
		t.Error("an unknown variable must be an error")
	}
	if v := x.Vars(); len(v) != 2 || v[0] != "a" || v[1] != "nope" {
		t.Errorf("vars %v", v)
	}
	// Nesting is bounded.
	deep := strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200)
	if _, err := expr.Parse(deep); err == nil {
		t.Error("200 levels of parentheses parsed")
	}
	tv, err := expr.ParseTempVars("$_x=($a)^2 ; $_y = $_x + 1")
	if err != nil || len(tv) != 2 || tv[1].Name != "_y" {
		t.Fatalf("%v %v", tv, err)
	}
}

// FuzzParse: any text parses or is refused without panicking; what
// parses evaluates with any values, and variables are what it reads.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"$nv_global_pci_cap.max_vfs_per_pf_valid==1 ? $nv_global_pci_cap.max_vfs_per_pf : 0",
		"($fpp_en==1?(log2($nv_global_pci_cap.max_total_bar==0?1:(($nv_global_pci_cap.max_total_bar/$num_pfs - ($log_pf_uar_bar_size)^2) / $total_vfs))) : 0)",
		"(($partial_wr_cache_mode==0) || ($partial_wr_cache_mode==2 && $nv_global_pci_cap.partial_wr_cache_mode_function==1))",
		"-2^-2^2", "!!!$a", "min(1,max(2,3))%0", "1/0 <= 2", "0x",
	} {
		f.Add(s, 3.5)
	}
	f.Fuzz(func(t *testing.T, s string, v float64) {
		x, err := expr.Parse(s)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		got, err := x.Eval(func(name string) (float64, error) {
			seen[name] = true
			return v, nil
		})
		if err != nil {
			t.Fatalf("%q: evaluation with every variable known failed: %v", s, err)
		}
		_ = math.IsNaN(got)
		vars := map[string]bool{}
		for _, n := range x.Vars() {
			vars[n] = true
		}
		for n := range seen {
			if !vars[n] {
				t.Fatalf("%q read $%s, not in Vars() %v", s, n, x.Vars())
			}
		}
		if x.String() != s {
			t.Fatalf("String() changed the text")
		}
	})
}

package ifc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/adb"
)

// A small ADB and kernel header that exercise every category.
const testADB = `<?xml version="1.0"?>
<NodesDefinition>
<info source_doc_name="test" source_doc_version="Rev 0.1"/>
<config big_endian_arr="1"/>
<node name="access_reg_summary_ctrl_ext" size="0x4.0">
	<field name="id" offset="0x0.0" size="0x0.16" enum="TREG=0x9999,UREG=0x9998"/>
</node>
<node name="access_reg_summary_ext" attr_is_union="1" size="0x28.0">
	<field name="treg_ext" subnode="treg_ext" offset="0x0.0" size="0x28.0" selected_by="TREG"/>
	<field name="ureg_ext" subnode="ureg_ext" offset="0x0.0" size="0x4.0" selected_by="UREG"/>
</node>
<node name="ureg_ext" size="0x4.0">
	<field name="v" offset="0x0.0" size="0x4.0"/>
</node>
<node name="lane_ext" size="0x4.0">
	<field name="a" offset="0x0.24" size="0x0.8"/>
	<field name="b" offset="0x0.16" size="0x0.8"/>
</node>
<node name="pa_ext" size="0x10.0">
	<field name="x" offset="0x0.0" size="0x4.0"/>
	<field name="y" offset="0x4.0" size="0x4.0"/>
</node>
<node name="zz_ext" size="0x10.0">
	<field name="z2" offset="0x0.16" size="0x0.16"/>
</node>
<node name="page_auto_ext" attr_is_union="1" size="0x10.0">
	<field name="pa_ext" subnode="pa_ext" offset="0x0.0" size="0x10.0"/>
	<field name="zz_ext" subnode="zz_ext" offset="0x0.0" size="0x10.0"/>
</node>
<node name="treg_ext" size="0x28.0">
	<field name="same" offset="0x0.24" size="0x0.8"/>
	<field name="new_name" offset="0x0.16" size="0x0.8"/>
	<field name="moved" offset="0x0.0" size="0x0.8"/>
	<field name="counter" offset="0x4.0" size="0x8.0"/>
	<field name="lane_map" subnode="lane_ext" offset="0xc.0" size="0x8.0" low_bound="0" high_bound="1"/>
	<field name="adb_only" offset="0x14.0" size="0x0.8"/>
	<field name="page" subnode="page_auto_ext" offset="0x18.0" size="0x10.0"/>
</node>
</NodesDefinition>
`

const testHeader = `
enum {
	MLX5_REG_TREG = 0x1234,
};
struct mlx5_ifc_pa_bits {
	u8         x[0x20];
	u8         y[0x20];
	u8         reserved_at_40[0x40];
};
struct mlx5_ifc_weird_bits {
	u8         z[0x10];
	u8         reserved_at_10[0x70];
};
struct mlx5_ifc_treg_reg_bits {
	u8         same[0x8];
	u8         old_name[0x8];
	u8         moved[0x10];

	u8         counter_high[0x20];
	u8         counter_low[0x20];

	u8         lane0_map[0x20];
	u8         lane1_map[0x20];

	u8         kernel_only[0x8];
	u8         reserved_at_a8[0x18];

	union {
		struct mlx5_ifc_pa_bits pa_view;
		struct mlx5_ifc_weird_bits w;
	} page;
};
struct mlx5_ifc_zreg_reg_bits {
	u8         q[0x20];
};
`

func synthetic(t *testing.T) (*prm.DB, *Header) {
	t.Helper()
	a, err := adb.Load("test.adb", []byte(testADB))
	if err != nil {
		t.Fatal(err)
	}
	h, err := Parse("test.h", []byte(testHeader))
	if err != nil {
		t.Fatal(err)
	}
	return a, h
}

func paths(rs []Reading) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.Path)
	}
	return strings.Join(s, "+")
}

func TestCompareCategories(t *testing.T) {
	old := Allowed
	defer func() { Allowed = old }()
	Allowed = nil
	a, h := synthetic(t)
	r := Compare(a, h)
	if len(r.Errors) > 0 || len(r.Registers) != 1 {
		t.Fatalf("report: %+v\n%s", r, r.Summary())
	}
	l := r.Registers[0]
	if l.Register != "TREG" || l.KernelNode != "treg_reg" || l.Via != "kernel adds _reg" {
		t.Errorf("pairing: %s %s %q", l.Register, l.KernelNode, l.Via)
	}
	var got []string
	for _, p := range l.Matched {
		got = append(got, p.Kernel.Path+"="+p.ADB.Path)
	}
	if want := "same=same page.pa_view.x=page.pa_ext.x page.pa_view.y=page.pa_ext.y"; strings.Join(got, " ") != want {
		t.Errorf("matched %q, want %q", strings.Join(got, " "), want)
	}
	if len(l.Renamed) != 1 || l.Renamed[0].Kernel.Path != "old_name" || l.Renamed[0].ADB.Path != "new_name" {
		t.Errorf("renamed %+v", l.Renamed)
	}
	if len(l.Mismatches) != 1 || l.Mismatches[0].Kind != "position" || l.Mismatches[0].Kernel.String() != "moved @0x10/16 (0x0.0)" || l.Mismatches[0].ADB.String() != "moved @0x18/8 (0x0.0)" {
		t.Errorf("mismatches %+v", l.Mismatches)
	}
	got = nil
	for _, s := range l.Splits {
		got = append(got, paths(s.Kernel)+"="+paths(s.ADB))
	}
	want := "lane0_map=lane_map[0].a+lane_map[0].b lane1_map=lane_map[1].a+lane_map[1].b counter_high+counter_low=counter"
	if strings.Join(got, " ") != want {
		t.Errorf("splits %q, want %q", strings.Join(got, " "), want)
	}
	only := func(os []Only) string {
		var s []string
		for _, o := range os {
			s = append(s, o.Path)
		}
		return strings.Join(s, " ")
	}
	if g := only(l.OnlyKernel); g != "kernel_only page.w.z" {
		t.Errorf("only in kernel: %q", g)
	}
	if g := only(l.OnlyADB); g != "adb_only page.zz_ext.z2" {
		t.Errorf("only in ADB: %q", g)
	}
	if len(r.IDErrors) != 1 || !strings.Contains(r.IDErrors[0], "TREG: ADB 0x9999, kernel MLX5_REG_TREG 0x1234") {
		t.Errorf("ID errors %q", r.IDErrors)
	}
	if strings.Join(r.OnlyADB, ",") != "UREG (0x9998)" {
		t.Errorf("only-ADB registers %q", r.OnlyADB)
	}
	if strings.Join(r.OnlyKernel, ",") != "zreg_reg (struct only)" {
		t.Errorf("only-kernel registers %q", r.OnlyKernel)
	}
	if !r.Failed() {
		t.Error("a report with a mismatch did not fail")
	}
	c := r.Counts(true)
	if c != (Counts{Layouts: 1, Matched: 3, Renamed: 1, Splits: 3, OnlyADB: 2, OnlyKernel: 2, Mismatches: 1}) {
		t.Errorf("counts %+v", c)
	}
	for _, s := range []string{"MISMATCH TREG position: kernel moved @0x10/16 (0x0.0), ADB moved @0x18/8 (0x0.0)", "1 registers in both"} {
		if !strings.Contains(r.Summary(), s) {
			t.Errorf("summary lacks %q:\n%s", s, r.Summary())
		}
	}
	if !strings.Contains(l.Detail(), "renamed  kernel old_name @0x8/8 (0x0.16) | ADB new_name @0x8/8 (0x0.16)") {
		t.Errorf("detail:\n%s", l.Detail())
	}
}

func TestAllowList(t *testing.T) {
	old := Allowed
	defer func() { Allowed = old }()
	Allowed = []Allowance{
		{Register: "TREG", Kind: "position", Kernel: "moved @0x10/16", ADB: "moved @0x18/8", Reason: "test"},
		{Register: "TREG", Kind: "position", Kernel: "gone @0x0/1", ADB: "gone @0x0/1", Reason: "stale"},
	}
	a, h := synthetic(t)
	r := Compare(a, h)
	l := r.Registers[0]
	if len(l.Mismatches) != 1 || l.Mismatches[0].Reason != "test" || len(l.Unexplained()) != 0 {
		t.Errorf("mismatches %+v", l.Mismatches)
	}
	if len(r.Stale) != 1 || !strings.Contains(r.Stale[0], "gone") {
		t.Errorf("stale %q", r.Stale)
	}
	if c := r.Counts(true); c.Mismatches != 0 || c.Explained != 1 {
		t.Errorf("counts %+v", c)
	}
}

// The cross-check proper: the installed ADB against the installed kernel
// header. It fails on any mismatch the allow-list does not explain.
func TestCrossCheckInstalled(t *testing.T) {
	path := adb.MstflintPath
	if p := os.Getenv("CXRAY_ADB"); p != "" {
		path = p
	}
	if _, err := os.Stat(path); err != nil {
		t.Skipf("SKIPPED: no ADB at %s; install it with 'apt-get install mstflint' (or set CXRAY_ADB) to run the ADB/kernel cross-check", path)
	}
	a, err := adb.LoadFile(path)
	if err != nil {
		t.Fatalf("load ADB: %v", err)
	}
	paths, err := FindAll()
	if err != nil {
		t.Skipf("SKIPPED, no kernel header to test against: %v", err)
	}
	// Every installed header is checked (the newest, which the command
	// database comes from, and 6.1 kept as a cross-check); an allow-list
	// entry is stale only when no header needs it.
	stale := map[string]int{}
	for _, path := range paths {
		t.Run(filepath.Base(strings.TrimSuffix(path, "/include/linux/mlx5/mlx5_ifc.h")), func(t *testing.T) {
			h, err := LoadFile(path)
			if err != nil {
				t.Fatalf("%s does not parse: %v", path, err)
			}
			for _, s := range crossCheckHeader(t, a, h) {
				stale[s]++
			}
		})
	}
	for s, n := range stale {
		if n == len(paths) {
			t.Errorf("allow-list entry no longer matches anything (the sources changed; review it): %s", s)
		}
	}
}

// crossCheckHeader compares the ADB with one header and returns the
// allow-list entries that matched nothing there.
func crossCheckHeader(t *testing.T, a *prm.DB, h *Header) []string {
	r := Compare(a, h)
	t.Log("\n" + r.Summary())
	for _, l := range append(append([]*Layout{}, r.Registers...), r.Layouts...) {
		for _, m := range l.Unexplained() {
			t.Errorf("%s: %s mismatch\n\tkernel %s\n\tADB    %s", l.title(), m.Kind, m.Kernel, m.ADB)
		}
		for _, e := range l.Errors {
			t.Errorf("%s: %s", l.title(), e)
		}
		if testing.Verbose() {
			t.Log(l.Detail())
		}
	}
	for _, e := range r.IDErrors {
		t.Errorf("register ID differs: %s", e)
	}
	for _, e := range r.Errors {
		t.Error(e)
	}
	// The pairing itself must keep working: these registers are in both.
	have := map[string]*Layout{}
	for _, l := range r.Registers {
		have[l.Register] = l
	}
	for _, reg := range []string{"PAOS", "PMAOS", "PMLP", "PTYS", "MCIA", "PDDR", "PPCNT", "MCQI", "MCAM", "QETCR"} {
		if have[reg] == nil {
			t.Errorf("register %s was not paired with a kernel struct", reg)
		}
	}
	if c := r.Counts(true); c.Matched < 500 {
		t.Errorf("only %d fields matched; the pairing rules have broken", c.Matched)
	}
	return r.Stale
}

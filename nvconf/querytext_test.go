package nvconf_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/nvconf"
)

func capture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func setting(t *testing.T, r *nvconf.QueryResult, name string) nvconf.Setting {
	t.Helper()
	for _, s := range r.Settings {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no setting %s", name)
	return nvconf.Setting{}
}

func text(v *nvconf.Value) string {
	if v == nil {
		return "<none>"
	}
	return v.Text
}

// mstconfig 4.21's query outputs, captured on the emulator, read into the
// model Query returns.
func TestQueryTextCaptured(t *testing.T) {
	db := load(t)
	qs, err := nvconf.ParseQueryText(capture(t, "mstconfig-q.txt"), db)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 1 {
		t.Fatalf("%d devices", len(qs))
	}
	q := qs[0]
	if q.DeviceType != "ConnectX7" || q.Name != "EMU-CX7-2P400G" || q.Device != "0000:03:00.0" || !strings.HasPrefix(q.Description, "Emulated NVIDIA ConnectX-7") {
		t.Errorf("header: %+v", q)
	}
	if diff := cmp.Diff([]string{"Next Boot"}, q.Columns); diff != "" {
		t.Errorf("columns: %s", diff)
	}
	if len(q.Unknown) != 0 || len(q.Notes) != 0 {
		t.Errorf("unknown %v notes %v", q.Unknown, q.Notes)
	}
	s := setting(t, q.Result, "LINK_TYPE_P2")
	if s.Ref.Param == nil || s.TLV != "nv_vpi_link_type" || s.Ref.Inst.Port != 2 || text(s.Next) != "ETH(2)" || s.Next.Raw != 2 || s.Default != nil {
		t.Errorf("LINK_TYPE_P2: %+v", s)
	}
	if s := setting(t, q.Result, "LOG_TX_PSN_WINDOW"); s.Next.Raw != 9 || !s.Next.Numeric {
		t.Errorf("LOG_TX_PSN_WINDOW: %+v", s.Next)
	}
	if n := len(q.Result.Settings); n < 100 {
		t.Errorf("%d settings", n)
	}

	// -e: Default, Current and Next Boot; '*' where they differ.
	qs, err = nvconf.ParseQueryText(capture(t, "mstconfig-e-q-pending.txt"), db)
	if err != nil {
		t.Fatal(err)
	}
	q = qs[0]
	if !q.Result.Extended || len(q.Columns) != 3 || len(q.Notes) != 0 {
		t.Errorf("extended: %v %v notes %v", q.Result.Extended, q.Columns, q.Notes)
	}
	for name, want := range map[string][3]string{
		"LOG_TX_PSN_WINDOW": {"9", "9", "14"},
		"NUM_OF_VFS":        {"0", "8", "6"},
		"LINK_TYPE_P2":      {"ETH(2)", "ETH(2)", "IB(1)"},
		"SRIOV_EN":          {"False(0)", "True(1)", "True(1)"},
	} {
		s := setting(t, q.Result, name)
		if got := [3]string{text(s.Default), text(s.Current), text(s.Next)}; got != want || !s.Modified {
			t.Errorf("%s: %v modified %v, want %v", name, got, s.Modified, want)
		}
	}
	if s := setting(t, q.Result, "SRIOV_EN"); s.Pending {
		t.Error("SRIOV_EN: Next equals Current, nothing pending")
	}
	if n := q.Result.PendingCount(); n != 3 {
		t.Errorf("%d pending", n)
	}
}

// A diff of two query outputs, and of a query output with a backup.
func TestCompareSettings(t *testing.T) {
	db, hc := load(t), codec(t)
	a, err := nvconf.ReadConfigFile(capture(t, "mstconfig-e-q.txt"), db, hc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := nvconf.ReadConfigFile(capture(t, "mstconfig-e-q-pending.txt"), db, hc)
	if err != nil {
		t.Fatal(err)
	}
	got := nvconf.CompareSettings(a.Result, b.Result)
	want := []nvconf.SettingChange{
		{Name: "LINK_TYPE_P2", TLV: "nv_vpi_link_type", Column: "Next Boot", Old: "ETH(2)", New: "IB(1)"},
		{Name: "LOG_TX_PSN_WINDOW", TLV: "nv_sw_offload_conf", Column: "Next Boot", Old: "9", New: "14"},
		{Name: "NUM_OF_VFS", TLV: "nv_global_pci_conf", Column: "Next Boot", Old: "8", New: "6"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("query vs query (-want +got):\n%s", diff)
	}
	// mstconfig's backup after the change: the stored TLVs, as Next Boot.
	bk, err := nvconf.ReadConfigFile(capture(t, "mstconfig-backup-pending.txt"), db, hc)
	if err != nil {
		t.Fatal(err)
	}
	if bk.Kind != "mstflint raw TLV file" || !bk.Unchecked {
		t.Errorf("backup: %s unchecked=%v", bk.Kind, bk.Unchecked)
	}
	for name, want := range map[string]string{"LOG_TX_PSN_WINDOW": "14", "NUM_OF_VFS": "6", "LINK_TYPE_P2": "IB(1)"} {
		if s := setting(t, bk.Result, name); text(s.Next) != want {
			t.Errorf("backup %s = %s, want %s", name, text(s.Next), want)
		}
	}
	// Where both have a parameter, the backup agrees with the query.
	for _, c := range nvconf.CompareSettings(b.Result, bk.Result) {
		if c.Old != "" && c.New != "" {
			t.Errorf("query and backup disagree: %+v", c)
		}
	}
}

func TestQueryTextErrors(t *testing.T) {
	db := load(t)
	q := capture(t, "mstconfig-e-q.txt")
	head := q[:strings.Index(q, "Configurations:")]
	cases := map[string]string{
		"":                            "no Configurations: table",
		head:                          "ends before its Configurations: table",
		"-E- Failed to open device\n": "the tool's error",
		"Configurations:  Foo Bar\n":  "names columns",
		"Configurations:  Next Boot\n   SRIOV_EN\n": "SRIOV_EN has 0 value(s); the table has 1 column(s)",
		"Configurations:  Next Boot\n  $$$ 1\n":     "is not a parameter name",
		"hello world\nConfigurations:  Next Boot\n": "neither a device header line nor a parameter",
	}
	for in, want := range cases {
		_, err := nvconf.ParseQueryText(in, db)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40q: %v, want %q", in, err, want)
		}
	}
	// Names the database does not know are kept and listed; a label that
	// disagrees with the database is a note.
	qs, err := nvconf.ParseQueryText("Configurations:  Next Boot\n  NOT_A_PARAM  1\n  LINK_TYPE_P1  FOO(2)\n  SRIOV_EN  1\n", db)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"NOT_A_PARAM"}, qs[0].Unknown); diff != "" {
		t.Errorf("unknown: %s", diff)
	}
	if len(qs[0].Notes) != 1 || !strings.Contains(qs[0].Notes[0], "database calls 2 ETH(2)") {
		t.Errorf("notes: %v", qs[0].Notes)
	}
}

// Whatever the text, ParseQueryText does not panic; what it reads has one
// setting per parameter line, each value the text it was printed as.
func FuzzParseQueryText(f *testing.F) {
	// The captures' first lines: small seeds keep the target fast.
	for _, c := range []string{"mstconfig-q.txt", "mstconfig-e-q-pending.txt"} {
		lines := strings.SplitAfter(capture(f, c), "\n")
		f.Add(strings.Join(lines[:min(len(lines), 24)], ""))
	}
	f.Add("Device #1:\nConfigurations:   Default Current Next Boot\n*   A  1  2  3\n")
	db := load(f)
	f.Fuzz(func(t *testing.T, s string) {
		qs, err := nvconf.ParseQueryText(s, db)
		if err != nil {
			return
		}
		for _, q := range qs {
			for _, st := range q.Result.Settings {
				if st.Next == nil {
					t.Fatalf("%s has no Next Boot value", st.Name)
				}
				for _, v := range []*nvconf.Value{st.Next, st.Default, st.Current} {
					if v != nil && v.Text != "" && !strings.Contains(s, v.Text) {
						t.Fatalf("value %q is not in the text", v.Text)
					}
				}
			}
		}
	})
}

package nvconf_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/querytext"
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
		"hello world\nConfigurations:  Next Boot\n": "table has no parameter line",
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
					if v != nil && v.Text != "" && !strings.Contains(querytext.StripANSI(s), v.Text) {
						t.Fatalf("value %q is not in the text", v.Text)
					}
				}
			}
		}
	})
}

// Query outputs as people paste them: every variant reads the parameters
// shown, with the Next Boot values the text gives, and notes what was
// assumed. The texts are our own, in mstconfig's format.
func TestQueryTextLenient(t *testing.T) {
	db := load(t)
	full := capture(t, "mstconfig-q.txt")
	rowsOf := func(q nvconf.QueryText) map[string]string {
		m := map[string]string{}
		for _, s := range q.Result.Settings {
			m[s.Name] = text(s.Next)
		}
		return m
	}
	base, err := nvconf.ParseQueryText(full, db)
	if err != nil {
		t.Fatal(err)
	}
	want := rowsOf(base[0])
	crlf := strings.ReplaceAll(full, "\n", "\r\n")
	conf := full[strings.Index(full, "Configurations:"):]
	confLines := strings.Split(conf, "\n")
	elided := strings.Join(append(append(append([]string{}, confLines[:6]...), "        (...)"), confLines[20:]...), "\n")
	cut := strings.TrimRight(full, "\n")
	cut = cut[:strings.LastIndex(cut, "\n")+14] // inside the last row's name
	for _, c := range []struct {
		name, text string
		rows       int // -1: as many as the full output
		note       string
	}{
		{"prompt", "root@gpu-node-07:~# mstconfig -d 03:00.0 q\n" + full, -1, "line 1 skipped"},
		{"crlf-prompt", "$ sudo mlxconfig -d /dev/mst/mt4129_pciconf0 query\r\n" + crlf, -1, "line 1 skipped"},
		{"ansi", "\x1b[01;32muser@host\x1b[00m:~$ mstconfig -d 03:00.0 q\n" + strings.Replace(full, "SRIOV_EN", "\x1b[01;31mSRIOV_EN\x1b[m", 1), -1, "line 1 skipped"},
		{"indented", "    " + strings.ReplaceAll(strings.TrimRight(full, "\n"), "\n", "\n    ") + "\n", -1, ""},
		{"elided", elided, 5 + len(confLines[20:]) - 1, "rows were left out"},
		{"cut", cut, len(want) - 1, "the paste ends inside a row"},
		{"prose-after", full + "\nthen I rebooted and nothing changed\n", -1, "follows the table"},
	} {
		t.Run(c.name, func(t *testing.T) {
			qs, err := nvconf.ParseQueryText(c.text, db)
			if err != nil {
				t.Fatal(err)
			}
			got := rowsOf(qs[0])
			n := c.rows
			if n < 0 {
				n = len(want)
			}
			if len(got) != n {
				t.Errorf("%d parameters, want %d", len(got), n)
			}
			for k, v := range got {
				if want[k] != v {
					t.Errorf("%s = %q, the full output has %q", k, v, want[k])
				}
			}
			if c.note != "" && !strings.Contains(strings.Join(qs[0].Notes, "\n"), c.note) {
				t.Errorf("no note %q: %q", c.note, qs[0].Notes)
			}
		})
	}
}

// A `| grep` fragment without its heading is read as the Next Boot column,
// and says so; the mlxconfig set confirmation table reads its New column as
// Next Boot.
func TestQueryTextFragmentAndSetTable(t *testing.T) {
	db := load(t)
	frag := "[root@node ~]# mlxconfig -d 0000:03:00.0 q | grep -E 'SRIOV|VFS'\n" +
		"         NUM_OF_VFS                          \x1b[01;31m\x1b[K8\x1b[m\x1b[K               \n" +
		"         SRIOV_EN                            True(1)         \n"
	qs, err := nvconf.ParseQueryText(frag, db)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range qs[0].Result.Settings {
		got[s.Name] = text(s.Next)
	}
	if d := cmp.Diff(map[string]string{"NUM_OF_VFS": "8", "SRIOV_EN": "True(1)"}, got); d != "" {
		t.Errorf("fragment (-want +got):\n%s", d)
	}
	if !strings.Contains(strings.Join(qs[0].Notes, "\n"), "no header: read as the Next Boot column; a fragment of 2 parameter(s)") {
		t.Errorf("notes %q", qs[0].Notes)
	}
	// Rows no database knows are no fragment.
	if _, err := nvconf.ParseQueryText("  HELLO  world\n", db); err == nil {
		t.Error("an unknown word pair was read as a fragment")
	}

	set := "Device #1:\n----------\n\nDevice type:    ConnectX6DX\nDevice:         0000:81:00.0\n\n" +
		"Configurations:                              Next Boot       New\n" +
		"         SRIOV_EN                            False(0)        True(1)         \n" +
		"         NUM_OF_VFS                          0               16              \n\n" +
		" Apply new Configuration? (y/n) [n] : y\nApplying... Done!\n-I- Please reboot machine to load new configurations.\n"
	qs, err = nvconf.ParseQueryText(set, db)
	if err != nil {
		t.Fatal(err)
	}
	got = map[string]string{}
	for _, s := range qs[0].Result.Settings {
		got[s.Name] = text(s.Next)
	}
	if d := cmp.Diff(map[string]string{"NUM_OF_VFS": "16", "SRIOV_EN": "True(1)"}, got); d != "" {
		t.Errorf("set table (-want +got):\n%s", d)
	}
	if n := strings.Join(qs[0].Notes, "\n"); !strings.Contains(n, "New column is read as Next Boot") || !strings.Contains(n, "NUM_OF_VFS: Next Boot 0 before the set, 16 after") {
		t.Errorf("notes %q", qs[0].Notes)
	}
}

// A query output of several devices is never read as its first: without a
// choice it is a MultiDeviceError listing them; with one, that device.
func TestQueryTextMultiDevice(t *testing.T) {
	db := load(t)
	one := capture(t, "mstconfig-q.txt")
	two := strings.Replace(strings.Replace(one, "0000:03:00.0", "0000:04:00.0", 1), "         NUM_OF_VFS                          8", "         NUM_OF_VFS                          4", 1)
	both := one + "\n" + two
	_, err := nvconf.ReadConfigFile(both, db, nil)
	var me *nvconf.MultiDeviceError
	if !errors.As(err, &me) || len(me.Devices) != 2 || !strings.Contains(err.Error(), "2: 0000:04:00.0 (ConnectX7)") {
		t.Fatalf("%v", err)
	}
	for _, pick := range []string{"2", "04:00.0"} {
		cf, err := nvconf.ReadConfigFileDevice(both, db, nil, pick)
		if err != nil {
			t.Fatal(err)
		}
		if cf.Devices[0].Device != "0000:04:00.0" || text(setting(t, cf.Result, "NUM_OF_VFS").Next) != "4" {
			t.Errorf("%s: device %s", pick, cf.Devices[0].Device)
		}
	}
	if _, err := nvconf.ReadConfigFileDevice(both, db, nil, "3"); err == nil || !strings.Contains(err.Error(), "devices 1..2") {
		t.Errorf("device 3: %v", err)
	}
}

package querytext

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The reader keeps what the text says, as printed: rows with their lines,
// stars and values, the header, and notes on what it skipped.
func TestParseTables(t *testing.T) {
	text := "root@host:~# mstconfig -d 03:00.0 -e q\n" +
		"\n" +
		"Device #1:\n" +
		"----------\n" +
		"\n" +
		"Device type:    ConnectX7\n" +
		"Name:           MCX75310AAS-NEA_Ax\n" +
		"Description:    NVIDIA ConnectX-7 HHHL adapter card\n" +
		"Device:         03:00.0\n" +
		"\n" +
		"Configurations:                                      Default         Current         Next Boot\n" +
		"         MEMIC_BAR_SIZE                              0               0               0\n" +
		"*        SRIOV_EN                                    False(0)        False(0)        \x1b[01;31mTrue(1)\x1b[m\n" +
		"(...)\n" +
		"         NUM_OF_VFS                                  0               0               0\n" +
		"Apply new Configuration? (y/n) [n] : n\n"
	got, err := Parse(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Table{{
		DeviceType: "ConnectX7", Name: "MCX75310AAS-NEA_Ax", Description: "NVIDIA ConnectX-7 HHHL adapter card", Device: "03:00.0",
		Columns: []string{"Default", "Current", "Next Boot"},
		Rows: []Row{
			{Line: 12, Name: "MEMIC_BAR_SIZE", Values: []string{"0", "0", "0"}},
			{Line: 13, Star: true, Name: "SRIOV_EN", Values: []string{"False(0)", "False(0)", "True(1)"}},
			{Line: 15, Name: "NUM_OF_VFS", Values: []string{"0", "0", "0"}},
		},
		Notes: []string{
			`line 1 skipped: "root@host:~# mstconfig -d 03:00.0 -e q" is not part of the query output`,
			`line 14: "(...)": rows were left out of the paste; only the parameters shown are read`,
			`line 16 skipped: "Apply new Configuration? (y/n) [n] : n" follows the table`,
		},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Parse (-want +got):\n%s", d)
	}
}

// Several devices give one table each; mlxconfig set's confirmation table
// is marked and read into the Current / Next Boot slots; a device cut
// off before its table is a note after the last table read.
func TestParseDevicesAndSetTable(t *testing.T) {
	text := "Device #1:\nDevice:  03:00.0\nConfigurations:   Next Boot\n         A_B   1\n" +
		"Device #2:\nDevice:  03:00.1\nConfigurations:   Next Boot   New\n         A_B   1   2\n" +
		"Device #3:\nDevice:  03:00.2\n"
	got, err := Parse(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Table{
		{Device: "03:00.0", Columns: []string{"Next Boot"}, Rows: []Row{{Line: 4, Name: "A_B", Values: []string{"1"}}}},
		{Device: "03:00.1", Columns: []string{"Current", "Next Boot"}, SetTable: true, Rows: []Row{{Line: 8, Name: "A_B", Values: []string{"1", "2"}}},
			After: []string{"a device header without its Configurations: table was left out (cut short?)"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Parse (-want +got):\n%s", d)
	}
}

// Lines without a heading are a fragment only when known accepts one of
// their names: the reader knows no database, its caller does.
func TestParseFragment(t *testing.T) {
	text := "$ mlxconfig -d 03:00.0 q | grep SRIOV\n         SRIOV_EN      True(1)\n"
	want := []Table{{
		Columns: []string{"Next Boot"}, Fragment: true,
		Rows:  []Row{{Line: 2, Name: "SRIOV_EN", Values: []string{"True(1)"}}},
		Notes: []string{"no header: read as the Next Boot column; a fragment of 1 parameter(s)", `line 1 skipped: the command line "$ mlxconfig -d 03:00.0 q | grep SRIOV"`},
	}}
	for _, known := range []func(string) bool{nil, func(n string) bool { return n == "SRIOV_EN" }} {
		got, err := Parse(text, known)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("Parse (-want +got):\n%s", d)
		}
	}
	if _, err := Parse(text, func(string) bool { return false }); err == nil {
		t.Error("a fragment with no known parameter was read")
	}
}

// What cannot be read is refused with its line.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"Device #1:\n-E- Failed to open device\n", "line 2: the output holds the tool's error"},
		{"Configurations:   Default Current Next Boot\n         A_B   1   2   3\n         C_D   1\n         E_F   1   2   3\n", "line 3: C_D has 1 value(s)"},
		{"Configurations:   Left Right\n", "line 1: the Configurations: heading names columns"},
		{"Device #1:\nDevice: 03:00.0\n", "line 2: the output ends before its Configurations: table"},
		{"hello\n", "this is not the output of mlxconfig/mstconfig q"},
	} {
		_, err := Parse(c.text, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v; want %q", c.text, err, c.want)
		}
	}
}

// Whatever Parse reads, each row has one value per column of its table,
// its line is a line of the text that holds its name, and a table that is
// not a fragment came from a Configurations: heading.
func FuzzParse(f *testing.F) {
	f.Add("Device #1:\nConfigurations:   Default Current Next Boot\n*   A_B  1  2  3\n")
	f.Add("Configurations:   Next Boot   New\n         A_B   1   2\n(...)\n$ x\n")
	f.Add("$ mlxconfig q | grep X\n  SRIOV_EN  True(1)\n")
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := Parse(s, nil)
		if err != nil {
			return
		}
		lines := strings.Split(StripANSI(strings.TrimPrefix(s, "\ufeff")), "\n")
		for _, tb := range ts {
			if !tb.Fragment && !Is(StripANSI(strings.TrimPrefix(s, "\ufeff"))) {
				t.Fatalf("a table without a Configurations: heading in %q", s)
			}
			if len(tb.Rows) == 0 {
				t.Fatalf("a table with no row")
			}
			for _, r := range tb.Rows {
				if len(r.Values) != len(tb.Columns) {
					t.Fatalf("%s: %d values for columns %q", r.Name, len(r.Values), tb.Columns)
				}
				if r.Line < 1 || r.Line > len(lines) || !strings.Contains(lines[r.Line-1], r.Name) {
					t.Fatalf("row %s at line %d is not on that line", r.Name, r.Line)
				}
			}
		}
	})
}

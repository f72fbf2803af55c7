package main

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The committed zpaths.go is what the generator makes of the committed
// list and built-in database: a changed list or a regenerated hca.facts
// needs `go generate ./prm/regpath`.
func TestGeneratedUpToDate(t *testing.T) {
	list, err := os.ReadFile("../../../prm/regpath/paths.list")
	if err != nil {
		t.Fatal(err)
	}
	facts, err := os.ReadFile("../../../prm/builtin/hca.facts")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Render(list, facts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../../prm/regpath/zpaths.go")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("prm/regpath/zpaths.go is stale; run `go generate ./prm/regpath` (-want +got):\n%s", d)
	}
}

// A list line naming a field the built-in database does not have, or a
// name twice, is refused with its line number, not written.
func TestRenderRefusesWrongLists(t *testing.T) {
	facts, err := os.ReadFile("../../../prm/builtin/hca.facts")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ list, want string }{
		{"PAOS\tOperStatus\toper_stat\n", "paths.list:1: PAOS oper_stat"},
		{"# c\nNOPE\tX\tfield\n", "paths.list:2:"},
		{"PAOS\tA\tadmin_status\nPAOS\tA\toper_status\n", "paths.list:2: PAOSA is named twice"},
		{"PAOS\toper_status\n", "paths.list:1: want REGISTER NAME PATH"},
	} {
		_, err := Render([]byte(c.list), facts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Render(%q) = %v; want an error containing %q", c.list, err, c.want)
		}
	}
}

// A family line names each member, checks each against the database, and
// gives the arrays code loops over: the paths, and for words the words.
func TestRenderFamilies(t *testing.T) {
	facts, err := os.ReadFile("../../../prm/builtin/hca.facts")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Render([]byte("PPLM\tCap\tfec_override_cap_{25g|10g_40g}\nPDDR\tBias\tpage_data.pddr_module_info_ext.tx_bias_lane{0..1}\n"), facts)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`PPLMCap25g = "fec_override_cap_25g"`,
		`PPLMCap10g40g = "fec_override_cap_10g_40g"`,
		`var PPLMCap = [...]string{PPLMCap25g, PPLMCap10g40g}`,
		`var PPLMCapKeys = [...]string{"25g", "10g_40g"}`,
		`PDDRBias1 = "page_data.pddr_module_info_ext.tx_bias_lane1"`,
		`var PDDRBias = [...]string{PDDRBias0, PDDRBias1}`,
	} {
		if flat := strings.Join(strings.Fields(string(out)), " "); !strings.Contains(flat, want) { // gofmt aligns the constants
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "PDDRBiasKeys") {
		t.Error("a numbered family got a Keys array")
	}
	for _, c := range []struct{ list, want string }{
		{"PPLM\tCap\tfec_override_cap_{25g|nope}\n", "paths.list:1: PPLM fec_override_cap_nope"},
		{"PPLM\tCap\tfec_override_cap_{25g|}\n", "is no field-name part"},
		{"PDDR\tB\tx{3..1}\n", "want {A..B}"},
		{"PDDR\tB\tx{1..2\n", "an unclosed {"},
	} {
		if _, err := Render([]byte(c.list), facts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Render(%q) = %v; want an error containing %q", c.list, err, c.want)
		}
	}
}

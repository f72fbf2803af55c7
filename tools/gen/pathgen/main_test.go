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

package facts

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"github.com/cxray/cxray/prm/adb"
)

// Every revision survives Write then Read with the same layouts, including
// the newer features (conditional unions, dynamic arrays).
func TestRoundTripHistory(t *testing.T) {
	for _, path := range prmhistorytest.Files(t) {
		full, err := adb.LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, full, []string{"test"}); err != nil {
			t.Fatal(err)
		}
		for _, n := range full.Nodes {
			for _, f := range n.Fields {
				if len(f.Descr) > 24 && strings.Contains(buf.String(), f.Descr) {
					t.Fatalf("%s: facts contain the description of %s.%s", path, n.Name, f.Name)
				}
			}
		}
		back, err := Read("facts", buf.String())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if back.Revision != full.Revision || len(back.Registers) != len(full.Registers) {
			t.Fatalf("%s: %s/%d vs %s/%d", path, back.Revision, len(back.Registers), full.Revision, len(full.Registers))
		}
		for i, r := range full.Registers {
			pa, _ := full.RegisterPlan(r)
			pb, err := back.RegisterPlan(back.Registers[i])
			if err != nil {
				t.Fatal(err)
			}
			la, lb := pa.Leaves(), pb.Leaves()
			if len(la) != len(lb) || len(pa.Warnings) != len(pb.Warnings) {
				t.Fatalf("%s %s: %d/%d leaves", path, r.Name, len(la), len(lb))
			}
			for j := range la {
				if la[j].Path != lb[j].Path || la[j].Bit != lb[j].Bit || la[j].Width != lb[j].Width || la[j].Access != lb[j].Access || la[j].When != lb[j].When {
					t.Fatalf("%s %s: %+v vs %+v", path, r.Name, la[j], lb[j])
				}
			}
		}
	}
}

func TestReadErrors(t *testing.T) {
	cases := map[string]string{
		"node\tx\n":                          "node needs a name and a size",
		"f\ta\t0\t8\tRO\n":                   "field outside a node",
		"node\tx\t32\t\nf\ta\t0\t8\tRX\n":    "unknown access kind",
		"node\tx\t32\t\nf\ta\t0\t8\tRO\tq=1": "unknown field key q",
		"bogus\n":                            "unknown record bogus",
		"reg\tX\t1\tnope\t4\n":               `layout node "nope" is not defined`,
	}
	for in, want := range cases {
		if _, err := Read("t", in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

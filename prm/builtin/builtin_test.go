package builtin

import (
	"os"
	"testing"

	"github.com/cxray/cxray/prm/adb"
	"github.com/cxray/cxray/prm/facts"
)

func TestLoad(t *testing.T) {
	db, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if db.Revision != "Rev 0.57" || Revision() != db.Revision {
		t.Errorf("revision %q, want Rev 0.57", db.Revision)
	}
	if len(db.Registers) != 192 {
		t.Errorf("%d registers, want the 192 of the installed HCA ADB", len(db.Registers))
	}
	if db.HasDescriptions {
		t.Error("the built-in database must not claim descriptions")
	}
	for _, n := range db.Nodes {
		if n.Descr != "" {
			t.Fatalf("node %s carries description text", n.Name)
		}
		for _, f := range n.Fields {
			if f.Descr != "" {
				t.Fatalf("field %s.%s carries description text", n.Name, f.Name)
			}
		}
	}
}

// The embedded file must be exactly what the generator makes from the
// installed ADB: go generate is reproducible and nobody edited the output.
func TestReproducible(t *testing.T) {
	if _, err := os.Stat(adb.MstflintPath); err != nil {
		t.Skipf("SKIP: %s is missing; install it with 'apt-get install -y mstflint' to check the built-in database", adb.MstflintPath)
	}
	got, err := facts.Generate(adb.MstflintPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != Facts() {
		t.Fatal("prm/builtin/hca.facts differs from what 'go generate ./prm/builtin' makes from the installed ADB; run go generate and commit the result")
	}
}

// Every register of the built-in database has the same layout as the ADB it
// came from: same leaves, offsets, widths, access kinds and enums.
func TestSameLayoutsAsADB(t *testing.T) {
	if _, err := os.Stat(adb.MstflintPath); err != nil {
		t.Skipf("SKIP: %s is missing; install it with 'apt-get install -y mstflint'", adb.MstflintPath)
	}
	full, err := adb.LoadFile(adb.MstflintPath)
	if err != nil {
		t.Fatal(err)
	}
	bi, _ := Load()
	if len(full.Registers) != len(bi.Registers) {
		t.Fatalf("register count %d vs %d", len(full.Registers), len(bi.Registers))
	}
	for i, r := range full.Registers {
		b := bi.Registers[i]
		if r.Name != b.Name || r.ID != b.ID || r.Size != b.Size {
			t.Fatalf("register %v vs %v", r, b)
		}
		pa, err := full.RegisterPlan(r)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := bi.RegisterPlan(b)
		if err != nil {
			t.Fatal(err)
		}
		la, lb := pa.Leaves(), pb.Leaves()
		if len(la) != len(lb) {
			t.Fatalf("%s: %d leaves vs %d", r.Name, len(la), len(lb))
		}
		for j := range la {
			x, y := la[j], lb[j]
			if x.Path != y.Path || x.Bit != y.Bit || x.Width != y.Width || x.Count != y.Count || x.Access != y.Access || x.When != y.When || len(x.Enum()) != len(y.Enum()) {
				t.Fatalf("%s: leaf %+v vs %+v", r.Name, x, y)
			}
		}
	}
}

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := New(); err != nil {
			b.Fatal(err)
		}
	}
}

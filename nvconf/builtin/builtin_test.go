package builtin

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/cxray/cxray/nvconf"
)

func TestLoad(t *testing.T) {
	db, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(db.TLVs) != 151 || db.ParamCount() != 810 || len(db.Warnings) > 0 {
		t.Errorf("%d TLVs, %d params, warnings %v; want the installed host database's 151 and 810", len(db.TLVs), db.ParamCount(), db.Warnings)
	}
	if db.HasDescriptions {
		t.Error("the built-in set must not claim descriptions")
	}
	for _, tl := range db.TLVs {
		if tl.Descr != "" {
			t.Fatalf("TLV %s carries description text", tl.Name)
		}
		for _, p := range tl.Params {
			if p.Descr != "" {
				t.Fatalf("%s.%s carries description text", tl.Name, p.Name)
			}
		}
	}
	if strings.Contains(Facts(), "description") {
		t.Error("the facts file mentions descriptions")
	}
	p := db.ParamByMlxName("LOG_TX_PSN_WINDOW")
	if p == nil || p.TLV.Name != "nv_sw_offload_conf" || p.MaxVal != "63" {
		t.Errorf("LOG_TX_PSN_WINDOW: %+v", p)
	}
}

// The embedded file is exactly what the generator makes from the installed
// database: go generate is reproducible and nobody edited the output.
func TestReproducible(t *testing.T) {
	if _, err := os.Stat(nvconf.MstflintPath); err != nil {
		t.Skipf("SKIP: %s is missing; install it with 'apt-get install -y mstflint' to check the built-in parameter set", nvconf.MstflintPath)
	}
	got, err := nvconf.GenerateFacts(nvconf.MstflintPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != Facts() {
		t.Fatal("nvconf/builtin/host.nvfacts differs from what 'go generate ./nvconf/builtin' makes from the installed database; run go generate and commit the result")
	}
}

// Every fact of the built-in set equals the SQLite database it came from.
func TestSameAsSQLite(t *testing.T) {
	if _, err := os.Stat(nvconf.MstflintPath); err != nil {
		t.Skipf("SKIP: %s is missing; install it with 'apt-get install -y mstflint'", nvconf.MstflintPath)
	}
	full, err := nvconf.LoadSQLite(nvconf.MstflintPath)
	if err != nil {
		t.Fatal(err)
	}
	if !full.HasDescriptions {
		t.Error("the installed database has descriptions")
	}
	bi, _ := Load()
	if len(full.TLVs) != len(bi.TLVs) {
		t.Fatalf("%d vs %d TLVs", len(full.TLVs), len(bi.TLVs))
	}
	for i, a := range full.TLVs {
		b := bi.TLVs[i]
		if a.Name != b.Name || a.ID != b.ID || a.Class != b.Class || a.Size != b.Size || a.Cap != b.Cap || a.Version != b.Version || a.Target != b.Target || a.Title != b.Title || len(a.Params) != len(b.Params) {
			t.Fatalf("TLV %+v vs %+v", a, b)
		}
		for j, p := range a.Params {
			q := *b.Params[j]
			pp := *p
			pp.Descr, pp.TLV, q.TLV = "", nil, nil
			if !reflect.DeepEqual(pp, q) {
				t.Fatalf("%s: %+v vs %+v", a.Name, pp, q)
			}
		}
	}
}

package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/adb"
	"github.com/cxray/cxray/prm/builtin"
)

func TestOpenOrder(t *testing.T) {
	dir := prmhistorytest.Require(t)
	rev64 := filepath.Join(dir, "hca-ext-rev0.64.adb")

	// An explicit path wins over the environment.
	t.Setenv(EnvADB, filepath.Join(dir, "hca-ext-rev0.51.adb"))
	db, err := Open(rev64)
	if err != nil || db.Revision != "Rev 0.64" {
		t.Fatalf("explicit path: %v %v", db, err)
	}
	db, err = Open("")
	if err != nil || db.Revision != "Rev 0.51" {
		t.Fatalf("$CXRAY_ADB: %v %v", db, err)
	}
	t.Setenv(EnvADB, "builtin")
	db, err = Open("")
	if err != nil || db.Source != builtin.Source || db.HasDescriptions {
		t.Fatalf("builtin: %v %v", db, err)
	}

	// No choice: the built-in facts, with descriptions from an installed ADB
	// of the same revision.
	t.Setenv(EnvADB, "")
	old := adb.MstflintPath
	defer func() { adb.MstflintPath = old }()
	oldMFT := adb.MFTPaths
	defer func() { adb.MFTPaths = oldMFT }()
	adb.MFTPaths = nil

	adb.MstflintPath = filepath.Join(t.TempDir(), "missing.adb")
	db, _ = Open("")
	if db.Source != builtin.Source || db.HasDescriptions {
		t.Errorf("nothing installed: %s", db.Source)
	}

	adb.MstflintPath = filepath.Join(dir, "hca-ext-rev0.57.adb")
	db, _ = Open("")
	if !strings.HasPrefix(db.Source, builtin.Source) || !db.HasDescriptions {
		t.Fatalf("same revision installed: %s", db.Source)
	}
	r, _ := db.Register("PMAOS")
	if d := db.FieldDescr(db.Node(r).Field("module")); d != "Module number." {
		t.Errorf("description of PMAOS.module: %q", d)
	}
	if shared, _ := builtin.Load(); shared.HasDescriptions {
		t.Error("descriptions leaked into the shared built-in database")
	}

	// A different installed revision is loaded whole.
	adb.MstflintPath = rev64
	db, _ = Open("")
	if db.Revision != "Rev 0.64" || db.Source != rev64 {
		t.Errorf("newer installed: %s %s", db.Revision, db.Source)
	}
	if _, err := os.Stat(rev64); err != nil {
		t.Fatal(err)
	}
}

// Rev 0.51 names no selector for PPCNT's counter_set or PDDR's page_data:
// loaded through Load, the unions take the built-in database's selectors,
// so a group decodes as its own member only, and the database says so.
func TestLoadAdoptsSelectors(t *testing.T) {
	dir := prmhistorytest.Require(t)
	raw, err := adb.LoadFile(filepath.Join(dir, "hca-ext-rev0.51.adb"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := Load(filepath.Join(dir, "hca-ext-rev0.51.adb"))
	if err != nil {
		t.Fatal(err)
	}
	members := func(db *prm.DB, reg string, index ...prm.Assignment) map[string]bool {
		t.Helper()
		r, err := db.Register(reg)
		if err != nil {
			t.Fatal(err)
		}
		p, err := db.RegisterPlan(r)
		if err != nil {
			t.Fatal(err)
		}
		buf := p.NewBuffer()
		if err := p.Encode(buf, index); err != nil {
			t.Fatal(err)
		}
		d, err := p.Decode(buf)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, row := range d.Rows() {
			if segs := strings.Split(row.Path, "."); len(segs) > 2 {
				out[segs[0]+"."+segs[1]] = true
			}
		}
		return out
	}
	perPrio := []prm.Assignment{{Path: "grp", Value: "0x10"}}
	if got := members(raw, "PPCNT", perPrio...); len(got) < 5 {
		t.Fatalf("the raw Rev 0.51 PPCNT decodes %d members: the premise (no selector) no longer holds", len(got))
	}
	if got, want := members(db, "PPCNT", perPrio...), map[string]bool{"counter_set.eth_per_prio_grp_data_layout_ext": true}; !cmp.Equal(got, want) {
		t.Errorf("PPCNT grp=0x10 decodes %v, want only %v", got, want)
	}
	if got := members(db, "PDDR", prm.Assignment{Path: "page_select", Value: "0"}); len(got) != 1 {
		t.Errorf("PDDR page_select=0 decodes %v, want one member", got)
	}
	var notes string
	for _, n := range db.Notes {
		notes += n + "\n"
	}
	if !strings.Contains(notes, "counter_set") || !strings.Contains(notes, "page_data") || !strings.Contains(notes, "Rev 0.51 names no selector") {
		t.Errorf("notes:\n%s", notes)
	}
	// The built-in database itself is left alone.
	if b, _ := builtin.Load(); len(b.Notes) != 0 {
		t.Errorf("the built-in database got notes: %v", b.Notes)
	}
}

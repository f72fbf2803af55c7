package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/internal/prmhistory"
	"github.com/cxray/cxray/prm/adb"
	"github.com/cxray/cxray/prm/builtin"
)

func TestOpenOrder(t *testing.T) {
	dir := prmhistory.Require(t)
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

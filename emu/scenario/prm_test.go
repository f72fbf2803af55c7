package scenario_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
)

// `prm:` names the database the emulated firmware answers from, relative
// to the scenario file; a file that is not a database is an error naming
// the key, and the built-in database is the default.
func TestScenarioPRM(t *testing.T) {
	files := prmhistorytest.Files(t)
	newest := files[len(files)-1]
	dir := t.TempDir()
	if err := os.Symlink(newest, filepath.Join(dir, "new.adb")); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse([]byte("prm: new.adb\r\ndevices: [{profile: cx7-2p400g}]\r\n"), filepath.Join(dir, "s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if sc.PRM != filepath.Join(dir, "new.adb") || sc.DB == nil {
		t.Fatalf("prm %q db %v", sc.PRM, sc.DB != nil)
	}
	e, err := scenario.Build(sc, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Adapters[0].Firmware.DB().Revision; got != sc.DB.Revision {
		t.Errorf("the firmware answers from %q; want the scenario's %q", got, sc.DB.Revision)
	}
	if sc, err := scenario.Parse([]byte("prm: builtin\ndevices: [{profile: cx7-2p400g}]\n"), "s.yaml"); err != nil || sc.DB != nil {
		t.Errorf("prm: builtin: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "junk.adb"), []byte("not xml"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"junk.adb", "missing.adb"} {
		_, err := scenario.Parse([]byte("prm: "+bad+"\ndevices: [{profile: cx7-2p400g}]\n"), filepath.Join(dir, "s.yaml"))
		if err == nil || !strings.Contains(err.Error(), "prm:") || !strings.Contains(err.Error(), ":1") {
			t.Errorf("prm: %s: %v; want an error on line 1 naming the key", bad, err)
		}
	}
}

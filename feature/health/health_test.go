package health

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
)

func TestRevisionDates(t *testing.T) {
	d57, ok := RevisionDate("Rev 0.57")
	d64, ok2 := RevisionDate("Rev 0.64")
	if !ok || !ok2 || !d57.Before(d64) {
		t.Errorf("%v %v", d57, d64)
	}
	if _, ok := RevisionDate("Rev 9.99"); ok {
		t.Error("unknown revision has a date")
	}
	notes := renamesSince("Rev 0.57")
	found := false
	for _, n := range notes {
		if strings.Contains(n, "configuration_item_header.type") {
			found = true
		}
	}
	if !found {
		t.Errorf("the config_item merge is missing from the notes: %v", notes)
	}
}

// renames.txt is what `go generate ./feature/health` makes.
func TestRenamesReproducible(t *testing.T) {
	dir := prmhistorytest.Require(t)
	out := filepath.Join(t.TempDir(), "r.txt")
	cmd := exec.Command("go", "run", "../../tools/gen/healthgen", "-out", out, "-history", dir)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	got, _ := os.ReadFile(out)
	if string(got) != renames {
		t.Error("feature/health/renames.txt differs from what go generate ./feature/health makes; regenerate and commit it")
	}
}

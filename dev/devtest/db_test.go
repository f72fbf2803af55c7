package devtest_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"github.com/cxray/cxray/prm"
)

// The built-in register database loads, and has what a fake needs.
func TestBuiltinDatabase(t *testing.T) {
	if _, err := devtest.DB(t).Register("MGIR"); err != nil {
		t.Errorf("the built-in register database: %v", err)
	}
}

// EachRevision: one subtest per file of the history, oldest first, named
// after the revision its database says it is.
func TestEachRevision(t *testing.T) {
	files := prmhistorytest.Files(t)
	var got []string
	devtest.EachRevision(t, func(st *testing.T, db *prm.DB) {
		got = append(got, db.Revision)
		// testing writes a name's spaces as underscores.
		if want := t.Name() + "/" + strings.ReplaceAll(db.Revision, " ", "_"); st.Name() != want {
			st.Errorf("subtest %s, want %s", st.Name(), want)
		}
	})
	if len(got) != len(files) || len(files) == 0 {
		t.Fatalf("revisions %v for files %v", got, files)
	}
	for i, f := range files {
		// hca-ext-rev0.57.adb is "Rev 0.57" or "0.57"; the number is in both.
		num := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "hca-ext-rev"), ".adb")
		if !strings.HasSuffix(got[i], num) {
			t.Errorf("subtest %d: revision %q from %s", i, got[i], f)
		}
	}
}

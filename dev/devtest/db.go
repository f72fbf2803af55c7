package devtest

import (
	"testing"

	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/adb"
	"github.com/cxray/cxray/prm/builtin"
)

// DB is the built-in register database (prm/builtin), the one tests
// build fakes over and decode with; it fails t when it does not load.
func DB(t testing.TB) *prm.DB {
	t.Helper()
	db, err := builtin.Load()
	return loaded(t, db, err)
}

// loaded is v, when err says it loaded.
func loaded[T any](t testing.TB, v T, err error) T {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// EachRevision runs fn as a subtest of t named after each PRM revision of
// the history (internal/prmhistory), oldest first, with the register
// database of that revision; it skips t, saying why, when the history is
// not here.
func EachRevision(t *testing.T, fn func(t *testing.T, db *prm.DB)) {
	t.Helper()
	for _, f := range prmhistorytest.Files(t) {
		db, err := adb.LoadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(db.Revision, func(t *testing.T) { fn(t, db) })
	}
}

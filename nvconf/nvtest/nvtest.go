// Package nvtest is test setup for code that reads NV parameters; only
// _test.go files import it. (It sits beside nvconf rather than in
// dev/devtest, which is below nvconf.)
package nvtest

import (
	"testing"

	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/builtin"
)

// NV is the built-in NV configuration database (nvconf/builtin), which
// names the parameters behind the NV registers a test puts; it fails t
// when it does not load.
func NV(t testing.TB) *nvconf.DB {
	t.Helper()
	nv, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	return nv
}

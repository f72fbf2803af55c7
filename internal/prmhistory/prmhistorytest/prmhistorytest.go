// Package prmhistorytest finds the seven HCA PRM revisions of the
// project's shared folder (shared/prm-history) for tests. They are
// NVIDIA's files and are not committed.
//
// Only _test.go files (and the test fakes dev/devtest) import it: it takes
// a testing.TB, and it looks beside the checkout, a place that means
// something on a developer's machine only. The cxray binaries find the
// history through internal/prmhistory (a flag or $CXRAY_PRM_HISTORY).
package prmhistorytest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cxray/cxray/internal/prmhistory"
)

// Dir returns the folder holding hca-ext-rev*.adb: $CXRAY_PRM_HISTORY, or
// shared/prm-history beside the module's root (the first directory at or
// above the test's working directory with a go.mod: go test runs in the
// package's directory). No other place is searched.
func Dir() (string, bool) {
	cands := []string{os.Getenv(prmhistory.Env)}
	if root, ok := moduleRoot(); ok {
		cands = append(cands, filepath.Join(root, "..", "shared", "prm-history"))
	}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if m, _ := filepath.Glob(filepath.Join(c, "hca-ext-rev*.adb")); len(m) > 0 {
			return c, true
		}
	}
	return "", false
}

// moduleRoot is the nearest directory at or above the working directory
// that holds a go.mod.
func moduleRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, true
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", false
		}
		dir = up
	}
}

// Require returns the folder or skips the test, saying loudly why.
func Require(t testing.TB) string {
	t.Helper()
	d, ok := Dir()
	if !ok {
		t.Skipf("SKIP: the PRM revision history (shared/prm-history) was not found; set %s to the folder holding hca-ext-rev*.adb", prmhistory.Env)
	}
	return d
}

// Files lists the revision files, oldest first.
func Files(t testing.TB) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(Require(t), "hca-ext-rev*.adb"))
	return m
}

// Package prmhistory finds the seven HCA PRM revisions that the project's
// shared folder holds (shared/prm-history). They are NVIDIA's files and are
// not committed; tests that need them find them here.
package prmhistory

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Env names the variable that points at the folder.
const Env = "CXRAY_PRM_HISTORY"

// Dir returns the folder holding hca-ext-rev*.adb: $CXRAY_PRM_HISTORY, or
// ../shared/prm-history relative to the repository's root (where the
// project's shared folder sits beside its checkout). No other place is
// searched: a path of one machine does not belong in the code.
func Dir() (string, bool) {
	cands := []string{os.Getenv(Env)}
	if _, file, _, ok := runtime.Caller(0); ok {
		repo := filepath.Join(filepath.Dir(file), "..", "..")
		cands = append(cands, filepath.Join(repo, "..", "shared", "prm-history"))
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

// ForCommands returns the folder a command (prm search) reads other PRM
// revisions from: flag (a --history DIR), else $CXRAY_PRM_HISTORY, else
// $XDG_DATA_HOME/cxray/prm-history (~/.local/share/cxray/prm-history). It
// never looks beside the source tree the binary was built from: that is a
// path of the build machine, not of the user's.
func ForCommands(flag string) (string, bool) {
	cands := []string{flag, os.Getenv(Env)}
	if flag != "" {
		cands = cands[:1]
	}
	if data := os.Getenv("XDG_DATA_HOME"); data != "" {
		cands = append(cands, filepath.Join(data, "cxray", "prm-history"))
	} else if home, err := os.UserHomeDir(); err == nil {
		cands = append(cands, filepath.Join(home, ".local", "share", "cxray", "prm-history"))
	}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if m, _ := filepath.Glob(filepath.Join(c, "*.adb")); len(m) > 0 {
			return c, true
		}
	}
	return "", false
}

// DataDir is where ForCommands looks last, for messages.
const DataDir = "$XDG_DATA_HOME/cxray/prm-history (~/.local/share/cxray/prm-history)"

// Require returns the folder or skips the test, saying loudly why.
func Require(t testing.TB) string {
	t.Helper()
	d, ok := Dir()
	if !ok {
		t.Skipf("SKIP: the PRM revision history (shared/prm-history) was not found; set %s to the folder holding hca-ext-rev*.adb", Env)
	}
	return d
}

// Files lists the revision files, oldest first.
func Files(t testing.TB) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(Require(t), "hca-ext-rev*.adb"))
	return m
}

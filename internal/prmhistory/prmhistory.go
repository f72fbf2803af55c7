// Package prmhistory finds the folder of other PRM revisions' ADB files
// that a command (prm search) reads: a flag, $CXRAY_PRM_HISTORY or the
// user's data folder, never a path of the machine the binary was built on.
// Tests find the project's copy through prmhistorytest.
package prmhistory

import (
	"os"
	"path/filepath"
)

// Env names the variable that points at the folder.
const Env = "CXRAY_PRM_HISTORY"

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

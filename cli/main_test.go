package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cxray/cxray/cli/emud"
	"github.com/cxray/cxray/cli/internal/configcmd"
	"github.com/cxray/cxray/cli/internal/plotcmd"
)

// TestMain lets the test binary serve as the namespace helper of
// `cxray emu run`, as cxray-emu's main does.
func TestMain(m *testing.M) {
	emud.Child()
	namespaceHelper = func() (string, error) { return "", nil }
	// `cxray plot` runs cxray-plot; the tests run its command in process.
	inProcess["plot"] = plotcmd.New
	// State (NV journals, backups, the emulator's kept state) goes to a
	// directory of the test run, never the user's.
	dir, err := os.MkdirTemp("", "cxray-test-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", dir)
	// No other writer touches the suite's emulated adapters, so config
	// set's second read (--settle, a second in real time) is left out;
	// TestConfigSetSettle runs it.
	os.Setenv(configcmd.EnvSettle, "0")
	code := m.Run()
	os.RemoveAll(dir)
	if crashPath != "" {
		os.RemoveAll(filepath.Dir(crashPath))
	}
	os.Exit(code)
}

package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/cxray/cxray/internal/lazyre"
)

// The CLI links nothing of Prometheus: the exporter is cxray-exporter's
// (cmd/cxray-exporter), and `cxray exporter` runs that binary; nor FUSE,
// which cxray-emu (cmd/cxray-emu) links.
func TestCLILinksNoPrometheus(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v\n%s", err, out)
	}
	var bad []string
	for _, p := range strings.Fields(string(out)) {
		for _, heavy := range heavyDeps {
			if strings.HasPrefix(p, heavy) {
				bad = append(bad, p)
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("cmd/cxray links %d packages it must not: %s", len(bad), strings.Join(bad, " "))
	}
}

// heavyDeps are module paths the cxray binary must not link: the exporter's
// and plot's stacks, an SQL engine (mstflint's NV database is read by
// internal/sqlitefile; a linked engine cost 4 MB and a third of start-up),
// and FUSE (cxray-emu serves the emulator inside `emu run`: go-fuse's
// splice package opens a pipe and starts the poller at init).
var heavyDeps = []string{"modernc.org/", "database/sql", "github.com/prometheus/", "github.com/cxray/cxray/feature/exporter", "gonum.org/", "codeberg.org/go-fonts/", "github.com/cxray/cxray/feature/monitor/chart",
	"github.com/hanwen/go-fuse/", "github.com/cxray/cxray/emu/sysfs/fusefs", "github.com/cxray/cxray/cli/emud"}

// No test hooks ship: the four binaries link neither the testing packages
// nor any of the repository's test helpers (the *test packages such as
// internal/prmhistory/prmhistorytest, access/pci/pcitest, dev/devtest), which
// take a testing.TB or look for files beside a checkout.
func TestBinariesLinkNoTestPackages(t *testing.T) {
	for _, cmd := range []string{".", "../cxray-exporter", "../cxray-plot", "../cxray-emu"} {
		out, err := exec.Command("go", "list", "-deps", cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", cmd, err, out)
		}
		pkgs := strings.Fields(string(out))
		if len(pkgs) < 10 {
			t.Fatalf("go list -deps %s listed %d packages: %q", cmd, len(pkgs), out)
		}
		var bad []string
		for _, p := range pkgs {
			if p == "testing" || strings.HasPrefix(p, "testing/") ||
				strings.HasPrefix(p, "github.com/cxray/cxray/") && strings.HasSuffix(p, "test") {
				bad = append(bad, p)
			}
		}
		if len(bad) > 0 {
			t.Errorf("cmd/%s links test packages: %s", strings.TrimPrefix(cmd, "../"), strings.Join(bad, " "))
		}
	}
}

// Every regular expression the CLI compiles on first use (internal/lazyre)
// compiles: a bad one fails here rather than in a user's command.
func TestLazyPatternsCompile(t *testing.T) {
	if n := lazyre.Count(); n < 50 {
		t.Fatalf("only %d lazy patterns registered: the CLI's packages are not linked into this test", n)
	}
	for _, err := range lazyre.CompileAll() {
		t.Error(err)
	}
}

package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The CLI links nothing of Prometheus: the exporter is cxray-exporter's
// (cmd/cxray-exporter), and `cxray exporter` runs that binary.
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

// heavyDeps are module paths the cxray binary must not link.
var heavyDeps = []string{"github.com/prometheus/", "github.com/cxray/cxray/feature/exporter", "gonum.org/", "codeberg.org/go-fonts/", "github.com/cxray/cxray/feature/monitor/chart"}

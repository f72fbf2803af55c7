package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/feature/health"
)

var waited = regexp.MustCompile(`(waited |for the last )[0-9.]+m?s`)

var update = flag.Bool("update", false, "rewrite cli/testdata/golden from what the commands print now")

// goldenCommands are what a user runs first on an adapter, in both output
// modes; {dev} is the example scenario (every function for --all).
var goldenCommands = [][]string{
	{"status", "-d", "{dev}"},
	{"status", "-d", "{dev}", "-o", "json"},
	{"health", "--all", "-d", "{dev}"},
	{"health", "--all", "-d", "{dev}", "-o", "json"},
	{"module", "-d", "{dev}"},
	{"module", "-d", "{dev}", "-o", "json"},
	{"link", "--all", "-d", "{dev}"},
	{"link", "--all", "-d", "{dev}", "-o", "json"},
	{"link", "--pcie", "-d", "{dev}"},
	{"link", "--pcie", "-d", "{dev}", "-o", "json"},
	{"reg", "get", "PPCNT", "--index", "grp=0x16", "-d", "{dev}"},
}

// TestGoldenExamples runs goldenCommands on every example scenario on the
// emulator's manual clock, from a fresh emulator each time, and compares
// every line printed and the exit code with cli/testdata/golden. Values,
// verdicts and wording are then fixed by the scenario, not by the machine
// or the time of the run: a change in any decoded value, unit or sentinel
// handling shows here as the line that moved. `go test ./cli -run
// TestGoldenExamples -update` rewrites the files after an intended change
// (review the diff).
func TestGoldenExamples(t *testing.T) {
	t.Setenv("CXRAY_NVDB", "builtin")
	t.Setenv(health.EnvUnusedPorts, "off") // the machine's /etc/cxray/unused-ports is not the scenario's
	examples, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(examples) == 0 {
		t.Fatalf("no example scenarios: %v", err)
	}
	for _, ex := range examples {
		name := strings.TrimSuffix(filepath.Base(ex), ".yaml")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(ex)
			if err != nil {
				t.Fatal(err)
			}
			// An example on the wall clock runs here on the manual one.
			if !strings.Contains(string(b), "\nclock:") && !strings.HasPrefix(string(b), "clock:") {
				b = append([]byte("clock: {mode: manual}\n"), b...)
			}
			dir := t.TempDir()
			sc := filepath.Join(dir, name+".yaml")
			if err := os.WriteFile(sc, b, 0o644); err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for _, c := range goldenCommands {
				t.Setenv("XDG_STATE_HOME", t.TempDir())
				args := append([]string{"--adb", "builtin"}, c...)
				for i, a := range args {
					args[i] = strings.ReplaceAll(a, "{dev}", "emu:"+sc)
				}
				out, errs, code := cli(t, "", args...)
				fmt.Fprintf(&got, "$ cxray %s\n%s", strings.Join(c, " "), out)
				if errs != "" {
					fmt.Fprintf(&got, "[stderr]\n%s", errs)
				}
				fmt.Fprintf(&got, "[exit %d]\n\n", code)
			}
			text := strings.ReplaceAll(got.String(), dir+string(filepath.Separator), "")
			// How long a wait for a held semaphore lasted depends on its
			// backoff's jitter, not on the scenario.
			text = waited.ReplaceAllString(text, "${1}N s")
			golden := filepath.Join("testdata", "golden", name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v: run go test ./cli -run TestGoldenExamples -update to write it", err)
			}
			if d := cmp.Diff(string(want), text); d != "" {
				t.Errorf("%s differs from %s (-want +got); if the change is intended, rerun with -update and review the diff:\n%s", name, golden, d)
			}
		})
	}
}

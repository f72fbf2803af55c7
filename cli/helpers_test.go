package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// `cxray exporter` runs cxray-exporter with its arguments unchanged and
// exits with its status; without the binary it says how to get it (exit 2).
func TestExporterShim(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake exporter is a shell script")
	}
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	fake := filepath.Join(dir, "cxray-exporter")
	script := "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done > " + argsFile + "\necho served\nexit 7\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvExporter, fake)
	var out, errb bytes.Buffer
	args := []string{"--web.listen-address", ":9879", "-d", "emu", "--once", "--help"}
	code := run(append([]string{"exporter"}, args...), strings.NewReader(""), &out, &errb)
	if code != 7 || out.String() != "served\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want the exporter's exit 7 and its output", code, out.String(), errb.String())
	}
	got, _ := os.ReadFile(argsFile)
	if diff := cmp.Diff(args, strings.Fields(string(got))); diff != "" {
		t.Errorf("arguments passed (-want +got):\n%s", diff)
	}

	t.Setenv(EnvExporter, "")
	t.Setenv("PATH", dir+"/nothing-here")
	out.Reset()
	errb.Reset()
	code = run([]string{"exporter", "-d", "emu"}, strings.NewReader(""), &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "go build ./cmd/cxray-exporter") {
		t.Errorf("without cxray-exporter: exit %d, stderr %q; want exit 2 saying how to build it", code, errb.String())
	}
}

// `cxray plot` runs cxray-plot the same way (the other tests run its
// command in process).
func TestPlotShim(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake helper is a shell script")
	}
	saved := inProcess["plot"]
	delete(inProcess, "plot")
	defer func() { inProcess["plot"] = saved }()
	fake := filepath.Join(t.TempDir(), "cxray-plot")
	os.WriteFile(fake, []byte("#!/bin/sh\necho \"plot $*\"\nexit 2\n"), 0o755)
	t.Setenv("CXRAY_PLOT", fake)
	var out, errb bytes.Buffer
	code := run([]string{"plot", "m.jsonl", "--out", "x.svg", "-o", "json"}, strings.NewReader(""), &out, &errb)
	if code != 2 || out.String() != "plot m.jsonl --out x.svg -o json\n" {
		t.Errorf("exit %d, stdout %q; want cxray-plot's exit 2 and its output with every argument", code, out.String())
	}
}

package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu/nsrun"
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

// `cxray emu run` as shipped: the built cxray starts cxray-emu from beside
// it, whose FUSE tree the command reads (all ten functions of the GPU node
// scenario); without cxray-emu it says how to get it (exit 2, nothing
// run); and cxray-emu run by hand says what to run instead (exit 2).
func TestEmuHelperBinary(t *testing.T) {
	if err := nsrun.Check(); err != nil {
		t.Skipf("emu run cannot work here: %v", err)
	}
	privateState(t)
	dir := t.TempDir()
	for _, name := range []string{"cxray", "cxray-emu"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), "../cmd/"+name).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, out)
		}
	}
	bin := filepath.Join(dir, "cxray")
	t.Setenv(EnvEmu, "")
	cmd := exec.Command(bin, "emu", "run", "--scenario", "../examples/gpu-node.yaml", "--", "sh", "-c", "cat /sys/bus/pci/devices/*/vendor")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("emu run with cxray-emu beside cxray: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "0x15b3"); n != 10 {
		t.Errorf("emu run served %d Mellanox functions, want the scenario's 10:\n%s", n, out)
	}

	alone := filepath.Join(t.TempDir(), "cxray")
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	cmd = exec.Command(alone, "emu", "run", "--", "touch", marker)
	cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
	out, err = cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), "go build ./cmd/cxray-emu") || !strings.Contains(string(out), "$CXRAY_EMU") {
		t.Errorf("without cxray-emu: exit %d (%v), output %q; want exit 2 saying how to build it", code, err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran although cxray-emu is missing")
	}
	cmd = exec.Command(alone, "emu", "run", "-o", "json", "--", "true")
	cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin", EnvEmu+"="+filepath.Join(dir, "nothing"))
	out, _ = cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), "$CXRAY_EMU=") {
		t.Errorf("$CXRAY_EMU naming no file: exit %d, output %q; want exit 2 naming the variable", code, out)
	}

	cmd = exec.Command(filepath.Join(dir, "cxray-emu"))
	out, _ = cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), "cxray emu run") {
		t.Errorf("cxray-emu by hand: exit %d, output %q; want exit 2 naming cxray emu run", code, out)
	}
}

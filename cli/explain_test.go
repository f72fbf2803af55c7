package cli

import (
	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/cli/internal/cmdutil"
)

// Every fixture of feature/explain through the CLI: the same exit code in
// both output modes, 1 where a problem is found; a clean log exits 0 and a
// text with nothing explain reads exits 2.
func TestExplainExitCodes(t *testing.T) {
	files, _ := filepath.Glob("../feature/explain/testdata/*.*")
	if len(files) < 10 {
		t.Fatalf("fixtures: %v", files)
	}
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.txt")
	os.WriteFile(clean, []byte("[    4.210331] mlx5_core 0000:c1:00.0: firmware version: 28.39.1002\n[    4.3] mlx5_core 0000:c1:00.0: 504.112 Gb/s available PCIe bandwidth (32.0 GT/s PCIe x16 link)\n"), 0o644)
	prose := filepath.Join(dir, "prose.txt")
	os.WriteFile(prose, []byte("hello,\nthe server rebooted and nothing works\n"), 0o644)
	want := map[string]int{clean: 0, prose: cmdutil.ExitUsage}
	for _, f := range files {
		switch filepath.Base(f) {
		case "expected.txt":
		case "mlxup.txt": // an update is available: information, not a problem
			want[f] = 0
		default:
			want[f] = cmdutil.ExitProblem
		}
	}
	for f, code := range want {
		out, errs, c := cli(t, "", "explain", f)
		if c != code {
			t.Errorf("%s: exit %d, want %d\n%s%s", filepath.Base(f), c, code, out, errs)
		}
		jout, _, jc := cli(t, "", "explain", f, "-o", "json")
		if jc != c {
			t.Errorf("%s: -o json exit %d, table %d", filepath.Base(f), jc, c)
		}
		if code == cmdutil.ExitUsage {
			continue
		}
		var doc struct {
			Parts []struct {
				Kind     string
				Findings []struct{ Severity, Category, What string }
			}
		}
		mustJSON(t, jout, &doc)
		if len(doc.Parts) == 0 {
			t.Errorf("%s: no part in the JSON", filepath.Base(f))
		}
		for _, p := range doc.Parts {
			if !strings.Contains(out, p.Kind) && !strings.Contains(out, "==") {
				t.Errorf("%s: the table does not show part %s", filepath.Base(f), p.Kind)
			}
		}
	}
	// Standard input.
	b, _ := os.ReadFile("../feature/explain/testdata/dmesg-cmd.txt")
	out, _, c := cli(t, string(b), "explain", "-")
	if c != 1 || !strings.Contains(out, "CREATE_MKEY (opcode 0x200)") || !strings.Contains(out, "status:") || !strings.Contains(out, "syndrome:                0x1b3a4f") {
		t.Errorf("stdin: exit %d\n%s", c, out)
	}
	if _, errs, c := cli(t, "", "explain"); c != 2 || !strings.Contains(errs, "'-' for standard input") {
		t.Errorf("no input: exit %d %s", c, errs)
	}
}

// A snapshot cxray wrote explains as one: its devices and registers.
func TestExplainSnapshot(t *testing.T) {
	f := filepath.Join(t.TempDir(), "snap.json")
	if _, errs, c := cli(t, "", "snapshot", "-d", "emu", "--profile", "minimal", "--out", f); c != 0 {
		t.Fatalf("snapshot: exit %d %s", c, errs)
	}
	out, errs, c := cli(t, "", "explain", f)
	if c != 0 || !strings.Contains(out, "== cxray snapshot") || !strings.Contains(out, "registers (0 failed)") {
		t.Errorf("exit %d\n%s%s", c, out, errs)
	}
}

// A register dump cxray printed explains with every PRM revision of the
// history (--adb): the register it names decoded with that database.
func TestExplainRegisterDumpEveryRevision(t *testing.T) {
	for _, f := range prmhistorytest.Files(t) {
		dump, errs, c := cli(t, "", "--adb", f, "reg", "get", "PMAOS", "--index", "module=0", "-d", "emu")
		if c != 0 {
			t.Fatalf("%s: reg get: exit %d %s", filepath.Base(f), c, errs)
		}
		out, errs, c := cli(t, dump, "--adb", f, "explain", "-", "-o", "json")
		if c != 0 {
			t.Errorf("%s: explain exit %d %s\n%s", filepath.Base(f), c, errs, out)
			continue
		}
		var doc struct {
			Parts []struct {
				Kind    string
				Decoded []struct{ Name, Value string }
			}
		}
		mustJSON(t, out, &doc)
		ok := false
		for _, p := range doc.Parts {
			for _, d := range p.Decoded {
				ok = ok || (p.Kind == "register-dump" && d.Name == "decoded" && strings.Contains(d.Value, "PMAOS's layout"))
			}
		}
		if !ok {
			t.Errorf("%s: the dump was not decoded as PMAOS: %s", filepath.Base(f), out)
		}
	}
}

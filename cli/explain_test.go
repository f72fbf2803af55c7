package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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

// explain --follow decodes a kernel log as it is written, in real time:
// records arrive on a FIFO one by one, as /dev/kmsg gives them, and each
// decoded event is printed (JSON lines) before the next record comes.
func TestExplainFollowRealTime(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "kmsg")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("SKIPPED: no FIFO here: %v", err)
	}
	records := []string{
		"6,1001,5000000,-;mlx5_core 0000:03:00.0: firmware version: 28.39.1002",
		"3,1002,5100000,-;mlx5_core 0000:03:00.0: mlx5_cmd_out_err:838:(pid 4117): CREATE_MKEY(0x200) op_mod(0x0) failed, status bad parameter(0x3), syndrome (0x1b3a4f), err(-22)",
		" SUBSYSTEM=pci",
		" DEVICE=+pci:0000:03:00.0",
		"4,1003,5200000,-;mlx5_core 0000:03:00.1: Port module event[error]: module 1, Cable error, Bus stuck (I2C or data shorted)",
		"4,1004,5300000,-;mlx5_core 0000:03:00.0: PCIe Bus Error: severity=Correctable, type=Physical Layer, (Receiver ID)",
		"4,1005,5300001,-;mlx5_core 0000:03:00.0:   device [15b3:1021] error status/mask=00000001/00002000",
		"4,1006,5300002,-;mlx5_core 0000:03:00.0:    [ 0] RxErr                  (First)",
	}
	type result struct {
		out, errs string
		code      int
	}
	done := make(chan result, 1)
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		code := runContext(ctx, []string{"explain", "--follow", "--kmsg", fifo, "--count", "3", "-o", "json"}, strings.NewReader(""), &out, &errb)
		done <- result{out.String(), errb.String(), code}
	}()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	start := time.Now()
	for _, r := range records {
		if _, err := fmt.Fprintln(w, r); err != nil {
			break // the reader stopped after --count events
		}
		time.Sleep(150 * time.Millisecond)
	}
	w.Close()
	var r result
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("explain --follow did not stop after --count events")
	}
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errs)
	}
	var classes []string
	for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
		var e struct{ Class, Severity, Device, Category string }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		classes = append(classes, e.Class+"/"+e.Device+"/"+e.Category)
	}
	want := []string{"command/0000:03:00.0/software use", "module/0000:03:00.1/hardware", "pcie/0000:03:00.0/hardware"}
	if strings.Join(classes, " ") != strings.Join(want, " ") {
		t.Errorf("events %v, want %v", classes, want)
	}
	if time.Since(start) < 500*time.Millisecond {
		t.Errorf("the events came before the records were written")
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

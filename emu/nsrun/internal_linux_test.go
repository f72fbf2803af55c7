package nsrun

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCheckAdvice(t *testing.T) {
	defer func(e func() int, d string) { geteuid, devFuse = e, d }(geteuid, devFuse)

	geteuid = func() int { return 1000 }
	err := Check()
	if !errors.Is(err, ErrNotRoot) || !strings.Contains(err.Error(), "run with sudo") {
		t.Errorf("not root: %v", err)
	}
	geteuid = func() int { return 0 }
	devFuse = filepath.Join(t.TempDir(), "fuse")
	err = Check()
	if !errors.Is(err, ErrNoFUSE) || !strings.Contains(err.Error(), "modprobe fuse") || !strings.Contains(err.Error(), "fuse3") {
		t.Errorf("no /dev/fuse: %v", err)
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=/", "PATH=/nonexistent:" + dir}
	if p, err := lookPath("tool", env, ""); err != nil || p != tool {
		t.Errorf("tool: %q, %v", p, err)
	}
	if p, err := lookPath("./tool", nil, dir); err != nil || p != tool {
		t.Errorf("./tool in dir: %q, %v", p, err)
	}
	// Not found (a shell's 127), or there and not runnable (126).
	for name, want := range map[string]error{"data": ErrCommandNotFound, "missing": ErrCommandNotFound, dir + "/missing": ErrCommandNotFound,
		dir + "/data": ErrCommandNotExecutable, dir: ErrCommandNotExecutable} {
		if _, err := lookPath(name, env, ""); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
}

func TestWithoutVar(t *testing.T) {
	got := withoutVar([]string{"A=1", EnvChild + "=x", "B=2", EnvChild + "X=3"}, EnvChild)
	if want := []string{"A=1", "B=2", EnvChild + "X=3"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestExitCodeAndDescendants(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 5 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The shell and its sleep appear below this process (bounded wait for
	// the shell to fork).
	var ps []int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if ps = descendants(os.Getpid()); len(ps) >= 2 {
			break
		}
	}
	if len(ps) != 2 || ps[0] != cmd.Process.Pid {
		t.Errorf("descendants = %v, want the shell %d and its sleep", ps, cmd.Process.Pid)
	}
	signalTree(os.Getpid(), syscall.SIGKILL)
	_ = cmd.Wait()
	if c := exitCode(cmd.ProcessState); c != 137 {
		t.Errorf("exit code of a shell killed by SIGKILL: %d, want 137", c)
	}
	if c := exitCode(nil); c != -1 {
		t.Errorf("exitCode(nil) = %d", c)
	}
}

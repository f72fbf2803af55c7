package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A command a signal stops exits as shells report it, 128 + the signal
// (SIGINT 130, SIGTERM 143, SIGHUP 129), with a clean message and, with
// -o json, the same code in the error document (issue 30.13: it exited 3,
// and once printed the internal "the ICMD client was closed ... a bug in
// the caller"). The firmware is slow (each command busy for 30 s of wall
// clock), so the signal lands while a register read waits; the process has
// 2 s to start before it, and 30 s to end after it (generous bounds).
func TestSignalExitCodes(t *testing.T) {
	privateState(t)
	bin := cxrayBin(t)
	scen := filepath.Join(t.TempDir(), "slow.yaml")
	if err := os.WriteFile(scen, []byte("devices:\n  - profile: cx7-2p400g\n    faults:\n      slow_icmd: 30s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sig    syscall.Signal
		code   int
		name   string
		output string
	}{
		{syscall.SIGINT, 130, "SIGINT (Ctrl-C)", "table"},
		{syscall.SIGTERM, 143, "SIGTERM", "json"},
		{syscall.SIGHUP, 129, "SIGHUP", "table"},
	} {
		var out, errb bytes.Buffer
		cmd := exec.Command(bin, "reg", "get", "MGIR", "-d", "emu:"+scen, "--timeout", "60s", "-o", c.output)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		cmd.Process.Signal(c.sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%v: still running 30 s after the signal", c.sig)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != c.code {
			t.Errorf("%v: %v, want exit %d\nstderr: %s", c.sig, err, c.code, errb.String())
		}
		want := "cxray: stopped by " + c.name + "; the devices were released\n"
		if errb.String() != want {
			t.Errorf("%v: stderr %q, want %q", c.sig, errb.String(), want)
		}
		if c.output == "json" {
			var doc struct {
				Error    string `json:"error"`
				ExitCode int    `json:"exit_code"`
			}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.ExitCode != c.code || !strings.HasPrefix(doc.Error, "stopped by "+c.name) {
				t.Errorf("%v: JSON error document %q: %+v %v", c.sig, out.String(), doc, err)
			}
		}
	}
}

package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLinkToggleSIGKILL kills 'cxray link --port_state TG' with SIGKILL
// between its two writes (the port is down, waiting the 2 s of the toggle
// in real time on the emulator's wall clock): the port is left half-way
// (down); the next change command of the port finds the pending undo
// record, puts the configuration before the toggle back (up) and says so,
// and leaves no record behind. Another process reads the port meanwhile,
// through the shared emulator state.
func TestLinkToggleSIGKILL(t *testing.T) {
	privateState(t)
	bin := cxrayBin(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(file, []byte("devices:\n  - profile: cx7-2p400g\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dev := "emu:" + file
	admin := func() string {
		out, err := exec.Command(bin, "link", "-d", dev, "-o", "json").Output()
		var d struct {
			Links []struct {
				Operational struct {
					Admin string `json:"admin_status"`
				} `json:"operational"`
			} `json:"links"`
		}
		if jerr := json.Unmarshal(out, &d); jerr != nil || len(d.Links) == 0 {
			t.Fatalf("link: %v %v\n%s", err, jerr, out)
		}
		return d.Links[0].Operational.Admin
	}
	if got := admin(); got != "up" {
		t.Fatalf("before: admin %s", got)
	}
	tg := exec.Command(bin, "link", "-d", dev, "--port_state", "TG", "--yes", "--force")
	if err := tg.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- tg.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for admin() != "down_by_configuration" {
		select {
		case err := <-exited:
			t.Fatalf("the toggle ended (%v) before it was seen between its writes", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the toggle's first write was not seen in 60 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := tg.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	if got := admin(); got != "down_by_configuration" {
		t.Skipf("the toggle finished its second write before the kill (admin %s); the in-process TestKillAtEachStep covers each step", got)
	}
	dry := exec.Command(bin, "link", "-d", dev, "--port_state", "UP", "--dry-run", "--force")
	var dryErr strings.Builder
	dry.Stderr = &dryErr
	if out, err := dry.Output(); err != nil || !strings.Contains(dryErr.String(), "without --dry-run") {
		t.Errorf("a dry run after the kill: %v %q\n%s", err, dryErr.String(), out)
	}
	if got := admin(); got != "down_by_configuration" {
		t.Errorf("a dry run changed the port: admin %s", got)
	}
	cmd := exec.Command(bin, "link", "-d", dev, "--port_state", "UP", "--yes", "--force")
	var errb strings.Builder
	cmd.Stderr = &errb
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("next command: %v\n%s\n%s", err, out, errb.String())
	}
	if !strings.Contains(errb.String(), "was interrupted between its writes") {
		t.Errorf("the next command did not say it recovered: %q", errb.String())
	}
	if got := admin(); got != "up" {
		t.Errorf("after recovery: admin %s, want up (the configuration before the toggle)", got)
	}
	recs, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_STATE_HOME"), "cxray", "link", "*"))
	if len(recs) != 0 {
		t.Errorf("undo records left after recovery: %v", recs)
	}
}

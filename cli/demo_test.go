package cli

import (
	"os"
	"os/exec"
	"testing"
)

// scripts/demo.sh runs on an emulator state of its own: a default emulator
// changed before (port 2 down, as a user might leave it) neither fails the
// demo's healthy first look nor is changed by the demo's PAOS write, and
// the demo leaves no state behind (#30 item 19).
func TestDemoKeepsDefaultEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole demo")
	}
	privateState(t)
	bin := cxrayBin(t)
	mustRun(t, "reg", "set", "PAOS", "--index", "local_port=2", "admin_status=down_by_configuration", "ase=1", "-d", "emu", "--yes")
	before := emuStatus(t)

	cmd := exec.Command("bash", "../scripts/demo.sh")
	cmd.Env = append(os.Environ(), "CXRAY_DEMO_BIN="+bin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	// The demo did run its write (and read it back).
	wantIn(t, "demo", string(out), "admin_status", "down_by_configuration")

	after := emuStatus(t)
	if len(after.States) != len(before.States) || len(after.States) != 1 || after.States[0].Records != before.States[0].Records || !after.States[0].Modified.Equal(before.States[0].Modified) {
		t.Errorf("the default emulator's states changed: before %+v, after %+v", before.States, after.States)
	}
	wantIn(t, "port 1 after the demo", mustRun(t, "reg", "get", "PAOS", "-d", "emu"), "admin_status  up (1)")
	wantIn(t, "port 2 after the demo", mustRun(t, "reg", "get", "PAOS", "-d", "emu", "--index", "local_port=2"), "admin_status  down_by_configuration (2)")
}

package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/emu/state"
)

var blanks = regexp.MustCompile(`[ \t]+`)

// privateState gives the test a state directory of its own, so what it
// writes to -d emu is seen by it alone.
func privateState(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	t.Setenv(state.EnvDir, "")
	t.Setenv(cmdutil.EnvNVDB, "builtin")
	return filepath.Join(dir, "cxray", "emu")
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, code := cfgcli(t, "", args...)
	if code != 0 {
		t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
	}
	return out
}

// wantIn checks out holds each want, runs of blanks counting as one (the
// tables align their columns).
func wantIn(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	squeeze := func(s string) string { return blanks.ReplaceAllString(s, " ") }
	for _, w := range wants {
		if !strings.Contains(squeeze(out), squeeze(w)) {
			t.Errorf("%s lacks %q:\n%s", what, w, out)
		}
	}
}

type statusOut struct {
	Dir    string       `json:"dir"`
	States []state.Info `json:"states"`
}

func emuStatus(t *testing.T) statusOut {
	t.Helper()
	var s statusOut
	mustJSON(t, mustRun(t, "emu", "status", "-o", "json"), &s)
	return s
}

// Two consecutive commands on -d emu see the first one's write: a
// register, the module state, the NV configuration through set, apply (an
// MFRL reset) and query; reset starts over.
func TestEmuKeepsState(t *testing.T) {
	dir := privateState(t)
	mustRun(t, "reg", "set", "PAOS", "admin_status=down_by_configuration", "ase=1", "-d", "emu", "--yes")
	wantIn(t, "reg get PAOS after the set", mustRun(t, "reg", "get", "PAOS", "-d", "emu"),
		"admin_status  down_by_configuration (2)", "oper_status   down (2)")
	// With its port down, module 0 may be disabled; the next command sees it.
	mustRun(t, "reg", "set", "PMAOS", "admin_status=disabled_by_configuration", "ase=1", "--index", "module=0", "-d", "emu", "--yes")
	wantIn(t, "reg get PMAOS", mustRun(t, "reg", "get", "PMAOS", "--index", "module=0", "-d", "emu"), "admin_status  disabled_by_configuration (2)")

	mustRun(t, "config", "set", "-d", "emu", "LOG_TX_PSN_WINDOW=14", "--yes")
	m, q := query(t, "LOG_TX_PSN_WINDOW")
	if m["LOG_TX_PSN_WINDOW"] != [3]string{"9", "9", "14"} || len(q.Pending) != 1 {
		t.Errorf("after set: %v, pending %v", m, q.Pending)
	}
	wantIn(t, "config apply", mustRun(t, "config", "apply", "-d", "emu", "--yes"), "Applied")
	if m, q := query(t, "LOG_TX_PSN_WINDOW"); m["LOG_TX_PSN_WINDOW"] != [3]string{"9", "14", "14"} || len(q.Pending) != 0 {
		t.Errorf("after apply: %v, pending %v", m, q.Pending)
	}
	// Other profiles are other devices.
	wantIn(t, "cx6dx PAOS", mustRun(t, "reg", "get", "PAOS", "-d", "emu:cx6dx-2p100g"), "admin_status  up (1)")

	st := emuStatus(t)
	if st.Dir != dir || len(st.States) != 2 {
		t.Fatalf("emu status: %+v", st)
	}
	for _, in := range st.States {
		if in.Name == "emu:cx7-2p400g" && (in.Records < 4 || in.InUse || in.Manual) {
			t.Errorf("cx7 state: %+v", in)
		}
	}
	out := mustRun(t, "emu", "status")
	wantIn(t, "emu status", out, "Emulator states in "+dir, "emu:cx7-2p400g", "emu:cx6dx-2p100g", "CHANGES")

	wantIn(t, "emu reset", mustRun(t, "emu", "reset", "cx7-2p400g"), "Removed "+filepath.Join(dir, "profile-cx7-2p400g.log"))
	wantIn(t, "reg get after reset", mustRun(t, "reg", "get", "PAOS", "-d", "emu"), "admin_status  up (1)")
	if m, _ := query(t, "LOG_TX_PSN_WINDOW"); m["LOG_TX_PSN_WINDOW"] != [3]string{"9", "9", "9"} {
		t.Errorf("after reset: %v", m)
	}
	wantIn(t, "emu reset (all)", mustRun(t, "emu", "reset"), "Removed")
	if st := emuStatus(t); len(st.States) != 0 {
		t.Errorf("after reset of all: %+v", st.States)
	}
	if _, errs, code := cfgcli(t, "", "emu", "reset", "cx9"); code != cmdutil.ExitUsage || !strings.Contains(errs, "cx7-2p400g") {
		t.Errorf("reset of an unknown profile: %d %s", code, errs)
	}
	// CXRAY_EMU_STATE=off: every command powers on a fresh emulator.
	t.Setenv(state.EnvDir, state.Off)
	mustRun(t, "reg", "set", "PAOS", "admin_status=down_by_configuration", "ase=1", "-d", "emu", "--yes")
	wantIn(t, "reg get with state off", mustRun(t, "reg", "get", "PAOS", "-d", "emu"), "admin_status  up (1)")
	wantIn(t, "emu status with state off", mustRun(t, "emu", "status"), "keeps no state")
}

// A manual clock moves across commands: a monitor's sleeps move it, the
// next command starts there.
func TestEmuKeepsClock(t *testing.T) {
	privateState(t)
	sc := filepath.Join(t.TempDir(), "manual.yaml")
	os.WriteFile(sc, []byte("clock: {start: 2024-05-01T08:00:00Z, mode: manual}\ndevices:\n  - profile: cx7-2p400g\n"), 0o644)
	name := "emu:" + sc
	wantIn(t, "uptime at power-on", mustRun(t, "reg", "get", "MGIR", "-d", name, "--field", "hw_info.uptime"), "= 0 s")
	mustRun(t, "monitor", "-d", name, "--what", "temp", "-i", "1m", "--count", "3")
	wantIn(t, "uptime after the monitor", mustRun(t, "reg", "get", "MGIR", "-d", name, "--field", "hw_info.uptime"), "= 120 s")
	st := emuStatus(t)
	if len(st.States) != 1 || !st.States[0].Clock.Equal(time.Date(2024, 5, 1, 8, 2, 0, 0, time.UTC)) || !st.States[0].Manual || st.States[0].Source != sc {
		t.Errorf("emu status: %+v", st.States)
	}
}

// cxrayBin builds the command, for tests that run it as its own process,
// with cxray-emu beside it (emu run and emu serve start it).
func cxrayBin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"cxray", "cxray-emu"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), "../cmd/"+name).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, out)
		}
	}
	return filepath.Join(dir, "cxray")
}

// Two concurrent config set on parameters of one TLV both land: the NV
// lock serialises their read-modify-write, on one device.
func TestEmuConcurrentConfigSet(t *testing.T) {
	privateState(t)
	bin := cxrayBin(t)
	var wg sync.WaitGroup
	for _, kv := range []string{"LOG_TX_PSN_WINDOW=12", "LRO_LOG_TIMEOUT0=7"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := exec.Command(bin, "config", "set", "-d", "emu", kv, "--yes").CombinedOutput()
			if err != nil {
				t.Errorf("%s: %v\n%s", kv, err, out)
			}
		}()
	}
	wg.Wait()
	m, _ := query(t, "LOG_TX_PSN_WINDOW", "LRO_LOG_TIMEOUT0")
	if m["LOG_TX_PSN_WINDOW"][2] != "12" || m["LRO_LOG_TIMEOUT0"][2] != "7" {
		t.Errorf("next boot after two concurrent sets: %v", m)
	}
}

// Inside emu run the names status lists work, for the direct path and for
// the kernel backend, on the same kept device as -d emu outside.
func TestEmuRunNames(t *testing.T) {
	requireNS(t)
	privateState(t)
	bin := cxrayBin(t)
	mustRun(t, "reg", "set", "PAOS", "admin_status=down_by_configuration", "ase=1", "-d", "emu", "--yes")
	script := bin + ` status -o json; echo =; ` +
		bin + ` reg get PAOS -d mlx5_0; echo =; ` +
		bin + ` reg get PAOS -d ens1f0np0 --field admin_status; echo =; ` +
		bin + ` status -d kernel:mlx5_0 -o json; echo =; ` +
		bin + ` reg set PAOS admin_status=up ase=1 -d mlx5_0 --yes >/dev/null; ` +
		`cat /sys/class/infiniband/mlx5_0/ports/1/state /sys/class/net/ens1f0np0/operstate`
	out, errs, code := cli(t, "", "emu", "run", "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	parts := strings.Split(out, "=\n")
	if len(parts) != 5 {
		t.Fatalf("output:\n%s\n%s", out, errs)
	}
	wantIn(t, "status", parts[0], `"ens1f0np0"`, `"mlx5_0"`)
	wantIn(t, "reg get -d mlx5_0 (the write made outside)", parts[1], "on mlx5_0 (0000:03:00.0)", "admin_status  down_by_configuration (2)")
	wantIn(t, "reg get -d ens1f0np0", parts[2], "(2)")
	wantIn(t, "status -d kernel:mlx5_0", parts[3], `"0000:03:00.0"`, "kernel", "28.39.1010", "MT_0000000834")
	// The write made inside, through the name, and read through the
	// emulated sysfs: the link comes up.
	wantIn(t, "sysfs after the write inside", parts[4], "4: ACTIVE\nup\n")
	// And the device outside is the same one.
	wantIn(t, "reg get -d emu after the run", mustRun(t, "reg", "get", "PAOS", "-d", "emu"), "admin_status  up (1)")
}

// emu serve: absolute paths in what it prints, a join line that keeps the
// directory, module plugs kept, and its socket gone on every exit, a
// signal included.
func TestEmuServe(t *testing.T) {
	requireNS(t)
	privateState(t)
	bin := cxrayBin(t)
	dir := t.TempDir()
	t.Chdir(dir)
	out, errs, code := cli(t, "", "emu", "serve", "--socket", "ctl.sock", "--", bin, "emu", "ctl", "--socket", filepath.Join(dir, "ctl.sock"), "plug", "1", "empty")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	wantIn(t, "emu serve", errs, "cxray emu ctl --socket "+filepath.Join(dir, "ctl.sock")+" status",
		`nsenter --mount=/proc/`, `--wd="$PWD"`, "state: "+filepath.Join(os.Getenv("XDG_STATE_HOME"), "cxray", "emu", "profile-cx7-2p400g.log"))
	if _, err := os.Stat(filepath.Join(dir, "ctl.sock")); !os.IsNotExist(err) {
		t.Errorf("the socket is left after the command exited: %v", err)
	}
	wantIn(t, "module 1 after the plug in emu serve", mustRun(t, "reg", "get", "PMAOS", "--index", "module=1", "-d", "emu"), "oper_status          unplugged (2)")

	// A signal to emu serve: the command is stopped, the socket removed.
	sock := filepath.Join(dir, "sig.sock")
	cmd := exec.Command(bin, "emu", "serve", "--socket", sock, "--", "sleep", "60")
	var eb bytes.Buffer
	cmd.Stderr = &eb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no socket after 20 s: %s", eb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, bin, "emu", "ctl", "--socket", sock, "status").CombinedOutput(); err != nil || !strings.Contains(string(out), "state: ") {
		t.Errorf("ctl status: %v %s", err, out)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket is left after SIGTERM: %v\n%s", err, eb.String())
	}
}

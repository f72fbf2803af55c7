package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cxray/cxray/emu/nsrun"
)

func requireNS(t *testing.T) {
	t.Helper()
	if err := nsrun.Check(); err != nil {
		t.Skipf("*** SKIPPING: cxray emu run needs root and /dev/fuse: %v", err)
	}
}

// mstflint, unmodified, reads the emulated adapter through the fake sysfs.
func TestEmuRunMstflint(t *testing.T) {
	requireNS(t)
	if _, err := exec.LookPath("mstflint"); err != nil {
		t.Skip("*** SKIPPING: mstflint is not installed (apt-get install -y mstflint)")
	}
	// With '--', and as people type it without: the command's flags are
	// its own either way.
	for _, args := range [][]string{{"emu", "run", "--", "mstflint", "-d", "0000:03:00.0", "q"}, {"emu", "run", "mstflint", "-d", "0000:03:00.0", "q"}} {
		out, errs, code := cli(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s %s", args, code, out, errs)
		}
		for _, want := range []string{"FW Version:            28.39.1010", "PSID:                  MT_0000000834"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: mstflint q lacks %q:\n%s", args, want, out)
			}
		}
	}
}

// A flag emu run does not know, before the command, is answered with
// where the command goes (no namespace needed to say so).
func TestEmuRunSaysWhereTheCommandGoes(t *testing.T) {
	for _, sub := range []string{"run", "serve"} {
		_, errs, code := cli(t, "", "emu", sub, "-x", "mstflint")
		if code != 2 || !strings.Contains(errs, "go after '--': cxray emu "+sub+" -- mstflint") {
			t.Errorf("emu %s -x: exit %d %s", sub, code, errs)
		}
	}
}

func TestEmuRunStatusAndErrors(t *testing.T) {
	requireNS(t)
	_, _, code := cli(t, "", "emu", "run", "--", "sh", "-c", "exit 7")
	if code != 7 {
		t.Errorf("exit status %d, want the command's 7", code)
	}
	// A command that cannot be started exits as a shell says it (issue
	// 30.13): 127 not found, 126 not executable.
	_, errs, code := cli(t, "", "emu", "run", "--", "no-such-command-xyz")
	if code != 127 || !strings.Contains(errs, "no-such-command-xyz") {
		t.Errorf("missing command: exit %d, want 127: %s", code, errs)
	}
	_, errs, code = cli(t, "", "emu", "run", "--", t.TempDir())
	if code != 126 || !strings.Contains(errs, "is a directory") {
		t.Errorf("a directory as the command: exit %d, want 126: %s", code, errs)
	}
	_, errs, code = cli(t, "", "emu", "run", "--profile", "cx9", "--", "true")
	if code != 2 || !strings.Contains(errs, "cx7-2p400g") {
		t.Errorf("bad profile: exit %d %s", code, errs)
	}
}

// mac --os system reads this machine's interfaces: inside emu run, the
// emulated ones, whose drifted address the check names.
func TestMACCheckOfThisMachine(t *testing.T) {
	requireNS(t)
	out, errs, code := cli(t, "", "emu", "run", "--scenario", "../examples/troubled.yaml", "--", cxrayBin(t), "mac", "--os", "system", "-d", "0000:03:00.0")
	if code != 1 || !strings.Contains(out, "ens1f0np0  02:11:22:33:44:55") || !strings.Contains(out, "locally administered") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}

// Through the config space of an emulator on a manual clock (emu run),
// health waits on the wall clock while the device's time stands still:
// its healthy modules are not frozen, and the modules check says why it
// could not judge. Real time: the health interval passes for real.
func TestHealthOnAStoppedDeviceClock(t *testing.T) {
	requireNS(t)
	out, errs, code := cli(t, "", "emu", "run", "--scenario", "../examples/two-adapters.yaml", "--",
		// --timeout 60s: at load 30 on two CPUs the 10 s default ran out
		// once (exit 3: the device could not be read in time).
		cxrayBin(t), "health", "-d", "0000:03:00.0", "--interval", "1s", "--timeout", "60s", "-o", "json")
	var rep struct {
		Devices []struct {
			Checks []struct {
				Name    string   `json:"name"`
				Status  string   `json:"status"`
				Details []string `json:"details"`
			} `json:"checks"`
		} `json:"devices"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Devices) != 1 {
		t.Fatalf("exit %d: %v\n%s%s", code, err, out, errs)
	}
	found := false
	for _, c := range rep.Devices[0].Checks {
		if c.Name != "modules" {
			continue
		}
		found = true
		if c.Status != "ok" || !strings.Contains(strings.Join(c.Details, "\n"), "clock did not move") {
			t.Errorf("modules check on a stopped device clock: %s %q", c.Status, c.Details)
		}
	}
	if !found {
		t.Errorf("no modules check (exit %d):\n%s%s", code, out, errs)
	}
}

// emu run serves the command interface as a host with mlx5_fwctl has it
// (/sys/class/fwctl, /dev/fwctl), covering /dev only in its namespace and
// keeping what was there: devices and the file systems mounted under it.
// Commands that need it (caps) work beside the gateway.
func TestEmuRunServesFwctl(t *testing.T) {
	requireNS(t)
	hostPts := strings.Contains(mountTypes(t, "/proc/self/mountinfo"), " /dev/pts ")
	script := `set -e
test -e /dev/fwctl/fwctl0 && test -e /dev/fwctl/fwctl1
[ "$(basename "$(readlink -f /sys/class/fwctl/fwctl1/device)")" = 0000:03:00.1 ]
echo x >/dev/null
test -c /dev/null
grep ' /dev/pts ' /proc/self/mountinfo >/dev/null || echo no-pts
` + shQuote(cxrayBin(t)) + ` caps -d 0000:03:00.1 --type general >/dev/null
`
	out, errs, code := cli(t, "", "emu", "run", "--scenario", "../examples/two-adapters.yaml", "--", "sh", "-c", script)
	if code != 0 || (hostPts && strings.Contains(out, "no-pts")) {
		t.Errorf("exit %d (host has /dev/pts mounted: %v)\n%s%s", code, hostPts, out, errs)
	}
	if _, err := os.Stat("/dev/fwctl/fwctl0"); err == nil {
		t.Error("/dev/fwctl/fwctl0 shows on the host after emu run")
	}
}

func mountTypes(t *testing.T, file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

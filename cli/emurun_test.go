package cli

import (
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

package main

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
	out, errs, code := cli(t, "", "emu", "run", "--", "mstflint", "-d", "0000:03:00.0", "q")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	for _, want := range []string{"FW Version:            28.39.1010", "PSID:                  MT_0000000834"} {
		if !strings.Contains(out, want) {
			t.Errorf("mstflint q lacks %q:\n%s", want, out)
		}
	}
}

func TestEmuRunStatusAndErrors(t *testing.T) {
	requireNS(t)
	_, _, code := cli(t, "", "emu", "run", "--", "sh", "-c", "exit 7")
	if code != 7 {
		t.Errorf("exit status %d, want the command's 7", code)
	}
	_, errs, code := cli(t, "", "emu", "run", "--", "no-such-command-xyz")
	if code != 2 || !strings.Contains(errs, "no-such-command-xyz") {
		t.Errorf("missing command: exit %d %s", code, errs)
	}
	_, errs, code = cli(t, "", "emu", "run", "--profile", "cx9", "--", "true")
	if code != 2 || !strings.Contains(errs, "cx7-2p400g") {
		t.Errorf("bad profile: exit %d %s", code, errs)
	}
}

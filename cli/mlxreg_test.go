package cli

import (
	"strings"
	"testing"
)

// `cxray reg --reg_name PAOS --get` prints what `cxray reg get PAOS` does,
// in both output modes, and says which command it ran.
func TestMlxregFlagsRun(t *testing.T) {
	for _, mode := range []string{"table", "json"} {
		want, _, c1 := cli(t, "", "reg", "get", "PAOS", "-d", "emu", "--index", "local_port=1", "-o", mode)
		got, errs, c2 := cli(t, "", "reg", "-d", "emu", "--reg_name", "PAOS", "--get", "--indexes", "local_port=1", "-o", mode)
		if c1 != 0 || c2 != 0 || got != want {
			t.Errorf("%s: exit %d/%d\nwant %s\ngot %s", mode, c1, c2, want, got)
		}
		if !strings.Contains(errs, "running 'cxray reg get PAOS -d emu --index local_port=1") {
			t.Errorf("%s: stderr %q", mode, errs)
		}
	}
	_, errs, code := cli(t, "", "reg", "-d", "emu", "--reg_name", "PAOS")
	if code != 2 || !strings.Contains(errs, "--get") {
		t.Errorf("no verb: exit %d %s", code, errs)
	}
}

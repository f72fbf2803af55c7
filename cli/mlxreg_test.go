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

// Each mlxreg form does what the cxray command it names does: the same
// output and exit code in both modes (it runs that verb's run function,
// not a second command line).
func TestMlxregFormsMatchTheirCommands(t *testing.T) {
	for _, c := range []struct{ mlxreg, cxray []string }{
		{[]string{"reg", "--show_regs", "-d", "emu"}, []string{"reg", "list", "-d", "emu"}},
		{[]string{"reg", "--show_reg", "MTMP"}, []string{"prm", "show", "MTMP"}},
		// MSGI, not MGIR: MGIR's uptime ticks between the two runs.
		{[]string{"reg", "-d", "emu", "--reg_id", "0x9021", "--reg_len", "0x80", "--get"}, []string{"reg", "get", "--id", "0x9021", "--len", "0x80", "-d", "emu"}},
		{[]string{"reg", "-d", "emu", "--reg_id", "zz", "--reg_len", "16", "--get"}, []string{"reg", "get", "--id", "zz", "--len", "16", "-d", "emu"}},
		{[]string{"reg", "-d", "emu", "--reg_name", "PAOS", "--set", "ase=1", "--indexes", "local_port=1"}, []string{"reg", "set", "PAOS", "ase=1", "-d", "emu", "--index", "local_port=1"}},
		{[]string{"reg", "-d", "emu", "--reg_name", "PAOS", "--set", "ase=1", "--indexes", "local_port=1", "--yes"}, []string{"reg", "set", "PAOS", "ase=1", "-d", "emu", "--index", "local_port=1", "--yes"}},
	} {
		for _, mode := range []string{"table", "json"} {
			want, _, c1 := cli(t, "", append(c.cxray, "-o", mode)...)
			got, errs, c2 := cli(t, "", append(c.mlxreg, "-o", mode)...)
			if c1 != c2 || got != want {
				t.Errorf("%v -o %s: exit %d, want %d (%s)\ngot  %.300q\nwant %.300q", c.mlxreg, mode, c2, c1, errs, got, want)
			}
			if !strings.Contains(errs, "running 'cxray "+strings.Join(c.cxray, " ")) {
				t.Errorf("%v: stderr %q does not name the command", c.mlxreg, errs)
			}
		}
	}
}

package regcmd

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// Each verb's flags land in its options (mlxreg's spelling in
// mlxregFlags) and its arguments reach the run function.
func TestVerbWiring(t *testing.T) {
	a := &app{cmdutiltest.New(t, "table").App}
	emu := cmdutil.DeviceFlags{Name: "emu", Timeout: cmdutil.DefaultTimeout, Via: "auto"}
	opt := cmp.AllowUnexported(mlxregFlags{}, regListOptions{}, regGetOptions{}, regSetOptions{})
	check := func(name string, want, got any, wantArgs, gotArgs []string) {
		t.Helper()
		if d := cmp.Diff(want, got, opt); d != "" {
			t.Errorf("%s options (-want +got):\n%s", name, d)
		}
		if d := cmp.Diff(wantArgs, gotArgs); d != "" {
			t.Errorf("%s args (-want +got):\n%s", name, d)
		}
	}
	m, args := cmdutiltest.Wire(t, a.newRegCmd, "-d", "emu", "--reg_name", "PAOS", "--set", "ase=1", "--indexes", "local_port=1", "--op", "clr=1", "--yes")
	check("reg (mlxreg)", &mlxregFlags{device: "emu", regName: "PAOS", set: "ase=1", indexes: "local_port=1", ops: "clr=1", yes: true}, m, []string{}, args)
	l, args := cmdutiltest.Wire(t, a.newRegListCmd, "-d", "emu", "--filter", "^P")
	check("list", &regListOptions{df: emu, filter: "^P"}, l, []string{}, args)
	g, args := cmdutiltest.Wire(t, a.newRegGetCmd, "PPCNT", "-d", "emu", "--index", "local_port=1", "--index", "grp=0", "--op", "clr=1", "--field", "x", "--raw")
	check("get", &regGetOptions{df: emu, index: []string{"local_port=1", "grp=0"}, op: []string{"clr=1"}, field: "x", raw: true}, g, []string{"PPCNT"}, args)
	gi, args := cmdutiltest.Wire(t, a.newRegGetCmd, "-d", "emu", "--id", "0x9021", "--len", "128", "--data", "00")
	check("get --id", &regGetOptions{df: emu, id: 0x9021, length: 128, data: "00"}, gi, []string{}, args)
	s, args := cmdutiltest.Wire(t, a.newRegSetCmd, "PAOS", "ase=1", "-d", "emu", "--index", "local_port=1", "--yes", "--dry-run", "--raw")
	check("set", &regSetOptions{df: emu, index: []string{"local_port=1"}, yes: true, dryRun: true, raw: true}, s, []string{"PAOS", "ase=1"}, args)
}

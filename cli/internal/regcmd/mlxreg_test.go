package regcmd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// mlxreg command lines mean cxray ones; those that cannot run say what to
// type instead (exit 2).
func TestMlxregFlagsTranslate(t *testing.T) {
	cases := []struct {
		f    mlxregFlags
		want []string
		err  string
	}{
		{mlxregFlags{device: "emu", regName: "PAOS", get: true, indexes: "local_port=1"}, []string{"reg", "get", "PAOS", "-d", "emu", "--index", "local_port=1"}, ""},
		{mlxregFlags{device: "emu", regName: "PPCNT", get: true, indexes: "local_port=1,grp=0", ops: "clr=1"}, []string{"reg", "get", "PPCNT", "-d", "emu", "--index", "local_port=1,grp=0", "--op", "clr=1"}, ""},
		{mlxregFlags{device: "emu", regID: "0x9020", regLen: "0xa0", get: true}, []string{"reg", "get", "--id", "0x9020", "--len", "0xa0", "-d", "emu"}, ""},
		{mlxregFlags{device: "emu", regName: "PAOS", set: "admin_status=2,ase=1", indexes: "local_port=1", yes: true},
			[]string{"reg", "set", "PAOS", "admin_status=2", "ase=1", "-d", "emu", "--index", "local_port=1", "--yes"}, ""},
		{mlxregFlags{showReg: "MTMP"}, []string{"prm", "show", "MTMP"}, ""},
		{mlxregFlags{showRegs: true, device: "emu"}, []string{"reg", "list", "-d", "emu"}, ""},
		{mlxregFlags{regName: "PAOS"}, nil, "--get (cxray reg get PAOS)"},
		{mlxregFlags{regID: "0x9020", get: true}, nil, "--reg_len"},
		{mlxregFlags{regID: "0x9020", regLen: "0x10", set: "x=1"}, nil, "cxray reg set --id 0x9020 --len N --data HEX"},
		{mlxregFlags{regName: "PAOS", get: true, set: "x=1"}, nil, "give one"},
		{mlxregFlags{get: true}, nil, "--reg_name NAME or --reg_id ID"},
	}
	for _, c := range cases {
		got, err := c.f.translate()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: error %v, want %q", c.f, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", c.f, err)
			continue
		}
		if d := cmp.Diff(c.want, got.args); d != "" {
			t.Errorf("%+v (-want +got):\n%s", c.f, d)
		}
	}
}

// The flags of reg get and reg set reach their options as given (runF
// stands in for the run functions), and nothing is read or written.
func TestRegFlagsToOptions(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	r := &app{a.App}
	var gotGet *regGetOptions
	var gotArgs []string
	c := r.newRegGetCmd(func(o *regGetOptions, args []string) error { gotGet, gotArgs = o, args; return nil })
	if err := a.Run(c, "PDDR", "-d", "emu", "--index", "page_select=1", "--index", "local_port=1", "--op", "clr=1", "--field", "page_data", "--raw", "--len", "0x100"); err != nil {
		t.Fatal(err)
	}
	df := cmdutil.DeviceFlags{Name: "emu", Timeout: cmdutil.DefaultTimeout, Via: "auto"}
	wantGet := &regGetOptions{df: df, index: []string{"page_select=1", "local_port=1"}, op: []string{"clr=1"}, field: "page_data", raw: true, length: 0x100}
	if d := cmp.Diff(wantGet, gotGet, cmp.AllowUnexported(regGetOptions{})); d != "" || !cmp.Equal(gotArgs, []string{"PDDR"}) {
		t.Errorf("get options (-want +got):\n%s\nargs %q", d, gotArgs)
	}
	var gotSet *regSetOptions
	c = r.newRegSetCmd(func(o *regSetOptions, args []string) error { gotSet, gotArgs = o, args; return nil })
	if err := a.Run(c, "PAOS", "ase=1", "-d", "emu", "--index", "local_port=1", "--yes", "--dry-run"); err != nil {
		t.Fatal(err)
	}
	wantSet := &regSetOptions{df: df, index: []string{"local_port=1"}, yes: true, dryRun: true}
	if d := cmp.Diff(wantSet, gotSet, cmp.AllowUnexported(regSetOptions{})); d != "" || !cmp.Equal(gotArgs, []string{"PAOS", "ase=1"}) {
		t.Errorf("set options (-want +got):\n%s\nargs %q", d, gotArgs)
	}
}

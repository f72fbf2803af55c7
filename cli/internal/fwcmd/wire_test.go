package fwcmd

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// Each verb's flags land in its options, and its arguments reach the run
// function, with no device opened (cmdutiltest.Wire).
func TestVerbWiring(t *testing.T) {
	a := &app{cmdutiltest.New(t, "table").App}
	dev := func(name string) cmdutil.DeviceFlags {
		return cmdutil.DeviceFlags{Name: name, Timeout: cmdutil.DefaultTimeout, Via: "auto"}
	}
	opt := cmp.AllowUnexported(cmdOptions{}, capsOptions{}, eswOptions{}, nvmfOptions{}, qpOptions{}, mkeyOptions{})
	check := func(name string, want, got any, wantArgs, gotArgs []string) {
		t.Helper()
		if d := cmp.Diff(want, got, opt); d != "" {
			t.Errorf("%s options (-want +got):\n%s", name, d)
		}
		if d := cmp.Diff(wantArgs, gotArgs); d != "" {
			t.Errorf("%s args (-want +got):\n%s", name, d)
		}
	}
	o1, args := cmdutiltest.Wire(t, a.newCmdCmd, "QUERY_HCA_CAP", "op_mod=1", "-d", "emu", "--raw")
	check("cmd", &cmdOptions{df: dev("emu"), raw: true}, o1, []string{"QUERY_HCA_CAP", "op_mod=1"}, args)
	o2, args := cmdutiltest.Wire(t, a.newCapsCmd, "-d", "emu", "--type", "general,roce", "--max", "--all-fields", "--diff", "old.json", "--save", "new.json")
	check("caps", &capsOptions{df: dev("emu"), types: []string{"general", "roce"}, max: true, all: true, diff: "old.json", save: "new.json"}, o2, []string{}, args)
	o3, args := cmdutiltest.Wire(t, a.newEswCmd, "-d", "kernel:mlx5_0", "--max-vfs", "8", "--timeout", "3s")
	check("esw", &eswOptions{df: cmdutil.DeviceFlags{Name: "kernel:mlx5_0", Timeout: 3 * time.Second, Via: "auto"}, maxVFs: 8}, o3, []string{}, args)
	o4, args := cmdutiltest.Wire(t, a.newNvmfCmd, "-d", "emu", "--xrq", "1,2", "--ns", "5", "--interval", "2s")
	check("nvmf", &nvmfOptions{df: dev("emu"), xrqs: []string{"1", "2"}, ns: []string{"5"}, interval: 2 * time.Second}, o4, []string{}, args)
	o5, args := cmdutiltest.Wire(t, a.newQpCmd, "-d", "emu", "--list")
	check("qp", &qpOptions{df: dev("emu"), listAll: true}, o5, []string{}, args)
	o6, args := cmdutiltest.Wire(t, a.newMkeyCmd, "-d", "emu", "0x1200")
	check("mkey", &mkeyOptions{df: dev("emu")}, o6, []string{"0x1200"}, args)
}

package configcmd

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// Each config verb's flags land in its options and its arguments reach
// the run function, with no device opened.
func TestVerbWiring(t *testing.T) {
	t.Setenv(EnvSettle, "")
	cc := &configCtx{a: &app{cmdutiltest.New(t, "table").App}}
	emu := cmdutil.DeviceFlags{Name: "emu", Timeout: cmdutil.DefaultTimeout, Via: "auto"}
	opt := cmp.AllowUnexported(configApplyOptions{}, configBackupOptions{}, checkOptions{}, diffOptions{}, showParamsOptions{},
		queryOptions{}, configRecoverOptions{}, configResetOptions{}, configRestoreOptions{}, configSetOptions{})
	check := func(name string, want, got any, wantArgs, gotArgs []string) {
		t.Helper()
		if d := cmp.Diff(want, got, opt); d != "" {
			t.Errorf("%s options (-want +got):\n%s", name, d)
		}
		if d := cmp.Diff(wantArgs, gotArgs); d != "" {
			t.Errorf("%s args (-want +got):\n%s", name, d)
		}
	}
	ap, args := cmdutiltest.Wire(t, cc.newApplyCmd, "-d", "emu", "-y", "--dry-run", "--at-reboot")
	check("apply", &configApplyOptions{df: emu, yes: true, dryRun: true, atReboot: true}, ap, []string{}, args)
	bk, args := cmdutiltest.Wire(t, cc.newBackupCmd, "out.txt", "-d", "emu", "--format", "raw")
	check("backup", &configBackupOptions{df: emu, format: "raw"}, bk, []string{"out.txt"}, args)
	ck, args := cmdutiltest.Wire(t, cc.newCheckCmd, "--all", "--policy", "p.yaml", "-d", "emu")
	check("check", &checkOptions{df: emu, all: true, policy: "p.yaml"}, ck, []string{}, args)
	df, args := cmdutiltest.Wire(t, cc.newDiffCmd, "a.txt", "b.txt", "--timeout", "3s", "--all")
	check("diff", &diffOptions{timeout: 3 * time.Second, all: true}, df, []string{"a.txt", "b.txt"}, args)
	sp, args := cmdutiltest.Wire(t, cc.newShowParamsCmd, "--filter", "SRIOV", "--internal")
	check("show-params", &showParamsOptions{filter: "SRIOV", internal: true}, sp, []string{}, args)
	q, args := cmdutiltest.Wire(t, cc.newQueryCmd, "SRIOV_EN", "-d", "emu", "-e", "--all", "--filter", "VF")
	check("query", &queryOptions{df: emu, extended: true, all: true, filter: "VF"}, q, []string{"SRIOV_EN"}, args)
	rc, args := cmdutiltest.Wire(t, cc.newRecoverCmd, "-d", "emu", "--rollback", "--dry-run")
	check("recover", &configRecoverOptions{df: emu, rollback: true, dryRun: true}, rc, []string{}, args)
	rs, args := cmdutiltest.Wire(t, cc.newResetCmd, "-d", "emu", "--all", "-y", "--backup", "b.txt")
	check("reset", &configResetOptions{df: emu, all: true, yes: true, backup: "b.txt"}, rs, []string{}, args)
	rt, args := cmdutiltest.Wire(t, cc.newRestoreCmd, "b.txt", "-d", "emu", "--reset-missing", "--accept-unchecked", "--force", "--backup", "c.txt")
	check("restore", &configRestoreOptions{df: emu, resetMissing: true, acceptUnchecked: true, force: true, backup: "c.txt"}, rt, []string{"b.txt"}, args)
	st, args := cmdutiltest.Wire(t, cc.newSetCmd, "SRIOV_EN=1", "NUM_OF_VFS=8", "-d", "emu", "--dry-run", "--settle", "0s")
	check("set", &configSetOptions{df: emu, dryRun: true}, st, []string{"SRIOV_EN=1", "NUM_OF_VFS=8"}, args)
}

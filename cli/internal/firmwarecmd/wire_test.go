package firmwarecmd

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// Each verb's flags land in its options (the update's longer default
// timeout included), and its arguments reach the run function.
func TestVerbWiring(t *testing.T) {
	a := &app{cmdutiltest.New(t, "table").App}
	opt := cmp.AllowUnexported(queryOptions{}, updateOptions{}, resetOptions{})
	check := func(name string, want, got any, wantArgs, gotArgs []string) {
		t.Helper()
		if d := cmp.Diff(want, got, opt); d != "" {
			t.Errorf("%s options (-want +got):\n%s", name, d)
		}
		if d := cmp.Diff(wantArgs, gotArgs); d != "" {
			t.Errorf("%s args (-want +got):\n%s", name, d)
		}
	}
	q, args := cmdutiltest.Wire(t, a.newQueryCmd, "-d", "emu")
	check("query", &queryOptions{df: cmdutil.DeviceFlags{Name: "emu", Timeout: cmdutil.DefaultTimeout, Via: "auto"}}, q, []string{}, args)
	u, args := cmdutiltest.Wire(t, a.newUpdateCmd, "fw.bin", "-d", "emu", "--dry-run", "--allow-downgrade", "--force-release", "--force", "-y")
	check("update", &updateOptions{df: cmdutil.DeviceFlags{Name: "emu", Timeout: 10 * time.Minute, Via: "auto"}, yes: true, dryRun: true, allowDowngrade: true, forceRelease: true, resend: true}, u, []string{"fw.bin"}, args)
	r, args := cmdutiltest.Wire(t, a.newResetCmd, "-d", "emu", "-l", "3", "-t", "phy_less", "--sync", "driver", "--dry-run", "--query")
	check("reset", &resetOptions{df: cmdutil.DeviceFlags{Name: "emu", Timeout: cmdutil.DefaultTimeout, Via: "auto"}, level: "3", typ: "phy_less", sync: "driver", dryRun: true, query: true}, r, []string{}, args)
}

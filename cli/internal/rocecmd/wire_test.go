package rocecmd

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// Each roce verb's flags land in its options and its arguments reach the
// run function.
func TestVerbWiring(t *testing.T) {
	a := &app{cmdutiltest.New(t, "table").App}
	emu := cmdutil.DeviceFlags{Name: "emu", Timeout: cmdutil.DefaultTimeout, Via: "auto"}
	opt := cmp.AllowUnexported(roceStatusOptions{}, roceAdviseOptions{}, roceSetOptions{})
	check := func(name string, want, got any, wantArgs, gotArgs []string) {
		t.Helper()
		if d := cmp.Diff(want, got, opt); d != "" {
			t.Errorf("%s options (-want +got):\n%s", name, d)
		}
		if d := cmp.Diff(wantArgs, gotArgs); d != "" {
			t.Errorf("%s args (-want +got):\n%s", name, d)
		}
	}
	s, args := cmdutiltest.Wire(t, a.newRoceStatusCmd, "-d", "emu", "--interval", "1s", "--rtt", "8us")
	check("status", &roceStatusOptions{df: emu, interval: time.Second, rtt: 8 * time.Microsecond}, s, []string{}, args)
	ad, args := cmdutiltest.Wire(t, a.newRoceAdviseCmd, "-d", "emu", "--rate", "400G", "--rtt", "8us", "--mtu", "1024", "--loss", "1e-5", "--nvdb", "builtin")
	check("advise", &roceAdviseOptions{df: emu, rateS: "400G", rtt: 8 * time.Microsecond, mtu: 1024, loss: 1e-5, nvdb: "builtin"}, ad, []string{}, args)
	st, args := cmdutiltest.Wire(t, a.newRoceSetCmd, "log_tx_psn_window=9", "-d", "emu", "--yes", "--dry-run", "--backup", "b.txt")
	check("set", &roceSetOptions{df: emu, yes: true, dryRun: true, backup: "b.txt"}, st, []string{"log_tx_psn_window=9"}, args)
}

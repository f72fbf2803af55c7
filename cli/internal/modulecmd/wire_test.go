package modulecmd

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// module's flags land in its options and no argument is taken.
func TestVerbWiring(t *testing.T) {
	a := &app{cmdutiltest.New(t, "table").App}
	got, args := cmdutiltest.Wire(t, a.newModuleCmd, "-d", "emu", "--port", "2", "--raw", "--verify", "--interval", "1s", "--file", "m.bin")
	want := &moduleOptions{df: cmdutil.DeviceFlags{Name: "emu", Timeout: cmdutil.DefaultTimeout, Via: "auto"}, port: 2, raw: true, verify: true, interval: time.Second, file: "m.bin"}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(moduleOptions{})); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	if len(args) != 0 {
		t.Errorf("args %q", args)
	}
}

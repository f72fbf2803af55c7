package statuscmd

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// status's device flags land in its options.
func TestVerbWiring(t *testing.T) {
	a := &app{cmdutiltest.New(t, "table").App}
	got, args := cmdutiltest.Wire(t, a.newStatusCmd, "-d", "kernel:mlx5_0", "--via", "kernel")
	if d := cmp.Diff(&statusOptions{df: cmdutil.DeviceFlags{Name: "kernel:mlx5_0", Timeout: cmdutil.DefaultTimeout, Via: "kernel"}}, got, cmp.AllowUnexported(statusOptions{})); d != "" || len(args) != 0 {
		t.Errorf("(-want +got):\n%s args %q", d, args)
	}
}

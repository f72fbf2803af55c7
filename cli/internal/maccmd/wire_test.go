package maccmd

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// mac's flags land in its options.
func TestVerbWiring(t *testing.T) {
	a := &app{cmdutiltest.New(t, "table").App}
	got, args := cmdutiltest.Wire(t, a.newMacCmd, "--os", "ipconfig.txt", "--from", "q.txt", "--permanent", "b8:3f:d2:a1:b2:c0,b8:3f:d2:a1:b2:c1", "-d", "emu")
	want := &macOptions{df: cmdutil.DeviceFlags{Name: "emu", Timeout: cmdutil.DefaultTimeout, Via: "auto"}, listing: "ipconfig.txt", from: "q.txt", permanent: []string{"b8:3f:d2:a1:b2:c0", "b8:3f:d2:a1:b2:c1"}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(macOptions{})); d != "" || len(args) != 0 {
		t.Errorf("(-want +got):\n%s args %q", d, args)
	}
}

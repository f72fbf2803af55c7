package snapshotcmd

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// snapshot's and diff's flags land in their options and the files reach
// the run function.
func TestVerbWiring(t *testing.T) {
	a := &app{cmdutiltest.New(t, "table").App}
	emu := cmdutil.DeviceFlags{Name: "emu", Timeout: cmdutil.DefaultTimeout, Via: "auto"}
	opt := cmp.AllowUnexported(snapshotOptions{}, diffOptions{})
	s, args := cmdutiltest.Wire(t, a.newSnapshotCmd, "-d", "emu", "--all", "--profile", "full", "--out", "s.json", "--samples", "3", "--interval", "1s")
	if d := cmp.Diff(&snapshotOptions{df: emu, all: true, profile: "full", out: "s.json", samples: 3, interval: time.Second}, s, opt); d != "" || len(args) != 0 {
		t.Errorf("snapshot (-want +got):\n%s args %q", d, args)
	}
	df, args := cmdutiltest.Wire(t, a.newDiffCmd, "base.json", "-d", "emu", "--samples", "2", "--interval", "1s", "--limit", "0")
	if d := cmp.Diff(&diffOptions{df: emu, samples: 2, interval: time.Second}, df, opt); d != "" || !cmp.Equal(args, []string{"base.json"}) {
		t.Errorf("diff (-want +got):\n%s args %q", d, args)
	}
}

package plotcmd

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// plot's flags land in its options and the file reaches the run function.
func TestVerbWiring(t *testing.T) {
	a := &app{cmdutiltest.New(t, "table").App}
	got, args := cmdutiltest.Wire(t, a.newPlotCmd, "m.jsonl", "--out", "c.svg", "--what", "temp,counters", "--threshold", "hot=90", "--title", "T", "--mode", "rate")
	want := &plotOptions{what: []string{"temp", "counters"}, thresholds: []string{"hot=90"}, out: "c.svg", title: "T", mode: "rate"}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(plotOptions{})); d != "" || !cmp.Equal(args, []string{"m.jsonl"}) {
		t.Errorf("(-want +got):\n%s args %q", d, args)
	}
}

package explaincmd

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// explain's flags land in its options and the file reaches the run
// function.
func TestVerbWiring(t *testing.T) {
	a := &app{cmdutiltest.New(t, "table").App}
	for _, c := range []struct {
		argv     []string
		want     explainOptions
		wantArgs []string
	}{
		{[]string{"dmesg.txt", "-v"}, explainOptions{kmsg: "/dev/kmsg", verbose: true}, []string{"dmesg.txt"}},
		{[]string{"--follow", "--kmsg", "/tmp/k", "--count", "3"}, explainOptions{follow: true, kmsg: "/tmp/k", count: 3}, []string{}},
	} {
		o, args := cmdutiltest.Wire(t, a.newExplainCmd, c.argv...)
		if d := cmp.Diff(&c.want, o, cmp.AllowUnexported(explainOptions{})); d != "" {
			t.Errorf("%q options (-want +got):\n%s", c.argv, d)
		}
		if d := cmp.Diff(c.wantArgs, args); d != "" {
			t.Errorf("%q args (-want +got):\n%s", c.argv, d)
		}
	}
}

package linkcmd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
	"github.com/cxray/cxray/feature/linkeye"
)

// --margin on the emulator's manual clock: a degraded lane named (exit 1)
// and a clean port (exit 0) in both output modes; a dry run lists the
// SLRED writes; without --yes and a terminal nothing is scanned; the
// values SLRED cannot take are exit 2.
func TestMargin(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Scenario(t, `clock: {mode: manual}
devices:
  - profile: cx6dx-2p100g
    functions: 2
    ports:
      - port: 1
        link: {raw_ber: 1e-12}
      - port: 2
        link: {raw_ber: 1e-12, lane_ber: [0, 0, 2e-5, 0]}
`)
	clean, bad := dev+"@0000:03:00.0", dev+"@0000:03:00.1"
	for _, c := range []struct {
		dev     string
		args    []string
		code    int
		lanes   []int
		verdict string
	}{
		{clean, []string{"--margin", "--yes", "--force", "--measure_time", "10"}, 0, []int{0, 1, 2, 3}, ""},
		{bad, []string{"--margin", "--yes", "--force"}, 1, []int{0, 1, 2, 3}, "the eye margin of lane 2"},
		{bad, []string{"--margin", "--yes", "--force", "--lanes", "1,2"}, 1, []int{1, 2}, "the eye margin of lane 2"},
		{bad, []string{"--margin", "--yes", "--force", "--lane", "3"}, 0, []int{3}, ""},
	} {
		for _, out := range []string{"table", "json"} {
			a.Output = out
			err := linkRun(a, append([]string{"-d", c.dev}, c.args...)...)
			if got := cmdutiltest.Code(err); err != nil && got != c.code || err == nil && c.code != 0 {
				t.Fatalf("%s %v: %v; want exit %d\n%s", out, c.args, err, c.code, a.Err)
			}
			if out == "table" {
				if text := a.Out.String(); c.verdict != "" && !strings.Contains(text, c.verdict) || !strings.Contains(text, "Final margin") {
					t.Errorf("%v table:\n%s", c.args, text)
				}
				continue
			}
			var d linkeye.MarginDocument
			cmdutiltest.JSON(t, a.Out.String(), &d)
			var lanes []int
			for _, x := range d.Margin.Results {
				lanes = append(lanes, x.Lane)
				if x.Margin == nil || x.Status != "eye scan completed" {
					t.Errorf("%v lane %d: %+v", c.args, x.Lane, x)
				}
			}
			if diff := cmp.Diff(c.lanes, lanes); diff != "" {
				t.Errorf("%v lanes (-want +got):\n%s", c.args, diff)
			}
			if (len(d.Margin.Verdicts) > 0) != (c.code == 1) || d.Margin.PAM4 || d.Margin.Final == nil {
				t.Errorf("%v: %+v with exit %d", c.args, d.Margin, c.code)
			}
		}
	}
	a.Output = "table"
	if err := linkRun(a, "-d", bad, "--margin", "--dry-run", "--lane", "2", "--measure_time", "60"); err != nil ||
		!strings.Contains(a.Out.String(), "would write SLRED local_port=1 lane=2 measure_time=2 destructive_ctrl=0 last_scan=1 en=1") {
		t.Errorf("dry run: %v\n%s", err, a.Out)
	}
	if err := linkRun(a, "-d", bad, "--margin", "--force"); cmdutiltest.Code(err) != cmdutil.ExitUsage || a.Out.Len() != 0 {
		t.Errorf("no --yes, no terminal: %v\n%s", err, a.Out)
	}
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"--margin", "--measure_time", "11"}, "give one of [10 30 60"},
		{[]string{"--margin", "--eye_select", "UP"}, "which has one eye"},
		{[]string{"--margin", "--lane", "4"}, "port 1 has lanes 0..3"},
		{[]string{"--margin", "--lanes", "-1"}, "give lane numbers 0..7"},
		{[]string{"--show_eye", "--dry-run"}, "go with --margin"},
		{[]string{"--margin", "--port_state", "UP"}, "--port_state is not for the eye"},
	} {
		for _, out := range []string{"table", "json"} {
			a.Output = out
			err := linkRun(a, append([]string{"-d", bad, "--yes", "--force"}, c.args...)...)
			if cmdutiltest.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
				t.Errorf("%s %v: %v; want exit 2 saying %q", out, c.args, err, c.words)
			}
		}
	}
}

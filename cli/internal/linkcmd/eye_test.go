package linkcmd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
	"github.com/cxray/cxray/feature/linkeye"
)

// --show_eye on a port whose lane 2 is degraded and on a clean one, in
// both output modes with the same exit code (1 and 0), with lane
// selection; and the flags and lanes that are exit 2.
func TestShowEye(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Scenario(t, `devices:
  - profile: cx7-2p400g
    functions: 2
    ports:
      - port: 1
        link: {raw_ber: 1e-12}
      - port: 2
        link: {raw_ber: 1e-12, lane_ber: [0, 0, 3e-5, 0]}
`)
	clean, bad := dev+"@0000:03:00.0", dev+"@0000:03:00.1"
	for _, c := range []struct {
		dev   string
		args  []string
		code  int
		lanes []int
		named string
	}{
		{clean, []string{"--show_eye"}, 0, []int{0, 1, 2, 3}, ""},
		{bad, []string{"--eye"}, 1, []int{0, 1, 2, 3}, "lane 2"},
		{bad, []string{"-e", "--lanes", "1,2"}, 1, []int{1, 2}, "lane 2"},
		{bad, []string{"--show_eye", "--lane", "3"}, 0, []int{3}, ""},
	} {
		for _, out := range []string{"table", "json"} {
			a.Output = out
			err := linkRun(a, append([]string{"-d", c.dev}, c.args...)...)
			if got := cmdutiltest.Code(err); err != nil && got != c.code || err == nil && c.code != 0 {
				t.Fatalf("%s %v: %v; want exit %d", out, c.args, err, c.code)
			}
			text := a.Out.String()
			if out == "table" {
				if c.named != "" && !strings.Contains(text, "eye_degraded_lane: the receive eye of "+c.named) {
					t.Errorf("%v table does not name %s:\n%s", c.args, c.named, text)
				}
				if c.named == "" && !strings.Contains(text, "no problem found") {
					t.Errorf("%v table:\n%s", c.args, text)
				}
				continue
			}
			var d linkeye.Document
			cmdutiltest.JSON(t, text, &d)
			var lanes []int
			for _, l := range d.Eye.Lanes {
				lanes = append(lanes, l.Lane)
				if !l.Measured || l.Figure == nil || l.Page != "slrg_7nm_ext" {
					t.Errorf("%v lane %d: %+v", c.args, l.Lane, l)
				}
			}
			if diff := cmp.Diff(c.lanes, lanes); diff != "" {
				t.Errorf("%v lanes (-want +got):\n%s", c.args, diff)
			}
			if (len(d.Eye.Verdicts) > 0) != (c.code == 1) {
				t.Errorf("%v: verdicts %+v with exit %d", c.args, d.Eye.Verdicts, c.code)
			}
		}
	}
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"--show_eye", "--lane", "4"}, "port 1 has lanes 0..3"},
		{[]string{"--show_eye", "--lanes", "0,9"}, "give lane numbers 0..7"},
		{[]string{"--show_eye", "--lanes", "x"}, "give lane numbers 0..7"},
		{[]string{"--show_eye", "--lane", "1", "--lanes", "2"}, "give one"},
		{[]string{"--show_eye", "--margin"}, "give --show_eye"},
		{[]string{"--lane", "1"}, "give --show_eye"},
		{[]string{"--lanes", "1"}, "--lanes goes with"},
		{[]string{"--show_eye", "--measure_time", "10"}, "go with --margin"},
		{[]string{"--show_eye", "--counters"}, "--counters is not for the eye"},
		{[]string{"--show_eye", "--fec", "RS"}, "--fec is not for the eye"},
		{[]string{"--show_eye", "--wait", "5s"}, "--wait is not for the eye"},
	} {
		for _, out := range []string{"table", "json"} {
			a.Output = out
			err := linkRun(a, append([]string{"-d", bad}, c.args...)...)
			if cmdutiltest.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
				t.Errorf("%s %v: %v; want exit 2 saying %q", out, c.args, err, c.words)
			}
		}
	}
}

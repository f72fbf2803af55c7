package linkcmd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
	"github.com/cxray/cxray/feature/linkctl"
)

// The PRBS workflow through the verb: EN (a change, with --yes), MEAS in
// both output modes with the same exit code (1 naming the degraded lane,
// 0 on the clean port), DS; and the flags that are exit 2 with nothing
// written.
func TestPRBSTestMode(t *testing.T) {
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
		code  int
		want  []string
		named string
	}{
		{clean, 0, []string{"ok", "ok", "ok", "ok"}, ""},
		{bad, 1, []string{"ok", "ok", "degraded", "ok"}, "lane 2: BER"},
	} {
		a.Output = "table"
		if err := linkRun(a, "-d", c.dev, "--test_mode", "EN", "--tx_prbs", "PRBS13", "--tx_rate", "25G", "--yes"); err != nil {
			t.Fatalf("%s EN: %v\n%s", c.dev, err, a.Out.String())
		}
		for _, out := range []string{"table", "json"} {
			a.Output = out
			err := linkRun(a, "-d", c.dev, "--test_mode", "MEAS", "--duration", "5s")
			if got := cmdutiltest.Code(err); err != nil && got != c.code || err == nil && c.code != 0 {
				t.Fatalf("%s %s MEAS: %v; want exit %d", c.dev, out, err, c.code)
			}
			text := a.Out.String()
			if out == "table" {
				if c.named != "" && !strings.Contains(text, c.named) {
					t.Errorf("table does not name %s:\n%s", c.named, text)
				}
				if !strings.Contains(text, "Tx PRBS13A at EDR, Rx PRBS13A at EDR") {
					t.Errorf("table does not give the patterns:\n%s", text)
				}
				continue
			}
			var r linkctl.PRBSReport
			cmdutiltest.JSON(t, text, &r)
			var got []string
			for _, l := range r.Lanes {
				got = append(got, l.Verdict)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("%s verdicts (-want +got):\n%s", c.dev, d)
			}
		}
		a.Output = "table"
		if err := linkRun(a, "-d", c.dev, "--test_mode", "DS", "--yes"); err != nil {
			t.Fatalf("%s DS: %v", c.dev, err)
		}
		if err := linkRun(a, "-d", c.dev, "--test_mode", "MEAS", "--duration", "1s"); cmdutiltest.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "not in PRBS test mode") {
			t.Errorf("MEAS after DS: %v; want exit 2 (not in test mode)", err)
		}
	}
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"--test_mode", "EN", "--tx_prbs", "PRBS99", "--yes"}, "not a PRBS pattern"},
		{[]string{"--test_mode", "EN", "--tx_prbs", "PRBS28", "--yes"}, "does not support"},
		{[]string{"--test_mode", "GO"}, "give EN"},
		{[]string{"--tx_prbs", "PRBS31"}, "go with --test_mode EN"},
		{[]string{"--rx_rate", "HDR"}, "go with --test_mode EN"},
		{[]string{"--invert_tx_polarity"}, "go with --test_mode EN"},
		{[]string{"--test_mode", "MEAS", "--invert_rx_polarity"}, "does not go with it"},
		{[]string{"--test_mode", "EN", "--tx_rate", "9G", "--yes"}, "not a lane rate name"},
		{[]string{"--test_mode", "EN", "--tx_rate", "1G", "--yes"}, "cannot test at that rate"},
		{[]string{"--test_mode", "MEAS", "--tx_rate", "HDR"}, "does not go with it"},
		{[]string{"--test_mode", "EN", "--lanes", "1", "--yes"}, "--lanes goes with --test_mode MEAS"},
		{[]string{"--test_mode", "MEAS", "--tx_prbs", "PRBS7"}, "does not go with it"},
		{[]string{"--duration", "5s"}, "--duration goes with --test_mode MEAS"},
		{[]string{"--test_mode", "EN", "--fec", "RS", "--yes"}, "make one change at a time"},
	} {
		for _, out := range []string{"table", "json"} {
			a.Output = out
			err := linkRun(a, append([]string{"-d", bad}, c.args...)...)
			if cmdutiltest.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
				t.Errorf("%s %v: %v; want exit 2 saying %q", out, c.args, err, c.words)
			}
		}
	}
	// Nothing of the refused commands reached the port: it is not in test mode.
	if err := linkRun(a, "-d", bad, "--test_mode", "MEAS"); cmdutiltest.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "not in PRBS test mode") {
		t.Errorf("after the refused commands: %v; want 'not in PRBS test mode'", err)
	}
}

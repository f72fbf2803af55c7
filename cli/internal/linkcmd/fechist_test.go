package linkcmd

import (
	"strings"
	"testing"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// --fec_histogram in both output modes (exit 0 each), --clear_histogram
// with a dry run and with --yes, and the flag combinations that are exit 2.
func TestFECHistogram(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Scenario(t, "devices:\n  - profile: cx7-2p400g\n    ports:\n      - port: 1\n        link: {raw_ber: 1e-6}\n")
	if err := linkRun(a, "-d", dev, "--rx_fec_histogram", "--show_histogram"); err != nil {
		t.Fatal(err)
	}
	if out := a.Out.String(); !strings.Contains(out, "KP4 RS-FEC (544,514)") || !strings.Contains(out, "Bin 15  [15:15]") {
		t.Errorf("table:\n%s", out)
	}
	a.Output = "json"
	if err := linkRun(a, "-d", dev, "--fec_histogram"); err != nil {
		t.Fatal(err)
	}
	var d struct {
		Histogram struct {
			Active bool `json:"active"`
			Bins   []struct {
				Codewords *uint64 `json:"codewords"`
			} `json:"bins"`
			Codewords uint64 `json:"codewords"`
		} `json:"histogram"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &d)
	if !d.Histogram.Active || len(d.Histogram.Bins) != 16 || d.Histogram.Bins[0].Codewords == nil {
		t.Errorf("JSON: %+v", d)
	}
	if err := linkRun(a, "-d", dev, "--rx_fec_histogram", "--clear_histogram", "--dry-run"); err != nil || !strings.Contains(a.Out.String(), "grp=0x23 clr=1") {
		t.Errorf("dry run: %v\n%s", err, a.Out)
	}
	if err := linkRun(a, "-d", dev, "--rx_fec_histogram", "--clear_histogram", "--yes"); err != nil || !strings.Contains(a.Out.String(), "PPCNT group 0x23") {
		t.Errorf("clear: %v\n%s", err, a.Out)
	}
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"--show_histogram"}, "go with --rx_fec_histogram"},
		{[]string{"--rx_fec_histogram"}, "give --show_histogram or --clear_histogram"},
		{[]string{"--rx_fec_histogram", "--show_histogram", "--clear_histogram"}, "give --show_histogram or --clear_histogram"},
		{[]string{"--fec_histogram", "--counters"}, "--counters is not for the FEC histogram"},
		{[]string{"--fec_histogram", "--port_state", "DN"}, "--port_state is not for the FEC histogram"},
	} {
		for _, out := range []string{"table", "json"} {
			a.Output = out
			err := linkRun(a, append([]string{"-d", dev}, c.args...)...)
			if cmdutiltest.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
				t.Errorf("%s %v: %v; want exit 2 saying %q", out, c.args, err, c.words)
			}
		}
	}
}

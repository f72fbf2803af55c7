package linkcmd

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// link's flags land in their fields: each case starts from the options of
// a plain `link -d emu` and says which fields its flags change; any other
// difference fails.
func TestVerbWiring(t *testing.T) {
	a := &app{cmdutiltest.New(t, "table").App}
	opt := cmp.AllowUnexported(linkOptions{}, changeOptions{}, cableOptions{}, histOptions{}, eyeOptions{}, prbsOptions{})
	base, _ := cmdutiltest.Wire(t, a.newLinkCmd, "-d", "emu")
	if base.port != 1 || base.change.wait != 10*time.Second || base.prbs.duration != 10*time.Second || base.eye.lane != -1 || base.eye.measureTime != 30 || base.cableOpts.length != 16 {
		t.Errorf("defaults: port %d, wait %v, duration %v, lane %d, measure_time %d, length %d", base.port, base.change.wait, base.prbs.duration, base.eye.lane, base.eye.measureTime, base.cableOpts.length)
	}
	for _, c := range []struct {
		argv []string
		set  func(o *linkOptions)
	}{
		{[]string{"--port", "2", "--all", "--show_counters", "--interval", "1s", "--clear", "--yes", "--pcie"}, func(o *linkOptions) {
			o.port, o.all, o.counters, o.interval, o.clear, o.yes, o.pcie = 2, true, true, time.Second, true, true, true
		}},
		{[]string{"--port_state", "TG", "--speeds", "100G_2X", "--link_mode_force", "--fec", "RS", "--fec_speed", "100g", "--loopback", "PH", "--undo", "--dry-run", "--force", "--wait", "3s"}, func(o *linkOptions) {
			o.change = changeOptions{portState: "TG", speeds: "100G_2X", forceMode: true, fec: "RS", fecSpeed: "100g", loopback: "PH", undo: true, dryRun: true, force: true, wait: 3 * time.Second}
		}},
		{[]string{"--cable", "--read", "--page", "3", "--bank", "1", "--offset", "128", "--length", "8", "--write", "0a0b"}, func(o *linkOptions) {
			o.cableOpts = cableOptions{cable: true, read: true, page: 3, bank: 1, offset: 128, length: 8, write: "0a0b"}
		}},
		{[]string{"--rx_fec_histogram", "--show_histogram", "--clear_histogram"}, func(o *linkOptions) { o.hist = histOptions{rx: true, show: true, clear: true} }},
		{[]string{"--fec_histogram"}, func(o *linkOptions) { o.hist.alias = true }},
		{[]string{"--margin", "--measure_time", "60", "--eye_select", "UP", "--lane", "2"}, func(o *linkOptions) {
			o.eye.margin, o.eye.measureTime, o.eye.eyeSelect, o.eye.lane = true, 60, "UP", 2
		}},
		{[]string{"-e"}, func(o *linkOptions) { o.eye.show = true }},
		{[]string{"--test_mode", "EN", "--tx_prbs", "PRBS31", "--rx_prbs", "PRBS23A", "--duration", "5s"}, func(o *linkOptions) {
			o.prbs.testMode, o.prbs.tx, o.prbs.rx, o.prbs.duration = "EN", "PRBS31", "PRBS23A", 5*time.Second
		}},
		{[]string{"--test_mode", "EN", "--tx_rate", "HDR", "--rx_rate", "NDR", "--invert_tx_polarity", "--invert_rx_polarity"}, func(o *linkOptions) {
			o.prbs.testMode, o.prbs.txRate, o.prbs.rxRate, o.prbs.invTx, o.prbs.invRx = "EN", "HDR", "NDR", true, true
		}},
	} {
		want := *base
		c.set(&want)
		got, args := cmdutiltest.Wire(t, a.newLinkCmd, append([]string{"-d", "emu"}, c.argv...)...)
		if d := cmp.Diff(&want, got, opt); d != "" {
			t.Errorf("%q (-want +got):\n%s", c.argv, d)
		}
		if len(args) != 0 {
			t.Errorf("%q: args %q", c.argv, args)
		}
	}
}

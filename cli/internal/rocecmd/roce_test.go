package rocecmd

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
	"github.com/cxray/cxray/feature/roce"
)

func roceRun(a *cmdutiltest.App, args ...string) error {
	a.Reset()
	return a.Run(New(a.App), args...)
}

// The scenario's ROCE_ACCL and window, for status and set.
const roceScenario = "    roce:\n      supported: [roce_adp_retrans, roce_tx_window]\n      enabled: [roce_adp_retrans]\n    nv: {configured: {LOG_TX_PSN_WINDOW: 9}}\n"

// status reads the status of dev as JSON.
func status(t *testing.T, a *cmdutiltest.App, dev string) roce.Report {
	t.Helper()
	saved := a.Output
	a.Output = "json"
	defer func() { a.Output = saved }()
	a.Reset()
	o := &roceStatusOptions{df: cmdutil.DeviceFlags{Name: dev, Timeout: 10 * time.Second}, interval: 2 * time.Second}
	if err := (&app{a.App}).runRoceStatus(a.Ctx, o); err != nil {
		t.Fatalf("status: %v", err)
	}
	var r roce.Report
	cmdutiltest.JSON(t, a.Out.String(), &r)
	return r
}

// enabled is the names of the switches that are on.
func enabled(r roce.Report) []string {
	var out []string
	for _, f := range r.Features {
		if f.Enabled {
			out = append(out, f.Name)
		}
	}
	return out
}

// Usage errors are exit 2 with what to do, and write nothing.
func TestRoceUsage(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, roceScenario)
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"status", "-d", dev, "--interval", "0s"}, "--interval 0s: give a duration between 1ms and 10m"},
		{[]string{"status", "-d", dev, "--interval", "11m"}, "between 1ms and 10m"},
		{[]string{"advise", "--rtt", "8us"}, "rate"},
		{[]string{"advise", "--rate", "fast", "--rtt", "8us"}, "fast"},
		{[]string{"set", "-d", dev, "log_tx_psn_window"}, "write log_tx_psn_window=N or FEATURE=on|off"},
		{[]string{"set", "-d", dev, "log_tx_psn_window=64"}, "log_tx_psn_window=64: give 0 (device default) to 63"},
		{[]string{"set", "-d", dev, "log_tx_psn_window=ten"}, "give 0 (device default) to 63"},
		{[]string{"set", "-d", dev, "roce_tx_window=maybe"}, "roce_tx_window=maybe: give on or off"},
		{[]string{"set", "-d", dev, "no_such_switch=on"}, "no_such_switch"},
		{[]string{"set", "-d", dev, "log_tx_psn_window=10", "roce_tx_window=on"}, "set the window and the switches in two commands"},
		{[]string{"set", "log_tx_psn_window=10"}, "add -d DEV"},
		{[]string{"set", "-d", dev, "roce_tx_window=on"}, "add --yes"},
	} {
		err := roceRun(a, c.args...)
		if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%v: exit %d %v; want exit 2 saying %q", c.args, code, err, c.words)
		}
	}
	if diff := cmp.Diff([]string{"roce_adp_retrans"}, enabled(status(t, a, dev))); diff != "" {
		t.Errorf("refused sets changed the switches (-want +got):\n%s", diff)
	}
}

// status without -d says to add one, as every device command does.
func TestRoceStatusNoDevice(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	err := roceRun(a, "status")
	if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), "no device given; add -d DEV") {
		t.Errorf("status without -d: exit %d %v, want exit 2 asking for -d DEV", code, err)
	}
}

// status reports the scenario's switches and window, in both modes.
func TestRoceStatus(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, roceScenario)
	r := status(t, a, dev)
	var sup []string
	for _, f := range r.Features {
		if f.Supported {
			sup = append(sup, f.Name)
		}
	}
	if diff := cmp.Diff([]string{"roce_adp_retrans", "roce_tx_window"}, sup); diff != "" {
		t.Errorf("supported (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"roce_adp_retrans"}, enabled(r)); diff != "" {
		t.Errorf("enabled (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(roce.WindowReport{NextBoot: 9, Current: 9}, r.Window); diff != "" {
		t.Errorf("window (-want +got):\n%s", diff)
	}
	o := &roceStatusOptions{df: cmdutil.DeviceFlags{Name: dev, Timeout: 10 * time.Second}, interval: 2 * time.Second}
	if err := (&app{a.App}).runRoceStatus(a.Ctx, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Out.String(), "LOG_TX_PSN_WINDOW: current 9 (512 packets), next boot 9 (512 packets)") {
		t.Errorf("table:\n%s", a.Out)
	}
}

// `roce status -d DEV` on an adapter that does not answer (removed:
// config space reads 0xFFFFFFFF) is a device error, exit 3, as health,
// module, link and snapshot give for the same adapter; it used to exit 0
// with a report whose every part was the same device error. Only a
// backend without registers (errors.ErrUnsupported) makes parts of it.
func TestRoceStatusRemovedIsDeviceError(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	o := &roceStatusOptions{df: cmdutil.DeviceFlags{Name: cmdutiltest.Manual(t, "    faults: {removed: true}\n"), Timeout: 10 * time.Second}, interval: time.Second}
	if err := (&app{a.App}).runRoceStatus(a.Ctx, o); cmdutiltest.Code(err) != cmdutil.ExitDevice {
		t.Errorf("removed adapter: %v, want exit 3\n%s", err, a.Out)
	}
}

// advise: a window too small for the link's bandwidth-delay product is
// exit 1 in both modes; a large enough one exit 0.
func TestRoceAdvise(t *testing.T) {
	for _, c := range []struct {
		window   int
		limiting bool
	}{{4, true}, {20, false}} {
		a := cmdutiltest.New(t, "json")
		dev := cmdutiltest.Manual(t, "    nv: {configured: {LOG_TX_PSN_WINDOW: "+map[int]string{4: "4", 20: "20"}[c.window]+"}}\n")
		args := []string{"advise", "--rate", "400G", "--rtt", "10us", "-d", dev}
		err := roceRun(a, args...)
		if c.limiting != errors.Is(err, cmdutil.ErrProblem) || (!c.limiting && err != nil) {
			t.Errorf("window %d: %v, limiting %v", c.window, err, c.limiting)
		}
		var adv roce.Advice
		cmdutiltest.JSON(t, a.Out.String(), &adv)
		if adv.Current != c.window || adv.Limiting == nil || *adv.Limiting != c.limiting || adv.MinLogWindow <= 4 || adv.MinLogWindow > 20 {
			t.Errorf("window %d: current %d, limiting %v, smallest %d", c.window, adv.Current, adv.Limiting, adv.MinLogWindow)
		}
		a.Output = "table"
		err2 := roceRun(a, args...)
		if cmdutiltest.Code(err2) != cmdutiltest.Code(err) || !strings.Contains(a.Out.String(), "smallest LOG_TX_PSN_WINDOW that covers it: ") {
			t.Errorf("window %d table: %v (JSON %v)\n%s", c.window, err2, err, a.Out)
		}
	}
	// Without -d: no current window, so nothing to judge: exit 0.
	a := cmdutiltest.New(t, "json")
	if err := roceRun(a, "advise", "--rate", "100G", "--rtt", "20us"); err != nil {
		t.Fatal(err)
	}
	var adv roce.Advice
	cmdutiltest.JSON(t, a.Out.String(), &adv)
	if adv.Current != -1 || adv.Limiting != nil {
		t.Errorf("without a device: current %d limiting %v", adv.Current, adv.Limiting)
	}
}

// set: a switch goes on live, the window goes to Next Boot; a declined
// switch change writes nothing.
func TestRoceSet(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, roceScenario)
	a.Stdin = cmdutiltest.Terminal(t, "n\n")
	if err := roceRun(a, "set", "-d", dev, "roce_tx_window=on"); !errors.Is(err, cmdutil.ErrProblem) || !strings.Contains(a.Err.String(), "not confirmed; ") {
		t.Fatalf("declined: %v %q, want exit 1", err, a.Err)
	}
	if diff := cmp.Diff([]string{"roce_adp_retrans"}, enabled(status(t, a, dev))); diff != "" {
		t.Errorf("a declined set changed the switches (-want +got):\n%s", diff)
	}
	if err := roceRun(a, "set", "-d", dev, "roce_tx_window=on", "roce_adp_retrans=off", "--dry-run"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"roce_adp_retrans"}, enabled(status(t, a, dev))); diff != "" {
		t.Errorf("a dry run changed the switches (-want +got):\n%s", diff)
	}
	if err := roceRun(a, "set", "-d", dev, "roce_tx_window=on", "roce_adp_retrans=off", "--yes"); err != nil {
		t.Fatalf("set switches: %v", err)
	}
	if diff := cmp.Diff([]string{"roce_tx_window"}, enabled(status(t, a, dev))); diff != "" {
		t.Errorf("after set (-want +got):\n%s", diff)
	}
	if err := roceRun(a, "set", "-d", dev, "log_tx_psn_window=12", "--yes"); err != nil {
		t.Fatalf("set window: %v", err)
	}
	if diff := cmp.Diff(roce.WindowReport{NextBoot: 12, Current: 9}, status(t, a, dev).Window); diff != "" {
		t.Errorf("window after set (-want +got):\n%s", diff)
	}
}

package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
)

func TestRoceStatusAndAdvise(t *testing.T) {
	// A small window on a 400G link with 20 µs RTT: 2^6 = 64 packets < 245.
	sc := healthScenario(t, "    nv: {configured: {LOG_TX_PSN_WINDOW: 6}}\n")
	out, errs, code := cli(t, "", "roce", "status", "-d", "emu:"+sc, "--rtt", "20us", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	var st struct {
		Features []struct {
			Name      string `json:"name"`
			Supported bool   `json:"supported"`
		} `json:"features"`
		Window map[string]int `json:"log_tx_psn_window"`
		Advice struct {
			Limiting     *bool `json:"limiting"`
			MinLogWindow int   `json:"min_log_tx_psn_window"`
		} `json:"advice"`
	}
	mustJSON(t, out, &st)
	if len(st.Features) < 5 || !st.Features[0].Supported || st.Window["current"] != 6 {
		t.Errorf("status %+v", st)
	}
	if st.Advice.Limiting == nil || !*st.Advice.Limiting || st.Advice.MinLogWindow != 8 {
		t.Errorf("the window should be limiting: %+v", st.Advice)
	}
	out, _, code = cli(t, "", "roce", "advise", "--rate", "400G", "--rtt", "20us", "-d", "emu:"+sc)
	if code != 1 || !strings.Contains(out, "smaller than the BDP") || !strings.Contains(out, "log_tx_psn_window=8") {
		t.Errorf("advise: exit %d %s", code, out)
	}
	_, errs, code = cli(t, "", "roce", "advise", "--rate", "fast", "--rtt", "2us")
	if code != 2 || !strings.Contains(errs, "400G") {
		t.Errorf("bad rate: %d %s", code, errs)
	}
}

func TestRoceSet(t *testing.T) {
	privateState(t) // it writes to -d emu, which keeps what it is told
	out, errs, code := cli(t, "", "--adb", "builtin", "roce", "set", "roce_slow_restart=off", "-d", "emu", "--yes")
	if code != 0 || !strings.Contains(out, "roce_slow_restart_en") || !strings.Contains(out, "verified") {
		t.Errorf("switch: exit %d %s %s", code, out, errs)
	}
	_, errs, code = cli(t, "", "roce", "set", "log_tx_psn_window=64", "-d", "emu", "--yes")
	if code != 2 || !strings.Contains(errs, "0 (device default) to 63") {
		t.Errorf("window range: %d %s", code, errs)
	}
	out, errs, code = cli(t, "", "roce", "set", "log_tx_psn_window=10", "-d", "emu", "--dry-run")
	if code != 0 || !strings.Contains(out, "LOG_TX_PSN_WINDOW") {
		t.Errorf("window dry run: %d %s %s", code, out, errs)
	}
}

// The emulated RDMA counters follow the scenario's path: loss and a small
// window show as retransmissions in roce status and in health.
func TestRoceEmulatedRetransmissions(t *testing.T) {
	sc := healthScenario(t, "    rdma: {loss: 1e-4, rtt: 20us}\n    nv: {configured: {LOG_TX_PSN_WINDOW: 6}}\n")
	out, errs, code := cli(t, "", "roce", "status", "-d", "emu:"+sc, "--interval", "10s", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	var st struct {
		Rates map[string]float64 `json:"retransmission_rates_per_s"`
	}
	mustJSON(t, out, &st)
	if st.Rates["port1.duplicate_request"] <= 0 || st.Rates["port1.local_ack_timeout_err"] <= 0 {
		t.Errorf("no retransmissions with loss: %v", st.Rates)
	}
	r, code := runHealth(t, "-d", "emu:"+sc)
	if c := check(r, "counters"); code != 1 || c.Status != "warn" || !strings.Contains(strings.Join(c.Details, " "), "duplicate_request") {
		t.Errorf("health counters %+v", c)
	}
	// Without loss and with a window that covers the path: quiet.
	clean := healthScenario(t, "    rdma: {loss: 0, rtt: 8us}\n")
	out, _, _ = cli(t, "", "roce", "status", "-d", "emu:"+clean, "--interval", "10s", "-o", "json")
	var quiet struct {
		Rates map[string]float64 `json:"retransmission_rates_per_s"`
	}
	mustJSON(t, out, &quiet)
	if len(quiet.Rates) != 0 {
		t.Errorf("retransmissions on a clean path: %v", quiet.Rates)
	}
}

// roce advise reads what the NV database has: a database that names the
// receive-side window (the 2026-05 mlxconfig_host.db) is said to, with the
// parameter and whether this firmware offers it; one that does not is
// named as the reason; never "the device has no receive-side window".
func TestRoceAdviseReceiveWindow(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	newer := filepath.Join(prmhistorytest.Require(t), "mlxconfig_host-2026-05.db")
	for _, c := range []struct {
		args []string
		want string
		name string
	}{
		{[]string{"--nvdb", "builtin"}, "names no receive-side window", ""},
		{[]string{"--nvdb", newer}, "names a receive-side window, nv_sw_accelerate_conf.log_max_rx_ooo_psn_win", "nv_sw_accelerate_conf.log_max_rx_ooo_psn_win"},
		{[]string{"--nvdb", newer, "-d", "emu"}, "this firmware does not offer its TLV", "nv_sw_accelerate_conf.log_max_rx_ooo_psn_win"},
	} {
		args := append([]string{"--adb", "builtin", "roce", "advise", "--rate", "400G", "--rtt", "8us"}, c.args...)
		out, errs, code := cli(t, "", args...)
		if code != 0 || !strings.Contains(out, c.want) || strings.Contains(out, "there is no per-QP or receive-side window setting") {
			t.Errorf("%v: exit %d, lacks %q\n%s%s", c.args, code, c.want, out, errs)
		}
		jout, _, jcode := cli(t, "", append(args, "-o", "json")...)
		var doc struct {
			RxWindow struct{ Name string } `json:"rx_window"`
		}
		mustJSON(t, jout, &doc)
		if jcode != code || doc.RxWindow.Name != c.name {
			t.Errorf("%v JSON: exit %d, rx_window %+v", c.args, jcode, doc.RxWindow)
		}
	}
}

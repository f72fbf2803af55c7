package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/feature/health"
	"github.com/cxray/cxray/internal/prmhistory"
)

// healthScenario writes a one-adapter scenario with a manual clock (so the
// two samples are instant) and the given extra keys for the device.
func healthScenario(t *testing.T, extra string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "h.yaml")
	body := "clock: {start: 2024-05-01T08:00:00Z, mode: manual}\ndevices:\n  - profile: cx7-2p400g\n    base_mac: b8:3f:d2:a1:b2:c0\n" + extra
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type healthOut struct {
	Devices []health.Report `json:"devices"`
}

func runHealth(t *testing.T, args ...string) (health.Report, int) {
	t.Helper()
	out, errs, code := cli(t, "", append([]string{"health", "-o", "json", "--interval", "10s"}, args...)...)
	var h healthOut
	mustJSON(t, out, &h)
	if len(h.Devices) != 1 {
		t.Fatalf("exit %d %s: %s", code, errs, out)
	}
	return h.Devices[0], code
}

func check(r health.Report, name string) health.Check {
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	return health.Check{}
}

func TestHealthClean(t *testing.T) {
	r, code := runHealth(t, "--adb", "builtin", "-d", "emu:"+healthScenario(t, ""))
	if code != 0 || r.Status != health.OK {
		t.Fatalf("clean profile: exit %d %+v", code, r)
	}
	for _, c := range r.Checks {
		if c.Status != health.OK {
			t.Errorf("%s: %s %s", c.Name, c.Status, c.Summary)
		}
	}
}

// Each injected fault turns its check to warn or fail, with a next step.
func TestHealthFaults(t *testing.T) {
	cases := []struct {
		name, extra, check string
		want               health.Status
		words              string
	}{
		{"frozen module monitors", "    modules:\n      - {module: 0, faults: [frozen_monitors]}\n", "modules", health.Fail, "frozen"},
		{"I2C hang", "    modules:\n      - {module: 1, faults: [i2c_hang]}\n", "modules", health.Fail, "i2c_hang"},
		{"hot ASIC", "    faults: {asic_temperature_offset: 70}\n", "temperatures", health.Fail, "alarm threshold"},
		{"pending NV", "    nv: {pending: {LOG_TX_PSN_WINDOW: 12}}\n", "configuration", health.Warn, "LOG_TX_PSN_WINDOW"},
		{"SR-IOV without VFs", "    nv: {configured: {SRIOV_EN: True, NUM_OF_VFS: 0}}\n", "configuration", health.Warn, "NUM_OF_VFS=0"},
		{"MAC drift", "    functions:\n      - {mac: \"02:00:00:00:00:01\"}\n", "mac", health.Warn, "02:00:00:00:00:01"},
		{"errors moving", "    ports:\n      - {port: 1, traffic: {symbol_errors_per_sec: 5}}\n", "counters", health.Warn, "port1.symbol_errors"},
		{"port down", "    faults: {link_down: [2]}\n", "ports", health.Fail, "port 2"},
	}
	for _, c := range cases {
		r, code := runHealth(t, "--adb", "builtin", "-d", "emu:"+healthScenario(t, c.extra))
		got := check(r, c.check)
		text := got.Summary + " " + strings.Join(got.Details, " ")
		if code != 1 || got.Status != c.want || !strings.Contains(text, c.words) || got.Next == "" {
			t.Errorf("%s: exit %d, %s = %s (%s), next %q; want %s mentioning %q", c.name, code, c.check, got.Status, text, got.Next, c.want, c.words)
		}
	}
}

// An old register database (Rev 0.51, 2020) against firmware built in 2023.
func TestHealthOldDatabase(t *testing.T) {
	dir := prmhistory.Require(t)
	r, code := runHealth(t, "--adb", filepath.Join(dir, "hca-ext-rev0.51.adb"), "-d", "emu:"+healthScenario(t, ""))
	id := check(r, "identity")
	if code != 1 || id.Status != health.Warn || !strings.Contains(id.Summary, "older than the firmware") || !strings.Contains(id.Next, "cxray prm diff") {
		t.Errorf("exit %d identity %+v", code, id)
	}
}

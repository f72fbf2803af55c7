package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/feature/health"
	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
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
		// The emulator has no kernel driver: its check is skipped.
		if c.Status != health.OK && !(c.Name == "driver" && c.Status == health.Skip) {
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
	dir := prmhistorytest.Require(t)
	r, code := runHealth(t, "--adb", filepath.Join(dir, "hca-ext-rev0.51.adb"), "-d", "emu:"+healthScenario(t, ""))
	id := check(r, "identity")
	if code != 1 || id.Status != health.Warn || !strings.Contains(id.Summary, "older than the firmware") || !strings.Contains(id.Next, "cxray prm diff") {
		t.Errorf("exit %d identity %+v", code, id)
	}
	// status says the same, in both modes, exit 1; with the built-in
	// database (not two years older) it says nothing.
	sc := healthScenario(t, "")
	for _, mode := range []string{"table", "json"} {
		out, errs, scode := cli(t, "", "--adb", filepath.Join(dir, "hca-ext-rev0.51.adb"), "status", "-d", "emu:"+sc, "-o", mode)
		if scode != 1 || !strings.Contains(out, "the database (Rev 0.51, 2020-03) is older than the firmware (built 2023-10-05)") {
			t.Errorf("status (%s): exit %d\n%s%s", mode, scode, out, errs)
		}
	}
	if out, _, scode := cli(t, "", "--adb", "builtin", "status", "-d", "emu:"+sc); scode != 0 || strings.Contains(out, "older than the firmware") {
		t.Errorf("status with the built-in database: exit %d\n%s", scode, out)
	}
}

// An empty cage on an enabled port (many servers leave port 2 unused) is
// information with the next step, not three hardware failures: exit 0 in
// both output modes. Declared unused (--unused-ports, or the file
// $CXRAY_UNUSED_PORTS names), the port is not judged at all; a file that
// does not parse is exit 2.
func TestHealthEmptyCageAndUnusedPorts(t *testing.T) {
	t.Setenv(health.EnvUnusedPorts, "off")
	sc := healthScenario(t, "    modules:\n      - {module: 1, plugged: false}\n")
	r, code := runHealth(t, "--adb", "builtin", "-d", "emu:"+sc)
	got := map[string]health.Status{}
	for _, c := range r.Checks {
		got[c.Name] = c.Status
	}
	want := map[string]health.Status{"identity": health.OK, "access": health.OK, "ports": health.Info, "modules": health.OK,
		"temperatures": health.OK, "configuration": health.OK, "counters": health.OK, "link": health.OK, "mac": health.OK,
		"pcie": health.OK, "driver": health.Skip, "bandwidth": health.OK}
	if d := cmp.Diff(want, got); d != "" || code != 0 || r.Status != health.OK {
		t.Errorf("empty cage: exit %d, status %s (-want +got):\n%s", code, r.Status, d)
	}
	p := check(r, "ports")
	if p.Summary != "port 1 up at 400G, port 2 empty cage" || !strings.Contains(p.Next, "--unused-ports 2") || !strings.Contains(p.Next, health.UnusedPortsFile) {
		t.Errorf("ports: %q next %q", p.Summary, p.Next)
	}
	out, _, tcode := cli(t, "", "--adb", "builtin", "health", "-d", "emu:"+sc, "--interval", "10s")
	if tcode != code || !strings.Contains(out, "  info ports          port 1 up at 400G, port 2 empty cage\n") || !strings.Contains(out, "next: plug a module") {
		t.Errorf("table: exit %d\n%s", tcode, out)
	}
	// Declared unused: by the flag, and by the file.
	file := filepath.Join(t.TempDir(), "unused-ports")
	if err := os.WriteFile(file, []byte("# port 2 is not cabled\r\n  0000:03:00.0   2 \r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--unused-ports", "2"}, {"file"}} {
		if args[0] == "file" {
			t.Setenv(health.EnvUnusedPorts, file)
			args = nil
		}
		r, code := runHealth(t, append([]string{"--adb", "builtin", "-d", "emu:" + sc}, args...)...)
		for _, c := range r.Checks {
			if c.Status != health.OK && !(c.Name == "driver" && c.Status == health.Skip) {
				t.Errorf("%v: %s is %s: %s %q", args, c.Name, c.Status, c.Summary, c.Details)
			}
		}
		if code != 0 || check(r, "ports").Summary != "port 1 up at 400G, port 2 unused" {
			t.Errorf("%v: exit %d, ports %q", args, code, check(r, "ports").Summary)
		}
	}
	if err := os.WriteFile(file, []byte("0000:03:00.0 two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"table", "json"} {
		_, errs, code := cli(t, "", "--adb", "builtin", "health", "-d", "emu:"+sc, "-o", mode)
		if code != 2 || !strings.Contains(errs, file+": line 1: \"two\" is not a port number") {
			t.Errorf("%s: a bad file: exit %d %s", mode, code, errs)
		}
	}
}

// A port disabled on purpose is in health's summary, not only in -v.
func TestHealthSummaryShowsDisabledPort(t *testing.T) {
	t.Setenv(health.EnvUnusedPorts, "off")
	sc := healthScenario(t, "")
	if _, errs, code := cli(t, "", "--adb", "builtin", "reg", "set", "PAOS", "admin_status=down_by_configuration", "ase=1", "-d", "emu:"+sc, "--yes"); code != 0 {
		t.Fatalf("reg set: exit %d %s", code, errs)
	}
	r, code := runHealth(t, "--adb", "builtin", "-d", "emu:"+sc)
	if p := check(r, "ports"); code != 0 || p.Status != health.OK || p.Summary != "port 1 disabled, port 2 up at 400G" {
		t.Errorf("exit %d, ports %s %q", code, p.Status, p.Summary)
	}
	out, _, _ := cli(t, "", "--adb", "builtin", "health", "-d", "emu:"+sc)
	if !strings.Contains(out, "ports          port 1 disabled, port 2 up at 400G\n") {
		t.Errorf("table:\n%s", out)
	}
}

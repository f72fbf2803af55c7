package health_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/feature/health"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/nvconf/nvtest"
	"github.com/cxray/cxray/prm"
)

// The checks' own logic over dev/devtest: each test starts from a healthy
// one-port function and changes the registers one check reads.

const bdf = "0000:03:00.0"

// healthy is a function that owns port 1 (module 0), up at its full
// 400G, with cool sensors; no module EEPROM access (MCIA, PDDR) and no
// PPCNT, so the module and counter checks have nothing to find.
func healthy(db *prm.DB) *devtest.Fake {
	f := devtest.New(db)
	f.Put("MGIR", "hw_info.num_ports=2", "hw_info.device_id=0x1021", "fw_info.extended_major=28", "fw_info.extended_minor=39",
		"fw_info.extended_sub_minor=1002", "fw_info.psid=MT_0000000838", "hw_info.manufacturing_base_mac=0xa088c24567e2",
		"fw_info.year=0x2023", "fw_info.month=0x11", "fw_info.day=0x07")
	f.Put("PMLP", "local_port=1", "width=4", "lane_module_mapping[0].module=0")
	f.Put("PAOS", "local_port=1", "admin_status=up", "oper_status=up")
	f.Put("PTYS", "local_port=1", "proto_mask=Ethernet", "data_rate_oper=4000", "max_port_rate=400")
	f.Put("PMAOS", "module=0", "oper_status=plugged_enabled")
	f.Put("MTCAP", "sensor_map=0x1")
	f.Put("MTMP", "sensor_index=0", "temperature=400", "temperature_threshold_hi=840")  // 50 °C, 105 °C
	f.Put("MTMP", "sensor_index=64", "temperature=320", "temperature_threshold_hi=600") // 40 °C, 75 °C
	return f
}

type rig struct {
	f      *devtest.Fake
	clk    *clock.Manual
	os     *osView
	c      adapter.Config
	unused []int
}

func newRig(t testing.TB) *rig {
	db := devtest.DB(t)
	r := &rig{f: healthy(db), clk: clock.NewManual(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)),
		os: &osView{os: &adapter.OS{Netdevs: []adapter.Netdev{{Name: "ens1f0np0", Address: "a0:88:c2:45:67:e2"}}}}}
	r.c = adapter.Config{Name: "test", BDF: bdf, Backend: dev.BackendDirect, DB: db}
	return r
}

func (r *rig) run(t testing.TB) *health.Report {
	t.Helper()
	c := r.c
	c.Registers = r.f.Device(c.Name, c.BDF, c.Backend)
	c.Clock = r.clk
	if r.os != nil {
		c.OSView = r.os
	}
	return health.Run(context.Background(), adapter.New(c), health.Options{Interval: 10 * time.Second, Unused: r.unused})
}

// osView is an injected OS view whose RDMA counters can move.
type osView struct {
	os   *adapter.OS
	rdma map[string]uint64
}

func (v *osView) OS(context.Context) (*adapter.OS, error) { return v.os, nil }

func (v *osView) RDMACounters(_ context.Context, port int) (map[string]uint64, error) {
	if v.rdma == nil {
		return nil, &adapter.UnsupportedError{What: "RDMA hw_counters", Backend: "direct"}
	}
	out := map[string]uint64{}
	for k, x := range v.rdma {
		out[k] = x
	}
	return out, nil
}

func check(t testing.TB, r *health.Report, name string) health.Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s check in %s", name, describe(r))
	return health.Check{}
}

func statuses(r *health.Report) map[string]health.Status {
	out := map[string]health.Status{}
	for _, c := range r.Checks {
		out[c.Name] = c.Status
	}
	return out
}

func TestHealthyFunction(t *testing.T) {
	rep := newRig(t).run(t)
	want := map[string]health.Status{"identity": health.OK, "access": health.OK, "ports": health.OK, "modules": health.OK,
		"temperatures": health.OK, "configuration": health.Skip, "counters": health.Warn, "mac": health.OK,
		"link": health.Warn, "pcie": health.Skip, "driver": health.Skip, "bandwidth": health.OK}
	// No PPCNT: the counters cannot be sampled, a warning (and the link's
	// BER cannot be judged). No MPEIN and no host view: no PCIe link; no
	// kernel view: no driver check.
	if d := cmp.Diff(want, statuses(rep)); d != "" {
		t.Errorf("verdicts (-want +got):\n%s\n%s", d, describe(rep))
	}
	if rep.Status != health.Warn || rep.Device != "test" || rep.BDF != bdf || rep.Backend != dev.BackendDirect {
		t.Errorf("report %s %s %s %s", rep.Status, rep.Device, rep.BDF, rep.Backend)
	}
	// A function no kernel driver drives: the driver check says so once,
	// naming the backend, and what would give the reading.
	if c := check(t, rep, "driver"); c.Summary != "no kernel driver drives this function (direct backend): devlink health and driver statistics need mlx5_core bound to it" ||
		!strings.Contains(c.Next, "bind mlx5_core") {
		t.Errorf("driver: %q, next %q", c.Summary, c.Next)
	}
	if c := check(t, rep, "ports"); c.Summary != "port 1 up at 400G" {
		t.Errorf("ports: %q", c.Summary)
	}
	if c := check(t, rep, "temperatures"); c.Summary != "ASIC 50.0 °C, module 0 40.0 °C" {
		t.Errorf("temperatures: %q", c.Summary)
	}
	if c := check(t, rep, "identity"); !strings.Contains(c.Summary, "firmware 28.39.1002, PSID MT_0000000838, PRM database Rev 0.57") {
		t.Errorf("identity: %q", c.Summary)
	}
	if c := check(t, rep, "mac"); c.Summary != "the OS uses the permanent MAC a0:88:c2:45:67:e2" {
		t.Errorf("mac: %q", c.Summary)
	}
	if c := check(t, rep, "configuration"); c.Summary != "no NV parameter database was given" {
		t.Errorf("configuration: %q", c.Summary)
	}
}

func TestPortsCheck(t *testing.T) {
	cases := []struct {
		name    string
		change  func(f *devtest.Fake)
		want    health.Status
		summary string
		detail  string
	}{
		{"enabled but down is a failure", func(f *devtest.Fake) {
			f.Put("PAOS", "local_port=1", "admin_status=up", "oper_status=down")
			f.Put("PTYS", "local_port=1", "proto_mask=Ethernet", "data_rate_oper=0", "max_port_rate=400")
		}, health.Fail, "no port is up: port 1 down", "port 1 is down while enabled"},
		{"disabled: no port up is a warning, not ok", func(f *devtest.Fake) {
			f.Put("PAOS", "local_port=1", "admin_status=down_by_configuration", "oper_status=down")
		}, health.Warn, "no port is up: port 1 disabled", "port 1 is disabled (admin_status down_by_configuration)"},
		{"an empty cage on an enabled port is information", func(f *devtest.Fake) {
			f.Put("PAOS", "local_port=1", "admin_status=up", "oper_status=down")
			f.Put("PMAOS", "module=0", "oper_status=unplugged")
		}, health.Info, "port 1 empty cage", "port 1 is down: its cage holds no module"},
		{"below the port's speed", func(f *devtest.Fake) {
			f.Put("PTYS", "local_port=1", "proto_mask=Ethernet", "data_rate_oper=1000", "max_port_rate=400")
		}, health.Warn, "port 1 up at 100G", "port 1 runs at 100G, below the port's 400G"},
		{"up without a speed", func(f *devtest.Fake) {
			f.Put("PTYS", "local_port=1", "proto_mask=Ethernet", "data_rate_oper=0", "max_port_rate=0")
		}, health.OK, "port 1 up", ""},
		{"PAOS unreadable", func(f *devtest.Fake) {
			f.Fail("PAOS", dev.StatusBusy, "local_port=1")
		}, health.Warn, "port 1 state unknown", "port 1: its state could not be read"}, // not "no port is up"
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			c.change(r.f)
			got := check(t, r.run(t), "ports")
			if got.Status != c.want || got.Summary != c.summary || (c.detail != "" && !contains(got.Details, c.detail)) {
				t.Errorf("ports: %s %q %q; want %s %q with %q", got.Status, got.Summary, got.Details, c.want, c.summary, c.detail)
			}
			if c.want == health.Fail && !strings.Contains(got.Next, "cxray module --port N") {
				t.Errorf("next step: %q", got.Next)
			}
			if c.want == health.Info && !strings.Contains(got.Next, "--unused-ports 1") {
				t.Errorf("next step: %q", got.Next)
			}
		})
	}
}

// A port declared unused is shown and never judged: not its state, its
// empty cage nor its link. An undeclared empty cage is information with
// the next step in ports, shown in modules, and no link fault (the CLI
// test shows the exit code stays 0).
func TestUnusedAndEmptyPorts(t *testing.T) {
	empty := func(r *rig) {
		r.f.Put("PAOS", "local_port=1", "admin_status=up", "oper_status=down")
		r.f.Put("PTYS", "local_port=1", "proto_mask=Ethernet", "data_rate_oper=0", "max_port_rate=400")
		r.f.Put("PMAOS", "module=0", "oper_status=unplugged")
	}
	r := newRig(t)
	empty(r)
	rep := r.run(t)
	got := map[string]health.Status{}
	for _, c := range rep.Checks {
		got[c.Name] = c.Status
	}
	want := map[string]health.Status{"ports": health.Info, "modules": health.OK}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("empty cage: %s is %s, want %s: %+v", n, got[n], w, check(t, rep, n))
		}
	}
	if l := check(t, rep, "link"); l.Status == health.Fail || l.Status == health.Warn {
		t.Errorf("empty cage: link %s %q %q", l.Status, l.Summary, l.Details)
	}
	if m := check(t, rep, "modules"); !strings.HasSuffix(m.Summary, "; 1 empty cage(s)") {
		t.Errorf("modules summary %q", m.Summary)
	}
	// Declared unused, even while down and empty.
	r = newRig(t)
	empty(r)
	r.unused = []int{1}
	rep = r.run(t)
	for _, n := range []string{"ports", "modules", "link"} {
		c := check(t, rep, n)
		if c.Status == health.Fail || c.Status == health.Warn || c.Status == health.Info || !contains(c.Details, "unused") {
			t.Errorf("unused port: %s %s %q %q", n, c.Status, c.Summary, c.Details)
		}
	}
	if p := check(t, rep, "ports"); p.Summary != "port 1 unused" {
		t.Errorf("unused port: ports summary %q", p.Summary)
	}
}

func contains(xs []string, sub string) bool {
	for _, x := range xs {
		if strings.Contains(x, sub) {
			return true
		}
	}
	return false
}

func TestTemperaturesCheck(t *testing.T) {
	cases := []struct {
		name    string
		change  func(f *devtest.Fake)
		want    health.Status
		summary string
		detail  string
	}{
		{"a module sensor reading 0 is no reading", func(f *devtest.Fake) {
			f.Put("MTMP", "sensor_index=64", "temperature=0", "temperature_threshold_hi=600")
		}, health.OK, "ASIC 50.0 °C, module 0 n/a", "module 0: no reading (the module sensor reads 0: an empty cage, or a module without a temperature monitor)"},
		{"0x8000 is no reading", func(f *devtest.Fake) {
			f.Put("MTMP", "sensor_index=0", "temperature=0x8000", "temperature_threshold_hi=840")
		}, health.OK, "ASIC n/a, module 0 40.0 °C", "ASIC: no reading (the sensor reads 0x8000, the pattern of no reading)"},
		{"at the threshold fails", func(f *devtest.Fake) {
			f.Put("MTMP", "sensor_index=64", "temperature=600", "temperature_threshold_hi=600")
		}, health.Fail, "ASIC 50.0 °C, module 0 75.0 °C", "module 0 at 75.0 °C is at or above its alarm threshold 75.0 °C"},
		{"within 10 °C warns", func(f *devtest.Fake) {
			f.Put("MTMP", "sensor_index=0", "temperature=784", "temperature_threshold_hi=840") // 98 °C
		}, health.Warn, "ASIC 98.0 °C, module 0 40.0 °C", "ASIC at 98.0 °C is within 10 °C of its alarm threshold 105.0 °C"},
		{"a second ASIC sensor by its name", func(f *devtest.Fake) {
			f.Put("MTCAP", "sensor_map=0x3")
			f.Put("MTMP", "sensor_index=1", "temperature=360", "sensor_name=board")
		}, health.OK, "ASIC 50.0 °C, board 45.0 °C, module 0 40.0 °C", ""},
		{"a module the module check cannot read shows no temperature, whatever its sensor says", func(f *devtest.Fake) {
			f.Put("PMAOS", "module=0", "oper_status=module_plugged_with_error", "error_type=Bus_stuck")
			f.Put("MTMP", "sensor_index=64", "temperature=320", "temperature_threshold_hi=600")
		}, health.OK, "ASIC 50.0 °C, module 0 n/a", "module 0: no reading (the module is unreadable: i2c_hang; see the modules check)"},
		{"an unreadable sensor is noted", func(f *devtest.Fake) {
			f.Put("MTCAP", "sensor_map=0x3")
			f.Fail("MTMP", dev.StatusBusy, "sensor_index=1")
		}, health.OK, "ASIC 50.0 °C, module 0 40.0 °C", "partly read: sensor 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			c.change(r.f)
			got := check(t, r.run(t), "temperatures")
			if got.Status != c.want || got.Summary != c.summary || (c.detail != "" && !contains(got.Details, c.detail)) {
				t.Errorf("temperatures: %s %q %q; want %s %q with %q", got.Status, got.Summary, got.Details, c.want, c.summary, c.detail)
			}
		})
	}
	// No sensor at all.
	r := newRig(t)
	db := devtest.DB(t)
	r.f = devtest.New(db)
	r.f.Put("MGIR", "hw_info.num_ports=1")
	r.f.Put("MTCAP", "sensor_map=0x1")
	r.f.Fail("MTMP", dev.StatusBusy, "sensor_index=0")
	got := check(t, r.run(t), "temperatures")
	if got.Status != health.Warn || !strings.HasPrefix(got.Summary, "the temperatures could not be read: sensor 0") {
		t.Errorf("no sensor: %s %q", got.Status, got.Summary)
	}
}

func TestModulesCheck(t *testing.T) {
	cases := []struct {
		name   string
		change func(f *devtest.Fake)
		want   health.Status
		detail string
	}{
		{"plugged with an error fails", func(f *devtest.Fake) {
			f.Put("PMAOS", "module=0", "oper_status=module_plugged_with_error", "error_type=High_Temperature")
		}, health.Fail, "port 1: module_error (hardware)"},
		{"disabled warns", func(f *devtest.Fake) {
			f.Put("PMAOS", "module=0", "oper_status=plugged_disabled")
		}, health.Warn, "port 1: module_disabled (firmware)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			c.change(r.f)
			got := check(t, r.run(t), "modules")
			if got.Status != c.want || !contains(got.Details, c.detail) || got.Summary != "1 problem(s) on 1 module(s)" || got.Next == "" {
				t.Errorf("modules: %s %q %q; want %s with %q", got.Status, got.Summary, got.Details, c.want, c.detail)
			}
		})
	}
	// A device error while reading the modules warns.
	r := newRig(t)
	r.f.Fail("PMAOS", dev.StatusBusy, "module=0")
	got := check(t, r.run(t), "modules")
	if got.Status != health.Warn || !strings.HasPrefix(got.Summary, "modules could not be read: ") {
		t.Errorf("busy: %s %q", got.Status, got.Summary)
	}
}

// Counters are sampled twice around the interval (on the adapter's
// clock): an error counter that moves warns, uncorrectable FEC blocks
// fail, RoCE retransmissions warn.
func TestCountersCheck(t *testing.T) {
	grp18 := func(f *devtest.Fake, symbol, uncorrectable string) {
		f.Put("PPCNT", "local_port=1", "grp=18", "counter_set.phys_layer_cntrs_ext.symbol_errors="+symbol,
			"counter_set.phys_layer_cntrs_ext.rs_fec_uncorrectable_blocks="+uncorrectable)
	}
	t.Run("nothing moves", func(t *testing.T) {
		r := newRig(t)
		grp18(r.f, "5", "0")
		got := check(t, r.run(t), "counters")
		if got.Status != health.OK || got.Summary != "no error counter moved in 10s" {
			t.Errorf("%s %q %q", got.Status, got.Summary, got.Details)
		}
	})
	t.Run("symbol errors move", func(t *testing.T) {
		r := newRig(t)
		grp18(r.f, "5", "0")
		// The first wait is the module check's, between the two samples.
		r.clk.OnSleep(1, func() { grp18(r.f, "25", "0") })
		got := check(t, r.run(t), "counters")
		if got.Status != health.Warn || cmp.Diff([]string{"port1.symbol_errors +20 (2/s)"}, got.Details) != "" ||
			got.Summary != "1 error counter(s) and 0 RoCE retransmission counter(s) moved in 10s" || !strings.Contains(got.Next, "rate(symbol_errors)") {
			t.Errorf("%s %q %q %q", got.Status, got.Summary, got.Details, got.Next)
		}
	})
	t.Run("uncorrectable blocks fail", func(t *testing.T) {
		r := newRig(t)
		grp18(r.f, "5", "1")
		r.clk.OnSleep(1, func() { grp18(r.f, "5", "3") })
		got := check(t, r.run(t), "counters")
		if got.Status != health.Fail || cmp.Diff([]string{"port1.rs_fec_uncorrectable_blocks +2 (0.2/s)"}, got.Details) != "" {
			t.Errorf("%s %q", got.Status, got.Details)
		}
	})
	t.Run("a cleared counter is not an error", func(t *testing.T) {
		r := newRig(t)
		grp18(r.f, "50", "0")
		r.clk.OnSleep(1, func() { grp18(r.f, "0", "0") })
		if got := check(t, r.run(t), "counters"); got.Status != health.OK {
			t.Errorf("%s %q", got.Status, got.Details)
		}
	})
	t.Run("RoCE retransmits", func(t *testing.T) {
		r := newRig(t)
		grp18(r.f, "5", "0")
		r.os.rdma = map[string]uint64{"out_of_sequence": 100, "rx_write_requests": 1}
		r.clk.OnSleep(1, func() { r.os.rdma = map[string]uint64{"out_of_sequence": 130, "rx_write_requests": 99} })
		got := check(t, r.run(t), "counters")
		if got.Status != health.Warn || cmp.Diff([]string{"port1.out_of_sequence +30 (3/s)"}, got.Details) != "" || !strings.Contains(got.Next, "cxray roce status") {
			t.Errorf("%s %q %q", got.Status, got.Details, got.Next)
		}
	})
}

func TestIdentityCheck(t *testing.T) {
	t.Run("pending firmware", func(t *testing.T) {
		r := newRig(t)
		r.f.Put("MCQI", "read_pending_component=1", "info_type=VERSION", "data.mcqi_version_ext.version_string=28.41.1000")
		got := check(t, r.run(t), "identity")
		if got.Status != health.Warn || !strings.Contains(got.Summary, "firmware 28.41.1000 is written and waits for a firmware reset") || !strings.Contains(got.Next, "mlxfwreset") {
			t.Errorf("%s %q %q", got.Status, got.Summary, got.Next)
		}
	})
	t.Run("database much older than the firmware", func(t *testing.T) {
		r := newRig(t)
		r.f.Put("MGIR", "hw_info.num_ports=1", "fw_info.extended_major=28", "fw_info.year=0x2025", "fw_info.month=0x03", "fw_info.day=0x01")
		got := check(t, r.run(t), "identity")
		// Rev 0.57 is of 2022-07; the firmware of 2025-03-01.
		if got.Status != health.Warn || !strings.Contains(got.Summary, "the database (Rev 0.57, 2022-07) is older than the firmware (built 2025-03-01) by 31 months") ||
			!strings.Contains(got.Next, "--adb") {
			t.Errorf("%s %q %q", got.Status, got.Summary, got.Next)
		}
	})
	t.Run("no build date", func(t *testing.T) {
		r := newRig(t)
		r.f.Put("MGIR", "hw_info.num_ports=1", "fw_info.extended_major=28")
		got := check(t, r.run(t), "identity")
		if got.Status != health.OK || !contains(got.Details, "cannot compare their ages") {
			t.Errorf("%s %q", got.Status, got.Details)
		}
	})
	t.Run("no identity: nothing else runs", func(t *testing.T) {
		r := newRig(t)
		r.f = devtest.New(devtest.DB(t))
		rep := r.run(t)
		// The firmware refused MGIR (not supported): it answered, so
		// access is ok (a device that does not answer at all fails
		// access too: healthcmd's TestHealthUnreadable), and the report
		// carries the error that makes the command exit 3.
		want := map[string]health.Status{"identity": health.Fail, "access": health.OK}
		if d := cmp.Diff(want, statuses(rep)); d != "" || rep.Status != health.Fail {
			t.Errorf("verdicts (-want +got):\n%s", d)
		}
		if rep.Error == "" {
			t.Error("a device whose identity did not answer has no report error")
		}
		if c := check(t, rep, "identity"); !strings.HasPrefix(c.Summary, "cannot read the firmware's identity: ") || !strings.Contains(c.Next, "the other checks were not run") {
			t.Errorf("%q %q", c.Summary, c.Next)
		}
	})
}

func TestAccessCheck(t *testing.T) {
	for _, c := range []struct {
		backend dev.Backend
		want    health.Status
		summary string
	}{
		{dev.BackendDirect, health.OK, "direct access through the PCI config-space gateway"},
		{dev.BackendEmulator, health.OK, "the built-in emulator"},
		{dev.BackendFwctl, health.OK, "the kernel's fwctl device"},
		{"other", health.OK, "other"},
	} {
		r := newRig(t)
		r.c.Backend = c.backend
		r.c.Notes = []string{"kernel lockdown: using fwctl"}
		got := check(t, r.run(t), "access")
		if got.Status != c.want || !strings.HasPrefix(got.Summary, c.summary) || cmp.Diff([]string{"kernel lockdown: using fwctl"}, got.Details) != "" {
			t.Errorf("%s: %s %q %q", c.backend, got.Status, got.Summary, got.Details)
		}
	}
}

// MAC drift: the OS address against the permanent MAC, the firmware's
// when it is known, else the kernel's; representors never drift.
func TestDrift(t *testing.T) {
	nds := []adapter.Netdev{
		{Name: "ens1f1", Address: "02:00:00:00:00:01", PermanentAddress: "a0:88:c2:45:67:e3"},
		{Name: "ens1f0", Address: "A0:88:C2:45:67:E2"},
		{Name: "pf0vf0", Address: "02:00:00:00:00:02", Representor: true},
		{Name: "down0"},
	}
	got := health.Drift("a0:88:c2:45:67:e2", nds)
	want := []health.MACDrift{{Netdev: "ens1f1", Address: "02:00:00:00:00:01", Permanent: "a0:88:c2:45:67:e2"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("with the firmware's MAC (-want +got):\n%s", d)
	}
	got = health.Drift("", nds)
	want = []health.MACDrift{{Netdev: "ens1f1", Address: "02:00:00:00:00:01", Permanent: "a0:88:c2:45:67:e3"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("with the kernel's MAC (-want +got):\n%s", d)
	}
	if got := health.Drift("", []adapter.Netdev{{Name: "x", Address: "02:00:00:00:00:01"}}); got != nil {
		t.Errorf("no permanent MAC known: %v", got)
	}
}

func TestMACCheck(t *testing.T) {
	cases := []struct {
		name    string
		os      *osView
		base    string // MGIR manufacturing_base_mac, "" none
		want    health.Status
		summary string
	}{
		{"drift", &osView{os: &adapter.OS{Netdevs: []adapter.Netdev{{Name: "ens1f0np0", Address: "02:11:22:33:44:55"}}}}, "0xa088c24567e2",
			health.Warn, "MAC drift: the OS address differs from the permanent one"},
		{"no OS view", nil, "0xa088c24567e2", health.Skip, "no network interface of this function is known"},
		{"no interface", &osView{os: &adapter.OS{}}, "0xa088c24567e2", health.Skip, "no network interface of this function is known"},
		{"no permanent MAC", &osView{os: &adapter.OS{Netdevs: []adapter.Netdev{{Name: "e", Address: "02:11:22:33:44:55"}}}}, "",
			health.Skip, "the permanent MAC is not known"},
		{"the kernel's permanent MAC", &osView{os: &adapter.OS{Netdevs: []adapter.Netdev{{Name: "e", Address: "02:11:22:33:44:55", PermanentAddress: "a0:88:c2:45:67:e2"}}}}, "",
			health.Warn, "MAC drift: the OS address differs from the permanent one"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			r.os = c.os
			base := []string{"hw_info.num_ports=2", "fw_info.extended_major=28"}
			if c.base != "" {
				base = append(base, "hw_info.manufacturing_base_mac="+c.base)
			}
			r.f.Put("MGIR", base...)
			got := check(t, r.run(t), "mac")
			if got.Status != c.want || got.Summary != c.summary {
				t.Errorf("%s %q %q", got.Status, got.Summary, got.Details)
			}
		})
	}
}

// The configuration check reads NV configuration through registers: on
// a function whose firmware refuses it, a warning with the reason.
func TestConfigurationCheckRefused(t *testing.T) {
	r := newRig(t)
	rep := health.Run(context.Background(), adapter.New(adapter.Config{Name: "t", BDF: bdf, Backend: dev.BackendDirect, DB: r.c.DB,
		Registers: r.f.Device("t", bdf, dev.BackendDirect), Clock: r.clk}), health.Options{Interval: time.Second, NV: nvtest.NV(t)})
	got := check(t, rep, "configuration")
	if got.Status != health.Warn || !strings.HasPrefix(got.Summary, "the NV configuration could not be read: ") || !strings.Contains(got.Summary, "MNVQC") {
		t.Errorf("%s %q", got.Status, got.Summary)
	}
	if _, _, err := health.NVFindings(context.Background(), r.f.Device("t", bdf, dev.BackendDirect), nvtest.NV(t)); !errors.Is(err, dev.ErrNotSupported) {
		t.Errorf("NVFindings: %v", err)
	}
}

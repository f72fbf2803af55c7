package health_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter/adaptertest"
	"github.com/cxray/cxray/feature/health"
	"github.com/cxray/cxray/kernel/kerneltest"
	"github.com/cxray/cxray/nvconf/nvtest"
)

// health -d kernel: on the two-port ConnectX-7 fixture: every check runs
// on what the kernel offers; the configuration check, which needs
// registers, says it is not available on this backend.
func TestHealthOnKernelBackend(t *testing.T) {
	// The kernel adapter sleeps on the wall clock: a short interval.
	rep := health.Run(context.Background(), adaptertest.Kernel(t, "kernel:mlx5_0", nil), health.Options{Interval: time.Millisecond, NV: nvtest.NV(t)})
	want := map[string]health.Status{
		"identity":      health.Warn, // 28.41.1000 is in flash, 28.39.1002 runs
		"access":        health.Warn, // no registers
		"ports":         health.OK,
		"modules":       health.Fail, // the fixture's module memory is a test pattern
		"temperatures":  health.OK,
		"configuration": health.Skip,
		"counters":      health.OK,
		"mac":           health.Warn, // ens1f0np0 uses 02:11:22:33:44:55
		"link":          health.Skip, // BER and FEC are PHY registers
		"pcie":          health.OK,   // sysfs: Gen5 x16 as capable, the slot's port Gen5 x16
		"driver":        health.OK,   // devlink health: tx recovered twice; no discard moves
		"kernel log":    health.OK,   // a clean probe (kerneltest.CX7Log)
		"bandwidth":     health.OK,   // the link carries 400G; nothing moves
	}
	if d := cmp.Diff(want, statuses(rep)); d != "" {
		t.Fatalf("verdicts (-want +got):\n%s\n%s", d, describe(rep))
	}
	for name, sum := range map[string]string{
		"identity":      "firmware 28.39.1002, PSID MT_0000000838; firmware 28.41.1000 is written and waits for a firmware reset",
		"ports":         "port 1 up at 400G",
		"pcie":          "Gen5 x16, no error while watched (3 correctable AER errors counted since the driver probed it)",
		"driver":        "5 of 5 devlink health reporters healthy; no discard or PCIe stall while watched",
		"temperatures":  "ASIC 61.2 °C, module 0 44.0 °C",
		"configuration": "not available on this backend: NV configuration is read through registers",
		"counters":      "no error counter moved in 1ms",
		"mac":           "MAC drift: the OS address differs from the permanent one",
		// The backend named once, with what to use instead.
		"link": "the link's BER, FEC and troubleshooting status is not available on the kernel backend: they are PHY registers (PDDR, PPCNT, PPLM); use direct access for them",
	} {
		if got := check(t, rep, name).Summary; got != sum {
			t.Errorf("%s: %q, want %q", name, got, sum)
		}
	}
	if got := check(t, rep, "mac").Details; cmp.Diff([]string{"ens1f0np0 uses 02:11:22:33:44:55; the permanent MAC is a0:88:c2:45:67:e2"}, got) != "" {
		t.Errorf("mac details %q", got)
	}
	if got := check(t, rep, "access"); !strings.Contains(got.Summary, "read-only kernel backend") {
		t.Errorf("access %q", got.Summary)
	}
	// The module was read through ethtool: its test pattern fails the
	// checksum and its thresholds, and, read twice, its monitors do not
	// move. The firmware's view is named as unavailable, not as a problem
	// of the module.
	mods := check(t, rep, "modules")
	if !contains(mods.Details, "port 1: eeprom_checksum (hardware)") || !contains(mods.Details, "port 1: frozen_monitors (hardware)") ||
		!contains(mods.Details, "port 1: threshold_alarm (hardware): lane 8 rx power") {
		t.Errorf("modules: %q", mods.Details)
	}
	for _, d := range mods.Details {
		if strings.Contains(d, "PDDR") || strings.Contains(d, "not available") || strings.Contains(d, "eeprom_unreadable") {
			t.Errorf("module detail blames the backend: %q", d)
		}
	}
}

// The kernel backend does not know a port's cage (Port.Module -1), and
// the verdicts then name "module -1", while the temperature check of the
// same report names the module sensor "module 0" (hwmon's sensor64).
func TestKernelVerdictsNameTheModule(t *testing.T) {
	rep := health.Run(context.Background(), adaptertest.Kernel(t, "kernel:mlx5_0", nil), health.Options{Interval: time.Millisecond})
	for _, d := range check(t, rep, "modules").Details {
		if strings.Contains(d, "module -1") {
			t.Errorf("%q", d)
		}
	}
}

// Without CAP_NET_ADMIN the module check warns with the reason; the
// others are unchanged.
func TestHealthOnKernelWithoutCapNetAdmin(t *testing.T) {
	rep := health.Run(context.Background(), adaptertest.Kernel(t, "kernel:mlx5_1", func(_ string, k *kerneltest.Kernel) { k.NoCapNetAdmin = true }),
		health.Options{Interval: time.Millisecond})
	got := check(t, rep, "modules")
	if got.Status != health.Warn || !strings.HasPrefix(got.Summary, "modules could not be read: ") {
		t.Errorf("modules: %s %q", got.Status, got.Summary)
	}
	// mlx5_1 is InfiniBand: its IPoIB address is not compared with a MAC.
	if c := check(t, rep, "mac"); c.Status == health.Warn {
		t.Errorf("mac on IPoIB: %s %q %q", c.Status, c.Summary, c.Details)
	}
	if c := check(t, rep, "temperatures"); c.Status != health.OK || c.Summary != "ASIC 60.9 °C" {
		t.Errorf("temperatures: %s %q", c.Status, c.Summary)
	}
}

// The kernel-log check lists the function's own recent mlx5 errors,
// decoded, and leaves out the other function's; hardware and firmware
// errors fail it, the rest warn; a log the process may not read is skipped
// with what to do.
func TestHealthKernelLog(t *testing.T) {
	log := kerneltest.CX7Log +
		"[  812.1] mlx5_core 0000:c1:00.0: mlx5_cmd_out_err:838:(pid 4117): CREATE_MKEY(0x200) op_mod(0x0) failed, status bad parameter(0x3), syndrome (0x1b3a4f), err(-22)\n" +
		"[  900.2] mlx5_core 0000:c1:00.1: Port module event[error]: module 1, Cable error, Bus stuck (I2C or data shorted)\n"
	hwLog := log + "[ 9001.0] mlx5_core 0000:c1:00.0: print_health_info:448:(pid 2201): synd 0x10: High temperature\n"
	for _, c := range []struct {
		name, log  string
		unreadable bool
		status     health.Status
		summary    string
		details    int
	}{
		{"software", log, false, health.Warn, "1 error(s) for this function in the kernel log: 1 command", 1},
		{"hardware", hwLog, false, health.Fail, "2 error(s) for this function in the kernel log: 1 health, 1 command", 2},
		{"unreadable", "", true, health.Skip, "not readable: kernel: the kernel log is not readable: operation not permitted", 0},
	} {
		a := adaptertest.Kernel(t, "kernel:mlx5_0", func(_ string, k *kerneltest.Kernel) { k.KernelLog, k.LogUnreadable = c.log, c.unreadable })
		rep := health.Run(context.Background(), a, health.Options{Interval: time.Millisecond, NV: nvtest.NV(t)})
		var got *health.Check
		for i := range rep.Checks {
			if rep.Checks[i].Name == "kernel log" {
				got = &rep.Checks[i]
			}
		}
		if got == nil {
			t.Fatalf("%s: no kernel log check", c.name)
		}
		if got.Status != c.status || got.Summary != c.summary || len(got.Details) != c.details {
			t.Errorf("%s: %s %q %q", c.name, got.Status, got.Summary, got.Details)
		}
		if c.details > 0 && !strings.Contains(strings.Join(got.Details, "\n"), "CREATE_MKEY") {
			t.Errorf("%s: the details do not name the command: %q", c.name, got.Details)
		}
	}
}

// The InfiniBand function on the kernel backend: the port judged by its
// logical state, speed and width and LID (sysfs), the IPoIB interface not
// taken for a MAC, the PMA counters sampled under their kernel names.
func TestHealthOnKernelInfiniBand(t *testing.T) {
	rep := health.Run(context.Background(), adaptertest.Kernel(t, "kernel:mlx5_1", nil), health.Options{Interval: time.Millisecond})
	for name, want := range map[string]struct {
		status  health.Status
		summary string
	}{
		"ports":    {health.OK, "port 1 ACTIVE at 400G (4X NDR), LID 0x1a"},
		"mac":      {health.Skip, "the port runs InfiniBand: its interface is IPoIB, whose address is a queue pair and the port's GID, not a MAC"},
		"counters": {health.OK, "no error counter moved in 1ms"},
	} {
		if got := check(t, rep, name); got.Status != want.status || got.Summary != want.summary {
			t.Errorf("%s: %s %q, want %s %q", name, got.Status, got.Summary, want.status, want.summary)
		}
	}
}

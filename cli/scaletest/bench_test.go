package scaletest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkHealthAllEmuRun is the wall time of `cxray health --all` through
// `cxray emu run` on each scenario of scenarios, as a ratio to --interval
// (x_interval), less the time emu run itself takes to set up and tear
// down (`emu run -- true`); the fastest of three runs, since the machine's
// other load only ever adds time. cpu_s is the CPU time of that run
// (cxray and the emulator), load1 the machine's load average before it.
// On hardware a function's reads are the firmware's latency and the ratio
// is close to 1 plus the slowest function's reads; under emu run every
// config-space cycle is a FUSE request, so the reads cost CPU, and the
// ratio says how much. The in-process rows read the same scenario through
// the emulator's own opener (no FUSE), where the clock is the wall clock.
// docs/performance.md records a run:
//
//	go test ./cli/scaletest -run '^$' -bench HealthAll -benchtime 1x -timeout 60m
func BenchmarkHealthAllEmuRun(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("*** SKIPPING: cxray emu run needs root and /dev/fuse")
	}
	for _, sc := range scenarios {
		name := strings.TrimSuffix(filepath.Base(sc), ".yaml")
		for _, interval := range []time.Duration{2 * time.Second, 10 * time.Second} {
			iv := interval.String()
			b.Run(name+"/emu-run/interval="+iv, func(b *testing.B) {
				load := load1()
				setup, _ := fastest(b, "emu", "run", "--scenario", sc, "--", "true")
				total, cpu := fastest(b, "emu", "run", "--scenario", sc, "--", bin, "health", "--all", "--interval", iv, "--timeout", slowReads)
				reportBench(b, total-setup, cpu, interval, load)
			})
			if realClock(b, sc) {
				b.Run(name+"/in-process/interval="+iv, func(b *testing.B) {
					load := load1()
					total, cpu := fastest(b, "health", "--all", "-d", "emu:"+sc, "--interval", iv, "--timeout", slowReads)
					reportBench(b, total, cpu, interval, load)
				})
			}
		}
	}
}

func reportBench(b *testing.B, health, cpu, interval time.Duration, load float64) {
	b.ReportMetric(health.Seconds(), "s_health")
	b.ReportMetric(health.Seconds()/interval.Seconds(), "x_interval")
	b.ReportMetric(cpu.Seconds(), "cpu_s")
	b.ReportMetric(load, "load1")
}

// realClock says whether a scenario runs on the wall clock (no manual
// clock), so that in-process waits are real.
func realClock(b *testing.B, sc string) bool {
	body, err := os.ReadFile(sc)
	if err != nil {
		b.Fatal(err)
	}
	return !strings.Contains(string(body), "mode: manual")
}

// fastest runs cxray three times (b.N times three) and returns the
// shortest wall time and that run's CPU time; health's exit 1 (a problem
// found on a faulty scenario) is a run, exit 3 (a function not read) not.
func fastest(b *testing.B, args ...string) (time.Duration, time.Duration) {
	b.Helper()
	best, bestCPU := time.Duration(0), time.Duration(0)
	for i := 0; i < 3*b.N; i++ {
		c := exec.Command(bin, args...)
		c.Env = append(os.Environ(), "XDG_STATE_HOME="+b.TempDir(), "CXRAY_NVDB=builtin")
		t0 := time.Now()
		out, err := c.CombinedOutput()
		took := time.Since(t0)
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
			err = nil
		}
		if err != nil {
			b.Fatalf("%v: %v\n%.2000s", args, err, out)
		}
		if best == 0 || took < best {
			best, bestCPU = took, c.ProcessState.UserTime()+c.ProcessState.SystemTime()
		}
	}
	return best, bestCPU
}

// load1 is the machine's one-minute load average (0 when unknown).
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

package scaletest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkHealthAllEmuRun is the wall time of `cxray health --all` through
// `cxray emu run` on each scenario of scenarios, as a ratio to --interval
// (the x_interval metric), after the time emu run itself takes to set up
// and tear down (measured with `emu run -- true`). On hardware a
// function's reads are the firmware's latency and the ratio is close to 1
// plus the slowest function's reads; under emu run every config-space
// cycle is a FUSE request, so the reads cost CPU and the ratio shows how
// much. docs/performance.md records a run:
//
//	go test ./cli/scaletest -run '^$' -bench HealthAllEmuRun -benchtime 1x
func BenchmarkHealthAllEmuRun(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("*** SKIPPING: cxray emu run needs root and /dev/fuse")
	}
	for _, sc := range scenarios {
		name := strings.TrimSuffix(filepath.Base(sc), ".yaml")
		for _, interval := range []time.Duration{2 * time.Second, 10 * time.Second} {
			b.Run(name+"/interval="+interval.String(), func(b *testing.B) {
				var setup, total time.Duration
				for i := 0; i < b.N; i++ {
					setup += timed(b, "emu", "run", "--scenario", sc, "--", "true")
					total += timed(b, "emu", "run", "--scenario", sc, "--", bin, "health", "--all", "--interval", interval.String(), "--timeout", slowReads)
				}
				health := (total - setup) / time.Duration(b.N)
				b.ReportMetric(health.Seconds(), "s_health")
				b.ReportMetric(health.Seconds()/interval.Seconds(), "x_interval")
				b.ReportMetric((setup / time.Duration(b.N)).Seconds(), "s_emu_run")
			})
		}
	}
}

// timed runs cxray and returns its wall time; health's exit 1 (a problem
// found on a faulty scenario) is a run, exit 3 (a function not read) not.
func timed(b *testing.B, args ...string) time.Duration {
	b.Helper()
	state := b.TempDir()
	c := exec.Command(bin, args...)
	c.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "CXRAY_NVDB=builtin")
	t0 := time.Now()
	out, err := c.CombinedOutput()
	took := time.Since(t0)
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		err = nil
	}
	if err != nil {
		b.Fatalf("%v: %v\n%.2000s", args, err, out)
	}
	return took
}

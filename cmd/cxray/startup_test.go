package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkStartupVsHello is issue 33's start-up target: `cxray version`
// against a Go hello world, both built as scripts/release.sh builds
// (static, -trimpath, -s -w) and run in turn, one pair per iteration, so a
// machine whose speed drifts moves both. It reports the ratios (target:
// cpu-ratio and wall-ratio at most 2.5); it asserts nothing, since timing
// belongs in benchmarks (docs/performance.md, "The CLI's size and
// start-up").
//
//	go test -run '^$' -bench StartupVsHello -benchtime 50x ./cmd/cxray/
func BenchmarkStartupVsHello(b *testing.B) {
	dir := b.TempDir()
	hello := filepath.Join(dir, "hello")
	cxray := filepath.Join(dir, "cxray")
	src := filepath.Join(dir, "hellosrc")
	if err := os.MkdirAll(src, 0o755); err != nil {
		b.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(src, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o644))
	must(os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644))
	build := func(wd, out, pkg string) {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
		cmd.Dir = wd
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if o, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("build %s: %v\n%s", pkg, err, o)
		}
	}
	build(src, hello, ".")
	build(".", cxray, ".")
	run := func(bin string, args ...string) (cpu, wall time.Duration) {
		cmd := exec.Command(bin, args...)
		start := time.Now()
		if o, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", bin, err, o)
		}
		wall = time.Since(start)
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), wall
	}
	run(hello) // warm the page cache
	run(cxray, "version")
	var hc, hw, cc, cw time.Duration
	for b.Loop() {
		c, w := run(cxray, "version")
		cc, cw = cc+c, cw+w
		c, w = run(hello)
		hc, hw = hc+c, hw+w
	}
	if hc > 0 {
		b.ReportMetric(float64(cc)/float64(hc), "cpu-ratio")
	}
	b.ReportMetric(float64(cw)/float64(hw), "wall-ratio")
	b.ReportMetric(float64(cw.Microseconds())/float64(b.N)/1000, "cxray-wall-ms")
	b.ReportMetric(float64(hw.Microseconds())/float64(b.N)/1000, "hello-wall-ms")
}

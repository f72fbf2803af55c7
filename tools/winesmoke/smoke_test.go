package winesmoke

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/feature/osmac"
)

// findWine returns Debian's wine64 loader (the wine64 package installs it
// under /usr/lib/wine without a link in PATH) or a wine64/wine in PATH.
func findWine() string {
	for _, n := range []string{"wine64", "/usr/lib/wine/wine64", "wine"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

func goTool(t *testing.T) string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to cross-build with: %v", err)
	}
	return p
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// build runs `go args...` in the module root with GOOS/GOARCH set.
func build(t *testing.T, goos string, args ...string) {
	t.Helper()
	cmd := exec.Command(goTool(t), args...)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=%s go %s: %v\n%s", goos, strings.Join(args, " "), err, out)
	}
}

type result struct {
	Stdout, Stderr string
	Code           int
}

// wineNote is a line Wine itself writes to standard error: its prefix
// setup ("wine: ..."), and, now and then under Wine 8, a fault in a thread
// as the program exits ("Unhandled page fault ... starting debugger"),
// after the program has written everything and with its exit status kept;
// under load its client library losing the server's pipe ("wine client
// error:64: write: Bad file descriptor") and its debug channels
// ("0024:fixme:..." , "0024:err:..."). They are logged, not compared; a
// crash that cuts the output short still shows as a different standard
// output or exit status.
var wineNote = regexp.MustCompile(`(?m)^(wine: |wine client error:|wineserver: |[0-9a-f]{4}:(fixme|err|warn|trace):).*(\n|$)`)

// stripWineNoise splits Wine's own lines (wineNote) from a program's
// standard error.
func stripWineNoise(stderr string) (kept string, notes []string) {
	for _, n := range wineNote.FindAllString(stderr, -1) {
		notes = append(notes, strings.TrimSpace(n))
	}
	return wineNote.ReplaceAllString(stderr, ""), notes
}

func run(t *testing.T, ctx context.Context, env []string, argv ...string) result {
	t.Helper()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = os.TempDir() // nothing a run writes lands in the source tree
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", argv, err)
	}
	stderr, notes := stripWineNoise(e.String())
	for _, n := range notes {
		t.Logf("%s: %s", filepath.Base(argv[min(1, len(argv)-1)]), n)
	}
	return result{Stdout: o.String(), Stderr: stderr, Code: code}
}

// normalize makes a Windows and a Linux output comparable: line ends, and
// emulated temperatures and bit error ratios (they follow the emulator's
// clock, which runs with the wall clock between the two runs: a BER from
// counters over the time since clear is 2.5E-10 in one run, 2.4E-10 in
// the other).
var (
	celsius = regexp.MustCompile(`[0-9]+(\.[0-9]+)? °C`)
	ber     = regexp.MustCompile(`\b[0-9](\.[0-9]+)?E-[0-9]+\b`)
)

func normalize(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = ber.ReplaceAllString(s, "N.NE-N")
	return celsius.ReplaceAllString(s, "N °C")
}

// TestWine builds cxray for Windows and runs it under Wine: the commands
// that work everywhere must print what the Linux build prints, the ones
// that need Linux must say so with exit 3, the OS-MAC path must see this
// host's interfaces as Linux does, and the emulator state's Windows locks
// must pass emu/state's tests.
func TestWine(t *testing.T) {
	wine := findWine()
	if wine == "" {
		t.Skip("Wine is not installed (scripts/setup.sh installs Debian's wine64)")
	}
	dir := t.TempDir()
	exe, lin := filepath.Join(dir, "cxray.exe"), filepath.Join(dir, "cxray")
	build(t, "windows", "build", "-o", exe, "./cmd/cxray")
	// cxray plot runs cxray-plot, found beside cxray.exe.
	build(t, "windows", "build", "-o", filepath.Join(dir, "cxray-plot.exe"), "./cmd/cxray-plot")
	build(t, "linux", "build", "-o", lin, "./cmd/cxray")
	build(t, "windows", "test", "-c", "-o", filepath.Join(dir, "osmac.test.exe"), "./feature/osmac")
	build(t, "windows", "test", "-c", "-o", filepath.Join(dir, "state.test.exe"), "./emu/state")
	// The bound covers Wine's runs only, not the five builds above: on a
	// loaded CI machine the builds alone took minutes. It is generous; it
	// is there so that a hung wineserver ends the test.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	// One prefix for the whole test: creating it is the slow part; one
	// wineserver kept for all the runs (it would stop after each).
	prefix := filepath.Join(dir, "wineprefix")
	wenv := []string{"WINEPREFIX=" + prefix, "WINEDEBUG=-all", "WINEDLLOVERRIDES=mscoree,mshtml="}
	wineserver := filepath.Join(filepath.Dir(wine), "wineserver")
	if fileExists(wineserver) {
		run(t, ctx, wenv, wineserver, "-p")
		defer run(t, context.Background(), wenv, wineserver, "-k")
	}
	if r := run(t, ctx, wenv, wine, "wineboot", "-i"); r.Code != 0 {
		t.Fatalf("wineboot: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	sys32 := filepath.Join(prefix, "drive_c/windows/system32")
	if dll := filepath.Join(sys32, "bcryptprimitives.dll"); !fileExists(dll) {
		if err := os.WriteFile(dll, ForwarderDLL("bcryptprimitives.dll", "ProcessPrng", "advapi32.SystemFunction036"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	same := []string{
		"prm show PAOS",
		"prm decode PMAOS 0x00010101 0 0 0",
		"prm decode PMAOS 0x00010101 0 0 0 -o json",
		"emu profiles",
		"-d emu status",
		"-d emu status -o json",
		"-d emu health",
		"-d emu health -o json",
	}
	for i, args := range same {
		t.Run(args, func(t *testing.T) {
			// Each build keeps its own emulator state, from power-on.
			wst := "CXRAY_EMU_STATE=" + filepath.Join(dir, fmt.Sprintf("state-win-%d", i))
			lst := "CXRAY_EMU_STATE=" + filepath.Join(dir, fmt.Sprintf("state-linux-%d", i))
			w := run(t, ctx, append(wenv, wst), append([]string{wine, exe}, strings.Fields(args)...)...)
			l := run(t, ctx, []string{lst}, append([]string{lin}, strings.Fields(args)...)...)
			w.Stdout, w.Stderr = normalize(w.Stdout), normalize(w.Stderr)
			l.Stdout, l.Stderr = normalize(l.Stdout), normalize(l.Stderr)
			if d := cmp.Diff(l, w); d != "" {
				t.Errorf("cxray %s: Windows differs from Linux (-linux +windows):\n%s", args, d)
			}
			if l.Stdout == "" {
				t.Errorf("cxray %s printed nothing", args)
			}
		})
	}

	// Files made on Windows read the same on both: snapshots and their
	// diff, an NV backup, a monitor log drawn by plot.
	t.Run("files", func(t *testing.T) {
		st := "CXRAY_EMU_STATE=" + filepath.Join(dir, "state-files")
		f := func(n string) string { return filepath.Join(dir, n) }
		for _, args := range [][]string{
			{"snapshot", "-d", "emu", "--profile", "minimal", "--out", f("a.json")},
			{"snapshot", "-d", "emu", "--profile", "minimal", "--out", f("b.json")},
			{"config", "backup", "-d", "emu", f("nv.bak")},
			{"monitor", "-d", "emu", "--count", "2", "-i", "10ms", "--format", "jsonl", "--out", f("m.jsonl")},
			{"plot", f("m.jsonl"), "--out", f("p.svg")},
		} {
			if w := run(t, ctx, append(wenv, st), append([]string{wine, exe}, args...)...); w.Code != 0 {
				t.Fatalf("cxray %v on Windows: exit %d\n%s%s", args, w.Code, w.Stdout, w.Stderr)
			}
		}
		if b, err := os.ReadFile(f("p.svg")); err != nil || !bytes.Contains(b, []byte("<svg")) {
			t.Errorf("plot wrote no SVG: %v", err)
		}
		for _, args := range [][]string{{"diff", f("a.json"), f("b.json")}, {"config", "diff", f("nv.bak"), f("nv.bak")}} {
			w := run(t, ctx, wenv, append([]string{wine, exe}, args...)...)
			l := run(t, ctx, nil, append([]string{lin}, args...)...)
			w.Stdout, w.Stderr = normalize(w.Stdout), normalize(w.Stderr)
			if d := cmp.Diff(l, w); d != "" {
				t.Errorf("cxray %v: Windows differs from Linux (-linux +windows):\n%s", args, d)
			}
		}
	})

	linuxOnly := []string{"emu serve", "emu run -- cmd", "-d kernel:mlx5_0 status", "-d 0000:03:00.0 status", "-d mlx5_0 status", "status"}
	for _, args := range linuxOnly {
		t.Run(args, func(t *testing.T) {
			w := run(t, ctx, append(wenv, "CXRAY_EMU_STATE=off"), append([]string{wine, exe}, strings.Fields(args)...)...)
			if w.Code != 3 || !strings.Contains(w.Stderr, "needs Linux") || !strings.Contains(w.Stderr, "-d emu") {
				t.Errorf("cxray %s on Windows: exit %d, stderr %q; want exit 3 saying it needs Linux and what works", args, w.Code, w.Stderr)
			}
		})
	}

	t.Run("os-mac", func(t *testing.T) {
		dump := filepath.Join(dir, "osmac.json")
		w := run(t, ctx, append(wenv, osmacDump+"="+dump), wine, filepath.Join(dir, "osmac.test.exe"), "-test.run", "TestSystemWindows")
		if w.Code != 0 {
			t.Fatalf("osmac tests under Wine: exit %d\n%s%s", w.Code, w.Stdout, w.Stderr)
		}
		b, err := os.ReadFile(dump)
		if err != nil {
			t.Fatal(err)
		}
		var win osmac.Listing
		if err := json.Unmarshal(b, &win); err != nil {
			t.Fatal(err)
		}
		host, err := osmac.System(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Wine answers GetAdaptersAddresses from this host's interfaces:
		// the same names, addresses and states as Linux's own view.
		type seen struct{ Name, MAC, Status string }
		pick := func(l *osmac.Listing) []seen {
			var out []seen
			for _, in := range l.Interfaces {
				out = append(out, seen{in.Name, in.MAC, in.Status})
			}
			return out
		}
		if d := cmp.Diff(pick(host), pick(&win)); d != "" {
			t.Errorf("interfaces (-linux +windows):\n%s", d)
		}
		if win.Format != osmac.FormatWindows {
			t.Errorf("format %q", win.Format)
		}
	})

	t.Run("state-locks", func(t *testing.T) {
		w := run(t, ctx, wenv, wine, filepath.Join(dir, "state.test.exe"), "-test.run", "^TestWindowsLocks$", "-test.v")
		if w.Code != 0 || !strings.Contains(w.Stdout, "--- PASS: TestWindowsLocks") {
			t.Errorf("emu/state tests under Wine: exit %d\n%s%s", w.Code, w.Stdout, w.Stderr)
		}
	})
}

// osmacDump is osmac's CXRAY_OSMAC_DUMP (defined in its Windows test).
const osmacDump = "CXRAY_OSMAC_DUMP"

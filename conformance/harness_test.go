package conformance

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cxray/cxray/emu/nsrun"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/source"
)

// The suite builds the cxray binary once (into a temporary directory put
// first on PATH), and every test runs one `cxray emu run` or `cxray emu
// serve` per scenario with a shell script inside: the peer tool and cxray
// read the same emulated device in the same namespace. The script stores
// each command's stdout, stderr and exit status under $OUT; the test reads
// them back and compares in Go.

var (
	buildOnce sync.Once
	binDir    string // holds the cxray binary built for this run
	buildErr  error
	// envProblem is why the suite cannot run here ("" when it can).
	envProblem string
)

func TestMain(m *testing.M) {
	if err := nsrun.Check(); err != nil {
		envProblem = "cxray emu run needs root and /dev/fuse: " + err.Error()
	}
	for _, tool := range []string{"sh", "timeout", "dd", "od"} {
		if _, err := exec.LookPath(tool); err != nil && envProblem == "" {
			envProblem = tool + " is not installed"
		}
	}
	if envProblem != "" {
		fmt.Fprintf(os.Stderr, "\n*** conformance: SKIPPING every test against the mstflint tools: %s\n\n", envProblem)
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// skipLoudly skips with a message that also reaches the terminal without -v.
func skipLoudly(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf("SKIPPING %s: %s", t.Name(), fmt.Sprintf(format, args...))
	fmt.Fprintln(os.Stderr, "*** "+msg)
	t.Skip(msg)
}

// need skips unless the suite can run and the tools are installed, and
// builds cxray on first use.
func need(t *testing.T, tools ...string) {
	t.Helper()
	if envProblem != "" {
		skipLoudly(t, "%s", envProblem)
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			skipLoudly(t, "%s is not installed (Debian/Ubuntu: apt-get install mstflint)", tool)
		}
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "cxray-conformance-")
		if buildErr != nil {
			return
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = "/usr/local/go/bin/go"
		}
		// cxray emu run starts cxray-emu, found beside cxray.
		for _, name := range []string{"cxray", "cxray-emu"} {
			cmd := exec.Command(goTool, "build", "-o", filepath.Join(binDir, name), "github.com/cxray/cxray/cmd/"+name)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // as shipped: static binaries
			out, err := cmd.CombinedOutput()
			if err != nil {
				buildErr = fmt.Errorf("go build ./cmd/%s: %v\n%s", name, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

// cxrayBin is the binary under test.
func cxrayBin() string { return filepath.Join(binDir, "cxray") }

// hasCommand says whether the cxray under test has a (sub)command, such as
// "module" or "config": the hooks for features still being built.
func hasCommand(t *testing.T, args ...string) bool {
	t.Helper()
	cmd := exec.Command(cxrayBin(), append(args, "--help")...)
	out, err := cmd.CombinedOutput()
	return err == nil && !strings.Contains(string(out), "unknown command")
}

// prelude is sourced by every script: run NAME CMD... runs CMD bounded by
// $TMO seconds (then SIGKILL 5 s later) and keeps its stdout, stderr, exit
// status and wall time under $OUT/NAME.*.
const prelude = `set -u
run() {
	n=$1; shift
	s=$(date +%s%N)
	timeout -k 5 "${TMO:-60}" "$@" >"$OUT/$n.out" 2>"$OUT/$n.err"
	echo $? >"$OUT/$n.rc"
	echo $(( ($(date +%s%N) - s) / 1000000 )) >"$OUT/$n.ms"
}
`

// session is one namespace run: its output directory and what the runner
// itself said.
type session struct {
	out     string
	code    int
	stdout  string
	stderr  string
	elapsed time.Duration
}

// emuRun runs script under `cxray emu run --scenario testdata/SCENARIO`.
func emuRun(t *testing.T, scenario, script string, timeout time.Duration) *session {
	t.Helper()
	return namespace(t, []string{"emu", "run", "--scenario", filepath.Join("testdata", scenario)}, script, timeout, nil)
}

// emuServe runs script under `cxray emu serve --socket $SOCK`, so the script
// can switch faults with `cxray emu ctl --socket "$SOCK" ...`.
func emuServe(t *testing.T, scenario, script string, timeout time.Duration) *session {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "emu.sock")
	return namespace(t, []string{"emu", "serve", "--scenario", filepath.Join("testdata", scenario), "--socket", sock}, script, timeout, []string{"SOCK=" + sock})
}

// emuRunNice is emuRun with the whole run (the emulator's FUSE server
// included) at nice level niceness; commands in the script can lower their
// own priority below the server's with `nice`.
func emuRunNice(t *testing.T, niceness int, scenario, script string, timeout time.Duration) *session {
	t.Helper()
	return namespaceNice(t, niceness, []string{"emu", "run", "--scenario", filepath.Join("testdata", scenario)}, script, timeout, nil)
}

func namespace(t *testing.T, args []string, script string, timeout time.Duration, env []string) *session {
	t.Helper()
	return namespaceNice(t, 0, args, script, timeout, env)
}

func namespaceNice(t *testing.T, niceness int, args []string, script string, timeout time.Duration, env []string) *session {
	t.Helper()
	s := &session{out: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	argv := append([]string{cxrayBin()}, append(args, "--", "sh", "-c", prelude+script)...)
	if niceness != 0 {
		argv = append([]string{"nice", "-n", strconv.Itoa(niceness)}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "OUT="+s.out, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		// The emulator keeps its devices' state between commands: each
		// session gets its own, never the user's.
		"XDG_STATE_HOME="+filepath.Join(s.out, "state"))
	cmd.Env = append(cmd.Env, env...)
	// On timeout: SIGTERM (the namespace helper passes it on and stops
	// everything), then SIGKILL.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	start := time.Now()
	err := cmd.Run()
	s.elapsed = time.Since(start)
	s.stdout, s.stderr = so.String(), se.String()
	if cmd.ProcessState == nil {
		t.Fatalf("%q: %v", args, err)
	}
	s.code = cmd.ProcessState.ExitCode()
	if ctx.Err() != nil {
		t.Fatalf("%q did not finish within %v (stdout %q, stderr %q)", args, timeout, s.stdout, s.stderr)
	}
	if err != nil && s.code != 0 {
		t.Logf("%q exited %d: %v\nstdout: %s\nstderr: %s", args, s.code, err, s.stdout, s.stderr)
	}
	return s
}

// step is one command the script ran.
type step struct {
	name           string
	stdout, stderr string
	rc             int
	ms             int
}

func (s *session) step(t *testing.T, name string) step {
	t.Helper()
	read := func(ext string) string {
		b, err := os.ReadFile(filepath.Join(s.out, name+ext))
		if err != nil {
			t.Fatalf("the script did not run %s (%v); runner stdout %q stderr %q", name, err, s.stdout, s.stderr)
		}
		return string(b)
	}
	st := step{name: name, stdout: read(".out"), stderr: read(".err")}
	var err error
	if st.rc, err = strconv.Atoi(strings.TrimSpace(read(".rc"))); err != nil {
		t.Fatalf("%s: exit status %q", name, read(".rc"))
	}
	st.ms, _ = strconv.Atoi(strings.TrimSpace(read(".ms")))
	return st
}

func (st step) String() string {
	return fmt.Sprintf("%s: exit %d after %d ms\nstdout:\n%s\nstderr:\n%s", st.name, st.rc, st.ms, st.stdout, st.stderr)
}

// ok returns the step and fails the test unless it exited 0.
func (s *session) ok(t *testing.T, name string) step {
	t.Helper()
	st := s.step(t, name)
	if st.rc != 0 {
		t.Fatalf("%s failed:\n%s", name, st)
	}
	return st
}

// shq quotes for sh.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// shjoin quotes a command line for sh.
func shjoin(argv ...string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shq(a)
	}
	return strings.Join(q, " ")
}

var (
	dbOnce sync.Once
	db     *prm.DB
	dbErr  error
)

// database is the register database the cxray binary uses by default
// (the same rules: $CXRAY_ADB, the installed ADB, the built-in one).
func database(t *testing.T) *prm.DB {
	t.Helper()
	dbOnce.Do(func() { db, dbErr = source.Open("") })
	if dbErr != nil {
		t.Fatal(dbErr)
	}
	return db
}

// cxrayJSON decodes a cxray -o json output.
func cxrayJSON(t *testing.T, st step, into any) {
	t.Helper()
	if err := DecodeJSON([]byte(st.stdout), into); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", st.name, err, st)
	}
}

// jget walks a decoded JSON value along a dotted path ("a.b[2].c").
func jget(v any, path string) (any, bool) {
	segs, err := splitPath(path)
	if err != nil {
		return nil, false
	}
	for _, sg := range segs {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[sg.name]; !ok {
			return nil, false
		}
		if sg.index >= 0 {
			l, ok := v.([]any)
			if !ok || sg.index >= len(l) {
				return nil, false
			}
			v = l[sg.index]
		}
	}
	return v, true
}

// juint reads a number at path, failing the test when it is not there.
func juint(t *testing.T, v any, path string) uint64 {
	t.Helper()
	x, ok := jget(v, path)
	if !ok {
		t.Fatalf("cxray's JSON has no %s", path)
	}
	n, err := jsonUint(x)
	if err != nil {
		t.Fatalf("cxray's %s: %v", path, err)
	}
	return n
}

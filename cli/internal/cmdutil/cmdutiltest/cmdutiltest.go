// Package cmdutiltest gives the verb packages' unit tests an App of their
// own: buffered streams, a chosen output mode, the built-in register
// database, an empty sysfs tree (so --all never finds this machine's
// adapters) and the emulator keeping its state in a directory of the test,
// as package cli's newApp builds one for a real run (cli/cli.go).
package cmdutiltest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/emu/emuadapter"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/nvconf"
)

// App is a cmdutil.App whose standard output and error are buffers.
type App struct {
	*cmdutil.App
	Out, Err *bytes.Buffer
}

// New is an App writing output (table or json) into buffers. It points
// XDG_STATE_HOME at a directory of the test and clears the variables that
// would send state elsewhere, so the emulator's kept state, NV journals and
// backups go there; it pins the built-in NV parameter set. It sets the
// environment, so it cannot be used in parallel tests.
func New(t testing.TB, output string) *App {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv(emuadapter.EnvState, "")
	t.Setenv(nvconf.EnvBackupDir, "")
	t.Setenv(cmdutil.EnvNVDB, "builtin")
	root := t.TempDir()
	var out, errb bytes.Buffer
	a := &cmdutil.App{Ctx: context.Background(), Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""),
		Output: output, ADBPath: "builtin", Version: "test",
		Sys: devname.Sys{Root: root}, Kernel: kernel.Options{Root: root}, Emulator: &emuadapter.Emulator{}}
	return &App{App: a, Out: &out, Err: &errb}
}

// Reset empties the output buffers between two commands of one test.
func (a *App) Reset() { a.Out.Reset(); a.Err.Reset() }

// Run runs a verb's cobra command with args in this App, as the root
// command would (a.Cmd is the command that runs), and returns its error.
func (a *App) Run(c *cobra.Command, args ...string) error {
	c.SetArgs(args)
	c.SetOut(a.Out)
	c.SetErr(a.Err)
	c.SilenceUsage, c.SilenceErrors = true, true
	c.PersistentPreRun = func(cmd *cobra.Command, _ []string) { a.Cmd = cmd }
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cmdutil.UsageWrap(err) })
	return c.Execute()
}

// Code is the exit code cxray gives err (cli's runContext): 0 for nil, the
// ExitError's code, else 2 (cobra's own usage errors).
func Code(err error) int {
	if err == nil {
		return cmdutil.ExitOK
	}
	var ee *cmdutil.ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return cmdutil.ExitUsage
}

// Scenario writes a scenario file and returns its device name
// (emu:PATH).
func Scenario(t testing.TB, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return "emu:" + p
}

// Manual is a one-ConnectX-7 scenario with a manual clock (the two samples
// of health, monitor and link are instant) and extra, the device's keys
// indented by four spaces.
func Manual(t testing.TB, extra string) string {
	t.Helper()
	return Scenario(t, "clock: {start: 2024-05-01T08:00:00Z, mode: manual}\ndevices:\n  - profile: cx7-2p400g\n    base_mac: b8:3f:d2:a1:b2:c0\n"+extra)
}

// JSON decodes s, what a verb printed in JSON mode, into v; output that
// is not JSON fails the test, showing its start.
func JSON(t testing.TB, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("not JSON: %v\n%.400s", err, s)
	}
}

// KeyOrder fails t unless each document's JSON fields are in the order
// of their keys: a typed document that replaced a map (which
// encoding/json writes in key order) then writes the same bytes.
func KeyOrder(t testing.TB, docs ...any) {
	t.Helper()
	for _, doc := range docs {
		typ := reflect.TypeOf(doc)
		var keys []string
		for i := 0; i < typ.NumField(); i++ {
			keys = append(keys, strings.Split(typ.Field(i).Tag.Get("json"), ",")[0])
		}
		if !sort.StringsAreSorted(keys) {
			t.Errorf("%s: fields %q are not in key order; the document would not write what the map it replaced wrote", typ.Name(), keys)
		}
	}
}

// Wire builds a verb through its newXCmd with a runF hook that keeps the
// options, runs it with argv and returns the options and arguments the
// run function would have got: the flag wiring, tested without a device.
// A command that does not reach the hook (a usage error cobra finds, a
// flag it does not have) fails the test.
func Wire[O any](t testing.TB, build func(runF func(*O, []string) error) *cobra.Command, argv ...string) (*O, []string) {
	t.Helper()
	var got *O
	var gotArgs []string
	c := build(func(o *O, args []string) error {
		got, gotArgs = o, args
		return nil
	})
	c.SetArgs(argv)
	c.SetOut(new(bytes.Buffer))
	c.SetErr(new(bytes.Buffer))
	c.SilenceUsage, c.SilenceErrors = true, true
	if err := c.Execute(); err != nil {
		t.Fatalf("%s %q: %v", c.Name(), argv, err)
	}
	if got == nil {
		t.Fatalf("%s %q: the runF hook was not called", c.Name(), argv)
	}
	return got, gotArgs
}

package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/prm"
)

func code(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return -1
}

// Bad names and values are the user's to fix (2); what the device or the
// machine did is 3; a code given once is never re-classed by a wrapper.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{&dev.IndexError{Register: "PAOS", Missing: []string{"local_port"}}, ExitUsage},
		{fmt.Errorf("reg get: %w", &adapter.NoPortError{Port: 3}), ExitUsage},
		{&adapter.UsageError{Err: errors.New("bad name")}, ExitUsage},
		{&nvconf.NameError{Msg: "no such parameter"}, ExitUsage},
		{&nvconf.FileError{Line: 3, Msg: "cut short"}, ExitUsage},
		{errors.New("gateway semaphore held"), ExitDevice},
		{fmt.Errorf("open: %w", context.DeadlineExceeded), ExitDevice},
		{fmt.Errorf("wrapped: %w", ErrProblem), ExitProblem},
		{UsageErr("give a value"), ExitUsage},
		{DeviceErr(UsageErr("still usage")), ExitUsage},
		{UsageWrap(DeviceErr(errors.New("still device"))), ExitDevice},
	} {
		if got := code(Classify(c.err)); got != c.want {
			t.Errorf("%v (%T): exit %d, want %d", c.err, c.err, got, c.want)
		}
	}
	if Classify(nil) != nil || UsageWrap(nil) != nil || DeviceErr(nil) != nil {
		t.Error("nil is not an error")
	}
	inner := &dev.IndexError{Register: "PAOS"}
	var ie *dev.IndexError
	if !errors.As(Classify(inner), &ie) || ie != inner {
		t.Error("the classified error does not unwrap to the original")
	}
}

// ReadInput takes a file or standard input, and refuses more than the
// limit before reading a file whole.
func TestReadInput(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	big := filepath.Join(dir, "big")
	os.WriteFile(small, []byte("abc"), 0o644)
	os.WriteFile(big, bytes.Repeat([]byte("x"), 101), 0o644)
	if b, err := ReadInput(small, nil, 100, "a test file"); err != nil || string(b) != "abc" {
		t.Errorf("small file: %q %v", b, err)
	}
	if b, err := ReadInput("-", strings.NewReader("from stdin"), 100, "a test file"); err != nil || string(b) != "from stdin" {
		t.Errorf("stdin: %q %v", b, err)
	}
	if b, err := ReadInput(big, nil, 101, "a test file"); err != nil || len(b) != 101 {
		t.Errorf("a file of exactly the limit: %d bytes, %v", len(b), err)
	}
	if b, err := ReadInput("-", bytes.NewReader(make([]byte, 101)), 101, "a test file"); err != nil || len(b) != 101 {
		t.Errorf("standard input of exactly the limit: %d bytes, %v", len(b), err)
	}
	for name, read := range map[string]func() error{
		"big file": func() error { _, err := ReadInput(big, nil, 100, "a test file"); return err },
		"big stdin": func() error {
			_, err := ReadInput("-", bytes.NewReader(make([]byte, 101)), 100, "a test file")
			return err
		},
		"missing file": func() error { _, err := ReadInput(filepath.Join(dir, "none"), nil, 100, "a test file"); return err },
		"a directory":  func() error { _, err := ReadInput(dir, strings.NewReader(""), 1<<20, "a test file"); return err },
	} {
		err := read()
		if code(err) != ExitUsage {
			t.Errorf("%s: %v (exit %d), want a usage error", name, err, code(err))
		}
		if strings.HasPrefix(name, "big") && !strings.Contains(err.Error(), "a test file") {
			t.Errorf("%s: %q does not say what the input should be", name, err)
		}
	}
}

func TestWriteRows(t *testing.T) {
	var b bytes.Buffer
	WriteRows(&b, [][]string{{"NAME", "OFFSET", "DESCRIPTION"}, {"Heading"}, {"local_port", "0x0", "the port"}, {"x", "0x100", "text"}},
		[]string{"", "two\nlines", ""})
	want := "NAME        OFFSET  DESCRIPTION\n" +
		"Heading\n" +
		"local_port  0x0     the port\n" +
		"      two\n      lines\n" +
		"x           0x100   text\n"
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestSmallRenderers(t *testing.T) {
	got := []string{Dash(""), Dash("0"), Dash("7"), YesNo(true), YesNo(false), Indent("a\nb  \n", "> ")}
	if d := cmp.Diff([]string{"-", "-", "7", "yes", "no", "> a\n> b"}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if NonNil(nil) == nil || len(NonNil(nil)) != 0 {
		t.Error("NonNil(nil) is not an empty list")
	}
	if re, err := CompileFilter(""); re != nil || err != nil {
		t.Errorf("empty filter: %v %v", re, err)
	}
	if re, err := CompileFilter("^pa"); err != nil || !re.MatchString("PAOS") {
		t.Errorf("filter is not case-insensitive: %v", err)
	}
	if _, err := CompileFilter("("); code(err) != ExitUsage || !strings.Contains(err.Error(), "--filter") {
		t.Errorf("bad filter: %v", err)
	}
}

func TestOutput(t *testing.T) {
	var out bytes.Buffer
	a := &App{Stdout: &out, Output: "json"}
	if !a.JSON() {
		t.Fatal("-o json is not JSON")
	}
	if err := a.WriteJSON(map[string]string{"a": "<b>"}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff("{\n  \"a\": \"<b>\"\n}\n", out.String()); d != "" {
		t.Errorf("JSON (HTML left as is) (-want +got):\n%s", d)
	}
	out.Reset()
	tb := a.NewTable("A", "LONGER")
	tb.Row("xyz", "1")
	tb.Flush()
	if d := cmp.Diff("A    LONGER\nxyz  1\n", out.String()); d != "" {
		t.Errorf("table (-want +got):\n%s", d)
	}
}

// Without a terminal a write is refused, never assumed confirmed.
func TestConfirmNeedsATerminal(t *testing.T) {
	var errb bytes.Buffer
	for _, in := range []any{strings.NewReader("y\n"), nil} {
		a := &App{Stderr: &errb}
		if r, ok := in.(*strings.Reader); ok {
			a.Stdin = r
		}
		ok, err := a.Confirm("write?")
		if ok || code(err) != ExitUsage || !strings.Contains(err.Error(), "--yes") {
			t.Errorf("stdin %T: confirmed %v, %v", in, ok, err)
		}
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if ok, err := (&App{Stdin: f, Stderr: &errb}).Confirm("write?"); ok || code(err) != ExitUsage {
		t.Errorf("%s: confirmed %v, %v", os.DevNull, ok, err)
	}
}

// NVDB: "builtin" and the environment pick the built-in set; a file that
// is not a database is a usage error naming --nvdb.
func TestNVDB(t *testing.T) {
	t.Setenv(EnvNVDB, "")
	if db, err := NVDB("BuiltIn"); err != nil || db == nil {
		t.Fatalf("builtin: %v", err)
	}
	t.Setenv(EnvNVDB, "builtin")
	if _, err := NVDB(""); err != nil {
		t.Fatalf("$%s=builtin: %v", EnvNVDB, err)
	}
	bad := filepath.Join(t.TempDir(), "not.db")
	os.WriteFile(bad, []byte("not sqlite"), 0o644)
	if _, err := NVDB(bad); code(err) != ExitUsage || !strings.Contains(err.Error(), "--nvdb") {
		t.Errorf("a bad file: %v", err)
	}
	t.Setenv(EnvNVDB, bad)
	if _, err := NVDB(""); code(err) != ExitUsage {
		t.Errorf("a bad file in $%s: %v", EnvNVDB, err)
	}
}

func TestDB(t *testing.T) {
	if db, err := (&App{ADBPath: "builtin"}).DB(); err != nil || db == nil {
		t.Fatalf("builtin: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "x.adb")
	os.WriteFile(bad, []byte("<NodesDefinition><node"), 0o644)
	if _, err := (&App{ADBPath: bad}).DB(); code(err) != ExitUsage {
		t.Errorf("a damaged ADB is a usage error (the user's file), not a device fault: %v", err)
	}
}

// The opener: --via of the running command, the kernel root defaulting
// to the sysfs tree, and a missing -d is a usage error.
func TestAdapterOptions(t *testing.T) {
	a := &App{Sys: devname.Sys{Root: "/tmp/fake-sys"}, Kernel: kernel.Options{}}
	if o := a.AdapterOptions(nil); o.Kernel.Root != "/tmp/fake-sys" || o.Via != adapter.ViaAuto {
		t.Errorf("defaults: kernel root %q via %v", o.Kernel.Root, o.Via)
	}
	a.Kernel.Root = "/elsewhere"
	if o := a.AdapterOptions(nil); o.Kernel.Root != "/elsewhere" {
		t.Errorf("kernel root %q, want the one given", o.Kernel.Root)
	}
	var df DeviceFlags
	c := &cobra.Command{Use: "x"}
	df.Add(c)
	if err := c.ParseFlags([]string{"--via", "fwctl", "-d", "emu", "--timeout", "3s"}); err != nil {
		t.Fatal(err)
	}
	a.Cmd = c
	want, _ := adapter.ParseVia("fwctl")
	if o := a.AdapterOptions(nil); o.Via != want || df.Name != "emu" || df.Timeout.String() != "3s" {
		t.Errorf("flags: via %v name %q timeout %v", o.Via, df.Name, df.Timeout)
	}
	if _, err := a.OpenTargets(context.Background(), "", false, nil); code(err) != ExitUsage || !strings.Contains(err.Error(), "--all") {
		t.Errorf("no -d: %v", err)
	}
}

// A deadline during device work is a device error that keeps its cause;
// a signal stays a cancellation (package cli reports it as one).
func TestStopped(t *testing.T) {
	dctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-dctx.Done()
	cause := fmt.Errorf("MTMP: %w", context.DeadlineExceeded)
	err := Stopped(dctx, cause)
	if code(err) != ExitDevice || !errors.Is(err, cause) || !strings.Contains(err.Error(), "--timeout") {
		t.Errorf("deadline: %v (exit %d)", err, code(err))
	}
	// A bare context error is no message: it says what ran out (issue
	// 26.10: roce status said only "context deadline exceeded").
	for _, bare := range []error{nil, dctx.Err()} {
		err := Stopped(dctx, bare)
		if code(err) != ExitDevice || !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "the --timeout ran out before the device had answered") {
			t.Errorf("deadline with cause %v: %v", bare, err)
		}
	}
	cctx, stop := context.WithCancel(context.Background())
	stop()
	if err := Stopped(cctx, cause); !errors.Is(err, context.Canceled) || code(err) != -1 {
		t.Errorf("signal: %v (exit %d), want the bare cancellation", err, code(err))
	}
}

// newInputError stands for an input error type added later: it says what
// it is (Is prm.ErrInput), and Classify, which knows no type, makes it a
// usage error.
type newInputError struct{}

func (newInputError) Error() string        { return "a new kind of bad value" }
func (newInputError) Is(target error) bool { return target == prm.ErrInput }

// Errors are classified by kind (issue 25.5): every input error type
// answers errors.Is(err, prm.ErrInput), wrapped or not, and is a usage
// error; device errors are not input errors.
func TestInputErrorsByKind(t *testing.T) {
	for _, err := range []error{
		&dev.IndexError{Register: "PAOS"}, &dev.EnumError{}, &dev.ROError{},
		&prm.FieldError{}, &prm.NotFoundError{Msg: "no register XYZ"},
		&adapter.UsageError{Err: errors.New("bad name")}, &adapter.NoPortError{Port: 3},
		&nvconf.ValidationError{Problems: []string{"x"}}, &nvconf.NameError{Msg: "x"}, &nvconf.ValueError{}, &nvconf.FileError{Msg: "x"},
		newInputError{},
	} {
		for _, e := range []error{err, fmt.Errorf("wrapped twice: %w", fmt.Errorf("once: %w", err))} {
			if !errors.Is(e, prm.ErrInput) {
				t.Errorf("%T is not an input error", err)
			}
			if got := code(Classify(e)); got != ExitUsage {
				t.Errorf("%T: exit %d, want 2", err, got)
			}
		}
	}
	for _, err := range []error{
		&adapter.NotFoundError{Err: errors.New("no such function")},
		fmt.Errorf("read MGIR: %w", dev.ErrBusy),
		context.DeadlineExceeded,
		&nvconf.LockError{Key: "pci-x", Err: context.DeadlineExceeded},
	} {
		if errors.Is(err, prm.ErrInput) || code(Classify(err)) != ExitDevice {
			t.Errorf("%T (%v): classified as input", err, err)
		}
	}
}

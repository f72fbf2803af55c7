package modulecmd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

func module(a *cmdutiltest.App, args ...string) error {
	a.Reset()
	return a.Run(New(a.App), args...)
}

// opts are the flags' defaults with -d name.
func opts(name string) *moduleOptions {
	return &moduleOptions{df: cmdutil.DeviceFlags{Name: name, Timeout: 10 * time.Second, Via: "auto"}, port: 1, interval: 2 * time.Second}
}

type doc struct {
	Device          string `json:"device"`
	SourceRevision  string `json:"source_revision"`
	AdapterFirmware string `json:"adapter_firmware"`
	Modules         []struct {
		Port         int    `json:"port"`
		Module       int    `json:"module"`
		EEPROMAccess string `json:"eeprom_access"`
		EEPROMError  string `json:"eeprom_error"`
		Verdicts     []struct {
			Code     string `json:"code"`
			Category string `json:"category"`
			NextStep string `json:"next_step"`
		} `json:"verdicts"`
	} `json:"modules"`
	Verdicts int `json:"verdicts"`
}

func decode(t *testing.T, s string) doc {
	t.Helper()
	var d doc
	cmdutiltest.JSON(t, s, &d)
	return d
}

// codes is every module's port and verdict codes.
func codes(d doc) map[int][]string {
	out := map[int][]string{}
	for _, m := range d.Modules {
		out[m.Port] = []string{}
		for _, v := range m.Verdicts {
			out[m.Port] = append(out[m.Port], v.Code)
		}
	}
	return out
}

// Usage errors are exit 2 and say what to give.
func TestModuleUsage(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	fields := filepath.Join(t.TempDir(), "fields.txt")
	os.WriteFile(fields, []byte("status = 0x0\nlocal_port = 0x1\n"), 0o644)
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"-d", "emu", "--all", "--port", "2"}, "--port and --all exclude each other"},
		{[]string{"-d", "emu", "--port", "0"}, "--port 0: ports are numbered from 1"},
		{[]string{"-d", "emu", "--port", "256"}, "--port 256"},
		{[]string{"-d", "emu", "--verify", "--interval", "0s"}, "--interval 0s: give a duration between 1ms and 10m"},
		{[]string{"-d", "emu", "--interval", "11m"}, "between 1ms and 10m"},
		{[]string{"--file", fields, "-d", "emu"}, "--file decodes a dump offline; leave out -d, --verify and --all"},
		{[]string{"--file", fields, "--verify"}, "leave out -d, --verify and --all"},
		{[]string{"--file", filepath.Join(t.TempDir(), "missing.bin")}, "missing.bin"},
		{[]string{"-d", "emu:no-such-profile"}, "no-such-profile"},
	} {
		err := module(a, c.args...)
		if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%v: exit %d %v; want exit 2 saying %q", c.args, code, err, c.words)
		}
		if a.Out.Len() != 0 {
			t.Errorf("%v: a usage error printed %.200q", c.args, a.Out)
		}
	}
}

// Healthy modules: exit 0, no verdicts, one module for the default port
// and one per port with --all, both output modes.
func TestModuleHealthy(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	name := cmdutiltest.Manual(t, "")
	if err := (&app{a.App}).runModule(opts(name)); err != nil {
		t.Fatalf("healthy: %v\n%s", err, a.Out)
	}
	d := decode(t, a.Out.String())
	if diff := cmp.Diff(map[int][]string{1: {}}, codes(d)); diff != "" || d.Verdicts != 0 || d.Device != name || d.SourceRevision == "" || d.AdapterFirmware == "" {
		t.Errorf("device %q revision %q firmware %q verdicts %d (-want +got):\n%s", d.Device, d.SourceRevision, d.AdapterFirmware, d.Verdicts, diff)
	}

	a.Reset()
	o := opts(name)
	o.all, o.verify = true, true
	if err := (&app{a.App}).runModule(o); err != nil {
		t.Fatalf("--all --verify: %v\n%s", err, a.Out)
	}
	if diff := cmp.Diff(map[int][]string{1: {}, 2: {}}, codes(decode(t, a.Out.String()))); diff != "" {
		t.Errorf("--all (-want +got):\n%s", diff)
	}

	a.Reset()
	a.Output = "table"
	if err := (&app{a.App}).runModule(o); err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Split(strings.TrimRight(a.Out.String(), "\n"), "\n\n")); n != 2 {
		t.Errorf("--all table: %d blocks, want one per module:\n%s", n, a.Out)
	}
}

// Module faults are exit 1 with a verdict that says what to do, in JSON
// and in the table alike; the other port's module stays clean.
func TestModuleFaults(t *testing.T) {
	for _, c := range []struct {
		fault  string
		verify bool
		want   string // a verdict code that must be among them
	}{
		{"faults: [i2c_hang]", false, ""},
		{"faults: [no_ddm]", false, ""},
		{"faults: [frozen_monitors]", true, ""},
		{"faults: [checksum_error]", false, ""},
		{"faults: [low_rx_power]", false, ""},
		{"plugged: false", false, "no_module"},
		{"error: High_Temperature", false, ""},
	} {
		t.Run(c.fault, func(t *testing.T) {
			a := cmdutiltest.New(t, "json")
			o := opts(cmdutiltest.Manual(t, "    modules:\n      - {module: 1, "+c.fault+"}\n"))
			o.all, o.verify = true, c.verify
			err := (&app{a.App}).runModule(o)
			if !errors.Is(err, cmdutil.ErrProblem) {
				t.Fatalf("%v, want exit 1\n%s", err, a.Out)
			}
			d := decode(t, a.Out.String())
			got := codes(d)
			if c.want != "" && !strings.Contains(strings.Join(got[2], " "), c.want) {
				t.Errorf("port 2 verdicts %v, want %s among them", got[2], c.want)
			}
			if len(got[1]) != 0 || len(got[2]) == 0 || d.Verdicts != len(got[2]) {
				t.Errorf("verdicts %v (total %d): want some on port 2 only", got, d.Verdicts)
			}
			for _, m := range d.Modules {
				for _, v := range m.Verdicts {
					if v.NextStep == "" || v.Category == "" {
						t.Errorf("port %d verdict %s has no category or next step", m.Port, v.Code)
					}
				}
			}
			a.Reset()
			a.Output = "table"
			if err := (&app{a.App}).runModule(o); !errors.Is(err, cmdutil.ErrProblem) {
				t.Errorf("table: %v, want exit 1 as in JSON", err)
			}
			for _, code := range got[2] {
				if !strings.Contains(a.Out.String(), code) {
					t.Errorf("the table does not name verdict %s:\n%s", code, a.Out)
				}
			}
		})
	}
}

// An adapter that is gone cannot be read at all: exit 3.
func TestModuleRemoved(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	err := (&app{a.App}).runModule(opts(cmdutiltest.Manual(t, "    faults: {removed: true}\n")))
	if code := cmdutiltest.Code(err); code != cmdutil.ExitDevice {
		t.Errorf("removed adapter: exit %d %v, want 3\n%s", code, err, a.Out)
	}
}

// --file with register fields in it (a prm decode input, not module
// memory) is refused with the command that reads it.
func TestModuleFileNotMemory(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	f := filepath.Join(t.TempDir(), "fields.txt")
	os.WriteFile(f, []byte("status = 0x0\nlocal_port = 0x1\n"), 0o644)
	err := (&app{a.App}).runModuleFile(&moduleOptions{file: f})
	if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(a.Out.String(), "not module memory") || !strings.Contains(a.Out.String(), "cxray prm decode") {
		t.Errorf("exit %d %v, want 2 naming prm decode:\n%s", code, err, a.Out)
	}
}

package fwcmd

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/feature/caps"
	"github.com/cxray/cxray/feature/nvmf"
	"github.com/cxray/cxray/feature/objects"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/kernel/kerneltest"
)

// run runs the command newCmd builds with args in a.
func run(a *cmdutiltest.App, newCmd func(*cmdutil.App) *cobra.Command, args ...string) error {
	a.Reset()
	return a.Run(newCmd(a.App), args...)
}

// Usage errors and refused commands are exit 2, before anything is sent.
func TestFirmwareCommandUsage(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, "")
	junk := filepath.Join(t.TempDir(), "junk.json")
	os.WriteFile(junk, []byte("{\"pages\": 7}"), 0o644)
	for _, c := range []struct {
		newCmd func(*cmdutil.App) *cobra.Command
		args   []string
		words  string
	}{
		{NewCmd, []string{"CREATE_QP", "-d", dev}, "refuses CREATE_QP"},
		{NewCmd, []string{"QUERY_ADAPTER", "novalue", "-d", dev}, "novalue"},
		{NewCmd, []string{"QUERY_ADAPTER", "-d", dev, "nosuchfield=1"}, "nosuchfield"},
		{NewCmd, []string{"NO_SUCH_COMMAND", "-d", dev}, "NO_SUCH_COMMAND"},
		{NewCmd, []string{"QUERY_ADAPTER"}, "add -d DEV"},
		{NewNvmf, []string{"-d", dev, "--xrq", "one"}, "--xrq \"one\": give numbers (1, 0x10), comma-separated"},
		{NewNvmf, []string{"-d", dev, "--ns", "1,x"}, "--ns \"x\""},
		{NewNvmf, []string{"-d", dev, "--interval", "-1s"}, "--interval -1s: give a positive duration"},
		{NewQP, []string{"zz", "-d", dev}, "QPN \"zz\": give a number"},
		{NewQP, []string{"0x1000000", "-d", dev}, "QPNs have 24 bits"},
		{NewQP, []string{"0x555", "-d", dev}, "the firmware knows no such object"},
		{NewNvmf, []string{"-d", dev, "--xrq", "1", "--ns", "9"}, "XRQ 1 namespace 9: the firmware knows no such namespace"},
		{NewMkey, []string{"key", "-d", dev}, "KEY \"key\": give a number"},
		{NewCaps, []string{"-d", dev, "--diff", junk}, "give a file written by 'cxray caps --save', or a device name"},
	} {
		err := run(a, c.newCmd, c.args...)
		if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%v: exit %d %v; want exit 2 saying %q", c.args, code, err, c.words)
		}
		// The in-process emulator has no fwctl: its answers never say so.
		if err != nil && strings.Contains(err.Error(), "fwctl:") {
			t.Errorf("%v: %v names fwctl", c.args, err)
		}
		if a.Out.Len() != 0 {
			t.Errorf("%v: a usage error printed %.200q", c.args, a.Out)
		}
	}
}

// A 24-bit limit is for QPNs only: a memory key takes all 32 bits (and an
// unknown one is the user's number to check, exit 2).
func TestMkeyTakes32Bits(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	err := run(a, NewMkey, "0xff000000", "-d", cmdutiltest.Manual(t, ""))
	if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), "the firmware knows no such object") {
		t.Errorf("unknown 32-bit key: exit %d %v, want exit 2 saying no such object", code, err)
	}
}

// cmd decodes the out mailbox in both modes, and names the command and
// its opcode.
func TestCmdQueryAdapter(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	dev := cmdutiltest.Manual(t, "")
	if err := run(a, NewCmd, "QUERY_ADAPTER", "-d", dev); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Device  string         `json:"device"`
		Command string         `json:"command"`
		Opcode  int            `json:"opcode"`
		Request string         `json:"request"`
		Fields  map[string]any `json:"fields"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &r)
	if r.Device != dev || r.Command != "QUERY_ADAPTER" || r.Opcode != 0x101 || !strings.HasPrefix(r.Request, "0101") || len(r.Fields) == 0 {
		t.Errorf("device %q command %q opcode 0x%x request %.8s, %d fields", r.Device, r.Command, r.Opcode, r.Request, len(r.Fields))
	}
	a.Output = "table"
	if err := run(a, NewCmd, "QUERY_ADAPTER", "-d", dev); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(a.Out.String(), "\n")
	if !strings.HasPrefix(lines[0], "QUERY_ADAPTER (0x101) on "+dev) || strings.Fields(lines[1])[0] != "FIELD" {
		t.Errorf("table:\n%.500s", a.Out)
	}
	// admin_state is decoded as esw decodes it (AUTO), in both modes.
	if err := run(a, NewCmd, "QUERY_VPORT_STATE", "-d", dev); err != nil || !regexp.MustCompile(`(?m)^admin_state +AUTO \(2\)$`).MatchString(a.Out.String()) {
		t.Errorf("QUERY_VPORT_STATE table: %v\n%s", err, a.Out)
	}
	a.Output = "json"
	if err := run(a, NewCmd, "QUERY_VPORT_STATE", "-d", dev); err != nil {
		t.Fatal(err)
	}
	cmdutiltest.JSON(t, a.Out.String(), &r)
	if r.Fields["admin_state"] != "AUTO" {
		t.Errorf("QUERY_VPORT_STATE JSON admin_state %v", r.Fields["admin_state"])
	}
}

// caps --save then --diff against the file: nothing differs (exit 0);
// against an adapter of another profile: exit 1 with the changes, in both
// modes.
func TestCapsSaveDiff(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	cx7 := cmdutiltest.Manual(t, "")
	cx6 := cmdutiltest.Scenario(t, "clock: {mode: manual}\ndevices:\n  - profile: cx6dx-2p100g\n")
	saved := filepath.Join(t.TempDir(), "caps.json")
	if err := run(a, NewCaps, "-d", cx7, "--save", saved); err != nil {
		t.Fatal(err)
	}
	var r caps.Report
	cmdutiltest.JSON(t, a.Out.String(), &r)
	if len(r.Pages) == 0 {
		t.Fatalf("no capability pages:\n%.400s", a.Out)
	}
	f, err := os.Open(saved)
	if err != nil {
		t.Fatal(err)
	}
	s, err := caps.Load(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(len(r.Pages), len(s.Pages)); diff != "" || s.Device != r.Device {
		t.Errorf("saved %s with %d pages, printed %s with %d", s.Device, len(s.Pages), r.Device, len(r.Pages))
	}
	for _, mode := range []string{"json", "table"} {
		a.Output = mode
		if err := run(a, NewCaps, "-d", cx7, "--diff", saved); err != nil {
			t.Errorf("%s: against its own save: %v\n%.400s", mode, err, a.Out)
		}
		if err := run(a, NewCaps, "-d", cx6, "--diff", saved); !errors.Is(err, cmdutil.ErrProblem) {
			t.Errorf("%s: ConnectX-6 Dx against a ConnectX-7 save: %v, want exit 1", mode, err)
		}
		if mode == "json" {
			var d struct {
				Old, New string
				Changes  []json.RawMessage `json:"changes"`
			}
			cmdutiltest.JSON(t, a.Out.String(), &d)
			if d.Old != cx7 || d.New != cx6 || len(d.Changes) == 0 {
				t.Errorf("diff old %q new %q, %d changes", d.Old, d.New, len(d.Changes))
			}
		} else if !strings.Contains(a.Out.String(), "capabilities differ (old: "+cx7+", new: "+cx6+")") {
			t.Errorf("table:\n%.400s", a.Out)
		}
	}
	// A --diff that is neither a file nor a device says it tried both.
	err = run(a, NewCaps, "-d", cx7, "--diff", "emu:no-such-profile")
	if err == nil || !strings.Contains(err.Error(), "no such file; read as a device") {
		t.Errorf("--diff of nothing: %v", err)
	}
}

// nvmf: the ConnectX-7 profile's namespaces with rates over --interval on
// the emulated clock; a ConnectX-6 Dx has no offload, which is said, not
// an error.
func TestNVMF(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	if err := run(a, NewNvmf, "-d", cmdutiltest.Manual(t, ""), "--interval", "2s"); err != nil {
		t.Fatal(err)
	}
	var r nvmf.Report
	cmdutiltest.JSON(t, a.Out.String(), &r)
	type ns struct{ XRQ, NS uint32 }
	var got []ns
	for _, n := range r.Namespaces {
		got = append(got, ns{n.XRQN, n.NSID})
		if n.Rates == nil {
			t.Errorf("xrq %d ns %d: --interval gave no rates", n.XRQN, n.NSID)
		}
	}
	if diff := cmp.Diff([]ns{{1, 1}, {1, 2}}, got); diff != "" || !r.Offload || r.IntervalSeconds != 2 {
		t.Errorf("offload %v interval %v, namespaces (-want +got):\n%s", r.Offload, r.IntervalSeconds, diff)
	}
	a.Output = "table"
	cx6 := cmdutiltest.Scenario(t, "clock: {mode: manual}\ndevices:\n  - profile: cx6dx-2p100g\n")
	if err := run(a, NewNvmf, "-d", cx6); err != nil {
		t.Fatalf("no offload: %v", err)
	}
	if !strings.Contains(a.Out.String(), ": no NVMe-oF offload namespaces: ") {
		t.Errorf("table:\n%s", a.Out)
	}
}

// qp: a QP in its error state is exit 1 in both modes and says why; a
// working one exit 0.
func TestQP(t *testing.T) {
	for _, mode := range []string{"json", "table"} {
		a := cmdutiltest.New(t, mode)
		dev := cmdutiltest.Manual(t, "")
		if err := run(a, NewQP, "0x108", "-d", dev); err != nil {
			t.Errorf("%s: QP 0x108: %v", mode, err)
		}
		if mode == "json" {
			var q objects.QP
			cmdutiltest.JSON(t, a.Out.String(), &q)
			if q.QPN != 0x108 || q.State != "RTS" || q.Error {
				t.Errorf("QP 0x108 %+v", q)
			}
		}
		if err := run(a, NewQP, "0x109", "-d", dev); !errors.Is(err, cmdutil.ErrProblem) {
			t.Errorf("%s: QP 0x109 in error: %v, want exit 1", mode, err)
		}
		if mode == "json" {
			var q objects.QP
			cmdutiltest.JSON(t, a.Out.String(), &q)
			if !q.Error || q.ErrorNote == "" {
				t.Errorf("QP 0x109 %+v: want the error state with a note", q)
			}
		} else if !strings.Contains(a.Out.String(), "retries ran out") {
			t.Errorf("table:\n%s", a.Out)
		}
	}
}

// Device faults are exit 3: an adapter that is gone, and a kernel backend
// without fwctl, whose message says what to load.
func TestFirmwareCommandDeviceErrors(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	removed := cmdutiltest.Manual(t, "    faults: {removed: true}\n")
	for _, c := range []struct {
		newCmd func(*cmdutil.App) *cobra.Command
		args   []string
	}{
		{NewCmd, []string{"QUERY_ADAPTER", "-d", removed}},
		{NewCaps, []string{"-d", removed}},
		{NewEsw, []string{"-d", removed}},
		{NewNvmf, []string{"-d", removed}},
	} {
		if err := run(a, c.newCmd, c.args...); cmdutiltest.Code(err) != cmdutil.ExitDevice {
			t.Errorf("%v on a removed adapter: %v, want exit 3", c.args, err)
		}
	}

	root := kerneltest.Tree(t, kerneltest.CX7)
	k := kerneltest.CX7Kernel()
	a.Sys = devname.Sys{Root: root}
	a.Kernel = kernel.Options{Root: root, DialGeneric: k.DialGeneric, DialRoute: k.DialRoute, Ethtool: k.Ethtool}
	err := run(a, NewCmd, "QUERY_ADAPTER", "-d", "kernel:mlx5_0")
	if code := cmdutiltest.Code(err); code != cmdutil.ExitDevice || !strings.Contains(err.Error(), "fwctl") {
		t.Errorf("kernel backend: exit %d %v, want 3 naming fwctl", code, err)
	}
}

// esw: each PF of an adapter manages its own e-switch.
func TestEsw(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	two := cmdutiltest.Scenario(t, "clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n    bdf: 0000:03:00.0\n    functions: 2\n")
	var got []bool
	for _, f := range []string{"@0000:03:00.0", "@0000:03:00.1"} {
		if err := run(a, NewEsw, "-d", two+f); err != nil {
			t.Fatal(err)
		}
		var r struct {
			Manager *bool `json:"eswitch_manager"`
		}
		cmdutiltest.JSON(t, a.Out.String(), &r)
		if r.Manager == nil {
			t.Fatalf("no eswitch_manager:\n%.400s", a.Out)
		}
		got = append(got, *r.Manager)
	}
	if diff := cmp.Diff([]bool{true, true}, got); diff != "" {
		t.Errorf("e-switch manager per function (-want +got):\n%s", diff)
	}
	a.Output = "table"
	if err := run(a, NewEsw, "-d", two); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a.Out.String(), "e-switch of "+two) {
		t.Errorf("table:\n%.300s", a.Out)
	}
}

package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"

	"github.com/cxray/cxray/cli/internal/statuscmd"
	"github.com/cxray/cxray/kernel"
)

const lockdownScenario = "emu:../examples/lockdown.yaml"

// The command-interface commands answer the same on the gateway path
// (-d emu: commands beside the gateway), through fwctl only (--via fwctl)
// and on a lockdown host, where auto falls back to fwctl.
func TestCommandsOnEveryPath(t *testing.T) {
	paths := [][]string{{"-d", "emu"}, {"-d", "emu", "--via", "fwctl"}, {"-d", lockdownScenario}}
	cmds := []struct {
		args []string
		want string // a line the table shows
		code int
	}{
		{[]string{"cmd", "QUERY_ADAPTER"}, `"MT_0000000834"`, 0},
		{[]string{"caps", "--type", "general"}, "log_max_qp", 0},
		{[]string{"esw"}, "e-switch manager", 0},
		{[]string{"nvmf", "--xrq", "1", "--ns", "1,2"}, "READ BLOCKS", 0},
		{[]string{"qp", "0x108"}, "RTS", 0},
		{[]string{"qp", "0x109"}, "retries ran out", 1},
		{[]string{"mkey", "0x10203"}, "remote write", 0},
	}
	for _, p := range paths {
		for _, c := range cmds {
			args := append(append([]string{}, c.args...), p...)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				t.Setenv("XDG_STATE_HOME", t.TempDir())
				out, errs, code := cli(t, "", args...)
				if code != c.code || !strings.Contains(out, c.want) {
					t.Errorf("exit %d (want %d), want %q in:\n%s\n%s", code, c.code, c.want, out, errs)
				}
				jout, jerrs, jcode := cli(t, "", append(args, "-o", "json")...)
				if jcode != code {
					t.Errorf("JSON exit %d, table %d: %s", jcode, code, jerrs)
				}
				var v map[string]any
				mustJSON(t, jout, &v)
			})
		}
	}
}

// The answers through fwctl are the gateway path's: one device.
func TestCommandsSameThroughFwctl(t *testing.T) {
	for _, args := range [][]string{{"cmd", "QUERY_HCA_CAP", "op_mod=0x1"}, {"caps", "--type", "eswitch,roce"}, {"esw"}, {"reg", "get", "MGIR"}} {
		t.Setenv("XDG_STATE_HOME", t.TempDir())
		gw, _, c1 := cli(t, "", append(args, "-d", "emu", "-o", "json")...)
		fw, _, c2 := cli(t, "", append(args, "-d", "emu", "--via", "fwctl", "-o", "json")...)
		var a, b map[string]any
		mustJSON(t, gw, &a)
		mustJSON(t, fw, &b)
		delete(a, "via")
		delete(b, "via")
		if c1 != 0 || c2 != 0 {
			t.Errorf("%v: exit %d / %d", args, c1, c2)
		}
		if d := cmp.Diff(a, b); d != "" {
			t.Errorf("%v: gateway vs fwctl (-gateway +fwctl):\n%s", args, d)
		}
	}
}

// Refusals and unknown objects are the user's to fix (exit 2), with the
// reason; a function without a command interface is a device error (3).
func TestCommandRefusals(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"cmd", "CREATE_QP", "-d", "emu"}, 2, "refuses CREATE_QP"},
		{[]string{"cmd", "NO_SUCH_COMMAND", "-d", "emu"}, 2, "NO_SUCH_COMMAND"},
		{[]string{"cmd", "QUERY_ADAPTER", "nosuchfield=1", "-d", "emu"}, 2, "nosuchfield"},
		{[]string{"qp", "0x555", "-d", "emu"}, 2, "no such object"},
		{[]string{"qp", "zz", "-d", "emu"}, 2, "give a number"},
		{[]string{"nvmf", "--xrq", "x", "-d", "emu"}, 2, "--xrq"},
		{[]string{"caps", "-d", "emu", "--via", "sideways"}, 2, "--via"},
	}
	for _, c := range cases {
		_, errs, code := cli(t, "", c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", c.args, code, c.code, errs, c.want)
		}
	}
}

func TestCommandsOnKernelBackend(t *testing.T) {
	withKernelFixture(t)
	_, errs, code := cli(t, "", "caps", "-d", "kernel:mlx5_0")
	if code != 3 || !strings.Contains(errs, "fwctl") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

// Under lockdown, auto takes fwctl and says so; every register command
// works through it; --via vsec is refused with what to do instead.
func TestLockdownFallback(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	out, errs, code := cli(t, "", "health", "-d", lockdownScenario)
	if code != 0 || !strings.Contains(out, "kernel lockdown: using fwctl") {
		t.Errorf("health: exit %d\n%s\n%s", code, out, errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"reg", "get", "MGIR", "--field", "fw_info.major"}, "0x1c (28)"},
		{[]string{"module"}, "Verdict"},
		{[]string{"status"}, "kernel lockdown: using fwctl"},
	} {
		out, errs, code := cli(t, "", append(c.args, "-d", lockdownScenario)...)
		if code != 0 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, want %q:\n%s\n%s", c.args, code, c.want, out, errs)
		}
	}
	jout, _, _ := cli(t, "", "reg", "get", "MGIR", "-d", lockdownScenario, "-o", "json")
	var doc struct {
		Backend string `json:"backend"`
		Via     string `json:"via"`
	}
	mustJSON(t, jout, &doc)
	if doc.Backend != "emulator" || doc.Via != "fwctl" {
		t.Errorf("reg get JSON: backend %q via %q", doc.Backend, doc.Via)
	}
	_, errs, code = cli(t, "", "reg", "get", "MGIR", "-d", lockdownScenario, "--via", "vsec")
	if code != 3 || !strings.Contains(errs, "--via fwctl") {
		t.Errorf("--via vsec under lockdown: exit %d %s", code, errs)
	}
}

// caps --save and --diff: a saved report compares equal with its device,
// and a function with other capabilities differs (exit 1).
func TestCapsSaveAndDiff(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "caps.json")
	if _, errs, code := cli(t, "", "caps", "-d", "emu", "--save", file); code != 0 {
		t.Fatalf("save: exit %d %s", code, errs)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
	out, errs, code := cli(t, "", "caps", "-d", "emu", "--diff", file)
	if code != 0 || !strings.Contains(out, "no capability differs") {
		t.Errorf("diff with itself: exit %d\n%s%s", code, out, errs)
	}
	// The second PF of two-adapters is another function (vhca_id 1), and
	// an e-switch manager as the first is.
	other := "emu:../examples/two-adapters.yaml@0000:03:00.1"
	out, errs, code = cli(t, "", "caps", "-d", other, "--type", "general", "--diff", file)
	if code != 1 || !strings.Contains(out, "vhca_id") || strings.Contains(out, "eswitch_manager") {
		t.Errorf("diff with the second PF: exit %d\n%s%s", code, out, errs)
	}
	// JSON says what the table says: the type in lower case, numbers as
	// numbers; same exit code.
	out, errs, jcode := cli(t, "", "caps", "-d", other, "--type", "general", "--diff", file, "-o", "json")
	var doc struct {
		Changes []map[string]any `json:"changes"`
	}
	mustJSON(t, out, &doc)
	found := false
	for _, c := range doc.Changes {
		if c["path"] == "vhca_id" {
			found = true
			want := map[string]any{"type": "general", "path": "vhca_id", "old": float64(0), "new": float64(1), "old_max": float64(0), "new_max": float64(1)}
			if d := cmp.Diff(want, c); d != "" {
				t.Errorf("caps --diff JSON (-want +got):\n%s", d)
			}
		}
	}
	if jcode != code || !found {
		t.Errorf("caps --diff -o json: exit %d (table %d), vhca_id found %v\n%s%s", jcode, code, found, out, errs)
	}
	if err := os.WriteFile(file, []byte(`{"device":`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code = cli(t, "", "caps", "-d", "emu", "--diff", file)
	if code != 2 || !strings.Contains(errs, "--save") {
		t.Errorf("cut-short caps file: exit %d %s", code, errs)
	}
}

// Every function of every example scenario answers caps and esw.
func TestCommandsOnEveryExampleFunction(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.yaml")
	for _, f := range files {
		if strings.Contains(f, "semaphore-held") {
			continue // its gateway never frees; the command path does not need it, but opening does
		}
		name := "emu:" + f
		out, errs, code := cli(t, "", "status", "-d", name, "-o", "json")
		if code > 1 {
			t.Errorf("status -d %s: exit %d %s", name, code, errs)
			continue
		}
		var doc struct {
			Devices []statuscmd.Entry `json:"devices"`
		}
		mustJSON(t, out, &doc)
		if len(doc.Devices) == 0 {
			t.Errorf("status -d %s lists no function", name)
		}
		for _, e := range doc.Devices {
			for _, cmd := range []string{"esw", "caps"} {
				_, errs, code := cli(t, "", cmd, "-d", fmt.Sprintf("%s@%s", name, e.BDF))
				if code != 0 {
					t.Errorf("%s -d %s@%s: exit %d %s", cmd, name, e.BDF, code, errs)
				}
			}
		}
	}
}

// On the kernel backend qp and mkey read the kernel's raw copy of the
// context (RDMA netlink); without CAP_NET_ADMIN that says what to do.
func TestObjectsOnKernelBackend(t *testing.T) {
	withKernelFixture(t)
	saved := kernelOptions
	kernelOptions = func() kernel.Options {
		o := saved()
		o.DialRDMA = func() (*netlink.Conn, error) {
			return nltest.Dial(func([]netlink.Message) ([]netlink.Message, error) { return nil, syscall.EPERM }), nil
		}
		return o
	}
	t.Cleanup(func() { kernelOptions = saved })
	for _, args := range [][]string{{"qp", "0x108"}, {"mkey", "0x10203"}} {
		_, errs, code := cli(t, "", append(args, "-d", "kernel:mlx5_0")...)
		if code != 3 || !strings.Contains(errs, "CAP_NET_ADMIN") {
			t.Errorf("%v: exit %d %s", args, code, errs)
		}
	}
}

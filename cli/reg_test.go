package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cxray/cxray/access/icmd"
	"github.com/cxray/cxray/access/vsec"
	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/statuscmd"
	"github.com/cxray/cxray/dev"
)

func TestStatusEmu(t *testing.T) {
	out, errs, code := cli(t, "", "--adb", "builtin", "status", "-d", "emu", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var st struct {
		Devices []statuscmd.Entry `json:"devices"`
	}
	mustJSON(t, out, &st)
	if len(st.Devices) != 1 {
		t.Fatalf("%s", out)
	}
	d := st.Devices[0]
	if d.BDF != "0000:03:00.0" || d.Model != "ConnectX-7" || d.Firmware != "28.39.1010" || d.PSID != "MT_0000000834" || d.Ports != 2 || d.PermanentMAC == "" || d.MACDrift {
		t.Errorf("%+v", d)
	}
	// A scenario with two adapters lists three functions, each with its names.
	sc := filepath.Join("..", "emu", "scenario", "testdata", "two-adapters.yaml")
	out, errs, code = cli(t, "", "--adb", "builtin", "status", "-d", "emu:"+sc, "-o", "json")
	mustJSON(t, out, &st)
	if code != 0 || len(st.Devices) < 3 {
		t.Fatalf("exit %d %s %s", code, errs, out)
	}
	if st.Devices[1].BDF != "0000:03:00.1" || st.Devices[1].Netdevs[0] != "ens1f1np1" || st.Devices[1].PermanentMAC != "b8:3f:d2:a1:b2:c1" {
		t.Errorf("second function %+v", st.Devices[1])
	}
	// Each PF has its own node GUID; the system image GUID is the adapter's.
	type guids struct{ Node, Sys string }
	got := []guids{{st.Devices[0].NodeGUID, st.Devices[0].SysImageGUID}, {st.Devices[1].NodeGUID, st.Devices[1].SysImageGUID}}
	want := []guids{{"b83f:d203:00a1:b2c0", "b83f:d203:00a1:b2c0"}, {"b83f:d203:00a1:b2c1", "b83f:d203:00a1:b2c0"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("GUIDs of the two PFs of the first adapter (-want +got):\n%s", d)
	}
	if st.Devices[2].Model != "ConnectX-6 Dx" {
		t.Errorf("third function %+v", st.Devices[2])
	}
}

func TestRegGetMGIR(t *testing.T) {
	out, errs, code := cli(t, "", "--adb", "builtin", "reg", "get", "MGIR", "-d", "emu", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Register string `json:"register"`
		Backend  string `json:"backend"`
		Fields   struct {
			FWInfo struct {
				PSID          string `json:"psid"`
				ExtendedMajor int    `json:"extended_major"`
				ExtendedMinor int    `json:"extended_minor"`
				ExtendedSub   int    `json:"extended_sub_minor"`
			} `json:"fw_info"`
		} `json:"fields"`
	}
	mustJSON(t, out, &r)
	f := r.Fields.FWInfo
	if r.Register != "MGIR" || r.Backend != "emulator" || f.PSID != "MT_0000000834" || f.ExtendedMajor != 28 || f.ExtendedMinor != 39 || f.ExtendedSub != 1010 {
		t.Errorf("%+v", r)
	}
	out, _, _ = cli(t, "", "--adb", "builtin", "reg", "get", "MGIR", "-d", "emu", "--field", "fw_info.psid")
	if strings.TrimSpace(out) != `"MT_0000000834"` {
		t.Errorf("--field: %q", out)
	}
}

func TestRegSet(t *testing.T) {
	privateState(t) // it writes to -d emu, which keeps what it is told
	// A RW field: written, verified by reading back.
	out, errs, code := cli(t, "", "--adb", "builtin", "reg", "set", "PAOS", "admin_status=down_by_configuration", "ase=1", "-d", "emu", "--yes", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, `"verified": true`) || !strings.Contains(out, `"admin_status": "down_by_configuration"`) {
		t.Errorf("%s", out)
	}
	// --dry-run prints the bytes and writes nothing (oper_status 2: the set
	// above took the port down, and -d emu keeps it so).
	out, _, code = cli(t, "", "--adb", "builtin", "reg", "set", "PAOS", "admin_status=down_by_configuration", "ase=1", "-d", "emu", "--dry-run")
	if code != 0 || !strings.Contains(out, "0x00: 0x00010202 0x80000000") {
		t.Errorf("dry run: %s", out)
	}
	// Without a terminal and without --yes: refused.
	_, errs, code = cli(t, "", "--adb", "builtin", "reg", "set", "PAOS", "admin_status=up", "ase=1", "-d", "emu")
	if code != 2 || !strings.Contains(errs, "add --yes") {
		t.Errorf("no confirmation: exit %d %s", code, errs)
	}
	// admin_status without its update enable bit: said before anything is
	// written (the firmware would take the write and ignore the field), in
	// both output modes; PMAOS alike.
	before, _, _ := cli(t, "", "--adb", "builtin", "reg", "get", "PAOS", "-d", "emu")
	for _, c := range [][]string{{"PAOS", "admin_status=down_by_configuration"}, {"PMAOS", "admin_status=disabled_by_configuration", "--index", "module=0"}, {"PAOS", "admin_status=up", "ase=0"}} {
		for _, mode := range []string{"table", "json"} {
			args := append([]string{"--adb", "builtin", "reg", "set"}, c...)
			_, errs, code = cli(t, "", append(args, "-d", "emu", "--yes", "-o", mode)...)
			if code != 2 || !strings.Contains(errs, "only with ase=1") || !strings.Contains(errs, "add ase=1") {
				t.Errorf("%v (%s) without ase=1: exit %d %s", c, mode, code, errs)
			}
		}
	}
	if out, _, _ := cli(t, "", "--adb", "builtin", "reg", "get", "PAOS", "-d", "emu"); out != before {
		t.Errorf("a refused write changed the port:\n%s\nwas\n%s", out, before)
	}
	// RO fields refused.
	_, errs, code = cli(t, "", "--adb", "builtin", "reg", "set", "PAOS", "oper_status=1", "-d", "emu", "--yes")
	if code != 2 || !strings.Contains(errs, "oper_status is read-only") {
		t.Errorf("RO: exit %d %s", code, errs)
	}
	// Index fields without a default must be given.
	_, errs, code = cli(t, "", "--adb", "builtin", "reg", "get", "PMAOS", "-d", "emu")
	if code != 2 || !strings.Contains(errs, "--index module=N") {
		t.Errorf("missing index: exit %d %s", code, errs)
	}
}

func TestRegListSupported(t *testing.T) {
	sc := filepath.Join(t.TempDir(), "u.yaml")
	os.WriteFile(sc, []byte("devices:\n  - profile: cx7-2p400g\n    faults:\n      unsupported: [MFBA]\n"), 0o644)
	out, errs, code := cli(t, "", "--adb", "builtin", "reg", "list", "-d", "emu:"+sc, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	var l struct {
		Registers []struct {
			Name      string `json:"name"`
			Supported *bool  `json:"supported"`
		} `json:"registers"`
	}
	mustJSON(t, out, &l)
	sup := map[string]bool{}
	for _, r := range l.Registers {
		if r.Supported != nil {
			sup[r.Name] = *r.Supported
		}
	}
	if !sup["MGIR"] || !sup["MCAM"] || !sup["MTMP"] {
		t.Errorf("MCAM should advertise MGIR, MCAM, MTMP: %v", sup)
	}
	if v, ok := sup["MFBA"]; !ok || v {
		t.Errorf("MFBA, unsupported by the scenario, should be covered and not advertised: %v %v", v, ok)
	}
}

// Every fault gives a device error (exit 3) of its kind within the
// deadline. The kind is matched (errors.Is), not the text: under load the
// deadline can land in a read rather than in the wait, which words the
// same failure differently (issue 26.12). The bound on the time is
// generous (the machine may be loaded); the deadline itself is 4 s.
func TestFaults(t *testing.T) {
	cases := []struct {
		faults string
		kinds  []error // any of them
	}{
		{"gateway_semaphore_held: true", []error{vsec.ErrSemaphoreBusy}},
		{"icmd_semaphore_held: true", []error{icmd.ErrSemaphoreBusy}},
		{"icmd_stuck_busy: true", []error{icmd.ErrBusy, icmd.ErrTimeout, context.DeadlineExceeded}},
		{"removed: true", []error{vsec.ErrDeviceGone}},
		{"register_status: {MGIR: 4}", []error{dev.ErrNotSupported}},
	}
	for _, c := range cases {
		sc := filepath.Join(t.TempDir(), "f.yaml")
		os.WriteFile(sc, []byte("devices:\n  - profile: cx7-2p400g\n    faults:\n      "+c.faults+"\n"), 0o644)
		start := time.Now()
		err := cliErr(t, "--adb", "builtin", "reg", "get", "MGIR", "-d", "emu:"+sc, "--timeout", "4s")
		took := time.Since(start)
		var ee *cmdutil.ExitError
		if !errors.As(err, &ee) || ee.Code != cmdutil.ExitDevice {
			t.Errorf("%s: %v, want a device error (exit 3)", c.faults, err)
		}
		matched := false
		for _, k := range c.kinds {
			matched = matched || errors.Is(err, k)
		}
		if !matched {
			t.Errorf("%s: %v is none of the kinds %v", c.faults, err, c.kinds)
		}
		if took > 30*time.Second {
			t.Errorf("%s: took %v, far past the 4s deadline", c.faults, took)
		}
	}
	// Slow firmware still answers.
	sc := filepath.Join(t.TempDir(), "slow.yaml")
	os.WriteFile(sc, []byte("devices:\n  - profile: cx7-2p400g\n    faults:\n      slow_icmd_polls: 5\n"), 0o644)
	if _, errs, code := cli(t, "", "--adb", "builtin", "reg", "get", "MGIR", "-d", "emu:"+sc); code != 0 {
		t.Errorf("slow firmware: exit %d %s", code, errs)
	}
}

func TestDeviceNameErrors(t *testing.T) {
	_, errs, code := cli(t, "", "reg", "get", "MGIR")
	if code != 2 || !strings.Contains(errs, "add -d DEV") {
		t.Errorf("no device: %d %s", code, errs)
	}
	_, errs, code = cli(t, "", "reg", "get", "MGIR", "-d", "emu:nosuchprofile")
	if code != 2 || !strings.Contains(errs, "cx7-2p400g") {
		t.Errorf("bad profile: %d %s", code, errs)
	}
	_, errs, code = cli(t, "", "reg", "get", "MGIR", "-d", "no_such_nic0")
	if code != 3 || !strings.Contains(errs, "cxray status") {
		t.Errorf("unknown name: %d %s", code, errs)
	}
}

func TestRegRaw(t *testing.T) {
	out, errs, code := cli(t, "", "--adb", "builtin", "reg", "get", "--id", "0x9020", "--len", "160", "-d", "emu", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	var g struct {
		Dwords []string `json:"dwords"`
	}
	mustJSON(t, out, &g)
	if len(g.Dwords) != 40 || g.Dwords[0] != "0x00001021" {
		t.Errorf("raw MGIR %v", g.Dwords)
	}
	out, errs, code = cli(t, "", "--adb", "builtin", "reg", "set", "--id", "0x5006", "--len", "16", "--data", "0x00010201,0x80000000,0,0", "-d", "emu", "--yes", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	var s struct {
		ReadBack []string `json:"read_back"`
	}
	mustJSON(t, out, &s)
	// admin down: the firmware reports oper_status down (2) in the low nibble.
	if len(s.ReadBack) != 4 || s.ReadBack[0] != "0x00010202" {
		t.Errorf("read back %v", s.ReadBack)
	}
	_, errs, code = cli(t, "", "reg", "set", "--id", "0x5006", "--len", "16", "--data", "0x1", "-d", "emu", "--yes")
	if code != 2 || !strings.Contains(errs, "--len says 16") {
		t.Errorf("short data: exit %d %s", code, errs)
	}
}

func TestRegUnits(t *testing.T) {
	out, errs, code := cli(t, "", "--adb", "builtin", "reg", "get", "MTMP", "--index", "sensor_index=0", "-d", "emu", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	var r struct {
		Fields struct {
			Temperature float64 `json:"temperature"`
		} `json:"fields"`
		Units map[string]struct {
			Value float64 `json:"value"`
			Unit  string  `json:"unit"`
		} `json:"units"`
	}
	mustJSON(t, out, &r)
	u := r.Units["temperature"]
	if u.Unit != "°C" || u.Value != r.Fields.Temperature*0.125 || u.Value < 20 || u.Value > 110 {
		t.Errorf("temperature %v raw %v", u, r.Fields.Temperature)
	}
	// --raw is the numbers only: no conversion in the table, no units in
	// JSON.
	out, _, code = cli(t, "", "--adb", "builtin", "reg", "get", "MTMP", "--index", "sensor_index=0", "-d", "emu", "--raw")
	if code != 0 || strings.Contains(out, "°C") || strings.Contains(out, " = ") {
		t.Errorf("--raw table: exit %d\n%s", code, out)
	}
	out, _, _ = cli(t, "", "--adb", "builtin", "reg", "get", "MTMP", "--index", "sensor_index=0", "-d", "emu", "--raw", "-o", "json")
	r.Units = nil
	mustJSON(t, out, &r)
	if len(r.Units) != 0 {
		t.Errorf("--raw JSON units: %v", r.Units)
	}
	// PPCNT: the time since clear in s, the BER coefficient joined with its
	// magnitude as link joins them.
	out, _, _ = cli(t, "", "--adb", "builtin", "reg", "get", "PPCNT", "--index", "grp=0x16", "-d", "emu")
	for _, re := range []string{`(?m)^counter_set\.phys_layer_stat_cntrs_ext\.time_since_last_clear +0x[0-9a-f]+ \([0-9]+\) = [0-9.]+ s$`,
		`(?m)^counter_set\.phys_layer_stat_cntrs_ext\.raw_ber_coef +.* = ([0-9]+E-[0-9]+ \(with raw_ber_magnitude\)|no errors|n/a)`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("PPCNT lacks %s:\n%s", re, out)
		}
	}
}

func TestStatusUnreadableDevice(t *testing.T) {
	sc := filepath.Join(t.TempDir(), "r.yaml")
	os.WriteFile(sc, []byte("devices:\n  - profile: cx7-2p400g\n    faults: {removed: true}\n"), 0o644)
	out, _, code := cli(t, "", "status", "-d", "emu:"+sc, "--timeout", "3s")
	if code != 3 || !strings.Contains(out, "removed") {
		t.Errorf("exit %d: %s", code, out)
	}
}

// Nested index fields can be named by their own name, as mstreg allows.
func TestIndexLeafName(t *testing.T) {
	out, errs, code := cli(t, "", "reg", "get", "PDDR", "-d", "emu", "--index", "page_select=1,group_opcode=1", "--field", "page_data.pddr_troubleshooting_page_ext.group_opcode")
	if code != 0 || !strings.Contains(out, "Advanced_debug_opcodes") {
		t.Errorf("exit %d %s %s", code, out, errs)
	}
}

// TestRegSetEnumAndOperationFields: a value outside an enum is refused
// before anything is written (--raw lets it through), and an operation
// bit the firmware clears is not claimed as verified.
func TestRegSetEnumAndOperationFields(t *testing.T) {
	privateState(t) // it writes to -d emu, which keeps what it is told
	_, errs, code := cli(t, "", "reg", "set", "PAOS", "admin_status=9", "-d", "emu", "--yes")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "not one of its values") || !strings.Contains(errs, "nothing was written") {
		t.Errorf("enum: exit %d %s", code, errs)
	}
	out, _, code := cli(t, "", "reg", "set", "PAOS", "admin_status=9", "-d", "emu", "--dry-run", "--raw")
	if code != cmdutil.ExitOK || !strings.Contains(out, "would send SET") {
		t.Errorf("--raw: exit %d %s", code, out)
	}
	out, errs, code = cli(t, "", "reg", "set", "PAOS", "admin_status=down_by_configuration", "ase=1", "-d", "emu", "--yes", "-o", "json")
	var r struct {
		Verified      bool     `json:"verified"`
		NotVerifiable []string `json:"not_verifiable"`
	}
	mustJSON(t, out, &r)
	if code != cmdutil.ExitOK || !r.Verified || len(r.NotVerifiable) != 1 || r.NotVerifiable[0] != "ase" {
		t.Errorf("operation field: exit %d %+v %s", code, r, errs)
	}
}

// cliErr runs the CLI in this process and returns the error the command
// ended with (nil: exit 0), for tests that match errors by kind.
func cliErr(t *testing.T, args ...string) error {
	t.Helper()
	var out, errb bytes.Buffer
	a := newApp(context.Background(), strings.NewReader(""), &out, &errb)
	root := rootCmd(a)
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	return root.Execute()
}

// status exits 3 whenever a device could not be read, wholly or part-way,
// and says so on standard error in both output modes (issue 26.9: with a
// slow firmware the identity was read and the ports were not, and status
// exited 0 with the error only in a table row). The firmware takes 700 ms
// a command in real time; status gives a device 5 s.
func TestStatusPartialReadExits3(t *testing.T) {
	sc := filepath.Join(t.TempDir(), "slow.yaml")
	os.WriteFile(sc, []byte("devices:\n  - profile: cx7-2p400g\n    faults:\n      slow_icmd: 700ms\n"), 0o644)
	for _, format := range []string{"table", "json"} {
		out, errs, code := cli(t, "", "--adb", "builtin", "status", "-d", "emu:"+sc, "--timeout", "60s", "-o", format)
		if code != 3 {
			t.Errorf("-o %s: exit %d, want 3\n%s%s", format, code, out, errs)
		}
		if !strings.HasPrefix(errs, "cxray: 0000:03:00.0: ") {
			t.Errorf("-o %s: standard error does not name the device that could not be read: %q", format, errs)
		}
	}
	// A part the backend cannot serve is no failed read.
	if _, errs, code := cli(t, "", "--adb", "builtin", "status", "-d", "emu"); code != 0 || errs != "" {
		t.Errorf("a healthy device: exit %d %s", code, errs)
	}
}

// PMAOS error_type means something only while the module is plugged with
// an error: on a healthy module it is marked not valid, in the table and
// in JSON (same exit code); on a module with an error it is named.
func TestRegGetNotValidField(t *testing.T) {
	out, errs, code := cli(t, "", "--adb", "builtin", "reg", "get", "PMAOS", "--index", "module=0", "-d", "emu")
	if code != 0 || !strings.Contains(out, "error_type                0 (not valid: oper_status is plugged_enabled (1); valid only when oper_status == module_plugged_with_error (3))") ||
		strings.Contains(out, "Power_Budget_Exceeded") {
		t.Errorf("table: exit %d %s\n%s", code, errs, out)
	}
	out, errs, code = cli(t, "", "--adb", "builtin", "reg", "get", "PMAOS", "--index", "module=0", "-d", "emu", "-o", "json")
	var r struct {
		Fields   map[string]any    `json:"fields"`
		NotValid map[string]string `json:"not_valid"`
	}
	mustJSON(t, out, &r)
	if code != 0 || r.Fields["error_type"] != float64(0) || !strings.Contains(r.NotValid["error_type"], "valid only when oper_status == module_plugged_with_error") {
		t.Errorf("json: exit %d %s: error_type %v, not_valid %v", code, errs, r.Fields["error_type"], r.NotValid)
	}
	// Module 1 of the second adapter of two-adapters is too hot.
	sc := "emu:" + filepath.Join("..", "examples", "two-adapters.yaml") + "@0000:04:00.1"
	out, errs, code = cli(t, "", "--adb", "builtin", "reg", "get", "PMAOS", "--index", "module=1", "-d", sc, "-o", "json")
	r.Fields, r.NotValid = nil, nil
	mustJSON(t, out, &r)
	if _, listed := r.NotValid["error_type"]; code != 0 || r.Fields["error_type"] != "High_Temperature" || listed {
		t.Errorf("a module with an error: exit %d %s: error_type %v, not_valid %v", code, errs, r.Fields["error_type"], r.NotValid)
	}
}

// A missing index field says what its values select: MTMP's sensor index
// (0 the ASIC, 64+N module N), and for PTYS the port's own protocol
// (Ethernet on an Ethernet port), never the enum's first name; both modes.
func TestRegGetIndexHints(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	for _, c := range []struct {
		reg  string
		want []string
		not  string
	}{
		{"MTMP", []string{"--index sensor_index=0", "0 is the ASIC, 64+N the module in cage N"}, "sensor_index=N"},
		{"PTYS", []string{"--index proto_mask=Ethernet", "one of InfiniBand, Ethernet"}, "proto_mask=InfiniBand"},
	} {
		for _, mode := range []string{"table", "json"} {
			_, errs, code := cli(t, "", "--adb", "builtin", "reg", "get", c.reg, "-d", "emu", "-o", mode)
			for _, w := range c.want {
				if code != 2 || !strings.Contains(errs, w) || strings.Contains(errs, c.not) {
					t.Errorf("%s (%s): exit %d %q; want %q, not %q", c.reg, mode, code, errs, w, c.not)
				}
			}
		}
	}
}

// --field of a GUID array reads in JSON as the table and the whole
// register's JSON show it: the joined GUID, not four dwords; one element
// stays a number.
func TestRegGetFieldGUID(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	var whole struct {
		Fields map[string]any `json:"fields"`
	}
	out, _, _ := cli(t, "", "--adb", "builtin", "reg", "get", "PGUID", "-d", "emu", "-o", "json")
	mustJSON(t, out, &whole)
	guid, _ := whole.Fields["node_guid"].(string)
	out, errs, code := cli(t, "", "--adb", "builtin", "reg", "get", "PGUID", "--field", "node_guid", "-d", "emu", "-o", "json")
	var got any
	mustJSON(t, out, &got)
	if code != 0 || guid == "" || got != guid {
		t.Errorf("--field node_guid -o json: exit %d, %v; the register's JSON has %q%s", code, got, guid, errs)
	}
	table, _, _ := cli(t, "", "--adb", "builtin", "reg", "get", "PGUID", "--field", "node_guid", "-d", "emu")
	if !strings.Contains(table, guid) {
		t.Errorf("table lacks %s:\n%s", guid, table)
	}
	out, _, _ = cli(t, "", "--adb", "builtin", "reg", "get", "PGUID", "--field", "node_guid[2]", "-d", "emu", "-o", "json")
	mustJSON(t, out, &got)
	if _, ok := got.(float64); !ok {
		t.Errorf("one element: %v", got)
	}
}

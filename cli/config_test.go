package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/emu/emuadapter"
	"github.com/cxray/cxray/feature/health"
	"github.com/cxray/cxray/nvconf"
)

// cfgcli runs the CLI with the built-in register database, returning
// standard output, standard error and the exit code.
func cfgcli(t testing.TB, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	a := newApp(context.Background(), strings.NewReader(stdin), &out, &errb)
	root := rootCmd(a)
	root.SetArgs(append([]string{"--adb", "builtin"}, args...))
	root.SetOut(&out)
	root.SetErr(&errb)
	err := root.Execute()
	if err == nil {
		return out.String(), errb.String(), cmdutil.ExitOK
	}
	var ee *cmdutil.ExitError
	if errors.As(err, &ee) && ee == cmdutil.ErrProblem {
		return out.String(), errb.String(), cmdutil.ExitProblem
	}
	fmt.Fprintf(&errb, "cxray: %v\n", err)
	if errors.As(err, &ee) {
		return out.String(), errb.String(), ee.Code
	}
	return out.String(), errb.String(), cmdutil.ExitUsage
}

// nvEnv gives the test a private emulator state (kept across its
// commands, as -d emu keeps it), sends backups to a temporary directory,
// and pins the built-in parameter set; state is the default profile's log.
func nvEnv(t *testing.T) (state, backups string) {
	t.Helper()
	dir := t.TempDir()
	state, backups = filepath.Join(dir, "emu", "profile-cx7-2p400g.log"), filepath.Join(dir, "backups")
	t.Setenv(emuadapter.EnvState, filepath.Join(dir, "emu"))
	t.Setenv(nvconf.EnvBackupDir, backups)
	t.Setenv(cmdutil.EnvNVDB, "builtin")
	return state, backups
}

type queryOut struct {
	Device     string `json:"device"`
	Parameters []struct {
		Name    string `json:"name"`
		TLV     string `json:"tlv"`
		Type    string `json:"type"`
		Next    *val   `json:"next"`
		Default *val   `json:"default"`
		Current *val   `json:"current"`
		Pending bool   `json:"pending"`
		Hidden  string `json:"hidden"`
	} `json:"parameters"`
	Pending []string `json:"pending"`
}

type val struct {
	Text string  `json:"text"`
	Raw  *uint64 `json:"raw"`
}

// query returns name -> [default, current, next] from query -e -o json.
func query(t *testing.T, args ...string) (map[string][3]string, queryOut) {
	t.Helper()
	out, errs, code := cfgcli(t, "", append([]string{"config", "query", "-d", "emu", "-e", "-o", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("query: exit %d: %s", code, errs)
	}
	var q queryOut
	mustJSON(t, out, &q)
	m := map[string][3]string{}
	for _, p := range q.Parameters {
		m[p.Name] = [3]string{p.Default.Text, p.Current.Text, p.Next.Text}
	}
	return m, q
}

func TestConfigQueryEmu(t *testing.T) {
	nvEnv(t)
	m, q := query(t)
	want := map[string][3]string{
		"SRIOV_EN":          {"False(0)", "True(1)", "True(1)"},
		"NUM_OF_VFS":        {"0", "8", "8"},
		"LINK_TYPE_P1":      {"ETH(2)", "ETH(2)", "ETH(2)"},
		"LINK_TYPE_P2":      {"ETH(2)", "ETH(2)", "ETH(2)"},
		"LOG_TX_PSN_WINDOW": {"9", "9", "9"},
		"NUM_OF_PF":         {"2", "2", "2"},
	}
	for n, w := range want {
		if m[n] != w {
			t.Errorf("%s = %v, want %v", n, m[n], w)
		}
	}
	if len(q.Parameters) < 100 || len(q.Pending) != 0 {
		t.Errorf("%d parameters, pending %v", len(q.Parameters), q.Pending)
	}
	for _, p := range q.Parameters {
		if p.Name == "LINK_TYPE_P1" && (p.Type != "ENUM" || p.TLV != "nv_vpi_link_type" || p.Next.Raw == nil || *p.Next.Raw != 2) {
			t.Errorf("LINK_TYPE_P1 %+v", p)
		}
	}
	// The table: values, marks, and the pending line.
	out, errs, code := cfgcli(t, "", "config", "query", "-d", "emu", "-e", "--filter", "^(SRIOV_EN|NUM_OF_VFS|LINK_TYPE_P1)$")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, w := range []string{"PARAMETER", "DEFAULT", "CURRENT", "NEXT BOOT", "SRIOV_EN", "False(0)", "True(1)", "Nothing pending"} {
		if !strings.Contains(out, w) {
			t.Errorf("table lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "LOG_TX_PSN_WINDOW") {
		t.Errorf("--filter let through other parameters:\n%s", out)
	}
	// By name: a per-port base name gives every port; a typo a suggestion.
	m, _ = query(t, "LINK_TYPE", "LOG_TX_PSN_WINDOW")
	if len(m) != 3 || m["LINK_TYPE_P2"][2] != "ETH(2)" {
		t.Errorf("by name: %v", m)
	}
	// Capability fields by their tlv.field name: the limits set checks.
	m, _ = query(t, "nv_global_pci_cap.max_vfs_per_pf")
	if m["nv_global_pci_cap.max_vfs_per_pf"][2] != "127" {
		t.Errorf("capability: %v", m)
	}
	// Each profile keeps its own values (and its own saved state).
	m, _ = query(t, "-d", "emu:cx6dx-2p100g", "NUM_OF_VFS", "LOG_TX_PSN_WINDOW")
	if m["NUM_OF_VFS"][2] != "4" || m["LOG_TX_PSN_WINDOW"][2] != "7" {
		t.Errorf("cx6dx: %v", m)
	}
	_, errs, code = cfgcli(t, "", "config", "query", "-d", "emu", "NUM_OF_VF")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "did you mean NUM_OF_VFS") {
		t.Errorf("typo: exit %d %s", code, errs)
	}
	// A parameter mstconfig hides is shown when asked for, with why.
	_, q = query(t, "--all", "--filter", "^VECTOR_CALC_DISABLE$")
	if len(q.Parameters) != 1 || !strings.Contains(q.Parameters[0].Hidden, "no dependency") {
		t.Errorf("--all: %+v", q.Parameters)
	}
	_, errs, code = cfgcli(t, "", "config", "query")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "no device given") {
		t.Errorf("no device: exit %d %s", code, errs)
	}
}

// The done-when flow: set changes Next Boot only, apply moves it to
// Current.
func TestConfigSetApply(t *testing.T) {
	_, backups := nvEnv(t)
	out, errs, code := cfgcli(t, "", "config", "set", "-d", "emu", "SRIOV_EN=False", "NUM_OF_VFS=16", "LINK_TYPE_P1=IB", "--yes")
	if code != 0 {
		t.Fatalf("set: exit %d: %s", code, errs)
	}
	for _, w := range []string{"NUM_OF_VFS", "16", "LINK_TYPE_P1", "IB(1)", "Backup:", "Written and verified", "next firmware reset", "cxray config apply -d emu"} {
		if !strings.Contains(out, w) {
			t.Errorf("set output lacks %q:\n%s", w, out)
		}
	}
	files, _ := filepath.Glob(filepath.Join(backups, "*.nvbackup"))
	if len(files) != 1 {
		t.Fatalf("backups %v", files)
	}
	b, _ := os.ReadFile(files[0])
	if !strings.Contains(string(b), "NUM_OF_VFS = 8") {
		t.Errorf("the backup does not hold the configuration before the set:\n%s", b)
	}
	m, q := query(t)
	if m["SRIOV_EN"] != [3]string{"False(0)", "True(1)", "False(0)"} || m["NUM_OF_VFS"] != [3]string{"0", "8", "16"} || m["LINK_TYPE_P1"] != [3]string{"ETH(2)", "ETH(2)", "IB(1)"} {
		t.Fatalf("after set: %v %v %v", m["SRIOV_EN"], m["NUM_OF_VFS"], m["LINK_TYPE_P1"])
	}
	if strings.Join(q.Pending, ",") != "NUM_OF_VFS,SRIOV_EN,LINK_TYPE_P1" {
		t.Errorf("pending %v", q.Pending)
	}
	out, _, _ = cfgcli(t, "", "config", "query", "-d", "emu")
	if !strings.Contains(out, "3 pending until the next firmware reset: NUM_OF_VFS 8 -> 16") {
		t.Errorf("the query does not say what is pending:\n%s", out)
	}
	// Setting the same value again writes nothing.
	out, _, code = cfgcli(t, "", "config", "set", "-d", "emu", "NUM_OF_VFS=16", "--yes")
	if code != 0 || !strings.Contains(out, "Nothing to write") {
		t.Errorf("same value: %d %s", code, out)
	}
	out, errs, code = cfgcli(t, "", "config", "apply", "-d", "emu", "--yes", "-o", "json")
	if code != 0 {
		t.Fatalf("apply: exit %d: %s", code, errs)
	}
	var ap struct {
		Trigger      string   `json:"trigger"`
		Applied      []string `json:"applied"`
		StillPending []string `json:"still_pending"`
	}
	mustJSON(t, out, &ap)
	if ap.Trigger != "pcie_link_toggle" || len(ap.Applied) != 3 || len(ap.StillPending) != 0 {
		t.Errorf("apply %+v", ap)
	}
	m, q = query(t)
	if m["NUM_OF_VFS"] != [3]string{"0", "16", "16"} || m["LINK_TYPE_P1"] != [3]string{"ETH(2)", "IB(1)", "IB(1)"} || len(q.Pending) != 0 {
		t.Errorf("after apply: %v %v %v", m["NUM_OF_VFS"], m["LINK_TYPE_P1"], q.Pending)
	}
	out, _, _ = cfgcli(t, "", "config", "apply", "-d", "emu", "--yes")
	if !strings.Contains(out, "Nothing pending") {
		t.Errorf("second apply: %s", out)
	}
	// --at-reboot arms the reset instead.
	cfgcli(t, "", "config", "set", "-d", "emu", "LOG_TX_PSN_WINDOW=12", "--yes")
	out, _, code = cfgcli(t, "", "config", "apply", "-d", "emu", "--yes", "--at-reboot")
	if code != 0 || !strings.Contains(out, "Armed") {
		t.Errorf("at reboot: %d %s", code, out)
	}
	if m, _ := query(t, "LOG_TX_PSN_WINDOW"); m["LOG_TX_PSN_WINDOW"] != [3]string{"9", "9", "12"} {
		t.Errorf("armed reset applied early: %v", m)
	}
	// The query after arming does not tell to apply as if nothing were
	// armed: with a database that cannot read MFRL reset_state (built-in,
	// Rev 0.57) it says the next reboot applies an armed reset.
	out, _, _ = cfgcli(t, "", "config", "query", "-d", "emu", "-e")
	if !strings.Contains(out, "if a reset is already armed ('config apply --at-reboot'), the next reboot applies them") {
		t.Errorf("query after --at-reboot:\n%s", out)
	}
}

// Invalid values are refused before any device write, naming the allowed
// values.
func TestConfigSetRefused(t *testing.T) {
	state, backups := nvEnv(t)
	query(t) // saves the initial state
	before, _ := os.ReadFile(state)
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"LINK_TYPE_P1=FOO"}, []string{"LINK_TYPE_P1=FOO", "unknown value", "allowed: IB(1), ETH(2)"}},
		{[]string{"NUM_OF_VFS=500"}, []string{"above the maximum 127", "max_vfs_per_pf", "allowed: 0..127"}},
		{[]string{"SRIOV_EN=perhaps"}, []string{"SRIOV_EN is a boolean", "allowed: True(1), False(0)"}},
		{[]string{"NUM_OF_VFS=eight"}, []string{"is a number", "allowed: 0..65535"}},
		{[]string{"LOG_TX_PSN_WINDOW=64"}, []string{"0..63"}},
		{[]string{"LINK_TYPE=ETH"}, []string{"set per port", "LINK_TYPE_P1"}},
		{[]string{"NUM_OF_VFS=4", "LINK_TYPE_P2=FC"}, []string{"LINK_TYPE_P2=FC", "nothing was written"}},
		{[]string{"NUM_OF_VFS"}, []string{"is not NAME=VALUE"}},
	}
	for _, c := range cases {
		_, errs, code := cfgcli(t, "", append([]string{"config", "set", "-d", "emu", "--yes"}, c.args...)...)
		if code != cmdutil.ExitUsage {
			t.Errorf("%v: exit %d: %s", c.args, code, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: %q missing from: %s", c.args, w, errs)
			}
		}
	}
	after, _ := os.ReadFile(state)
	if !bytes.Equal(before, after) {
		t.Errorf("a refused set changed the NV state:\n%s\n%s", before, after)
	}
	if files, _ := filepath.Glob(filepath.Join(backups, "*")); len(files) != 0 {
		t.Errorf("a refused set wrote a backup: %v", files)
	}
	// Without a terminal and without --yes nothing is written either.
	_, errs, code := cfgcli(t, "", "config", "set", "-d", "emu", "NUM_OF_VFS=4")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "--yes") {
		t.Errorf("unconfirmed: exit %d %s", code, errs)
	}
	// A dry run validates and shows the bytes, writes nothing.
	out, errs, code := cfgcli(t, "", "config", "set", "-d", "emu", "NUM_OF_VFS=4", "--dry-run")
	if code != 0 || !strings.Contains(out, "Dry run") || !strings.Contains(out, "nv_global_pci_conf  0x000a000c 0x00000080 0x00000000") {
		t.Errorf("dry run: exit %d %s %s", code, out, errs)
	}
	after, _ = os.ReadFile(state)
	if !bytes.Equal(before, after) {
		t.Error("a dry run changed the NV state")
	}
}

// dataLines keeps the tlv and data lines of a cxray backup (the comments
// carry the time), TLV by TLV in type order: the firmware walks its NV area
// in write order, and a restore rewrites only what differs.
func dataLines(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "tlv "):
			blocks = append(blocks, l)
		case strings.HasPrefix(l, "data ") && len(blocks) > 0:
			blocks[len(blocks)-1] += "\n" + l
		}
	}
	sort.Strings(blocks)
	return strings.Join(blocks, "\n")
}

// backup, change, restore: the stored configuration is back exactly, in
// both file formats.
func TestConfigBackupRestore(t *testing.T) {
	nvEnv(t)
	dir := t.TempDir()
	a, araw := filepath.Join(dir, "a.nvbackup"), filepath.Join(dir, "a.raw")
	cfgcli(t, "", "config", "set", "-d", "emu", "LINK_TYPE_P2=IB", "KEEP_ETH_LINK_UP_P1=False", "--yes")
	for _, args := range [][]string{
		{"config", "backup", "-d", "emu", a},
		{"config", "backup", "-d", "emu", "--format", "raw", araw},
	} {
		if out, errs, code := cfgcli(t, "", args...); code != 0 || !strings.Contains(out, "Saved 3 TLV(s)") {
			t.Fatalf("%v: exit %d %s %s", args, code, out, errs)
		}
	}
	raw, _ := os.ReadFile(araw)
	if !strings.HasPrefix(string(raw), "MLNX_RAW_TLV_FILE\n% cxray raw TLV file: ") || !strings.Contains(string(raw), "\n% TLV Type: 0x00000080, Writer ID: ICMD_mlxconfig(0x09)") {
		t.Errorf("raw backup:\n%s", raw)
	}
	for _, format := range []string{a, araw} {
		// Change things: a TLV differs, one more is stored, one is gone.
		cfgcli(t, "", "config", "set", "-d", "emu", "NUM_OF_VFS=64", "LOG_TX_PSN_WINDOW=5", "--yes")
		cfgcli(t, "", "config", "reset", "-d", "emu", "LINK_TYPE_P2", "--yes")
		out, _, code := cfgcli(t, "", "config", "diff", a, "emu")
		if code != cmdutil.ExitProblem || !strings.Contains(out, "NUM_OF_VFS: 8 -> 64") || !strings.Contains(out, "only in "+a+": nv_vpi_link_type (port 2)") {
			t.Errorf("diff before restore: exit %d\n%s", code, out)
		}
		// By default a TLV the file does not hold is kept, and said so.
		out, errs, code := cfgcli(t, "", "config", "restore", "-d", "emu", format, "--yes")
		if code != 0 || !strings.Contains(out, "Restored and verified") || !strings.Contains(out, "keep   nv_sw_offload_conf") || strings.Contains(out, "reset  ") {
			t.Fatalf("restore %s: exit %d\n%s%s", format, code, out, errs)
		}
		if out, _, code := cfgcli(t, "", "config", "diff", a, "emu"); code != cmdutil.ExitProblem || !strings.Contains(out, "only in emu: nv_sw_offload_conf") {
			t.Errorf("after a restore that keeps: exit %d\n%s", code, out)
		}
		// --reset-missing resets it too, listed first.
		out, errs, code = cfgcli(t, "", "config", "restore", "-d", "emu", format, "--yes", "--reset-missing", "--accept-unchecked")
		if code != 0 || !strings.Contains(out, "Restored and verified") || !strings.HasPrefix(out, "reset  nv_sw_offload_conf") {
			t.Fatalf("restore --reset-missing %s: exit %d\n%s%s", format, code, out, errs)
		}
		b := filepath.Join(dir, "b.nvbackup")
		cfgcli(t, "", "config", "backup", "-d", "emu", b)
		if dataLines(t, a) != dataLines(t, b) {
			t.Errorf("after restoring %s:\n%s\nwant\n%s", format, dataLines(t, b), dataLines(t, a))
		}
		for _, pair := range [][2]string{{a, b}, {araw, "emu"}, {a, araw}} {
			if out, errs, code := cfgcli(t, "", "config", "diff", pair[0], pair[1]); code != 0 || !strings.Contains(out, "Same NV configuration (3 TLV(s))") {
				t.Errorf("diff %v: exit %d %s %s", pair, code, out, errs)
			}
		}
	}
	// Restoring what is there writes nothing.
	out, _, code := cfgcli(t, "", "config", "restore", "-d", "emu", a, "--yes")
	if code != 0 || !strings.Contains(out, "Nothing to do") {
		t.Errorf("idempotent restore: %d %s", code, out)
	}
	// A file naming a TLV the database lacks is refused before writing.
	bad := filepath.Join(dir, "bad.nvbackup")
	os.WriteFile(bad, []byte("CXRAY_NV_BACKUP 1\ntlv 0x00ffffff\ndata 0x0\n"), 0o644)
	if _, errs, code := cfgcli(t, "", "config", "restore", "-d", "emu", bad, "--yes"); code != cmdutil.ExitUsage || !strings.Contains(errs, "not in the parameter database") {
		t.Errorf("unknown TLV: exit %d %s", code, errs)
	}
}

func TestConfigReset(t *testing.T) {
	nvEnv(t)
	cfgcli(t, "", "config", "set", "-d", "emu", "LINK_TYPE_P1=IB", "LINK_TYPE_P2=IB", "--yes")
	out, errs, code := cfgcli(t, "", "config", "reset", "-d", "emu", "LINK_TYPE_P1", "--yes")
	if code != 0 || !strings.Contains(out, "LINK_TYPE_P1  IB(1)      ETH(2)") {
		t.Fatalf("reset: exit %d\n%s%s", code, out, errs)
	}
	if m, _ := query(t, "LINK_TYPE"); m["LINK_TYPE_P1"][2] != "ETH(2)" || m["LINK_TYPE_P2"][2] != "IB(1)" {
		t.Errorf("after reset of port 1: %v", m)
	}
	out, _, code = cfgcli(t, "", "config", "reset", "-d", "emu", "--all", "--yes")
	if code != 0 || !strings.Contains(out, "the whole NV configuration") {
		t.Fatalf("reset --all: %d %s", code, out)
	}
	m, _ := query(t, "SRIOV_EN", "LINK_TYPE_P2")
	if m["SRIOV_EN"] != [3]string{"False(0)", "True(1)", "False(0)"} || m["LINK_TYPE_P2"][2] != "ETH(2)" {
		t.Errorf("after reset --all: %v", m)
	}
	out, _, _ = cfgcli(t, "", "config", "backup", "-d", "emu", "-")
	if !strings.Contains(out, "# 0 TLV(s)") {
		t.Errorf("the NV area is not empty after reset --all:\n%s", out)
	}
	if _, errs, code := cfgcli(t, "", "config", "reset", "-d", "emu", "--yes"); code != cmdutil.ExitUsage || !strings.Contains(errs, "--all") {
		t.Errorf("reset without names: %d %s", code, errs)
	}
}

func TestConfigShowParams(t *testing.T) {
	out, errs, code := cfgcli(t, "", "config", "show-params", "--nvdb", "builtin", "--filter", "PSN|^LINK_TYPE", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	var sp struct {
		Parameters []struct {
			Name      string            `json:"name"`
			TLV       string            `json:"tlv"`
			Type      string            `json:"type"`
			Allowed   string            `json:"allowed"`
			Max       string            `json:"max"`
			TypeDword string            `json:"type_dword"`
			Values    map[string]uint64 `json:"values"`
		} `json:"parameters"`
	}
	mustJSON(t, out, &sp)
	got := map[string]string{}
	for _, p := range sp.Parameters {
		got[p.Name] = p.TLV + " " + p.Type + " " + p.Allowed + " " + p.Max + " " + p.TypeDword
	}
	if got["LOG_TX_PSN_WINDOW"] != "nv_sw_offload_conf UNSIGNED 0..63 63 0x0000010a" || got["LINK_TYPE_P<n>"] != "nv_vpi_link_type ENUM IB(1), ETH(2)  0x01010012" {
		t.Errorf("%v", got)
	}
	out, _, _ = cfgcli(t, "", "config", "show-params", "--nvdb", "builtin", "--filter", "^NUM_OF_VFS$")
	if !strings.Contains(out, "max $nv_global_pci_cap.max_vfs_per_pf_valid==1") || !strings.Contains(out, "no descriptions in the built-in set") {
		t.Errorf("%s", out)
	}
	if _, err := os.Stat("/usr/share/mstflint/mlxconfig_dbs/mlxconfig_host.db"); err == nil {
		out, _, _ = cfgcli(t, "", "config", "show-params", "--nvdb", "/usr/share/mstflint/mlxconfig_dbs/mlxconfig_host.db", "--filter", "^SRIOV_EN$")
		if !strings.Contains(out, "Single-Root I/O Virtualization") {
			t.Errorf("no description from the installed database:\n%s", out)
		}
	}
	if _, errs, code := cfgcli(t, "", "config", "show-params", "--nvdb", "/nonexistent.db"); code != cmdutil.ExitUsage || !strings.Contains(errs, "--nvdb") {
		t.Errorf("bad --nvdb: %d %s", code, errs)
	}
}

// mlxconfig's command line: short commands, -y and -e before the command,
// and the header its users read first.
func TestConfigSpeaksMlxconfig(t *testing.T) {
	nvEnv(t)
	out, errs, code := cli(t, "", "config", "-d", "emu", "-e", "q", "NUM_OF_VFS")
	if code != 0 || !strings.Contains(out, "DEFAULT") {
		t.Fatalf("config -d emu -e q: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"Device type:  ConnectX7\n", "Name:         EMU-CX7-2P400G\n", "Description:  Emulated NVIDIA ConnectX-7", "Device:       emu (0000:03:00.0)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("header lacks %q:\n%s", want, out)
		}
	}
	if _, errs, code := cli(t, "", "config", "-d", "emu", "-y", "s", "NUM_OF_VFS=4"); code != 0 {
		t.Fatalf("config -d emu -y s: exit %d %s", code, errs)
	}
	out, _, _ = cli(t, "", "config", "q", "-d", "emu", "NUM_OF_VFS", "-o", "json")
	if !strings.Contains(out, `"text": "4"`) {
		t.Errorf("after s: %s", out)
	}
	if out, _, code := cli(t, "", "config", "i", "--filter", "^SRIOV_EN$"); code != 0 || !strings.Contains(out, "SRIOV_EN") {
		t.Errorf("config i: exit %d %s", code, out)
	}
	if _, errs, code := cli(t, "", "config", "-d", "emu", "-y", "r", "--all"); code != 0 {
		t.Errorf("config -y r --all: exit %d %s", code, errs)
	}
}

// Query outputs captured from mstconfig on the emulator (nvconf/testdata)
// read as configurations: shown with --from, compared by parameter.
func TestConfigFromMlxconfigOutputs(t *testing.T) {
	nvEnv(t)
	q, qp := "../nvconf/testdata/mstconfig-e-q.txt", "../nvconf/testdata/mstconfig-e-q-pending.txt"
	out, errs, code := cli(t, "", "config", "query", "--from", qp, "-o", "json")
	if code != 0 {
		t.Fatalf("query --from: exit %d %s", code, errs)
	}
	var doc struct {
		Kind       string
		Parameters []struct {
			Name                   string
			Default, Current, Next struct{ Text string }
		}
	}
	mustJSON(t, out, &doc)
	found := false
	for _, p := range doc.Parameters {
		if p.Name == "NUM_OF_VFS" {
			found = true
			if p.Default.Text != "0" || p.Current.Text != "8" || p.Next.Text != "6" {
				t.Errorf("NUM_OF_VFS: %+v", p)
			}
		}
	}
	if doc.Kind != "query" || !found {
		t.Errorf("query --from: kind %q, NUM_OF_VFS found %v", doc.Kind, found)
	}
	// The pending marks and line, as a device query shows them.
	var pend struct{ Pending []string }
	mustJSON(t, out, &pend)
	if d := cmp.Diff([]string{"NUM_OF_VFS", "LOG_TX_PSN_WINDOW", "LINK_TYPE_P2"}, pend.Pending); d != "" {
		t.Errorf("query --from -o json: pending (-want +got):\n%s", d)
	}
	out, errs, code = cli(t, "", "config", "query", "--from", qp)
	for _, want := range []string{"\n*+  NUM_OF_VFS ", "\n*+  LINK_TYPE_P2 ", "\n* 3 pending until the next firmware reset: NUM_OF_VFS 8 -> 6, LOG_TX_PSN_WINDOW 9 -> 14, LINK_TYPE_P2 ETH(2) -> IB(1).\n",
		"'cxray config apply -d 0000:03:00.0'"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("query --from table: exit %d, lacks %q\n%s%s", code, want, out, errs)
		}
	}
	if out, _, _ := cli(t, "", "config", "query", "--from", q); !strings.Contains(out, "Nothing pending") || strings.Contains(out, "\n*") {
		t.Errorf("query --from a capture with nothing pending:\n%s", out)
	}
	if out, _, _ := cli(t, "", "config", "query", "--from", "../nvconf/testdata/mstconfig-q.txt"); !strings.Contains(out, "what is pending cannot be told") {
		t.Errorf("query --from a capture without -e:\n%s", out)
	}
	out, _, code = cli(t, "", "config", "diff", q, qp, "-o", "json")
	var diff struct {
		By      string
		Changes []nvconf.SettingChange
	}
	mustJSON(t, out, &diff)
	want := []nvconf.SettingChange{
		{Name: "LINK_TYPE_P2", Column: "Next Boot", Old: "ETH(2)", New: "IB(1)"},
		{Name: "LOG_TX_PSN_WINDOW", Column: "Next Boot", Old: "9", New: "14"},
		{Name: "NUM_OF_VFS", Column: "Next Boot", Old: "8", New: "6"},
	}
	var got []nvconf.SettingChange
	for _, c := range diff.Changes {
		c.TLV = ""
		got = append(got, c)
	}
	if d := cmp.Diff(want, got); d != "" || code != 1 || diff.By != "parameter" {
		t.Errorf("diff of the captures: exit %d by %q (-want +got):\n%s", code, diff.By, d)
	}
	// The capture was taken on the default emulator: the same values,
	// whether the capture is a file or comes on standard input.
	out, errs, code = cli(t, "", "config", "diff", "../nvconf/testdata/mstconfig-q.txt", "emu")
	if code != 0 || !strings.Contains(out, "hold the same values") {
		t.Errorf("diff capture vs emu: exit %d %s %s", code, out, errs)
	}
	capture, err := os.ReadFile("../nvconf/testdata/mstconfig-q.txt")
	if err != nil {
		t.Fatal(err)
	}
	out, errs, code = cli(t, string(capture), "config", "diff", "-", "emu")
	if code != 0 || !strings.Contains(out, "hold the same values") {
		t.Errorf("diff capture on stdin vs emu: exit %d %s %s", code, out, errs)
	}
	if _, errs, code = cli(t, string(capture), "config", "diff", "-", "-"); code != 2 || !strings.Contains(errs, "not both") {
		t.Errorf("diff - -: exit %d %s", code, errs)
	}
	_, errs, code = cli(t, "", "config", "query", "--from", "config_test.go")
	if code != 2 || !strings.Contains(errs, "query output") {
		t.Errorf("query --from a Go file: exit %d %s", code, errs)
	}
	_, errs, code = cli(t, "", "config", "restore", q, "-d", "emu", "--yes")
	if code != 2 || !strings.Contains(errs, "not a backup") {
		t.Errorf("restore of a query output: exit %d %s", code, errs)
	}
}

// A settings diff of an 8-parameter fragment with a device compares what
// both hold, names the rest in a footer, and tells a 0 from a parameter
// one side lacks (table and JSON, same exit code).
func TestConfigDiffFragmentAgainstDevice(t *testing.T) {
	nvEnv(t)
	capture, err := os.ReadFile("../nvconf/testdata/mstconfig-q.txt")
	if err != nil {
		t.Fatal(err)
	}
	// The capture's header and table head, then 8 parameters: one changed
	// from the device's 0, one set to 0 where the device has 11.
	lines := strings.SplitAfter(string(capture), "\n")
	var frag strings.Builder
	kept := 0
	for _, l := range lines {
		f := strings.Fields(l)
		switch {
		case len(f) != 2 || strings.HasSuffix(f[0], ":"):
			frag.WriteString(l)
		case kept < 6 && f[0] != "NUM_VF_MSIX":
			frag.WriteString(l)
			kept++
		}
	}
	frag.WriteString("         RPG_TIME_RESET_P1                   5\n         NUM_VF_MSIX                         0\n")
	file := filepath.Join(t.TempDir(), "fragment.txt")
	if err := os.WriteFile(file, []byte(frag.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := cli(t, "", "config", "diff", file, "emu", "-o", "json")
	var doc struct {
		Same    bool
		Changes []nvconf.SettingChange
		OnlyInA []string `json:"only_in_a"`
		OnlyInB []string `json:"only_in_b"`
	}
	mustJSON(t, out, &doc)
	want := []nvconf.SettingChange{
		{Name: "NUM_VF_MSIX", Column: "Next Boot", Old: "0", New: "11"},
		{Name: "RPG_TIME_RESET_P1", Column: "Next Boot", Old: "5", New: "0"},
	}
	for i := range doc.Changes {
		doc.Changes[i].TLV = ""
	}
	if d := cmp.Diff(want, doc.Changes); d != "" || code != 1 || doc.Same {
		t.Errorf("json: exit %d same %v (-want +got):\n%s%s", code, doc.Same, d, errs)
	}
	if len(doc.OnlyInA) != 0 || len(doc.OnlyInB) < 90 {
		t.Errorf("only in a %v, only in b %d parameters", doc.OnlyInA, len(doc.OnlyInB))
	}
	out, errs, code = cli(t, "", "config", "diff", file, "emu")
	rows := map[string][]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 5 {
			rows[f[0]] = f[3:]
		}
	}
	wantRows := map[string][]string{"NUM_VF_MSIX": {"0", "11"}, "RPG_TIME_RESET_P1": {"5", "0"}}
	if d := cmp.Diff(wantRows, rows); d != "" || code != 1 || !strings.Contains(out, "only in emu: ") {
		t.Errorf("table: exit %d (-want +got):\n%s\n%s%s", code, d, out, errs)
	}
	// --all lists the parameters the fragment lacks, "-" on its side.
	out, _, code = cli(t, "", "config", "diff", file, "emu", "--all")
	if code != 1 || !regexp.MustCompile(`(?m)^LINK_TYPE_P1 +Next Boot +- +ETH\(2\)`).MatchString(out) || strings.Contains(out, "only in emu: ") {
		t.Errorf("--all: exit %d\n%s", code, out)
	}
}

// A backup in mstflint's format proves nothing about its length: cut at a
// line, it must not drive --reset-missing, and the device keeps its TLVs.
func TestRestoreRefusesUncheckedResetMissing(t *testing.T) {
	nvEnv(t)
	b, err := os.ReadFile("../nvconf/testdata/mstconfig-backup-pending.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	cut := filepath.Join(t.TempDir(), "cut.txt")
	if err := os.WriteFile(cut, []byte(strings.Join(lines[:len(lines)/2], "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _, _ := cli(t, "", "config", "query", "-d", "emu", "-o", "json")
	_, errs, code := cli(t, "", "config", "restore", cut, "-d", "emu", "--reset-missing", "--yes")
	if code != 2 || !strings.Contains(errs, "no count or checksum") {
		t.Errorf("restore --reset-missing of an unchecked file: exit %d %s", code, errs)
	}
	after, _, _ := cli(t, "", "config", "query", "-d", "emu", "-o", "json")
	if before != after {
		t.Error("the refused restore changed the device")
	}
}

// A raw backup cxray wrote, cut anywhere, is refused by every command that
// reads it (exit 2, nothing written): restore, diff and query --from. The reviewer's cuts (the last 4 bytes; inside the first
// TLV) restore for real; every other offset through --dry-run and diff.
func TestRestoreRefusesCutRawBackup(t *testing.T) {
	state, _ := nvEnv(t)
	dir := t.TempDir()
	raw, full := filepath.Join(dir, "raw.txt"), filepath.Join(dir, "full.nvbackup")
	cfgcli(t, "", "config", "set", "-d", "emu", "LINK_TYPE_P2=IB", "LOG_TX_PSN_WINDOW=10", "--yes")
	if out, errs, code := cfgcli(t, "", "config", "backup", "-d", "emu", "--format", "raw", raw); code != 0 {
		t.Fatalf("backup: exit %d %s %s", code, out, errs)
	}
	cfgcli(t, "", "config", "backup", "-d", "emu", full)
	if _, errs, code := cfgcli(t, "", "config", "set", "-d", "emu", "NUM_OF_VFS=4", "LOG_TX_PSN_WINDOW=5", "--yes"); code != 0 {
		t.Fatalf("set: %s", errs)
	}
	text, _ := os.ReadFile(raw)
	firstTLV := strings.Index(string(text), "\n0x") + 30
	cut := filepath.Join(dir, "cut")
	for _, n := range []int{len(text) - 4, firstTLV} {
		os.WriteFile(cut, text[:n], 0o644)
		before, _ := os.ReadFile(state)
		out, errs, code := cfgcli(t, "", "config", "restore", "-d", "emu", cut, "--yes")
		if code != cmdutil.ExitUsage || !strings.Contains(errs, "nothing was written") || strings.Contains(out, "Restored") {
			t.Errorf("restore of the raw backup cut at %d: exit %d\n%s%s", n, code, out, errs)
		}
		if after, _ := os.ReadFile(state); !bytes.Equal(before, after) {
			t.Errorf("the refused restore of a cut at %d changed the NV state", n)
		}
	}
	// cxray's raw file ends with a count and checksum (a comment mstconfig
	// skips): no cut of it reads as a smaller backup.
	if !strings.Contains(string(text), "\n% end tlvs=3 sha256=") {
		t.Fatalf("the raw backup has no end line:\n%s", text)
	}
	before, _ := os.ReadFile(state)
	for n := 1; n < len(text); n++ {
		os.WriteFile(cut, text[:n], 0o644)
		for _, args := range [][]string{
			{"config", "restore", "-d", "emu", cut, "--dry-run"},
			{"config", "diff", full, cut},
			{"config", "query", "--from", cut},
		} {
			out, errs, code := cfgcli(t, "", args...)
			switch {
			case code != cmdutil.ExitUsage:
				t.Errorf("%v, cut at %d of %d: exit %d, want 2\n%s%s", args[:2], n, len(text), code, out, errs)
			case !strings.Contains(errs, "cut") && !strings.Contains(errs, "damaged"):
				t.Errorf("%v, cut at %d: the error does not say the file was cut or damaged: %s", args[:2], n, errs)
			}
		}
	}
	if after, _ := os.ReadFile(state); !bytes.Equal(before, after) {
		t.Error("dry runs of cut files changed the NV state")
	}
}

// A set the firmware refuses changes nothing; read back, it leaves no
// journal entry, so the next write of another TLV goes ahead. An entry
// left by a write that changed nothing (killed after the journal, or
// written by an older cxray for a refused set) is resolved by --rollback
// without a write; a --finish the firmware refuses again keeps it, and
// says which file blocks writes and when removing it is safe.
func TestConfigSetRefusedByFirmwareLeavesNoJournal(t *testing.T) {
	nvEnv(t)
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	journal := filepath.Join(dir, "cxray", "journal", "*.json")
	scen := filepath.Join(dir, "rej.yaml")
	os.WriteFile(scen, []byte("devices: [{profile: cx7-2p400g, nv: {reject_writes: [nv_global_pci_conf]}}]\n"), 0o644)
	d := "emu:" + scen
	stored := func() string {
		t.Helper()
		out, errs, code := cfgcli(t, "", "config", "backup", "-d", d, "-")
		if code != 0 {
			t.Fatalf("backup: exit %d %s", code, errs)
		}
		var keep []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "tlv ") || strings.HasPrefix(l, "data ") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	pending := func() []string { m, _ := filepath.Glob(journal); return m }
	before := stored()
	_, errs, code := cfgcli(t, "", "config", "set", "-d", d, "NUM_OF_VFS=6", "--yes")
	if code != cmdutil.ExitDevice || !strings.Contains(errs, "nothing was changed") || !strings.Contains(errs, "nothing to recover") {
		t.Errorf("refused set: exit %d %s", code, errs)
	}
	if p := pending(); len(p) != 0 {
		t.Errorf("a refused set that changed nothing left a journal entry: %v", p)
	}
	if got := stored(); got != before {
		t.Errorf("the refused set changed the device:\n%s\nwant\n%s", got, before)
	}
	out, errs, code := cfgcli(t, "", "config", "set", "-d", d, "LOG_TX_PSN_WINDOW=5", "--yes")
	if code != 0 || strings.Contains(out+errs, "interrupted") {
		t.Errorf("set of another TLV after the refused one: exit %d %s%s", code, out, errs)
	}

	// An entry for a write that changed nothing.
	bin := crashBin(t)
	set := []string{"--adb", "builtin", "config", "set", "-d", d, "NUM_OF_VFS=6", "--yes"}
	crashRun(t, bin, "journal", set...)
	if len(pending()) != 1 {
		t.Fatalf("no journal entry after a kill past the journal: %v", pending())
	}
	before = stored()
	if _, errs, code := cfgcli(t, "", "config", "set", "-d", d, "LOG_TX_PSN_WINDOW=7", "--yes"); code != cmdutil.ExitDevice || !strings.Contains(errs, "interrupted") {
		t.Errorf("a set with an entry pending: exit %d %s", code, errs)
	}
	// --finish writes NUM_OF_VFS=6 again: refused again, the entry stays.
	_, errs, code = cfgcli(t, "", "config", "recover", "-d", d, "--finish", "--yes")
	p := pending()
	if code != cmdutil.ExitDevice || len(p) != 1 || !strings.Contains(errs, p[0]) || !strings.Contains(errs, "remove it by hand only once 'cxray config query -d "+d+"' shows the configuration you want") {
		t.Errorf("refused --finish: exit %d, pending %v: %s", code, p, errs)
	}
	out, errs, code = cfgcli(t, "", "config", "recover", "-d", d, "--rollback", "--yes")
	if code != 0 || !strings.Contains(out, "already holds what the roll back leaves, so nothing was written") {
		t.Errorf("rollback with the backup already stored: exit %d %s%s", code, out, errs)
	}
	if p := pending(); len(p) != 0 {
		t.Errorf("the rollback left the journal entry: %v", p)
	}
	if got := stored(); got != before {
		t.Errorf("the no-op rollback changed the device:\n%s\nwant\n%s", got, before)
	}
	if out, errs, code := cfgcli(t, "", "config", "set", "-d", d, "LOG_TX_PSN_WINDOW=7", "--yes"); code != 0 {
		t.Errorf("set after the rollback: exit %d %s%s", code, out, errs)
	}
}

// A held NV lock is reported as what it is, whoever holds it: which lock,
// how long cxray waited, that another process holds it; exit 3, nothing
// written, and no device error on the spent deadline (issue 26.5).
func TestConfigSetLockHeld(t *testing.T) {
	state, _ := nvEnv(t)
	key := nvconf.KeyFor("emulator", "emu", "0000:03:00.0")
	unlock, err := nvconf.Lock(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	path, _ := nvconf.LockPath(key)
	_, errs, code := cfgcli(t, "", "config", "set", "-d", "emu", "NUM_OF_VFS=4", "--yes", "--timeout", "300ms")
	if code != cmdutil.ExitDevice {
		t.Errorf("exit %d, want 3; stderr:\n%s", code, errs)
	}
	for _, want := range []string{"another process holds the NV lock of " + key, path, "waited "} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr does not say %q:\n%s", want, errs)
		}
	}
	if strings.Contains(errs, "deadline exceeded") && !strings.Contains(errs, "NV lock") {
		t.Errorf("the held lock was reported as a slow device:\n%s", errs)
	}
	unlock()
	if b, _ := os.ReadFile(state); bytes.Contains(b, []byte("NUM_OF_VFS")) {
		t.Error("the state records a write made without the lock")
	}
	if cur, _ := query(t, "NUM_OF_VFS"); cur["NUM_OF_VFS"][2] != "8" {
		t.Errorf("NUM_OF_VFS next boot %q, want the profile's 8: written without the lock", cur["NUM_OF_VFS"][2])
	}
}

// A backup of another model or PSID is refused (exit 2, nothing written),
// in --dry-run as in the real run, unless --force (issue 26.7); a backup
// of the same adapter, and one that names none (mstflint's format), go
// ahead, the second with a note.
func TestConfigRestoreOtherAdapter(t *testing.T) {
	nvEnv(t)
	dir := t.TempDir()
	dx, dxraw, own := filepath.Join(dir, "dx.nvbackup"), filepath.Join(dir, "dx.raw"), filepath.Join(dir, "own.nvbackup")
	cfgcli(t, "", "config", "set", "-d", "emu:cx6dx-2p100g", "NUM_OF_VFS=2", "--yes")
	for _, args := range [][]string{
		{"config", "backup", "-d", "emu:cx6dx-2p100g", dx},
		{"config", "backup", "-d", "emu:cx6dx-2p100g", "--format", "raw", dxraw},
		{"config", "backup", "-d", "emu", own},
	} {
		if out, errs, code := cfgcli(t, "", args...); code != 0 {
			t.Fatalf("%v: exit %d %s %s", args, code, out, errs)
		}
	}
	b, _ := os.ReadFile(dx)
	if !strings.Contains(string(b), "\n# model: ConnectX-6 Dx\n") || !strings.Contains(string(b), "\n# psid: ") {
		t.Fatalf("the backup does not name its adapter:\n%s", b)
	}
	state := func() string {
		q, _ := query(t, "NUM_OF_VFS")
		return q["NUM_OF_VFS"][2]
	}
	before := state()
	for _, mode := range [][]string{{"--dry-run"}, {"--yes"}} {
		for _, format := range []string{"table", "json"} {
			args := append([]string{"config", "restore", "-d", "emu", dx, "-o", format}, mode...)
			out, errs, code := cfgcli(t, "", args...)
			if code != cmdutil.ExitUsage {
				t.Errorf("%v: exit %d, want 2\n%s%s", args, code, out, errs)
			}
			for _, want := range []string{"was taken from another adapter", "model ConnectX-6 Dx, this adapter is a ConnectX-7", "PSID ", "--force", "nothing was written"} {
				if !strings.Contains(errs, want) {
					t.Errorf("%v: stderr does not say %q:\n%s", args, want, errs)
				}
			}
		}
	}
	if after := state(); after != before {
		t.Errorf("a refused restore changed NUM_OF_VFS: %s -> %s", before, after)
	}
	out, errs, code := cfgcli(t, "", "config", "restore", "-d", "emu", dx, "--dry-run", "--force")
	if code != 0 || !strings.Contains(errs, "restoring it anyway (--force)") || !strings.Contains(out, "Dry run") {
		t.Errorf("--force --dry-run: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = cfgcli(t, "", "config", "restore", "-d", "emu", dxraw, "--dry-run")
	if code != 0 || !strings.Contains(errs, "does not say which adapter it was taken from") {
		t.Errorf("a raw file: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = cfgcli(t, "", "config", "restore", "-d", "emu", own, "--yes")
	if code != 0 || errs != "" {
		t.Errorf("the adapter's own backup: exit %d\n%s%s", code, out, errs)
	}
}

// An interrupted write in the journal is reported by config query (table
// and JSON) and by health, which point to config recover, never to config
// set, which is refused until then (issue 26.3).
func TestInterruptedWriteReported(t *testing.T) {
	nvEnv(t)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	j, err := nvconf.DefaultJournal()
	if err != nil {
		t.Fatal(err)
	}
	key := nvconf.KeyFor("emulator", "emu", "0000:03:00.0")
	if err := j.Begin(&nvconf.JournalEntry{Key: key, Device: "emu", Op: "set", Backup: "/backups/before.nvbackup",
		Writes: []nvconf.RawTLV{{Header: nvconf.Header{Type: 0x80}, Data: make([]byte, 12)}}}); err != nil {
		t.Fatal(err)
	}
	out, errs, code := cfgcli(t, "", "config", "query", "-d", "emu")
	if code != 0 || !strings.Contains(out, "Interrupted: an interrupted set") || !strings.Contains(out, "cxray config recover --rollback -d emu") {
		t.Errorf("query: exit %d\n%s%s", code, out, errs)
	}
	jout, _, _ := cfgcli(t, "", "config", "query", "-d", "emu", "-o", "json")
	var qj struct {
		Interrupted *struct {
			Op     string   `json:"op"`
			TLVs   []string `json:"tlvs"`
			Backup string   `json:"backup"`
		} `json:"interrupted_write"`
	}
	mustJSON(t, jout, &qj)
	if qj.Interrupted == nil || qj.Interrupted.Op != "set" || cmp.Diff([]string{"nv_global_pci_conf"}, qj.Interrupted.TLVs) != "" || qj.Interrupted.Backup != "/backups/before.nvbackup" {
		t.Errorf("query -o json: interrupted_write %+v\n%s", qj.Interrupted, jout)
	}
	for _, format := range []string{"table", "json"} {
		out, errs, code := cfgcli(t, "", "health", "-d", "emu", "--interval", "50ms", "-o", format)
		if code != cmdutil.ExitProblem {
			t.Errorf("health -o %s: exit %d, want 1\n%s%s", format, code, out, errs)
		}
		if !strings.Contains(out, "cxray config recover --finish -d emu") || strings.Contains(out, "undo them with 'cxray config set'") {
			t.Errorf("health -o %s does not point to config recover:\n%s", format, out)
		}
		if format != "json" {
			continue
		}
		var h healthOut
		mustJSON(t, out, &h)
		if len(h.Devices) != 1 {
			t.Fatalf("health -o json: %s", out)
		}
		if c := check(h.Devices[0], "configuration"); c.Status != health.Fail || !strings.Contains(c.Summary, "interrupted NV set") {
			t.Errorf("configuration check: %+v", c)
		}
	}
}

// A multi-TLV set the firmware refuses half-way is rolled back at once:
// exit 3, the error says so, no journal entry, every parameter old
// (issue 26.3).
func TestConfigSetRefusedHalfWayRollsBack(t *testing.T) {
	nvEnv(t)
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	scen := filepath.Join(dir, "rej.yaml")
	os.WriteFile(scen, []byte("devices: [{profile: cx7-2p400g, nv: {reject_writes: [nv_vpi_link_type]}}]\n"), 0o644)
	d := "emu:" + scen
	_, errs, code := cfgcli(t, "", "config", "set", "-d", d, "NUM_OF_VFS=16", "LINK_TYPE_P1=IB", "--yes")
	if code != cmdutil.ExitDevice || !strings.Contains(errs, "rolled back from the backup") || !strings.Contains(errs, "nothing was changed") {
		t.Errorf("refused half-way: exit %d\n%s", code, errs)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "cxray", "journal", "*.json")); len(m) != 0 {
		t.Errorf("journal entries left: %v", m)
	}
	out, errs, code := cfgcli(t, "", "config", "query", "-d", d, "NUM_OF_VFS", "LINK_TYPE_P1")
	if code != 0 || !strings.Contains(out, "NUM_OF_VFS") || strings.Contains(out, " 16") || strings.Contains(out, "Interrupted") {
		t.Errorf("after the roll-back:\n%s%s", out, errs)
	}
}

// With --settle, a set nobody else touches reads its TLVs again and exits
// 0 saying nothing more; the JSON has no changed_after_write (issue 26.2;
// the race with mstconfig itself is conformance TestConfigSetRacesMstconfig).
func TestConfigSetSettle(t *testing.T) {
	nvEnv(t)
	for _, format := range []string{"table", "json"} {
		out, errs, code := cfgcli(t, "", "config", "set", "-d", "emu", "NUM_OF_VFS=12", "--yes", "--settle", "100ms", "-o", format)
		if code != 0 || errs != "" || strings.Contains(out, "changed_after_write") || strings.Contains(out, "undone") {
			t.Errorf("-o %s: exit %d\n%s%s", format, code, out, errs)
		}
		cfgcli(t, "", "config", "set", "-d", "emu", "NUM_OF_VFS=8", "--yes")
	}
	if _, errs, code := cfgcli(t, "", "config", "set", "-d", "emu", "NUM_OF_VFS=12", "--yes", "--settle", "-1s"); code != 0 || errs != "" {
		t.Errorf("a negative --settle: exit %d %s", code, errs)
	}
}

// A query output of several devices (WinMFT lists them all) is never read
// as its first: config diff refuses it with the devices listed (exit 2)
// rather than say "the same", and --file-device picks the one to compare.
// A `| grep` fragment and a pasted command line read as query outputs.
func TestConfigFilesAsPasted(t *testing.T) {
	dir := t.TempDir()
	one, err := os.ReadFile("../nvconf/testdata/mstconfig-q.txt")
	if err != nil {
		t.Fatal(err)
	}
	two := strings.Replace(strings.Replace(string(one), "0000:03:00.0", "0000:04:00.0", 1), "         NUM_OF_VFS                          8", "         NUM_OF_VFS                          4", 1)
	a := filepath.Join(dir, "a.txt")
	b := filepath.Join(dir, "b.txt")
	os.WriteFile(a, []byte(string(one)+"\n"+strings.Replace(string(one), "0000:03:00.0", "0000:04:00.0", 1)), 0o644)
	os.WriteFile(b, []byte(string(one)+"\n"+two), 0o644)
	for _, mode := range []string{"table", "json"} {
		out, errs, code := cfgcli(t, "", "config", "diff", a, b, "-o", mode)
		if code != cmdutil.ExitUsage || !strings.Contains(errs, "holds 2 devices") || !strings.Contains(errs, "2: 0000:04:00.0") || strings.Contains(out, "same") {
			t.Errorf("%s: exit %d, want 2 listing the devices:\n%s%s", mode, code, out, errs)
		}
	}
	out, errs, code := cfgcli(t, "", "config", "diff", a, b, "--file-device", "2")
	if code != cmdutil.ExitProblem || !strings.Contains(out, "NUM_OF_VFS") {
		t.Errorf("--file-device 2: exit %d\n%s%s", code, out, errs)
	}
	if _, _, code := cfgcli(t, "", "config", "diff", a, b, "--file-device", "1"); code != 0 {
		t.Errorf("--file-device 1: exit %d, want 0 (device 1 is the same in both)", code)
	}
	frag := filepath.Join(dir, "frag.txt")
	os.WriteFile(frag, []byte("user@host:~$ mlxconfig -d 03:00.0 q | grep VFS\r\n         NUM_OF_VFS                          4               \r\n"), 0o644)
	out, errs, code = cfgcli(t, "", "config", "query", "--from", frag)
	if code != 0 || !strings.Contains(out, "NUM_OF_VFS") || !strings.Contains(out, "no header: read as the Next Boot column") {
		t.Errorf("fragment: exit %d\n%s%s", code, out, errs)
	}
}

package configcmd

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// config runs `cxray config ARGS` in a, its buffers emptied first.
func config(a *cmdutiltest.App, args ...string) error {
	a.Reset()
	return a.Run(New(a.App), args...)
}

// nextBoot is the Next Boot text of the named parameters on dev (query
// -o json), with the parameters pending.
func nextBoot(t *testing.T, a *cmdutiltest.App, dev string, names ...string) (map[string]string, []string) {
	t.Helper()
	saved := a.Output
	a.Output = "json"
	defer func() { a.Output = saved }()
	if err := config(a, append([]string{"query", "-d", dev}, names...)...); err != nil {
		t.Fatalf("query: %v", err)
	}
	var q queryDoc
	cmdutiltest.JSON(t, a.Out.String(), &q)
	m := map[string]string{}
	for _, p := range q.Parameters {
		m[p.Name] = p.Next.Text
	}
	return m, q.Pending
}

// backups lists the automatic backups written so far.
func backups(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(os.Getenv("XDG_STATE_HOME"), "cxray", "backups", "*"))
	return files
}

// Usage errors are exit 2 with what to do, before any device work.
func TestConfigUsage(t *testing.T) {
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"query"}, "no device given; add -d DEV"},
		{[]string{"set", "NUM_OF_VFS=4"}, "no device given; add -d DEV"},
		{[]string{"set", "-d", "emu", "NUM_OF_VFS"}, "is not NAME=VALUE"},
		{[]string{"set", "-d", "emu", "--yes", "NO_SUCH_PARAM=1"}, "NO_SUCH_PARAM"},
		{[]string{"set", "-d", "emu"}, "requires at least 1 arg"},
		{[]string{"reset", "-d", "emu", "--yes"}, "name the TLVs or parameters to reset, or give --all (not both)"},
		{[]string{"reset", "-d", "emu", "--yes", "--all", "SRIOV_EN"}, "(not both)"},
		{[]string{"backup", "-d", "emu", "--format", "xml", "f"}, "--format xml: the formats are cxray and raw"},
		{[]string{"restore", "-d", "emu", "--merge", "--reset-missing", "f"}, "--merge and --reset-missing exclude each other"},
		{[]string{"query", "--from", "f", "-d", "emu"}, "--from reads the whole file; leave out -d"},
		{[]string{"query", "-d", "emu", "--filter", "("}, "--filter \"(\" is not a regular expression"},
		{[]string{"show-params", "--filter", "[z-a]"}, "is not a regular expression"},
		{[]string{"query", "-d", "emu", "--nvdb", "/nonexistent.db"}, "--nvdb"},
		{[]string{"query", "-d", "emu", "--timeout", "soon"}, "invalid argument \"soon\""},
	} {
		a := cmdutiltest.New(t, "table")
		err := config(a, c.args...)
		if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%v: exit %d %v; want exit 2 saying %q", c.args, code, err, c.words)
		}
		if a.Out.Len() != 0 {
			t.Errorf("%v: a usage error printed %q", c.args, a.Out)
		}
	}
}

// A declined confirmation on a terminal is exit 1, says so, and changes
// nothing: no backup, no write, no reset.
func TestConfigDeclined(t *testing.T) {
	for _, c := range []struct {
		name, nothing string
		args          []string
	}{
		{"set", "nothing written", []string{"set", "NUM_OF_VFS=4"}},
		{"reset", "nothing written", []string{"reset", "SRIOV_EN"}},
		{"reset --all", "nothing written", []string{"reset", "--all"}},
		{"apply", "no reset sent", []string{"apply"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := cmdutiltest.New(t, "table")
			dev := cmdutiltest.Manual(t, "    nv:\n      configured: {SRIOV_EN: True, NUM_OF_VFS: 8}\n      pending: {LOG_TX_PSN_WINDOW: 12}\n")
			before, pendBefore := nextBoot(t, a, dev)
			a.Stdin = cmdutiltest.Terminal(t, "n\n")
			err := config(a, append(c.args, "-d", dev)...)
			if !errors.Is(err, cmdutil.ErrProblem) {
				t.Fatalf("declined: %v, want exit 1", err)
			}
			if want := "? [y/N] cxray: not confirmed; " + c.nothing + "\n"; !strings.HasSuffix(a.Err.String(), want) {
				t.Errorf("stderr %q, want it to end %q", a.Err, want)
			}
			if f := backups(t); len(f) != 0 {
				t.Errorf("a declined %s wrote backups %v", c.name, f)
			}
			after, pendAfter := nextBoot(t, a, dev)
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("a declined %s changed Next Boot (-before +after):\n%s", c.name, diff)
			}
			if diff := cmp.Diff(pendBefore, pendAfter); diff != "" {
				t.Errorf("a declined %s changed what is pending (-before +after):\n%s", c.name, diff)
			}
		})
	}
}

// Typing yes on the terminal goes on as --yes does: written, backed up,
// pending.
func TestConfigConfirmed(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	dev := cmdutiltest.Manual(t, "")
	a.Stdin = cmdutiltest.Terminal(t, "y\n")
	if err := config(a, "set", "-d", dev, "NUM_OF_VFS=4"); err != nil {
		t.Fatalf("confirmed set: %v\n%s", err, a.Err)
	}
	var res struct {
		Changes []changeOut `json:"changes"`
		Written bool        `json:"written"`
		Backup  string      `json:"backup"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &res)
	if !res.Written || res.Backup == "" {
		t.Errorf("written %v backup %q", res.Written, res.Backup)
	}
	if diff := cmp.Diff(backups(t), []string{res.Backup}); diff != "" {
		t.Errorf("backups (-on disk +reported):\n%s", diff)
	}
	m, pending := nextBoot(t, a, dev, "NUM_OF_VFS")
	if m["NUM_OF_VFS"] != "4" || !cmp.Equal(pending, []string{"NUM_OF_VFS"}) {
		t.Errorf("after the set: NUM_OF_VFS %q, pending %v", m["NUM_OF_VFS"], pending)
	}
}

// set --dry-run in JSON: the changes and the TLV bytes, dry_run true,
// written false, and the device untouched.
func TestConfigSetDryRunJSON(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	dev := cmdutiltest.Manual(t, "    nv: {configured: {SRIOV_EN: False, NUM_OF_VFS: 0}}\n")
	before, _ := nextBoot(t, a, dev)
	if err := config(a, "set", "-d", dev, "--dry-run", "NUM_OF_VFS=4", "SRIOV_EN=True"); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Device    string      `json:"device"`
		Changes   []changeOut `json:"changes"`
		Unchanged []string    `json:"unchanged"`
		Writes    []writeOut  `json:"writes"`
		DryRun    bool        `json:"dry_run"`
		Written   bool        `json:"written"`
		Backup    string      `json:"backup"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &res)
	var names []string
	for _, c := range res.Changes {
		names = append(names, c.Name+"="+c.After)
		if c.TLV != "nv_global_pci_conf" {
			t.Errorf("%s in TLV %q, want nv_global_pci_conf", c.Name, c.TLV)
		}
	}
	sort.Strings(names)
	if diff := cmp.Diff([]string{"NUM_OF_VFS=4", "SRIOV_EN=True(1)"}, names); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if len(res.Writes) != 1 || res.Writes[0].TLV != "nv_global_pci_conf" || res.Writes[0].Type != "0x00000080" || len(res.Writes[0].Data) == 0 {
		t.Errorf("writes %+v, want one of nv_global_pci_conf (0x00000080) with its data", res.Writes)
	}
	if !res.DryRun || res.Written || res.Backup != "" || res.Device != dev {
		t.Errorf("device %q dry_run %v written %v backup %q", res.Device, res.DryRun, res.Written, res.Backup)
	}
	after, _ := nextBoot(t, a, dev)
	if diff := cmp.Diff(before, after); diff != "" || len(backups(t)) != 0 {
		t.Errorf("a dry run changed the device (-before +after):\n%s backups %v", diff, backups(t))
	}
}

// A value that is already there: nothing to write, exit 0, in JSON too
// (written false, the name under unchanged).
func TestConfigSetUnchanged(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	dev := cmdutiltest.Manual(t, "    nv: {configured: {NUM_OF_VFS: 8}}\n")
	if err := config(a, "set", "-d", dev, "NUM_OF_VFS=8"); err != nil {
		t.Fatalf("same value: %v", err)
	}
	var res struct {
		Changes   []changeOut `json:"changes"`
		Unchanged []string    `json:"unchanged"`
		Written   bool        `json:"written"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &res)
	if len(res.Changes) != 0 || res.Written || !cmp.Equal(res.Unchanged, []string{"NUM_OF_VFS"}) {
		t.Errorf("%+v, want no changes, not written, NUM_OF_VFS unchanged", res)
	}
	a.Output = "table"
	if err := config(a, "set", "-d", dev, "NUM_OF_VFS=8"); err != nil {
		t.Fatal(err)
	}
	if want := "NUM_OF_VFS already has that value for the next boot; nothing to write for it.\nNothing to write.\n"; a.Out.String() != want {
		t.Errorf("table:\n%s\nwant\n%s", a.Out, want)
	}
}

// The query table marks a pending parameter with * and names it with the
// way to apply it; with nothing pending it says so.
func TestConfigQueryPending(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, "    nv: {pending: {LOG_TX_PSN_WINDOW: 12}}\n")
	if err := config(a, "query", "-d", dev); err != nil {
		t.Fatal(err)
	}
	out := a.Out.String()
	var marked []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 2 && strings.HasPrefix(f[0], "*") && !strings.Contains(l, "pending until") {
			marked = append(marked, f[1])
		}
	}
	if diff := cmp.Diff([]string{"LOG_TX_PSN_WINDOW"}, marked); diff != "" {
		t.Errorf("rows marked pending (-want +got):\n%s", diff)
	}
	if !strings.Contains(out, "* 1 pending until the next firmware reset: LOG_TX_PSN_WINDOW ") || !strings.Contains(out, "'cxray config apply -d "+dev+"'") {
		t.Errorf("the query does not say what is pending and how to apply it:\n%s", out)
	}
	for _, w := range []string{"Device type:  ConnectX7\n", "Device:       " + dev} {
		if !strings.Contains(out, w) {
			t.Errorf("no %q in the header:\n%s", w, out)
		}
	}

	// -e adds DEFAULT and CURRENT columns; JSON then carries both values.
	if err := config(a, "query", "-d", dev, "-e", "LOG_TX_PSN_WINDOW"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Out.String(), "PARAMETER          DEFAULT  CURRENT  NEXT BOOT") {
		t.Errorf("-e header:\n%s", a.Out)
	}
	a.Output = "json"
	if err := config(a, "query", "-d", dev, "-e", "LOG_TX_PSN_WINDOW"); err != nil {
		t.Fatal(err)
	}
	var q queryDoc
	cmdutiltest.JSON(t, a.Out.String(), &q)
	if len(q.Parameters) != 1 {
		t.Fatalf("one parameter asked, got %d", len(q.Parameters))
	}
	p := q.Parameters[0]
	if p.Current == nil || p.Default == nil || p.Next == nil || p.Next.Text != "12" || p.Current.Text == "12" || !p.Pending {
		t.Errorf("LOG_TX_PSN_WINDOW %+v: want Next 12, a different Current, pending", p)
	}

	a.Output = "table"
	if err := config(a, "query", "-d", cmdutiltest.Manual(t, "")); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(a.Out.String(), "Nothing pending: the running firmware uses the Next Boot values.\n") {
		t.Errorf("clean adapter:\n%s", a.Out)
	}
}

// Device faults are exit 3 and write nothing: an adapter that is gone,
// and NV registers that refuse access.
func TestConfigDeviceFaults(t *testing.T) {
	for _, c := range []struct {
		name, extra string
		args        []string
	}{
		{"removed query", "    faults: {removed: true}\n", []string{"query"}},
		{"removed set", "    faults: {removed: true}\n", []string{"set", "--yes", "NUM_OF_VFS=4"}},
		{"NV no access", "    nv: {no_access: true}\n", []string{"query"}},
		{"NV writes rejected", "    nv: {reject_writes: [\"*\"]}\n", []string{"set", "--yes", "NUM_OF_VFS=4"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := cmdutiltest.New(t, "table")
			err := config(a, append(c.args, "-d", cmdutiltest.Manual(t, c.extra))...)
			if code := cmdutiltest.Code(err); code != cmdutil.ExitDevice {
				t.Errorf("exit %d (%v), want 3\n%s", code, err, a.Out)
			}
			if strings.Contains(a.Out.String(), "Written and verified") {
				t.Errorf("claims a write:\n%s", a.Out)
			}
		})
	}
}

// diff: the same configuration is exit 0, a difference exit 1 naming the
// parameter, in both output modes; a name that is neither file nor device
// says so.
func TestConfigDiff(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, "    nv: {configured: {NUM_OF_VFS: 8}}\n")
	dir := t.TempDir()
	f := filepath.Join(dir, "a.nvbackup")
	if err := config(a, "backup", "-d", dev, f); err != nil {
		t.Fatal(err)
	}
	if err := config(a, "diff", f, dev); err != nil || !strings.HasPrefix(a.Out.String(), "Same NV configuration (") {
		t.Fatalf("backup against its device: %v\n%s", err, a.Out)
	}
	if err := config(a, "set", "-d", dev, "--yes", "NUM_OF_VFS=16"); err != nil {
		t.Fatal(err)
	}
	if err := config(a, "diff", f, dev); !errors.Is(err, cmdutil.ErrProblem) || !strings.Contains(a.Out.String(), "differs: nv_global_pci_conf\n") || !strings.Contains(a.Out.String(), "NUM_OF_VFS: 8 -> 16") {
		t.Errorf("after a change: %v\n%s", err, a.Out)
	}
	a.Output = "json"
	if err := config(a, "diff", f, dev); !errors.Is(err, cmdutil.ErrProblem) {
		t.Errorf("JSON diff: %v, want exit 1 as in the table", err)
	}
	var d struct {
		A, B        string
		Same        int `json:"same"`
		Differences []struct {
			TLV     string   `json:"tlv"`
			Changes []string `json:"changes"`
		} `json:"differences"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &d)
	if d.A != f || d.B != dev || len(d.Differences) != 1 || d.Differences[0].TLV != "nv_global_pci_conf" {
		t.Errorf("JSON diff %+v", d)
	}
	err := config(a, "diff", f, filepath.Join(dir, "missing.nvbackup"))
	if err == nil || !strings.Contains(err.Error(), "is neither a file nor a device") {
		t.Errorf("missing operand: %v", err)
	}
}

// backup --format raw to standard output is mstflint's format; the JSON
// of a backup to a file lists the TLVs saved.
func TestConfigBackupFormats(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, "    nv: {configured: {NUM_OF_VFS: 8}}\n")
	if err := config(a, "backup", "-d", dev, "--format", "raw", "-"); err != nil || !strings.HasPrefix(a.Out.String(), "MLNX_RAW_TLV_FILE\n") {
		t.Errorf("raw to stdout: %v\n%s", err, a.Out)
	}
	a.Output = "json"
	f := filepath.Join(t.TempDir(), "b.nvbackup")
	if err := config(a, "backup", "-d", dev, f); err != nil {
		t.Fatal(err)
	}
	var res struct {
		File   string   `json:"file"`
		Format string   `json:"format"`
		TLVs   []string `json:"tlvs"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &res)
	if res.File != f || res.Format != "cxray" || !contains(res.TLVs, "nv_global_pci_conf") {
		t.Errorf("%+v", res)
	}
	if b, err := os.ReadFile(f); err != nil || !strings.HasPrefix(string(b), "CXRAY_NV_BACKUP") {
		t.Errorf("backup file: %v %.40q", err, b)
	}
	// A file in a directory that does not exist is a usage error.
	if err := config(a, "backup", "-d", dev, filepath.Join(t.TempDir(), "no", "such", "dir", "b")); cmdutiltest.Code(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "cannot write") {
		t.Errorf("unwritable file: %v", err)
	}
}

func contains(s []string, x string) bool {
	for _, e := range s {
		if e == x {
			return true
		}
	}
	return false
}

// show-params needs no device: the filter picks rows, the last line
// counts them.
func TestConfigShowParams(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	if err := config(a, "show-params", "--filter", "^NUM_OF_VFS$"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(a.Out.String(), "\n"), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "PARAMETER") || !strings.HasPrefix(lines[1], "NUM_OF_VFS ") || !strings.HasPrefix(lines[len(lines)-1], "1 parameter(s) from ") {
		t.Errorf("show-params:\n%s", a.Out)
	}
}

// apply --dry-run names what is pending and the reset it would send, and
// sends none: the parameter stays pending.
func TestConfigApplyDryRun(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	dev := cmdutiltest.Manual(t, "    nv: {pending: {LOG_TX_PSN_WINDOW: 12}}\n")
	if err := config(a, "apply", "-d", dev, "--dry-run"); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Trigger      string   `json:"trigger"`
		Pending      []string `json:"pending_before"`
		Applied      []string `json:"applied"`
		StillPending []string `json:"still_pending"`
		DryRun       bool     `json:"dry_run"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &res)
	want := res
	want.Pending, want.Applied, want.StillPending, want.DryRun = []string{"LOG_TX_PSN_WINDOW 9 -> 12"}, []string{}, []string{}, true
	if diff := cmp.Diff(want, res); diff != "" || res.Trigger == "" {
		t.Errorf("trigger %q (-want +got):\n%s", res.Trigger, diff)
	}
	if _, pending := nextBoot(t, a, dev); !cmp.Equal(pending, []string{"LOG_TX_PSN_WINDOW"}) {
		t.Errorf("a dry run applied: pending %v", pending)
	}
}

// A declined restore writes nothing: the change made after the backup
// stays, and no new backup is taken.
func TestConfigRestoreDeclined(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	dev := cmdutiltest.Manual(t, "    nv: {configured: {NUM_OF_VFS: 8}}\n")
	f := filepath.Join(t.TempDir(), "a.nvbackup")
	if err := config(a, "backup", "-d", dev, f); err != nil {
		t.Fatal(err)
	}
	if err := config(a, "set", "-d", dev, "--yes", "NUM_OF_VFS=16"); err != nil {
		t.Fatal(err)
	}
	taken := backups(t)
	a.Stdin = cmdutiltest.Terminal(t, "no\n")
	if err := config(a, "restore", "-d", dev, f); !errors.Is(err, cmdutil.ErrProblem) || !strings.Contains(a.Err.String(), "not confirmed; nothing written") {
		t.Fatalf("declined restore: %v %q", err, a.Err)
	}
	if !strings.Contains(a.Out.String(), "write  nv_global_pci_conf") {
		t.Errorf("the plan was not shown before asking:\n%s", a.Out)
	}
	if m, _ := nextBoot(t, a, dev, "NUM_OF_VFS"); m["NUM_OF_VFS"] != "16" {
		t.Errorf("NUM_OF_VFS %q after a declined restore, want 16", m["NUM_OF_VFS"])
	}
	if diff := cmp.Diff(taken, backups(t)); diff != "" {
		t.Errorf("backups (-before +after):\n%s", diff)
	}
}

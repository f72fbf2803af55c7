package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"golang.org/x/sys/unix"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/nvconf"
)

// writeStep is one command of the NV-write transcript: its arguments
// ({b}/name is a file in the test's backup directory) and what it reads
// on a terminal (the answer to the question).
type writeStep struct {
	stdin string
	args  []string
	// journal plants an interrupted set of NUM_OF_VFS=24 (backup {b}/set)
	// before the command, and prints the journal file as stored.
	journal bool
}

// TestConfigWriteTranscript pins every NV-write verb end to end on the
// emulator (set, reset, restore, recover, apply): the table and JSON
// output of each, the dry run, the question and its answers (no, yes,
// --yes), the exit codes, and the journal entry's format on disk, which
// recover must read (an entry an earlier cxray left). Paths, times, the
// PID and the host are replaced by names; every other byte is compared
// with cli/testdata/config-write.txt (-update rewrites it: review the
// diff).
func TestConfigWriteTranscript(t *testing.T) {
	_, backups := nvEnv(t)
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("CXRAY_NV_SETTLE", "0")
	b := t.TempDir()
	steps := []writeStep{
		{args: []string{"config", "set", "-d", "emu", "NUM_OF_VFS=16", "SRIOV_EN=1", "--dry-run"}},
		{args: []string{"config", "set", "-d", "emu", "NUM_OF_VFS=16", "--dry-run", "-o", "json"}},
		{args: []string{"config", "set", "-d", "emu", "NUM_OF_VFS=16"}},
		{stdin: "n\n", args: []string{"config", "set", "-d", "emu", "NUM_OF_VFS=16"}},
		{stdin: "y\n", args: []string{"config", "set", "-d", "emu", "NUM_OF_VFS=16", "--backup", "{b}/set"}},
		{args: []string{"config", "set", "-d", "emu", "NUM_OF_VFS=16", "--yes"}},
		{args: []string{"config", "set", "-d", "emu", "LINK_TYPE_P1=IB", "--yes", "--backup", "{b}/set2", "-o", "json"}},
		{args: []string{"config", "set", "-d", "emu", "NUM_OF_VFS=99999", "--yes"}},
		{args: []string{"config", "reset", "-d", "emu", "LINK_TYPE_P1", "--dry-run"}},
		{args: []string{"config", "reset", "-d", "emu", "--all", "--dry-run", "-o", "json"}},
		{stdin: "n\n", args: []string{"config", "reset", "-d", "emu", "LINK_TYPE_P1"}},
		{stdin: "y\n", args: []string{"config", "reset", "-d", "emu", "LINK_TYPE_P1", "--backup", "{b}/reset"}},
		{args: []string{"config", "reset", "-d", "emu", "nv_vpi_link_type", "--yes", "-o", "json"}},
		{args: []string{"config", "reset", "-d", "emu", "--yes"}},
		{args: []string{"config", "restore", "{b}/set", "-d", "emu", "--dry-run"}},
		{args: []string{"config", "restore", "{b}/set", "-d", "emu", "--dry-run", "-o", "json"}},
		{stdin: "n\n", args: []string{"config", "restore", "{b}/set", "-d", "emu"}},
		{stdin: "y\n", args: []string{"config", "restore", "{b}/set", "-d", "emu", "--backup", "{b}/restore"}},
		{args: []string{"config", "restore", "{b}/set2", "-d", "emu", "--reset-missing", "--yes", "--backup", "{b}/restore2", "-o", "json"}},
		{args: []string{"config", "restore", "{b}/set2", "-d", "emu", "--yes"}},
		{args: []string{"config", "recover", "-d", "emu"}},
		{journal: true, args: []string{"config", "recover", "-d", "emu"}},
		{args: []string{"config", "recover", "-d", "emu", "-o", "json"}},
		{args: []string{"config", "recover", "-d", "emu", "--finish", "--dry-run"}},
		{stdin: "n\n", args: []string{"config", "recover", "-d", "emu", "--finish"}},
		{stdin: "y\n", args: []string{"config", "recover", "-d", "emu", "--finish"}},
		{journal: true, args: []string{"config", "recover", "-d", "emu", "--rollback", "--yes", "-o", "json"}},
		{journal: true, args: []string{"config", "recover", "-d", "emu", "--rollback", "--yes"}},
		{args: []string{"config", "recover", "-d", "emu", "-o", "json"}},
		{args: []string{"config", "set", "-d", "emu", "LINK_TYPE_P2=IB", "--yes"}},
		{args: []string{"config", "apply", "-d", "emu", "--dry-run"}},
		{args: []string{"config", "apply", "-d", "emu", "--dry-run", "-o", "json"}},
		{stdin: "n\n", args: []string{"config", "apply", "-d", "emu"}},
		{stdin: "y\n", args: []string{"config", "apply", "-d", "emu", "--at-reboot"}},
		{args: []string{"config", "apply", "-d", "emu", "--yes", "-o", "json"}},
		{args: []string{"config", "apply", "-d", "emu", "--yes"}},
	}
	var got strings.Builder
	for _, s := range steps {
		args := make([]string, len(s.args))
		for i, a := range s.args {
			args[i] = strings.ReplaceAll(a, "{b}", b)
		}
		if s.journal {
			fmt.Fprintf(&got, "# journal:\n%s\n", plantInterruptedSet(t, filepath.Join(b, "set")))
		}
		out, errs, code := cfgcliOn(t, typed(t, s.stdin), args...)
		fmt.Fprintf(&got, "$ cxray %s", strings.Join(s.args, " "))
		if s.stdin != "" {
			fmt.Fprintf(&got, " <<< %q", s.stdin)
		}
		fmt.Fprintf(&got, "\n%s", out)
		if errs != "" {
			fmt.Fprintf(&got, "[stderr]\n%s", errs)
		}
		fmt.Fprintf(&got, "[exit %d]\n\n", code)
	}
	text := normalizeWrites(got.String(), map[string]string{b: "{b}", backups: "{backups}", state: "{state}"})
	golden := filepath.Join("testdata", "config-write.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./cli -run TestConfigWriteTranscript -update writes it)", err)
	}
	if d := cmp.Diff(string(want), text); d != "" {
		t.Errorf("the NV-write verbs changed (-%s +now):\n%s", golden, d)
	}
}

// plantInterruptedSet leaves the journal entry a set of NUM_OF_VFS=24 cut
// short after its backup would (the entry as an earlier cxray wrote it),
// and returns the file as stored.
func plantInterruptedSet(t *testing.T, backup string) string {
	t.Helper()
	j, err := nvconf.DefaultJournal()
	if err != nil {
		t.Fatal(err)
	}
	key := nvconf.KeyFor("emulator", "emu", "0000:03:00.0")
	// nv_global_pci_conf (type 0x80) with SRIOV_EN and NUM_OF_VFS=24 valid.
	data := []byte{0x80, 0, 0, 0, 0, 0x18, 0, 0, 0, 0, 0, 0}
	e := &nvconf.JournalEntry{Key: key, Device: "emu", Op: "set", Backup: backup, Tool: "test",
		Writes: []nvconf.RawTLV{{Header: nvconf.Header{Type: 0x80, WriterID: nvconf.WriterUser1, Length: len(data)}, Data: data}}}
	if err := j.Begin(e); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(j.Path(key))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

var (
	backupStamp = regexp.MustCompile(`emu-[0-9]{8}T[0-9.]+Z\.nvbackup`)
	rfc3339     = regexp.MustCompile(`[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9:]+)`)
	pidField    = regexp.MustCompile(`"pid": ?[0-9]+`)
	processPID  = regexp.MustCompile(`process [0-9]+`)
	hostField   = regexp.MustCompile(`"host": ?"[^"]*"`)
)

// normalizeWrites replaces the run's directories, times, PID and host by
// names.
func normalizeWrites(s string, dirs map[string]string) string {
	for d, name := range dirs {
		s = strings.ReplaceAll(s, d, name)
	}
	s = backupStamp.ReplaceAllString(s, "emu-{time}.nvbackup")
	s = rfc3339.ReplaceAllString(s, "{time}")
	s = pidField.ReplaceAllString(s, `"pid": {pid}`)
	s = processPID.ReplaceAllString(s, "process {pid}")
	return hostField.ReplaceAllString(s, `"host": "{host}"`)
}

// typed is a terminal on which answer was typed, or, for "", standard
// input that is no terminal.
func typed(t *testing.T, answer string) io.Reader {
	t.Helper()
	if answer == "" {
		return strings.NewReader("")
	}
	c, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if err := unix.IoctlSetPointerInt(int(c.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(c.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	term, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the terminal side: %v", err)
	}
	t.Cleanup(func() { term.Close() })
	if _, err := c.WriteString(answer); err != nil {
		t.Fatal(err)
	}
	return term
}

// cfgcliOn is cfgcli with stdin as given (a terminal).
func cfgcliOn(t testing.TB, stdin io.Reader, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	a := newApp(context.Background(), stdin, &out, &errb)
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

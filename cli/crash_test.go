package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/nvconf"
	nvbuiltin "github.com/cxray/cxray/nvconf/builtin"
	"github.com/cxray/cxray/nvconf/tlv"
	"github.com/cxray/cxray/prm/builtin"
)

// crashParams are the parameters the crash flows change: in two TLVs
// (nv_sw_offload_conf and nv_global_pci_conf), so a crash can fall
// between their writes.
var crashParams = []string{"LOG_TX_PSN_WINDOW", "NUM_OF_VFS", "SRIOV_EN"}

// nextBoot reads the Next Boot values of crashParams from the kept -d emu.
func nextBoot(t *testing.T) map[string]string {
	t.Helper()
	m, _ := query(t, crashParams...)
	out := map[string]string{}
	for k, v := range m {
		out[k] = v[2]
	}
	return out
}

// crashBin builds cxray with the crash hook (the build tag
// cxray_crashhook), once per test binary: the shipped cxray has none.
func crashBin(t *testing.T) string {
	t.Helper()
	crashOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cxray-crashhook-")
		if err != nil {
			crashErr = err
			return
		}
		crashPath = filepath.Join(dir, "cxray")
		if out, err := exec.Command("go", "build", "-tags", "cxray_crashhook", "-o", crashPath, "../cmd/cxray").CombinedOutput(); err != nil {
			crashErr = fmt.Errorf("build with the crash hook: %v\n%s", err, out)
		}
	})
	if crashErr != nil {
		t.Fatal(crashErr)
	}
	return crashPath
}

var (
	crashOnce sync.Once
	crashPath string
	crashErr  error
)

// The shipped binary (no build tag) has no crash hook: with
// CXRAY_NV_CRASH_AT set, a config set runs to its end (issue 25.7: any
// cxray could be made to SIGKILL itself in the middle of an NV write).
func TestShippedBinaryHasNoCrashHook(t *testing.T) {
	if nvconf.CrashHook {
		t.Skip("this test binary was built with the crash hook")
	}
	privateState(t)
	t.Setenv(nvconf.EnvBackupDir, t.TempDir())
	cmd := exec.Command(cxrayBin(t), "--adb", "builtin", "config", "set", "-d", "emu", "LOG_TX_PSN_WINDOW=14", "--yes", "--settle", "0")
	cmd.Env = append(os.Environ(), nvconf.EnvCrashAt+"=write:1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Written and verified") {
		t.Fatalf("the shipped binary with %s=write:1: %v\n%s", nvconf.EnvCrashAt, err, out)
	}
	if got := nextBoot(t)["LOG_TX_PSN_WINDOW"]; got != "14" {
		t.Errorf("LOG_TX_PSN_WINDOW %s, want 14", got)
	}
}

// crashRun runs cxray in a process that kills itself (SIGKILL) at point,
// and checks that it died there.
func crashRun(t *testing.T, bin, point string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), nvconf.EnvCrashAt+"="+point)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != -1 {
		t.Fatalf("%v with %s=%s: want a process killed there, got %v\n%s", args, nvconf.EnvCrashAt, point, err, out)
	}
}

// checkBackups: every backup on disk reads whole (self-checking format).
func checkBackups(t *testing.T, dir string, want int) {
	t.Helper()
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	nv, err := nvbuiltin.Load()
	if err != nil {
		t.Fatal(err)
	}
	hc, err := tlv.NewHeaderCodec(db, "MNVDA")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) < want {
		t.Fatalf("%d backups on disk, want at least %d", len(files), want)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bf, err := nvconf.ReadBackupFile(string(b), hc, nv)
		if err != nil || bf.Unchecked {
			t.Errorf("backup %s: %v (unchecked %v)", f, err, bf != nil && bf.Unchecked)
		}
	}
}

// A config set killed at each step: the backup on disk is whole; the
// device holds the old or the new value of each parameter; a write that
// had begun blocks the next one until 'config recover', and --rollback
// gives back the old configuration exactly, --finish the new one.
func TestConfigSetCrashAtEachStep(t *testing.T) {
	bin := crashBin(t)
	set := []string{"--adb", "builtin", "config", "set", "-d", "emu", "LOG_TX_PSN_WINDOW=14", "NUM_OF_VFS=4", "SRIOV_EN=False", "--yes"}
	for _, point := range []string{"backup", "journal", "write:1", "write:2"} {
		for _, recovery := range []string{"--rollback", "--finish"} {
			t.Run(point+recovery, func(t *testing.T) {
				privateState(t)
				backups := t.TempDir()
				t.Setenv(nvconf.EnvBackupDir, backups)
				old := nextBoot(t)
				crashRun(t, bin, point, set...)
				checkBackups(t, backups, 1)
				now := nextBoot(t)
				want := map[string]string{"LOG_TX_PSN_WINDOW": "14", "NUM_OF_VFS": "4", "SRIOV_EN": "False(0)"}
				for k, v := range now {
					if v != old[k] && v != want[k] {
						t.Errorf("%s after the crash: %s, neither the old %s nor the new %s", k, v, old[k], want[k])
					}
				}
				if point == "backup" {
					// Nothing begun: nothing changed, nothing to recover.
					if d := cmp.Diff(old, now); d != "" {
						t.Errorf("a crash before the journal changed the device (-old +now):\n%s", d)
					}
					if _, errs, code := cfgcli(t, "", "config", "set", "-d", "emu", "LOG_TX_PSN_WINDOW=13", "--yes"); code != 0 {
						t.Errorf("the next set: exit %d %s", code, errs)
					}
					return
				}
				_, errs, code := cfgcli(t, "", "config", "set", "-d", "emu", "LOG_TX_PSN_WINDOW=13", "--yes")
				if code != 3 || !strings.Contains(errs, "interrupted") {
					t.Errorf("the next set after a crash mid-flow: exit %d %s", code, errs)
				}
				if _, errs, code := cfgcli(t, "", "config", "recover", "-d", "emu", recovery, "--yes"); code != 0 {
					t.Fatalf("recover %s: exit %d %s", recovery, code, errs)
				}
				after := nextBoot(t)
				target := old
				if recovery == "--finish" {
					target = want
				}
				if d := cmp.Diff(target, after); d != "" {
					t.Errorf("after recover %s (-want +got):\n%s", recovery, d)
				}
			})
		}
	}
}

// A restore killed at each step: the same guarantees, for a restore that
// resets a TLV and writes others.
func TestConfigRestoreCrashAtEachStep(t *testing.T) {
	bin := crashBin(t)
	for _, point := range []string{"backup", "journal", "write:1", "write:2"} {
		t.Run(point, func(t *testing.T) {
			privateState(t)
			backups := t.TempDir()
			t.Setenv(nvconf.EnvBackupDir, backups)
			file := filepath.Join(t.TempDir(), "a.nvbackup")
			mustRun(t, "config", "backup", "-d", "emu", file)
			saved := nextBoot(t)
			mustRun(t, "config", "set", "-d", "emu", "LOG_TX_PSN_WINDOW=14", "NUM_OF_VFS=4", "SRIOV_EN=False", "--yes")
			changed := nextBoot(t)
			crashRun(t, bin, point, "--adb", "builtin", "config", "restore", "-d", "emu", file, "--yes", "--reset-missing")
			checkBackups(t, backups, 2)
			now := nextBoot(t)
			for k, v := range now {
				if v != saved[k] && v != changed[k] {
					t.Errorf("%s after the crash: %s, neither %s nor %s", k, v, changed[k], saved[k])
				}
			}
			if point != "backup" {
				if _, errs, code := cfgcli(t, "", "config", "recover", "-d", "emu", "--finish", "--yes"); code != 0 {
					t.Fatalf("recover --finish: exit %d %s", code, errs)
				}
			}
			if point == "backup" {
				if d := cmp.Diff(changed, now); d != "" {
					t.Errorf("a crash before the journal changed the device (-before +now):\n%s", d)
				}
				return
			}
			if d := cmp.Diff(saved, nextBoot(t)); d != "" {
				t.Errorf("after recover --finish (-file +device):\n%s", d)
			}
		})
	}
}

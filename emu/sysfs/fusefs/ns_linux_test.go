package fusefs_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The FUSE tests mount over /sys/bus/pci/devices, which must never happen in
// the host's mount namespace. A test that needs it calls inPrivateNS: in the
// normal run that re-executes the test binary for just that test, with
// CLONE_NEWNS unshared (Go then also makes / private, so nothing
// propagates back), and reports the copy's result; in the copy it returns
// true and the test body runs.

// envHostNS carries the host's mount namespace into the copy, which checks
// it is somewhere else before anything mounts.
const envHostNS = "CXRAY_SYSFS_TEST_HOST_MNTNS"

func TestMain(m *testing.M) {
	if host := os.Getenv(envHostNS); host != "" {
		self, err := os.Readlink("/proc/self/ns/mnt")
		if err != nil || self == host {
			fmt.Fprintf(os.Stderr, "sysfs test: not in a private mount namespace (%s, %v); refusing to run\n", self, err)
			os.Exit(2)
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			fmt.Fprintf(os.Stderr, "sysfs test: make / private: %v\n", err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

// skipLoudly skips with a message that also reaches a non-verbose run.
func skipLoudly(t *testing.T, why string) {
	t.Helper()
	msg := fmt.Sprintf("SKIPPING %s: %s", t.Name(), why)
	fmt.Fprintln(os.Stderr, "*** "+msg)
	t.Skip(msg)
}

// needFUSE skips unless FUSE mounts in a private namespace are possible.
func needFUSE(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		skipLoudly(t, "needs root to create a mount namespace and mount FUSE; run `sudo go test ./emu/sysfs/`")
	}
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		skipLoudly(t, fmt.Sprintf("no usable /dev/fuse (%v); load the fuse module (modprobe fuse) or install fuse3", err))
	}
	f.Close()
}

func inPrivateNS(t *testing.T) bool {
	t.Helper()
	if os.Getenv(envHostNS) != "" {
		return true
	}
	needFUSE(t)
	host, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/proc/self/exe",
		"-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.v", "-test.count=1", "-test.timeout=50s")
	cmd.Env = append(os.Environ(), envHostNS+"="+host)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("in a private mount namespace:\n%s", strings.TrimSpace(out.String()))
	switch {
	case err != nil && strings.Contains(err.Error(), "operation not permitted"):
		skipLoudly(t, fmt.Sprintf("cannot create a mount namespace (%v): in a container this needs CAP_SYS_ADMIN", err))
	case err != nil:
		t.Fatalf("test in the private namespace failed: %v", err)
	case strings.Contains(out.String(), "--- SKIP: "+t.Name()):
		skipLoudly(t, "skipped inside the namespace (see log)")
	case !strings.Contains(out.String(), "--- PASS: "+t.Name()):
		t.Fatalf("the copy in the private namespace did not report a pass")
	}
	assertNoCxrayMount(t)
	return false
}

// assertNoCxrayMount checks this (host) namespace has no mount of ours.
func assertNoCxrayMount(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "fuse.cxray") {
		t.Errorf("a cxray FUSE mount is visible in the host namespace:\n%s", b)
	}
}

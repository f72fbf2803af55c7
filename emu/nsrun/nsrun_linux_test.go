package nsrun_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/nsrun"
	"github.com/cxray/cxray/emu/sysfs"
	"github.com/cxray/cxray/emu/sysfs/fusefs"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

// The test binary is its own namespace helper: Run re-executes it, and
// TestMain hands the copy to nsrun.Child with a builder for the payload
// below.
func TestMain(m *testing.M) {
	nsrun.Child(buildDevices, fusefs.Mount)
	os.Exit(m.Run())
}

// payload is what these tests ask the helper to emulate.
type payload struct {
	Devices []devSpec `json:"devices"`
	Fail    string    `json:"fail,omitempty"` // the builder fails with this
}

type devSpec struct {
	BDF     string   `json:"bdf"`
	PSID    string   `json:"psid"`
	Netdevs []string `json:"netdevs,omitempty"`
}

const (
	bdf  = "0000:03:00.0"
	psid = "CXRAY_EMU_0042"
)

// buildDevices makes ConnectX-7s whose only register is MGIR, with the
// PSID and firmware version encoded through the PRM codec.
func buildDevices(b []byte) ([]sysfs.DeviceEntry, error) {
	var p payload
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, err
	}
	if p.Fail != "" {
		return nil, errors.New(p.Fail)
	}
	db, err := builtin.Load()
	if err != nil {
		return nil, err
	}
	reg, err := db.Register("MGIR")
	if err != nil {
		return nil, err
	}
	plan, err := db.RegisterPlan(reg)
	if err != nil {
		return nil, err
	}
	var out []sysfs.DeviceEntry
	for _, d := range p.Devices {
		img := plan.NewBuffer()
		if err := plan.Encode(img, []prm.Assignment{
			{Path: "fw_info.psid", Value: d.PSID},
			{Path: "fw_info.major", Value: "28"},
			{Path: "fw_info.minor", Value: "39"},
			{Path: "fw_info.extended_major", Value: "28"},
			{Path: "fw_info.extended_minor", Value: "39"},
			{Path: "fw_info.extended_sub_minor", Value: "1010"},
		}); err != nil {
			return nil, err
		}
		fw := emu.NewMapFirmware(map[uint16]int{uint16(reg.ID): plan.Bytes})
		fw.Values[uint16(reg.ID)] = img
		out = append(out, sysfs.DeviceEntry{BDF: d.BDF, Dev: emu.New(emu.Config{Firmware: fw}), NUMANode: -1, Netdevs: d.Netdevs})
	}
	return out, nil
}

func spec(t *testing.T, p payload) nsrun.Spec {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return nsrun.Spec{Payload: b, KillGrace: 500 * time.Millisecond}
}

func oneDevice(t *testing.T) nsrun.Spec {
	return spec(t, payload{Devices: []devSpec{{BDF: bdf, PSID: psid, Netdevs: []string{"eth2"}}}})
}

func skipLoudly(t *testing.T, why string) {
	t.Helper()
	msg := fmt.Sprintf("SKIPPING %s: %s", t.Name(), why)
	fmt.Fprintln(os.Stderr, "*** "+msg)
	t.Skip(msg)
}

// needNamespaces skips unless Run can work here.
func needNamespaces(t *testing.T) {
	t.Helper()
	if err := nsrun.Check(); err != nil {
		skipLoudly(t, err.Error())
	}
}

func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		skipLoudly(t, name+" is not installed (Debian/Ubuntu: apt-get install mstflint)")
	}
}

type result struct {
	code           int
	err            error
	stdout, stderr string
}

func run(t *testing.T, ctx context.Context, s nsrun.Spec, argv ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code, err := nsrun.Run(ctx, s, argv, nil, &out, &errb)
	r := result{code, err, out.String(), errb.String()}
	t.Logf("%q -> %d, %v\nstdout:\n%s\nstderr:\n%s", argv, code, err, r.stdout, r.stderr)
	assertHostClean(t)
	return r
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// assertHostClean checks nothing of ours is mounted in this (the host's)
// mount namespace.
func assertHostClean(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "fuse.cxray") || strings.Contains(l, " "+sysfs.DefaultMountpoint+" ") {
			t.Errorf("left in the host namespace: %s", l)
		}
	}
}

// TestInsideView shows what the command sees: only the emulated function,
// served by our FUSE file system; and the host sees nothing of it.
func TestInsideView(t *testing.T) {
	needNamespaces(t)
	before, _ := os.ReadFile("/proc/self/mountinfo")
	r := run(t, ctxT(t, 20*time.Second), oneDevice(t), "sh", "-c",
		`ls /sys/bus/pci/devices; grep -c 'fuse.cxray' /proc/self/mountinfo; cat /sys/bus/pci/devices/*/device; ls /sys/bus/pci/devices/*/net;`+
			`grep -c ' /tmp/mstflint_lockfiles .* tmpfs ' /proc/self/mountinfo;`+
			// The class directories: only the emulated interface, linked to
			// its function; the other classes are still there.
			`ls /sys/class/net; basename $(readlink -f /sys/class/net/eth2/device); ls /sys/class/infiniband | wc -l; test -d /sys/class/tty && echo tty`)
	if r.err != nil || r.code != 0 {
		t.Fatalf("Run: %d, %v", r.code, r.err)
	}
	// Three mounts of the one FUSE tree: the devices and the two classes.
	if want := bdf + "\n3\n0x1021\neth2\n1\neth2\n" + bdf + "\n0\ntty\n"; r.stdout != want {
		t.Errorf("inside the namespace:\n%s\nwant:\n%s", r.stdout, want)
	}
	after, _ := os.ReadFile("/proc/self/mountinfo")
	if !bytes.Equal(before, after) {
		t.Errorf("the host's mount table changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestMissingMountpoint: a mount point under /sys that does not exist (a
// machine without PCI) is made on a tmpfs inside the namespace.
func TestMissingMountpoint(t *testing.T) {
	needNamespaces(t)
	s := oneDevice(t)
	s.Mountpoint = "/sys/bus/cxray-test-nopci/devices"
	r := run(t, ctxT(t, 20*time.Second), s, "sh", "-c", "cat /sys/bus/cxray-test-nopci/devices/"+bdf+"/vendor")
	r2 := run(t, ctxT(t, 20*time.Second), s, "sh", "-c", "test -d /sys/bus/cpu && echo kept")
	if r2.stdout != "kept\n" {
		t.Errorf("the covered /sys/bus lost its other entries: %q %q", r2.stdout, r2.stderr)
	}
	if r.err != nil || r.code != 0 || r.stdout != "0x15b3\n" || !strings.Contains(r.stderr, "entries bound back") {
		t.Errorf("got %d, %v, %q, %q", r.code, r.err, r.stdout, r.stderr)
	}
	if _, err := os.Stat("/sys/bus/cxray-test-nopci"); err == nil {
		t.Error("the made-up directory is visible in the host namespace")
	}
	s.Mountpoint = "/nonexistent-cxray/devices"
	r = run(t, ctxT(t, 20*time.Second), s, "true")
	if !errors.Is(r.err, nsrun.ErrSetup) || !strings.Contains(r.err.Error(), "does not exist") {
		t.Errorf("outside /sys: %d, %v", r.code, r.err)
	}
}

func TestExitStatus(t *testing.T) {
	needNamespaces(t)
	r := run(t, ctxT(t, 20*time.Second), oneDevice(t), "sh", "-c", "echo out; echo err >&2; exit 7")
	if r.err != nil || r.code != 7 || r.stdout != "out\n" || r.stderr != "err\n" {
		t.Errorf("got %d, %v, %q, %q; want 7, nil, out, err", r.code, r.err, r.stdout, r.stderr)
	}
}

func TestStdin(t *testing.T) {
	needNamespaces(t)
	var out bytes.Buffer
	code, err := nsrun.Run(ctxT(t, 20*time.Second), oneDevice(t), []string{"cat"}, strings.NewReader("hello\n"), &out, os.Stderr)
	if err != nil || code != 0 || out.String() != "hello\n" {
		t.Errorf("cat: %d, %v, %q", code, err, out.String())
	}
}

// TestCommandKilled: a command ended by SIGTERM is reported as 128+15,
// cleanly.
func TestCommandKilled(t *testing.T) {
	needNamespaces(t)
	r := run(t, ctxT(t, 20*time.Second), oneDevice(t), "sh", "-c", "kill -TERM $$; sleep 10")
	if r.err != nil || r.code != 143 {
		t.Errorf("got %d, %v; want 143, nil", r.code, r.err)
	}
}

// cancelOnOutput cancels a context at the command's first output, so the
// test ends ctx only once the command is surely running.
// (Not an embedded bytes.Buffer: io.Copy would use its ReadFrom and
// bypass Write.)
type cancelOnOutput struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	cancel context.CancelFunc
}

func (c *cancelOnOutput) Write(p []byte) (int, error) {
	c.cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func (c *cancelOnOutput) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// TestContextEnds: when ctx ends, the command gets SIGTERM, and if it
// ignores that, it and its children are killed after the grace period.
func TestContextEnds(t *testing.T) {
	needNamespaces(t)
	for _, c := range []struct {
		script string
		code   int
	}{
		{"echo running; exec sleep 30", 143},
		{`trap "" TERM; echo running; sleep 30.25; echo survived`, 137}, // killed after KillGrace
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		out := &cancelOnOutput{cancel: cancel}
		start := time.Now()
		code, err := nsrun.Run(ctx, oneDevice(t), []string{"sh", "-c", c.script}, nil, out, os.Stderr)
		cancel()
		t.Logf("%s -> %d, %v after %v, output %q", c.script, code, err, time.Since(start), out.String())
		if !errors.Is(err, context.Canceled) || code != c.code || out.String() != "running\n" {
			t.Errorf("%s: %d, %v, %q; want %d and the context's error", c.script, code, err, out.String(), c.code)
		}
		// Well before the command's own 30 s: generous for a loaded
		// machine (the grace period is 0.5 s).
		if d := time.Since(start); d > 25*time.Second {
			t.Errorf("took %v", d)
		}
		assertHostClean(t)
	}
	assertNoProcess(t, "30.25")
}

// TestSignalForwarded: a SIGTERM sent to the caller while Run runs goes to
// the command, and Run still returns its status.
func TestSignalForwarded(t *testing.T) {
	needNamespaces(t)
	out := &cancelOnOutput{cancel: func() { _ = syscall.Kill(os.Getpid(), syscall.SIGTERM) }}
	code, err := nsrun.Run(ctxT(t, 20*time.Second), oneDevice(t), []string{"sh", "-c", "echo running; exec sleep 30"}, nil, out, os.Stderr)
	if err != nil || code != 143 {
		t.Errorf("got %d, %v; want 143 (SIGTERM passed on), nil", code, err)
	}
	assertHostClean(t)
}

// TestLeftoversStopped: background jobs the command leaves are stopped
// before the file system goes away.
func TestLeftoversStopped(t *testing.T) {
	needNamespaces(t)
	r := run(t, ctxT(t, 20*time.Second), oneDevice(t), "sh", "-c", "sleep 30.5 & exit 3")
	if r.err != nil || r.code != 3 {
		t.Errorf("got %d, %v; want 3, nil", r.code, r.err)
	}
	assertNoProcess(t, "30.5")
}

// assertNoProcess checks that no "sleep ARG" runs any more.
func assertNoProcess(t *testing.T, arg string) {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && string(b) == "sleep\x00"+arg+"\x00" {
			t.Errorf("process %s (sleep %s) survived the run", e.Name(), arg)
		}
	}
}

func TestSetupErrors(t *testing.T) {
	needNamespaces(t)
	ctx := ctxT(t, 20*time.Second)

	r := run(t, ctx, oneDevice(t), "no-such-tool-xyz")
	if !errors.Is(r.err, nsrun.ErrCommandNotFound) || r.code != -1 || !strings.Contains(r.err.Error(), "PATH") {
		t.Errorf("missing command: %d, %v", r.code, r.err)
	}
	r = run(t, ctx, oneDevice(t), "mstnosuchtool")
	if r.err == nil || !strings.Contains(r.err.Error(), "apt-get install mstflint") {
		t.Errorf("missing mst tool: %v; want an install hint", r.err)
	}
	r = run(t, ctx, spec(t, payload{Fail: "no such profile cx9"}), "true")
	if !errors.Is(r.err, nsrun.ErrSetup) || !strings.Contains(r.err.Error(), "no such profile cx9") {
		t.Errorf("builder failure: %d, %v", r.code, r.err)
	}
	r = run(t, ctx, spec(t, payload{Devices: []devSpec{{BDF: "3:0.0", PSID: psid}}}), "true")
	if !errors.Is(r.err, nsrun.ErrSetup) || !strings.Contains(r.err.Error(), "bad PCI address") {
		t.Errorf("bad address: %d, %v", r.code, r.err)
	}
	if _, err := nsrun.Run(ctx, oneDevice(t), nil, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "no command") {
		t.Errorf("empty argv: %v", err)
	}
	// A binary that does not call Child cannot act as the helper.
	s := oneDevice(t)
	s.Exe = "/bin/true"
	r = run(t, ctx, s, "true")
	if !errors.Is(r.err, nsrun.ErrSetup) || !strings.Contains(r.err.Error(), "nsrun.Child") {
		t.Errorf("helper without Child: %d, %v", r.code, r.err)
	}
}

// TestMstregMGIR runs NVIDIA's unmodified mstreg against the emulator.
func TestMstregMGIR(t *testing.T) {
	needNamespaces(t)
	needTool(t, "mstreg")
	r := run(t, ctxT(t, 60*time.Second), oneDevice(t), "mstreg", "-d", bdf, "--reg_name", "MGIR", "--get")
	if r.err != nil || r.code != 0 {
		t.Fatalf("mstreg: %d, %v", r.code, r.err)
	}
	// mstreg prints the PSID byte by byte, "psid[i] | 0x000000XX".
	padded := psid + strings.Repeat("\x00", 16-len(psid))
	for i := 0; i < 16; i++ {
		re := regexp.MustCompile(fmt.Sprintf(`(?m)^psid\[%d\]\s+\|\s+0x%08x$`, i, padded[i]))
		if !re.MatchString(r.stdout) {
			t.Errorf("mstreg output lacks psid[%d] = 0x%02x (%q)", i, padded[i], padded[i])
		}
	}
	if !strings.Contains(r.stdout, "0x000003f2") {
		t.Errorf("mstreg output lacks extended_sub_minor 1010 (0x000003f2)")
	}
}

// TestMstregForms: the device name spellings mstflint accepts all reach
// the emulated function.
func TestMstregForms(t *testing.T) {
	needNamespaces(t)
	needTool(t, "mstreg")
	script := `for d in 03:00.0 pciconf-03:00.0 /sys/bus/pci/devices/0000:03:00.0/config; do
  mstreg -d $d --reg_name MGIR --get > /dev/null || { echo "failed: $d"; exit 1; }
done`
	r := run(t, ctxT(t, 60*time.Second), oneDevice(t), "sh", "-c", script)
	if r.err != nil || r.code != 0 {
		t.Fatalf("mstreg name forms: %d, %v", r.code, r.err)
	}
}

// TestMstregParallel: several tools at once share the function; the
// gateway semaphore, served through FUSE, keeps them apart and each reads
// the right register.
//
// mstflint takes its lock file around every config access and gives up on
// a busy lock after a few milliseconds of retries. On hardware an access
// takes microseconds; through FUSE it is a round trip to this process, and
// on a loaded machine a holder can be descheduled for longer than that
// budget, so a tool can fail with "failed to perform lock operation". That
// is mstflint's limit, not a protocol error: each tool here may retry, up to
// ten times (three were not enough at load 8 on two CPUs), and runs at nice
// 10 so that this process, the FUSE server, outranks it and lock holds stay
// short. What must hold is that every tool reads the right register.
func TestMstregParallel(t *testing.T) {
	needNamespaces(t)
	needTool(t, "mstreg")
	if raceDetector {
		skipLoudly(t, "the race detector makes FUSE round trips far longer than mstflint's lock-retry budget")
	}
	script := `one() {
  for a in 1 2 3 4 5 6 7 8 9 10; do
    nice -n 10 mstreg -d 0000:03:00.0 --reg_name MGIR --get > /tmp/mgir.$$.$1 2>/dev/null && grep -q '^psid\[0\] *| 0x00000043$' /tmp/mgir.$$.$1 && return 0
    echo "tool $1: attempt $a failed (lock contention)" >&2
  done
  return 1
}
pids=""; for i in 1 2 3 4; do one $i & pids="$pids $!"; done
fail=0; for p in $pids; do wait $p || fail=1; done; rm -f /tmp/mgir.$$.*; exit $fail`
	r := run(t, ctxT(t, 3*time.Minute), oneDevice(t), "sh", "-c", script)
	if r.err != nil || r.code != 0 {
		t.Fatalf("4 mstreg in parallel: %d, %v", r.code, r.err)
	}
	if n := strings.Count(r.stderr, "attempt"); n > 0 {
		t.Logf("%d of the parallel attempts hit mstflint's lock-retry limit and were retried", n)
	}
}

// TestNoFUSEDescriptorInCommand: the command holds no descriptor of the
// FUSE connection that serves its sysfs (issue 26.6). One it inherited
// would keep the connection alive past its server, and a process left
// using it would sleep in fuse_flush, unkillable.
func TestNoFUSEDescriptorInCommand(t *testing.T) {
	needNamespaces(t)
	r := run(t, ctxT(t, 20*time.Second), oneDevice(t), "sh", "-c",
		`for f in /proc/$$/fd/*; do echo "$f $(readlink $f)"; done; cat /sys/bus/pci/devices/*/vendor`)
	if r.err != nil || r.code != 0 {
		t.Fatalf("Run: %d, %v", r.code, r.err)
	}
	if !strings.Contains(r.stdout, "0x15b3") {
		t.Fatalf("the command did not read the emulated sysfs:\n%s", r.stdout)
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasSuffix(l, " /dev/fuse") {
			t.Errorf("the command holds the FUSE device: %s", l)
		}
	}
}

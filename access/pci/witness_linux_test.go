package pci

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func openSlot(t *testing.T, dir string, n int) (*Witness, *WitnessSlot) {
	t.Helper()
	w, err := OpenWitness(dir, "03:00.0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, w.Slot(n)
}

func TestWitnessRecordRoundTrip(t *testing.T) {
	r := record{value: 0xDEADBEEF, procID: procID{pid: 42, start: 12345, pidNS: "pid:[4026531836]", mntNS: "mnt:[4026531841]"}}
	b := encodeRecord(r)
	if len(b) != recordSize {
		t.Fatalf("record is %d bytes", len(b))
	}
	got, ok := decodeRecord(b)
	if !ok {
		t.Fatalf("%q does not decode", b)
	}
	if diff := cmp.Diff(r, got, cmp.AllowUnexported(record{}, procID{})); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	b[20] ^= 1 // a torn or corrupted record
	if _, ok := decodeRecord(b); ok {
		t.Error("a corrupted record decoded")
	}
	if _, ok := decodeRecord(make([]byte, recordSize)); ok {
		t.Error("zeros decoded as a record")
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeRecord(record{value: 1, procID: procID{pid: 1, start: 1, pidNS: "a", mntNS: "b"}}))
	f.Add([]byte("cxray-witness v1 00000001 1 1 a b 00000000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := decodeRecord(b)
		if !ok {
			return
		}
		// Whatever decodes re-encodes to a record that decodes the same.
		if r2, ok := decodeRecord(encodeRecord(r)); !ok || r2 != r {
			t.Fatalf("%q decoded to %+v, which does not survive a round trip (%+v, %v)", b, r, r2, ok)
		}
		if r.pid <= 0 {
			t.Fatalf("decoded a record with pid %d", r.pid)
		}
	})
}

// The lock is exclusive between two opens (two processes), and closing
// the file drops it, as the kernel does when a process dies.
func TestWitnessLock(t *testing.T) {
	dir := t.TempDir()
	w1, s1 := openSlot(t, dir, WitnessGateway)
	_, s2 := openSlot(t, dir, WitnessGateway)
	_, other := openSlot(t, dir, WitnessICMD)
	if ok, err := s1.TryLock(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, _ := s2.TryLock(); ok {
		t.Fatal("two holders of one slot")
	}
	if ok, _ := other.TryLock(); !ok {
		t.Fatal("the ICMD slot is blocked by the gateway slot")
	}
	w1.Close()
	if ok, _ := s2.TryLock(); !ok {
		t.Fatal("the lock survived its file's close")
	}
}

// Orphaned is true only for the recorded value, in this namespace, of a
// writer that is gone or that let the lock go; a reused PID is unknown.
func TestWitnessOrphaned(t *testing.T) {
	dir := t.TempDir()
	w, s := openSlot(t, dir, WitnessICMD)
	write := func(r record) {
		t.Helper()
		if _, err := w.f.WriteAt(encodeRecord(r), int64(recordSize*(WitnessICMD+1))); err != nil {
			t.Fatal(err)
		}
	}
	relock := func() {
		t.Helper()
		s.Unlock()
		if ok, err := s.TryLock(); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	self := w.self
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skipf("cannot run true to get a dead PID: %v", err)
	}
	deadPID := dead.ProcessState.Pid()

	cases := []struct {
		name string
		rec  record
		v    uint32
		want bool
	}{
		{"dead writer", record{value: 7, procID: procID{pid: deadPID, start: 1, pidNS: self.pidNS, mntNS: self.mntNS}}, 7, true},
		{"other value", record{value: 7, procID: procID{pid: deadPID, start: 1, pidNS: self.pidNS, mntNS: self.mntNS}}, 8, false},
		{"other mount namespace (another emulator run)", record{value: 7, procID: procID{pid: deadPID, start: 1, pidNS: self.pidNS, mntNS: "mnt:[1]"}}, 7, false},
		{"other PID namespace", record{value: 7, procID: procID{pid: deadPID, start: 1, pidNS: "pid:[1]", mntNS: self.mntNS}}, 7, false},
		{"this process, lock let go", record{value: 7, procID: self}, 7, true},
		{"PID reused by a newer process", record{value: 7, procID: procID{pid: os.Getppid(), start: 1, pidNS: self.pidNS, mntNS: self.mntNS}}, 7, false},
	}
	for _, c := range cases {
		write(c.rec)
		relock()
		if _, got := s.Orphaned(c.v); got != c.want {
			t.Errorf("%s: Orphaned = %v, want %v", c.name, got, c.want)
		}
	}
	s.Unlock()
	if _, got := s.Orphaned(7); got {
		t.Error("Orphaned without the lock held")
	}
}

// DeadPIDHolder: a live PID is never dead; a PID with no process counts
// as gone only in the initial PID namespace and when nothing else has the
// function open.
func TestDeadPIDHolder(t *testing.T) {
	if why, dead := DeadPIDHolder(uint32(os.Getppid()), "0000:7f:1f.7"); dead || !strings.Contains(why, "is running") {
		t.Errorf("a live process: dead=%v (%s)", dead, why)
	}
	if why, dead := DeadPIDHolder(0x7E57AB1E, "0000:7f:1f.7"); dead || !strings.Contains(why, "not a process ID") {
		t.Errorf("a value above PID_MAX: dead=%v (%s)", dead, why)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	ns, _ := os.Readlink("/proc/self/ns/pid")
	why, dead := DeadPIDHolder(uint32(gone.ProcessState.Pid()), "0000:7f:1f.7")
	if dead != (ns == initPIDNS) {
		t.Errorf("exited process in PID namespace %s: dead=%v (%s)", ns, dead, why)
	}
	// Another process with the function's lock file open makes it unknown.
	dir := t.TempDir()
	path := dir + "/mstflint_lockfiles/0000:7f:1f.7_config"
	os.MkdirAll(dir+"/mstflint_lockfiles", 0o777)
	os.WriteFile(path, nil, 0o666)
	user := exec.Command("sleep", "30")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	user.ExtraFiles = []*os.File{f}
	if err := user.Start(); err != nil {
		t.Skipf("cannot start sleep: %v", err)
	}
	defer user.Process.Kill()
	f.Close()
	if why, dead := DeadPIDHolder(uint32(gone.ProcessState.Pid()), "0000:7f:1f.7"); dead || (ns == initPIDNS && !strings.Contains(why, strconv.Itoa(user.Process.Pid))) {
		t.Errorf("another process has the function's lock file open: dead=%v (%s)", dead, why)
	}
}

package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.json")
	os.WriteFile(p, []byte("old"), 0o644)
	if err := Write(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	ents, _ := os.ReadDir(dir)
	if string(b) != "new" || len(ents) != 1 {
		t.Errorf("content %q, %d files left", b, len(ents))
	}
	if err := Write(filepath.Join(dir, "missing", "x.json"), nil); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}

// deadPID is a process ID that no process has: a child that has exited
// and been reaped.
func deadPID(t *testing.T) int {
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Skipf("SKIP: cannot start /bin/true to get a dead process ID: %v", err)
	}
	p.Wait()
	return p.Pid
}

// What a killed writer left is removed by the next write to the target;
// what a running writer (this process, another live one) is writing is not.
func TestStaleTempFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "fleet.json")
	mk := func(name string, age time.Duration) string {
		f := filepath.Join(dir, name)
		os.WriteFile(f, []byte("partial"), 0o600)
		old := time.Now().Add(-age)
		os.Chtimes(f, old, old)
		return f
	}
	dead := mk(fmt.Sprintf(".fleet.json.tmp-%d-123", deadPID(t)), 0)
	live := mk(fmt.Sprintf(".fleet.json.tmp-%d-456", os.Getppid()), time.Hour)
	mine := mk(fmt.Sprintf(".fleet.json.tmp-%d-789", os.Getpid()), time.Hour)
	oldStyle := mk(".fleet.json.tmp-2093847561", time.Hour)
	freshOld := mk(".fleet.json.tmp-1111", time.Second)
	other := mk(".other.json.tmp-1-1", time.Hour)
	if err := Write(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]bool{dead: false, live: true, mine: true, oldStyle: false, freshOld: true, other: true} {
		if _, err := os.Stat(f); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", filepath.Base(f), err == nil, want)
		}
	}
}

// The target keeps its mode; a new file is 0644, not the temp file's 0600.
func TestMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a")
	if err := Write(p, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != NewMode {
		t.Errorf("new file mode %v", st.Mode().Perm())
	}
	os.Chmod(p, 0o640)
	if err := Write(p, []byte("y")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
		t.Errorf("kept mode %v", st.Mode().Perm())
	}
}

// A symbolic link is followed: the link stays, its target is replaced,
// also through a chain of links and to a target that does not exist yet.
func TestSymlink(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "data"), 0o755)
	real := filepath.Join(dir, "data", "snap.json")
	os.WriteFile(real, []byte("old"), 0o600)
	link := filepath.Join(dir, "current.json")
	os.Symlink("data/snap.json", link)
	link2 := filepath.Join(dir, "latest.json")
	os.Symlink(link, link2)
	if err := Write(link2, []byte("new")); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{link, link2} {
		if st, err := os.Lstat(l); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a link: %v", l, err)
		}
	}
	b, _ := os.ReadFile(real)
	st, _ := os.Stat(real)
	if string(b) != "new" || st.Mode().Perm() != 0o600 {
		t.Errorf("target %q mode %v", b, st.Mode().Perm())
	}
	dangling := filepath.Join(dir, "next.json")
	os.Symlink("data/new.json", dangling)
	if err := Write(dangling, []byte("n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "data", "new.json")); string(b) != "n" {
		t.Errorf("dangling link target: %q", b)
	}
	loop := filepath.Join(dir, "loop")
	os.Symlink("loop", loop)
	if err := Write(loop, nil); err == nil {
		t.Error("a link loop was written")
	}
}

// Check refuses before the work what Put cannot write; Put writes a
// device or a pipe straight, and a file atomically.
func TestCheckAndPut(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{
		dir:                                "is a directory",
		filepath.Join(dir, "no", "x.json"): "does not exist",
		filepath.Join(dir, "file.json"):    "",
		os.DevNull:                         "",
	} {
		err := Check(path)
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%s) = %v, want %q", path, err, want)
		}
	}
	if err := Put(os.DevNull, []byte("x")); err != nil {
		t.Errorf("Put(%s): %v", os.DevNull, err)
	}
	f := filepath.Join(dir, "file.json")
	if err := Put(f, []byte("data\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(f); string(b) != "data\n" {
		t.Errorf("Put wrote %q", b)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*tmp-*")); len(m) != 0 {
		t.Errorf("Check or Put left %v", m)
	}
}

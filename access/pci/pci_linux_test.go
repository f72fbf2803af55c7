package pci

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func tempConfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config")
	b := make([]byte, 256)
	b[0], b[1] = 0xb3, 0x15
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigFileReadWrite(t *testing.T) {
	p := tempConfig(t)
	c, err := OpenConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.WriteAt([]byte{1, 2, 3, 4}, 0xC4); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 6)
	if _, err := c.ReadAt(got, 0xC2); err != nil || !bytes.Equal(got, []byte{0, 0, 1, 2, 3, 4}) {
		t.Errorf("read %x, %v", got, err)
	}
	// pwrite goes straight to the file: another reader sees it at once.
	raw, _ := os.ReadFile(p)
	if !bytes.Equal(raw[0xC4:0xC8], []byte{1, 2, 3, 4}) {
		t.Error("write not visible in the file")
	}
	_, err = c.ReadAt(make([]byte, 8), 252)
	if !errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "beyond the end of config space") {
		t.Errorf("read past the end: %v", err)
	}
}

func TestOpenConfigErrors(t *testing.T) {
	_, err := OpenConfig(filepath.Join(t.TempDir(), "0000:99:00.0", "config"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "cxray status") {
		t.Errorf("missing device: %v", err)
	}
	if os.Geteuid() == 0 {
		t.Log("running as root: the permission case cannot be provoked with file modes")
		return
	}
	p := tempConfig(t)
	os.Chmod(p, 0o400)
	if _, err := OpenConfig(p); !errors.Is(err, ErrPermission) || !strings.Contains(err.Error(), "root") {
		t.Errorf("read-only file: %v, want ErrPermission naming root", err)
	}
}

func TestLockPath(t *testing.T) {
	for in, want := range map[string]string{
		"0000:03:00.0": "/x/0000:03:00.0_config",
		"03:00.0":      "/x/0000:03:00.0_config",
		"0001:AF:1F.7": "/x/0001:af:1f.7_config",
	} {
		if got, err := LockPath("/x", in); err != nil || got != want {
			t.Errorf("LockPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "03:00", "0000:03:00.8", "0000:03:20.0", "mlx5_0", "00000:03:00.0", "0000:03:00.0/config", "0000:100:00.0"} {
		if _, err := LockPath("/x", bad); err == nil {
			t.Errorf("LockPath(%q) accepted", bad)
		}
	}
}

func TestFileLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mstflint_lockfiles")
	a, err := OpenLock(dir, "03:00.0")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if st, err := os.Stat(a.Path()); err != nil || st.Mode().IsDir() || filepath.Base(a.Path()) != "0000:03:00.0_config" {
		t.Fatalf("lock file %s: %v", a.Path(), err)
	}
	b, err := OpenLock(dir, "0000:03:00.0") // same file, second open file description
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	if ok, err := a.TryLock(); !ok || err != nil {
		t.Fatalf("first TryLock: %v %v", ok, err)
	}
	if ok, _ := b.TryLock(); ok {
		t.Fatal("second holder got the lock")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := b.Lock(ctx); !errors.Is(err, ErrLockBusy) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Lock while held: %v, want ErrLockBusy", err)
	}
	if err := a.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := b.Lock(context.Background()); err != nil {
		t.Errorf("Lock after release: %v", err)
	}
	b.Unlock()
}

type memConfig struct {
	mu sync.Mutex
	b  [256]byte
}

func (m *memConfig) ReadAt(p []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return copy(p, m.b[off:]), nil
}

func (m *memConfig) WriteAt(p []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return copy(m.b[off:], p), nil
}

func TestLockedConfig(t *testing.T) {
	dir := t.TempDir()
	l, _ := OpenLock(dir, "03:00.0")
	other, _ := OpenLock(dir, "03:00.0")
	defer l.Close()
	defer other.Close()
	cs := WithLock(&memConfig{}, l, 20*time.Millisecond)
	if _, err := cs.WriteAt([]byte{9}, 4); err != nil {
		t.Fatal(err)
	}
	if ok, _ := other.TryLock(); !ok {
		t.Fatal("lock still held after a call")
	}
	b := make([]byte, 1)
	if _, err := cs.ReadAt(b, 4); !errors.Is(err, ErrLockBusy) {
		t.Errorf("read while another process holds the lock: %v, want ErrLockBusy", err)
	}
	other.Unlock()
	if _, err := cs.ReadAt(b, 4); err != nil || b[0] != 9 {
		t.Errorf("read %v, %v", b, err)
	}
}

// The errors users meet most: not root, and kernel lockdown refusing writes.
func TestErrorAdvice(t *testing.T) {
	err := openError("/sys/x/config", &fs.PathError{Op: "open", Path: "/sys/x/config", Err: unix.EACCES})
	if !errors.Is(err, ErrPermission) || !strings.Contains(err.Error(), "needs root") || !strings.Contains(err.Error(), "kernel:mlx5_0") {
		t.Errorf("EACCES: %v", err)
	}
	err = writeError("/sys/x/config", 0xD0, &fs.PathError{Op: "write", Path: "/sys/x/config", Err: unix.EPERM})
	for _, want := range []string{"lockdown", "kernel:mlx5_0", "Secure Boot"} {
		if !errors.Is(err, ErrLockdown) || !strings.Contains(err.Error(), want) {
			t.Errorf("EPERM on write: %v lacks %q", err, want)
		}
	}
	if err := writeError("/sys/x/config", 0, unix.EIO); !strings.Contains(err.Error(), "not responding") {
		t.Errorf("EIO: %v", err)
	}
}

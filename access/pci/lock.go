package pci

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cxray/cxray/internal/clock"
)

// LockDir is where mstflint keeps its per-function lock files. Using the same
// files makes cxray and mstflint tools serialise their config-space accesses.
const LockDir = "/tmp/mstflint_lockfiles"

// ErrLockBusy: another process held the lock file past the deadline.
var ErrLockBusy = errors.New("lock file busy")

// LockPath returns the lock file for a PCI function in dir, named exactly as
// mstflint names it for config access: "DDDD:BB:DD.F_config" in lower-case hex.
// bdf is "DDDD:BB:DD.F" or "BB:DD.F" (domain 0).
func LockPath(dir, bdf string) (string, error) {
	d, b, s, f, err := parseBDF(bdf)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, fmt.Sprintf("%04x:%02x:%02x.%x_config", d, b, s, f)), nil
}

func parseBDF(bdf string) (dom, bus, dev, fn uint64, err error) {
	bad := func() error {
		return fmt.Errorf("bad PCI address %q: want DDDD:BB:DD.F or BB:DD.F in hex (e.g. 0000:03:00.0)", bdf)
	}
	parts := strings.Split(bdf, ":")
	if len(parts) == 2 {
		parts = append([]string{"0"}, parts...)
	}
	if len(parts) != 3 {
		return 0, 0, 0, 0, bad()
	}
	df := strings.Split(parts[2], ".")
	if len(df) != 2 {
		return 0, 0, 0, 0, bad()
	}
	fields := []string{parts[0], parts[1], df[0], df[1]}
	limits := []uint64{0xffff, 0xff, 0x1f, 7}
	var v [4]uint64
	for i, s := range fields {
		if s == "" || len(s) > 4 {
			return 0, 0, 0, 0, bad()
		}
		n, perr := strconv.ParseUint(s, 16, 32)
		if perr != nil || n > limits[i] {
			return 0, 0, 0, 0, bad()
		}
		v[i] = n
	}
	return v[0], v[1], v[2], v[3], nil
}

// FileLock is an flock(2) lock on a per-function lock file shared with
// mstflint. It is advisory and only orders accesses between cooperating
// processes; device-level exclusion is the gateway semaphore.
type FileLock struct {
	f    *os.File
	path string
}

// Path returns the lock file's name.
func (l *FileLock) Path() string { return l.path }

// Lock takes the lock, retrying with a short back-off until ctx ends. mstflint
// holds it only for single pread/pwrite calls, so waits are normally brief.
func (l *FileLock) Lock(ctx context.Context) error {
	wait := 10 * time.Microsecond
	for {
		ok, err := l.TryLock()
		if err != nil || ok {
			return err
		}
		if err := (clock.Real{}).Sleep(ctx, wait); err != nil {
			return fmt.Errorf("lock file %s is held by another process (an mstflint tool or another cxray?); "+
				"gave up waiting: %w (%w)", l.path, ErrLockBusy, err)
		}
		wait = min(wait*2, time.Millisecond)
	}
}

// Close releases the lock (if held) and closes the file.
func (l *FileLock) Close() error { return l.f.Close() }

// LockedConfig takes a FileLock around every call, as mstflint does around
// every pread/pwrite of the config file, so cxray and mstflint tools running
// at the same time interleave whole calls. Holding the lock any longer (say,
// for a whole register access) would make concurrent mstflint tools fail
// after their short lock retry instead of waiting on the gateway semaphore.
type LockedConfig struct {
	cs   ConfigSpace
	lock *FileLock
	wait time.Duration
}

// WithLock wraps cs so that each call holds lock; each wait for the lock is
// bounded by wait (mstflint gives up after a few milliseconds; 1s is generous).
func WithLock(cs ConfigSpace, lock *FileLock, wait time.Duration) *LockedConfig {
	return &LockedConfig{cs: cs, lock: lock, wait: wait}
}

func (c *LockedConfig) do(fn func() (int, error)) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.wait)
	defer cancel()
	if err := c.lock.Lock(ctx); err != nil {
		return 0, err
	}
	n, err := fn()
	if uerr := c.lock.Unlock(); err == nil && uerr != nil {
		err = uerr
	}
	return n, err
}

// ReadAt locks, reads and unlocks.
func (c *LockedConfig) ReadAt(p []byte, off int64) (int, error) {
	return c.do(func() (int, error) { return c.cs.ReadAt(p, off) })
}

// WriteAt locks, writes and unlocks.
func (c *LockedConfig) WriteAt(p []byte, off int64) (int, error) {
	return c.do(func() (int, error) { return c.cs.WriteAt(p, off) })
}

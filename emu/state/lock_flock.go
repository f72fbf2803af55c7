//go:build (unix && !linux) || cxray_flock

package state

import (
	"errors"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// Unix systems without OFD locks (macOS, the BSDs): flock(2), which also
// belongs to the open file but covers a whole file. The users lock is a
// flock of the log itself; the access lock, which must not conflict with
// it, is a flock of a companion file PATH.lock opened for each hold.
// (Build with -tags cxray_flock to test this half on Linux.)

var (
	accessMu    sync.Mutex
	accessFiles = map[*os.File]*os.File{}
)

func flockOp(typ lockType) int {
	switch typ {
	case lockShared:
		return unix.LOCK_SH | unix.LOCK_NB
	case lockExclusive:
		return unix.LOCK_EX | unix.LOCK_NB
	}
	return unix.LOCK_UN
}

func flock(f *os.File, typ lockType) (bool, error) {
	for {
		err := unix.Flock(int(f.Fd()), flockOp(typ))
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		}
		return false, err
	}
}

// tryLock sets the lock without waiting; false when another open file
// holds a conflicting one.
func tryLock(f *os.File, start int64, typ lockType) (bool, error) {
	if start != lockAccess {
		return flock(f, typ)
	}
	accessMu.Lock()
	defer accessMu.Unlock()
	if typ == lockNone {
		c := accessFiles[f]
		delete(accessFiles, f)
		if c == nil {
			return true, nil
		}
		return true, c.Close() // closing drops the flock
	}
	if accessFiles[f] != nil {
		return true, nil // already held through f
	}
	c, err := os.OpenFile(f.Name()+".lock", os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		return false, err
	}
	ok, err := flock(c, typ)
	if !ok {
		c.Close()
		return false, err
	}
	accessFiles[f] = c
	return true, nil
}

// lockedByOthers says whether another open file holds a lock on the byte
// (only asked of the users lock): a second open of the log tries an
// exclusive flock and gives it back.
func lockedByOthers(f *os.File, start int64) (bool, error) {
	g, err := os.Open(f.Name())
	if err != nil {
		return false, err
	}
	defer g.Close()
	ok, err := flock(g, lockExclusive)
	return !ok && err == nil, err
}

// removeLocked deletes the log f is open on while f holds its users
// lock, so nobody opens it in between.
func removeLocked(f *os.File, path string) error { return os.Remove(path) }

// dropLocks releases the access lock f's companion file holds, as
// closing f drops its own flock.
func dropLocks(f *os.File) { tryLock(f, lockAccess, lockNone) }

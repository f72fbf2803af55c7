//go:build !cxray_flock

package state

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Linux: open-file-description locks on the byte itself.

var fcntlType = map[lockType]int16{lockNone: unix.F_UNLCK, lockShared: unix.F_RDLCK, lockExclusive: unix.F_WRLCK}

// tryLock sets the lock without waiting; false when another open file
// holds a conflicting one.
func tryLock(f *os.File, start int64, typ lockType) (bool, error) {
	lk := unix.Flock_t{Type: fcntlType[typ], Whence: io.SeekStart, Start: start, Len: 1}
	err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return false, nil
	}
	return false, err
}

// lockedByOthers says whether another open file holds any lock on the
// byte (F_OFD_GETLK: would an exclusive lock conflict?).
func lockedByOthers(f *os.File, start int64) (bool, error) {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: start, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
		return false, err
	}
	return lk.Type != unix.F_UNLCK, nil
}

// removeLocked deletes the log f is open on while f holds its users
// lock, so nobody opens it in between.
func removeLocked(f *os.File, path string) error { return os.Remove(path) }

// dropLocks: closing f drops its OFD locks; nothing else holds any.
func dropLocks(*os.File) {}

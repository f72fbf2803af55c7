package state

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// Windows: LockFileEx byte-range locks, which belong to the file handle as
// OFD locks belong to the open file on Linux. They are mandatory (a locked
// byte cannot be read through another handle), so the lock bytes sit far
// beyond any log's end rather than on its first bytes.
const lockBase = 1 << 62

func overlapped(start int64) *windows.Overlapped {
	off := uint64(lockBase + start)
	return &windows.Overlapped{Offset: uint32(off), OffsetHigh: uint32(off >> 32)}
}

// tryLock sets the lock without waiting; false when another handle holds
// a conflicting one.
func tryLock(f *os.File, start int64, typ lockType) (bool, error) {
	h := windows.Handle(f.Fd())
	if typ == lockNone {
		return true, windows.UnlockFileEx(h, 0, 1, 0, overlapped(start))
	}
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if typ == lockExclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	err := windows.LockFileEx(h, flags, 0, 1, 0, overlapped(start))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION), errors.Is(err, windows.ERROR_IO_PENDING):
		return false, nil
	}
	return false, err
}

// lockedByOthers says whether another handle holds any lock on the byte:
// Windows has no test call, so it takes an exclusive lock and gives it
// back.
func lockedByOthers(f *os.File, start int64) (bool, error) {
	ok, err := tryLock(f, start, lockExclusive)
	if err != nil || !ok {
		return !ok && err == nil, err
	}
	return false, windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, overlapped(start))
}

// removeLocked deletes the log f is open on. Windows does not delete a
// file that is open, so f is closed first; a process that opens the log
// in between keeps it open, and the delete fails rather than pulling it
// from under that process.
func removeLocked(f *os.File, path string) error {
	f.Close()
	return os.Remove(path)
}

// dropLocks: closing f drops its locks; nothing else holds any.
func dropLocks(*os.File) {}

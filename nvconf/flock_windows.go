package nvconf

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// Windows has no flock: an exclusive LockFileEx lock of the file's first
// byte (the lock file holds no data) belongs to the handle the same way
// and is dropped when the process dies.

var errWouldBlock = errors.New("lock held by another process")

// Windows has no O_NOFOLLOW; the state directory is the user's profile.
const oNoFollow = 0

// privateDir: the lock directory is under the user's profile, which
// Windows' ACLs keep to that user.
func privateDir(string) error { return nil }

func tryFlock(f *os.File) error {
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &windows.Overlapped{})
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return errWouldBlock
	}
	return err
}

func unflock(f *os.File) {
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &windows.Overlapped{})
}

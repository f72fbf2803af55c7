package pci

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// OpenLock creates (if needed) and opens the lock file for bdf under dir,
// creating dir the way mstflint does (mode 0777, existing is fine). Use
// LockDir for interoperation with mstflint.
func OpenLock(dir, bdf string) (*FileLock, error) {
	path, err := LockPath(dir, bdf)
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o777); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("create lock directory %s: %w; make it writable, or remove a stale file of that name", dir, err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o777)
	if err != nil {
		return nil, fmt.Errorf("open lock file %s: %w; check its owner and mode (mstflint creates it as root)", path, err)
	}
	return &FileLock{f: f, path: path}, nil
}

// TryLock takes the lock if it is free, without waiting.
func (l *FileLock) TryLock() (bool, error) {
	for {
		err := unix.Flock(int(l.f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		}
		return false, fmt.Errorf("flock %s: %w", l.path, err)
	}
}

// Unlock releases the lock.
func (l *FileLock) Unlock() error {
	if err := unix.Flock(int(l.f.Fd()), unix.LOCK_UN); err != nil {
		return fmt.Errorf("unlock %s: %w", l.path, err)
	}
	return nil
}

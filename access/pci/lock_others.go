//go:build !linux

package pci

import (
	"github.com/cxray/cxray/internal/platform"
)

// errLockFiles is what the lock-file and witness calls return off Linux:
// mstflint's lock files only order accesses to sysfs config files.
var errLockFiles = platform.NeedsLinux("mstflint's lock files", "they order accesses to sysfs config files")

// OpenLock opens mstflint's lock file for bdf; only on Linux.
func OpenLock(dir, bdf string) (*FileLock, error) {
	if _, err := LockPath(dir, bdf); err != nil {
		return nil, err
	}
	return nil, errLockFiles
}

// TryLock takes the lock if it is free; only on Linux.
func (l *FileLock) TryLock() (bool, error) { return false, errLockFiles }

// Unlock releases the lock; only on Linux.
func (l *FileLock) Unlock() error { return errLockFiles }

// OpenWitness opens the semaphore witness for bdf; only on Linux (it uses
// open-file-description locks and /proc).
func OpenWitness(dir, bdf string) (*Witness, error) {
	if _, err := LockPath(dir, bdf); err != nil {
		return nil, err
	}
	return nil, errLockFiles
}

// TryLock takes the slot's lock; only on Linux.
func (s *WitnessSlot) TryLock() (bool, error) { return false, errLockFiles }

// Unlock releases the slot's lock; only on Linux.
func (s *WitnessSlot) Unlock() error {
	if !s.held {
		return nil
	}
	return errLockFiles
}

package pci

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// OpenWitness opens (creating if needed) the witness file for bdf in dir
// (use LockDir to sit beside mstflint's lock files).
func OpenWitness(dir, bdf string) (*Witness, error) {
	lock, err := LockPath(dir, bdf)
	if err != nil {
		return nil, err
	}
	path := strings.TrimSuffix(lock, "_config") + "_cxray"
	if err := os.Mkdir(dir, 0o777); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("create lock directory %s: %w; make it writable, or remove a stale file of that name", dir, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("open semaphore witness %s: %w; check its owner and mode, or remove it (it only records semaphore holders)", path, err)
	}
	self, err := selfID()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("semaphore witness %s: %w", path, err)
	}
	return &Witness{f: f, path: filepath.Clean(path), self: self}, nil
}

// TryLock takes the slot's lock if no other process (or other Witness of
// this process) holds it, without waiting.
func (s *WitnessSlot) TryLock() (bool, error) {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: int64(s.n), Len: 1}
	for {
		err := unix.FcntlFlock(s.w.f.Fd(), unix.F_OFD_SETLK, &lk)
		switch {
		case err == nil:
			// Keep the last holder's record before ours replaces it.
			s.held = true
			s.prev, s.have = s.read()
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EACCES):
			return false, nil
		}
		return false, fmt.Errorf("lock %s byte %d: %w", s.w.path, s.n, err)
	}
}

// Unlock releases the slot's lock.
func (s *WitnessSlot) Unlock() error {
	if !s.held {
		return nil
	}
	s.held = false
	lk := unix.Flock_t{Type: unix.F_UNLCK, Whence: 0, Start: int64(s.n), Len: 1}
	if err := unix.FcntlFlock(s.w.f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		return fmt.Errorf("unlock %s byte %d: %w", s.w.path, s.n, err)
	}
	return nil
}

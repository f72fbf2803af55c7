//go:build !windows

package nvconf

import (
	"os"
	"syscall"
)

// errWouldBlock is what tryFlock returns when another process holds the lock.
var errWouldBlock error = syscall.EWOULDBLOCK

func tryFlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

func unflock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

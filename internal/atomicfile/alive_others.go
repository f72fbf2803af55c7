//go:build !windows

package atomicfile

import (
	"errors"
	"syscall"
)

// alive says whether a process exists (signal 0 probes it; EPERM means it
// exists but is another user's).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

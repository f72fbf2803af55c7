//go:build !windows

package nvconf

import (
	"fmt"
	"os"
	"syscall"
)

// oNoFollow keeps a lock file from being a symbolic link planted by
// someone else.
const oNoFollow = syscall.O_NOFOLLOW

// privateDir refuses a lock directory that is not a directory of this user
// that only this user may write: whoever may write it could replace a lock
// file under a holder, or hold one forever.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("NV lock directory %s is not a directory; remove it", dir)
	case ok && int(st.Uid) != os.Geteuid():
		return fmt.Errorf("NV lock directory %s belongs to uid %d, not to this user (uid %d); remove it", dir, st.Uid, os.Geteuid())
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("NV lock directory %s may be written by other users (mode %v); remove it, or chmod go-w it", dir, fi.Mode().Perm())
	}
	return nil
}

// errWouldBlock is what tryFlock returns when another process holds the lock.
var errWouldBlock error = syscall.EWOULDBLOCK

func tryFlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

func unflock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

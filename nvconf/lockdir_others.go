//go:build !linux

package nvconf

// defaultLockDir: no real adapter is written on this platform (direct
// access needs Linux); every lock is in the user's state directory.
const defaultLockDir = ""

package kernel

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// hostLog reads the whole ring buffer with syslog(2): SYSLOG_ACTION_SIZE_BUFFER
// (10) for its size, SYSLOG_ACTION_READ_ALL (3) for its text; both need
// CAP_SYSLOG when kernel.dmesg_restrict is set (Documentation/admin-guide/sysctl/kernel.rst).
func hostLog() ([]byte, error) {
	n, err := unix.Klogctl(10, nil)
	if err != nil {
		return nil, fmt.Errorf("%w (%v): it needs root or CAP_SYSLOG when kernel.dmesg_restrict is set", ErrLogUnreadable, err)
	}
	if n <= 0 || n > MaxLog {
		n = MaxLog
	}
	buf := make([]byte, n)
	m, err := unix.Klogctl(3, buf)
	if err != nil {
		return nil, fmt.Errorf("%w (%v): it needs root or CAP_SYSLOG when kernel.dmesg_restrict is set", ErrLogUnreadable, err)
	}
	return buf[:m], nil
}

package kernel

import (
	"context"
	"errors"
	"fmt"
)

// MaxLog bounds the kernel log read (the ring buffer is CONFIG_LOG_BUF_SHIFT,
// at most a few MiB).
const MaxLog = 16 << 20

// ErrLogUnreadable is matched (errors.Is) when the kernel log cannot be
// read: not root and kernel.dmesg_restrict set, or not Linux.
var ErrLogUnreadable = errors.New("kernel: the kernel log is not readable")

// Log returns the kernel's log buffer as dmesg prints it without options
// ("<level>[seconds] message" lines), from Options.Log when set (tests,
// a saved log), else from the machine (syslog(2) SYSLOG_ACTION_READ_ALL,
// host_log_linux.go). It only reads.
func (d *Device) Log(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if d.opts.Log != nil {
		b, err := d.opts.Log(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrLogUnreadable, err)
		}
		if len(b) > MaxLog {
			b = b[len(b)-MaxLog:]
		}
		return b, nil
	}
	return hostLog()
}

//go:build !linux

package kernel

import "fmt"

// hostLog: the mlx5 kernel log is Linux's.
func hostLog() ([]byte, error) {
	return nil, fmt.Errorf("%w: the mlx5 kernel log is Linux's; bring its text (dmesg > FILE) and run cxray explain FILE", ErrLogUnreadable)
}

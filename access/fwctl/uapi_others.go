//go:build !linux

package fwctl

import (
	"fmt"
	"syscall"
	"unsafe"

	"github.com/cxray/cxray/internal/platform"
)

// OpenDevice opens a fwctl character device; only Linux has them.
func OpenDevice(path string) (*Device, error) {
	return nil, fmt.Errorf("open %s: %w", path, platform.NeedsLinux("fwctl", "it is a Linux character device, /dev/fwctl"))
}

func ioctl(fd, req uintptr, arg unsafe.Pointer) syscall.Errno { return syscall.ENOTTY }

package pci

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// OpenConfig opens a PCI config-space file such as
// /sys/bus/pci/devices/0000:03:00.0/config with O_RDWR|O_SYNC, as mstflint does.
func OpenConfig(path string) (*ConfigFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_SYNC, 0)
	if err != nil {
		return nil, openError(path, err)
	}
	return &ConfigFile{f: f, path: path}, nil
}

func openError(path string, err error) error {
	switch {
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return fmt.Errorf("open %s: direct PCI access needs root: run as root (sudo), "+
			"or use the read-only kernel backend (-d kernel:mlx5_0): %w (%w)", path, ErrPermission, err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("open %s: no such PCI function (removed, or a wrong address); "+
			"list adapters with `cxray status`: %w", path, err)
	}
	return fmt.Errorf("open %s: %w", path, err)
}

func writeError(path string, off int64, err error) error {
	if errors.Is(err, unix.EPERM) {
		// The file is open read-write, so EPERM on a write comes from kernel
		// lockdown (integrity mode, on by default with Secure Boot).
		return fmt.Errorf("write %s at 0x%x: the kernel is in lockdown mode (see "+
			"/sys/kernel/security/lockdown) and refuses config-space writes from user space; "+
			"use the read-only kernel backend (-d kernel:mlx5_0), or disable lockdown "+
			"(turn off Secure Boot, or boot with lockdown=none): %w (%w)", path, off, ErrLockdown, err)
	}
	return fmt.Errorf("write %s at 0x%x: %w%s", path, off, err, ioHint(err))
}

func ioHint(err error) string {
	switch {
	case errors.Is(err, unix.EIO), errors.Is(err, unix.ENODEV), errors.Is(err, unix.ENXIO):
		return " (the function is not responding: it may have been removed or be in reset; check dmesg and `lspci`)"
	}
	return ""
}

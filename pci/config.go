// Package pci gives access to a PCI function's configuration space: the
// ConfigSpace seam shared by real hardware and the emulator, the sysfs
// `config` file backend, the lock file mstflint uses, and a counting wrapper.
package pci

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// ConfigSpace is a PCI configuration space. It is the only seam between the
// real-hardware path (a sysfs `config` file) and the emulator: everything
// above it runs unchanged against either. Accesses of 1, 2 and 4 bytes at
// naturally aligned offsets map to single configuration cycles; longer ones
// are split by the kernel (or the emulator) into aligned cycles in
// increasing address order.
type ConfigSpace interface {
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
}

// Sentinel causes, for errors.Is.
var (
	// ErrPermission: the config file could not be opened read-write (not root).
	ErrPermission = errors.New("permission denied")
	// ErrLockdown: the kernel refused a config-space write (lockdown / Secure Boot).
	ErrLockdown = errors.New("config-space write refused by the kernel")
)

// ConfigFile is a sysfs (or /proc/bus/pci) config file opened read-write.
// Reads and writes are pread/pwrite at the given offset, so each call reaches
// the device (no buffering) and concurrent use is safe.
type ConfigFile struct {
	f    *os.File
	path string
}

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

// Path returns the file name given to OpenConfig.
func (c *ConfigFile) Path() string { return c.path }

// ReadAt reads len(p) bytes at config offset off.
func (c *ConfigFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.f.ReadAt(p, off)
	if err == nil {
		return n, nil
	}
	if errors.Is(err, io.EOF) {
		// sysfs ends the file at the config-space size (256 or 4096 bytes).
		return n, fmt.Errorf("read %s at 0x%x (%d bytes): beyond the end of config space: %w",
			c.path, off, len(p), err)
	}
	return n, fmt.Errorf("read %s at 0x%x: %w%s", c.path, off, err, ioHint(err))
}

// WriteAt writes p at config offset off.
func (c *ConfigFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := c.f.WriteAt(p, off)
	if err != nil {
		return n, writeError(c.path, off, err)
	}
	return n, nil
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

// Close closes the file.
func (c *ConfigFile) Close() error { return c.f.Close() }

func ioHint(err error) string {
	switch {
	case errors.Is(err, unix.EIO), errors.Is(err, unix.ENODEV), errors.Is(err, unix.ENXIO):
		return " (the function is not responding: it may have been removed or be in reset; check dmesg and `lspci`)"
	}
	return ""
}

// Package pci gives access to a PCI function's configuration space: the
// ConfigSpace seam shared by real hardware and the emulator, the sysfs
// `config` file backend, the lock file mstflint uses, and a counting wrapper.
package pci

import (
	"errors"
	"fmt"
	"io"
	"os"
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

// Close closes the file.
func (c *ConfigFile) Close() error { return c.f.Close() }

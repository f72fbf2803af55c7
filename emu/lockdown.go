package emu

import "syscall"

// Lockdown is a function's config space as user space sees it when the
// kernel is in lockdown (integrity mode, on with Secure Boot): reads work,
// and every write fails with EPERM before reaching the device, as Linux's
// sysfs config file refuses it (drivers/pci/pci-sysfs.c checks
// security_locked_down(LOCKDOWN_PCI_ACCESS) on write). The gateway, and
// every tool that needs it, stops at its first semaphore write; the
// command interface (fwctl) stays open.
//
// The error is the bare errno, as the FUSE-served sysfs (emu/sysfs) passes
// an errno through to the caller's write(2) unchanged: in process and over
// the file system, errors.Is(err, syscall.EPERM) holds.
type Lockdown struct {
	d *Device
}

// NewLockdown wraps d.
func NewLockdown(d *Device) *Lockdown { return &Lockdown{d: d} }

// ReadAt reads config space.
func (l *Lockdown) ReadAt(p []byte, off int64) (int, error) { return l.d.ReadAt(p, off) }

// WriteAt refuses the write; the device sees nothing.
func (l *Lockdown) WriteAt(p []byte, off int64) (int, error) { return 0, syscall.EPERM }

// Device is the function behind the lockdown.
func (l *Lockdown) Device() *Device { return l.d }

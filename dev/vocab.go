package dev

import (
	"errors"

	"github.com/cxray/cxray/access/regaccess"
)

// Backend says how a function is reached. The strings are part of every
// JSON output ("backend").
type Backend string

// The backends.
const (
	// BackendDirect is a PCI function of this machine reached through its
	// config-space gateway (root).
	BackendDirect Backend = "direct"
	// BackendEmulator is the built-in emulator, through the same gateway
	// protocol.
	BackendEmulator Backend = "emulator"
	// BackendKernel is the read-only kernel backend (sysfs, netlink).
	BackendKernel Backend = "kernel"
	// BackendFwctl is a function reached through the kernel's fwctl
	// device (/dev/fwctl/fwctlN), where config-space writes are refused.
	BackendFwctl Backend = "fwctl"
)

// Method is an access-register method: Get or Set.
type Method = regaccess.Method

// The access-register methods.
const (
	Get = regaccess.Get
	Set = regaccess.Set
)

// Status is a firmware status code of a register access (the PRM's
// operation TLV status).
type Status = uint8

// The statuses callers above dev act on.
const (
	StatusBusy                 Status = regaccess.StatusBusy
	StatusRegisterNotSupported Status = regaccess.StatusRegisterNotSupported
	StatusBadParameter         Status = regaccess.StatusBadParameter
	StatusResourceNotAvailable Status = regaccess.StatusResourceNotAvailable
	StatusBadConfig            Status = regaccess.StatusBadConfig
	StatusEraseExceeded        Status = regaccess.StatusEraseExceeded
	StatusConfigCorrupt        Status = regaccess.StatusConfigCorrupt
	StatusLengthTooSmall       Status = regaccess.StatusLengthTooSmall
	StatusInternalError        Status = regaccess.StatusInternalError
)

// Sentinels for the firmware's answers, matched with errors.Is on any
// error a Device returns.
var (
	// ErrNoSuchInstance: the firmware answered "bad parameter" to a read,
	// which for an indexed register means the instance does not exist
	// here (a local port another PCI function owns, an empty sensor).
	ErrNoSuchInstance = errors.New("no such instance")
	// ErrNotSupported: the firmware does not implement the register.
	ErrNotSupported = errors.New("register not supported by this firmware")
	// ErrBusy: the firmware is busy with another request.
	ErrBusy = errors.New("device busy")
	// ErrResourceNotAvailable: the addressed port, module or lane is
	// absent or not ready.
	ErrResourceNotAvailable = errors.New("resource not available")
)

// StatusOf returns the firmware status behind err, if the firmware
// answered one.
func StatusOf(err error) (Status, bool) {
	var se *regaccess.StatusError
	if errors.As(err, &se) {
		return se.Status, true
	}
	return 0, false
}

// statusIs says whether the firmware status behind err matches a sentinel.
func statusIs(err, target error) bool {
	st, ok := StatusOf(err)
	if !ok {
		return false
	}
	switch target {
	case ErrNoSuchInstance:
		return st == StatusBadParameter
	case ErrNotSupported:
		return st == StatusRegisterNotSupported
	case ErrBusy:
		return st == StatusBusy
	case ErrResourceNotAvailable:
		return st == StatusResourceNotAvailable
	}
	return false
}

// Is lets errors.Is(err, ErrNoSuchInstance) and the other sentinels match
// an access error by the firmware status it carries.
func (e *AccessError) Is(target error) bool { return statusIs(e.Err, target) }

package vsec

import (
	"errors"
	"fmt"
	"time"

	"github.com/cxray/cxray/internal/errfmt"
)

// Error kinds, for errors.Is. Every error this package returns for a device
// condition is an *Error whose Kind is one of these.
var (
	ErrNotMellanox       = errors.New("not a Mellanox/NVIDIA device")
	ErrNoCapability      = errors.New("no gateway capability")
	ErrSpaceNotSupported = errors.New("address space not supported")
	ErrSemaphoreBusy     = errors.New("gateway semaphore busy")
	ErrDeviceGone        = errors.New("device not responding")
	ErrTimeout           = errors.New("gateway transaction timed out")
	ErrSyndrome          = errors.New("gateway syndrome")
	ErrBadAddress        = errors.New("bad gateway address")
	ErrReleased          = errors.New("session already released")
)

// SyndromeAddressOutOfRange is the CTRL[27:24] code for an address outside
// the selected space.
const SyndromeAddressOutOfRange = 3

// Error describes a failed gateway operation: what was attempted, what the
// device showed, and what to do about it.
type Error struct {
	Op     string // "open", "acquire", "select space", "read", "write"
	Kind   error  // one of the Err* kinds above
	Space  Space  // address space involved, if any
	Addr   uint32 // address involved, if any
	Value  uint32 // holder ticket (semaphore busy) or syndrome code
	Detail string // what happened
	Hint   string // what to do next
	Err    error  // underlying cause (I/O or context error), may be nil
}

func (e *Error) Error() string { return errfmt.Message("vsec", e.Op, e.Detail, e.Err, e.Hint) }

// Is reports whether target is this error's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

func goneError(op string) *Error {
	return &Error{Op: op, Kind: ErrDeviceGone,
		Detail: "config space reads return 0xFFFFFFFF: the device was removed, is in reset, or its link is down",
		Hint:   "check `lspci` and dmesg; after a hot-plug or reset, rescan (echo 1 > /sys/bus/pci/rescan) and retry"}
}

func busyError(holder uint32, waited time.Duration, cause error) *Error {
	return &Error{Op: "acquire", Kind: ErrSemaphoreBusy, Value: holder, Err: cause,
		Detail: fmt.Sprintf("device in use by another tool: the gateway semaphore stayed held (holder 0x%08x) for %v", holder, waited),
		Hint: "wait for the other tool (mstflint, mlxreg, mlxconfig, another cxray, or the mlx5 driver's crash dump) " +
			"to finish and retry; if none is running, a crashed tool may have left it held: `mstflint -d DEV clear_semaphore` clears it"}
}

func syndromeError(op string, sp Space, addr, code uint32) *Error {
	detail := fmt.Sprintf("the device flagged an error (syndrome code %d) accessing %s address 0x%x", code, sp, addr)
	hint := "the address is probably not valid for this device; check it against the PRM/CR-space map"
	if code == SyndromeAddressOutOfRange {
		detail = fmt.Sprintf("address 0x%x is out of range for %s (syndrome code 3)", addr, sp)
		hint = "use an address inside the space (the CR-space map of this device is in mstflint's <Device>.csv)"
	}
	return &Error{Op: op, Kind: ErrSyndrome, Space: sp, Addr: addr, Value: code, Detail: detail, Hint: hint}
}

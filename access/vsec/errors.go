package vsec

import (
	"context"
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
	ErrInterrupted       = errors.New("gateway work interrupted")
)

// SyndromeAddressOutOfRange is the CTRL[27:24] code for an address outside
// the selected space.
const SyndromeAddressOutOfRange = 3

// Error describes a failed gateway operation: what was attempted, what the
// device showed, and what to do about it.
type Error struct {
	Op     string // "open", "acquire", "select space", "read", "write"
	Kind   error  // one of the Err* kinds above
	Device string // the function (Options.Name), if named
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

// busyError: the semaphore stayed held by holder until the caller's
// deadline (or its cancellation, cause).
func (g *Gateway) busyError(holder uint32, waited, heldFor time.Duration, cause error) *Error {
	why := "until the command's deadline"
	if errors.Is(cause, context.Canceled) {
		why = "when the command was interrupted"
	} else if g.semTimeout > 0 && waited >= g.semTimeout {
		why = fmt.Sprintf("the %v limit", g.semTimeout)
	}
	dev := "DEV"
	if g.name != "" {
		dev = g.name
	}
	return &Error{Op: "acquire", Kind: ErrSemaphoreBusy, Value: holder, Err: cause, Device: g.name,
		Detail: fmt.Sprintf("%s: device in use by another tool: waited %v for the gateway semaphore (config 0x%x), "+
			"held by ticket 0x%08x for the last %v, %s", g.Name(), waited.Round(time.Millisecond), g.base+offSem,
			holder, heldFor.Round(time.Millisecond), why),
		Hint: "wait for the other tool (mstflint, mstreg, mstconfig, the mlx5 driver's crash dump) to finish and retry, " +
			"or give this command a longer --timeout; if none is running (check ps and dmesg), a tool that crashed left it held: " +
			"`mstmcra -c " + dev + "` clears it (mstflint's clear_semaphore does not: it needs this semaphore itself)"}
}

// ctxError: the caller's context ended before a transaction could run.
func (g *Gateway) ctxError(op string, sp Space, addr uint32, cause error) *Error {
	if errors.Is(cause, context.Canceled) {
		return &Error{Op: op, Kind: ErrInterrupted, Space: sp, Addr: addr, Err: cause, Device: g.name,
			Detail: fmt.Sprintf("%s: the command was interrupted before the %s of %s address 0x%x", g.Name(), op, sp, addr),
			Hint:   "nothing was left held; run the command again"}
	}
	return &Error{Op: op, Kind: ErrTimeout, Space: sp, Addr: addr, Err: cause, Device: g.name,
		Detail: fmt.Sprintf("%s: the command's deadline passed before the %s of %s address 0x%x", g.Name(), op, sp, addr),
		Hint:   "the device or another tool is slow; retry with a longer --timeout"}
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

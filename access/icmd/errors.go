package icmd

import (
	"errors"
	"fmt"

	"github.com/cxray/cxray/internal/errfmt"
)

// Error kinds, for errors.Is.
var (
	ErrNotSupported  = errors.New("ICMD not supported")
	ErrNotReady      = errors.New("ICMD not ready")
	ErrSemaphoreBusy = errors.New("ICMD semaphore busy")
	ErrBusy          = errors.New("ICMD busy with another command")
	ErrTimeout       = errors.New("ICMD command timed out")
	ErrTooLarge      = errors.New("ICMD command too large")
	ErrClosed        = errors.New("ICMD client closed")
)

// Error is a failed ICMD operation.
type Error struct {
	Op     string
	Kind   error
	Opcode uint16
	Device string // the function, as the gateway names it
	Detail string
	Hint   string
	Err    error
}

func (e *Error) Error() string { return errfmt.Message("icmd", e.Op, e.Detail, e.Err, e.Hint) }

// Is reports whether target is this error's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// StatusError is a command the firmware finished with a non-zero ICMD status
// (control register [15:8]).
type StatusError struct {
	Opcode uint16
	Status uint8
}

var statusText = map[uint8][2]string{
	1: {"invalid opcode", "the firmware does not implement this command; it may be too old: update the firmware"},
	2: {"invalid command", "the firmware rejected the command format; this is a cxray bug or a firmware incompatibility: report it"},
	3: {"operational error", "the firmware failed while executing the command; check dmesg and the firmware health (`cxray status`)"},
	4: {"bad parameter", "a command parameter was out of range for this firmware"},
	5: {"busy", "the firmware is busy; retry shortly"},
	6: {"ICM not available", "the firmware has no ICM memory for this command (driver not loaded or host memory not provided)"},
	7: {"write protected", "the device refuses this command (secure firmware or host restrictions); run it from a privileged host or change the restriction"},
}

func (e *StatusError) Error() string {
	t, ok := statusText[e.Status]
	if !ok {
		t = [2]string{"unknown status", "the firmware returned a status this tool does not know; update cxray or report it"}
	}
	return fmt.Sprintf("icmd: command 0x%04x failed with status %d (%s); %s", e.Opcode, e.Status, t[0], t[1])
}

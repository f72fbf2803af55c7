package cmdutil

import (
	"context"
	"errors"
	"fmt"

	"github.com/cxray/cxray/prm"
)

// Exit codes (ARCHITECTURE.md, "Output and exit codes").
const (
	ExitOK      = 0
	ExitProblem = 1 // the command worked and found a problem
	ExitUsage   = 2
	ExitDevice  = 3
)

// ExitError carries an exit code with an error.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// UsageErr is a usage error (exit 2) whose message says what to do.
func UsageErr(format string, args ...any) error {
	return &ExitError{ExitUsage, fmt.Errorf(format, args...)}
}

// UsageWrap marks err as a usage error unless it carries a code already.
func UsageWrap(err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	return &ExitError{ExitUsage, err}
}

// DeviceErr marks err as a device or access error (exit 3) unless it
// carries a code already.
func DeviceErr(err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	return &ExitError{ExitDevice, err}
}

// ErrQuiet carries an exit status that needs no message (a command run by
// `cxray emu run` exited with it and said what it had to say).
var ErrQuiet = errors.New("exit status")

// ErrProblem is returned by commands that ran fine and found something
// wrong; their output has said what.
var ErrProblem = &ExitError{ExitProblem, errors.New("problem found")}

// Classify maps errors to exit codes by kind: an error that is the
// caller's input (errors.Is prm.ErrInput: bad names and values, bad dumps
// and files, a port or index that does not exist) is a usage error (2),
// the rest device errors (3). An error that carries a code keeps it.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	switch {
	case errors.As(err, &ee):
		return err
	case errors.Is(err, prm.ErrInput):
		return UsageWrap(err)
	}
	return DeviceErr(err)
}

// Stopped is the error of a command whose context ended during device
// work: a signal stops it as such (package cli says the device was
// released), a deadline is a device error (exit 3) that keeps what was
// being waited for (cause) and says what to do.
func Stopped(ctx context.Context, cause error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	if cause == nil || cause == ctx.Err() {
		// A bare "context deadline exceeded" names nothing (issue
		// 26.10): say what ran out.
		return DeviceErr(fmt.Errorf("the --timeout ran out before the device had answered everything (%w): give a longer one, or check the device with 'cxray status'", ctx.Err()))
	}
	return DeviceErr(fmt.Errorf("%w (the --timeout ran out: give a longer one, or check the device with 'cxray status')", cause))
}

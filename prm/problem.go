package prm

import "errors"

// DatabaseProblem is implemented by errors the register database causes
// (a register or field it lacks, a value or length its layout refuses),
// as opposed to errors of the device: callers report them as a database
// mismatch, with the next step to take, never as a hardware or firmware
// fault.
type DatabaseProblem interface {
	error
	DatabaseProblem()
}

// DatabaseProblem marks FieldError as the database's.
func (*FieldError) DatabaseProblem() {}

// DatabaseProblem marks NotFoundError as the database's.
func (*NotFoundError) DatabaseProblem() {}

// DatabaseProblem marks LengthError as the database's.
func (*LengthError) DatabaseProblem() {}

// IsDatabaseProblem says err, or an error it wraps, is the database's.
func IsDatabaseProblem(err error) bool {
	var dp DatabaseProblem
	return errors.As(err, &dp)
}

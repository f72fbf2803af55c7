package dev

import (
	"context"
	"fmt"
)

// ReadOnly wraps an accessor so that reads pass and every other method is
// refused: a device opened this way cannot be written, whatever the code
// above it does (the exporter holds its devices so).
func ReadOnly(acc Accessor) Accessor { return readOnly{acc} }

type readOnly struct{ acc Accessor }

// WriteRefusedError is a register write a read-only device refused.
type WriteRefusedError struct{ ID uint16 }

func (e *WriteRefusedError) Error() string {
	return fmt.Sprintf("refused to write register 0x%04x: this device was opened read-only; use `cxray reg set` to change a register", e.ID)
}

func (r readOnly) Access(ctx context.Context, method Method, id uint16, data []byte) ([]byte, error) {
	if method != Get {
		return nil, &WriteRefusedError{ID: id}
	}
	return r.acc.Access(ctx, method, id, data)
}

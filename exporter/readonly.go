package exporter

import (
	"context"
	"fmt"

	"github.com/cxray/cxray/access/regaccess"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/prm"
)

// ReadOnlyAccessor lets register reads through and refuses everything else,
// so a device the exporter holds cannot be written whatever the code
// above it does.
type ReadOnlyAccessor struct{ Accessor dev.Accessor }

// WriteRefusedError is a register write the exporter refused.
type WriteRefusedError struct{ ID uint16 }

func (e *WriteRefusedError) Error() string {
	return fmt.Sprintf("exporter: refused to write register 0x%04x: the exporter only reads; use `cxray reg set` to change a register", e.ID)
}

// Access implements dev.Accessor.
func (r ReadOnlyAccessor) Access(ctx context.Context, method regaccess.Method, id uint16, data []byte) ([]byte, error) {
	if method != regaccess.Get {
		return nil, &WriteRefusedError{ID: id}
	}
	return r.Accessor.Access(ctx, method, id, data)
}

// ReadOnly rebuilds an opened device over acc (its stack's register
// client) wrapped in ReadOnlyAccessor; closing it closes d.
func ReadOnly(d *dev.Device, acc dev.Accessor, db *prm.DB) *dev.Device {
	return dev.New(d.Name, d.BDF, d.Backend, db, ReadOnlyAccessor{acc}, d.Close)
}

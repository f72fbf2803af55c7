package dev

import (
	"context"
	"fmt"

	"github.com/cxray/cxray/access/regaccess"
)

// variableAccessor is an Accessor that can send a register with different
// write and read sizes (the regaccess client is one).
type variableAccessor interface {
	Do(ctx context.Context, r regaccess.Request) ([]byte, error)
}

// Transfer sends one access to a register of the database with explicit
// sizes, for registers whose payload varies: an NV GET (MNVDA) sends only
// the 12-byte header and reads the header and up to 256 data bytes back;
// an NV SET is the reverse. data is the whole buffer; writeSize and
// readSize (0: all of data) bound what is sent and read back. Backends that
// cannot split the sizes send and read all of data, which the firmware
// answers the same way.
func (d *Device) Transfer(ctx context.Context, method regaccess.Method, register string, data []byte, writeSize, readSize int) ([]byte, error) {
	reg, err := d.DB.Register(register)
	if err != nil {
		return nil, err
	}
	if reg.ID > 0xFFFF {
		return nil, fmt.Errorf("register %s has ID 0x%x, beyond what an access carries", reg.Name, reg.ID)
	}
	op := "read"
	if method == regaccess.Set {
		op = "write"
	}
	var out []byte
	if va, ok := d.acc.(variableAccessor); ok {
		out, err = va.Do(ctx, regaccess.Request{Method: method, ID: uint16(reg.ID), Data: data, WriteSize: writeSize, ReadSize: readSize})
	} else {
		out, err = d.access(ctx, method, uint16(reg.ID), data)
	}
	if err != nil {
		return nil, &AccessError{Register: reg.Name, Op: op, Err: err}
	}
	return out, nil
}

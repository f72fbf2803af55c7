package fwctl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cxray/cxray/access/regaccess"
)

// Registers go through the ACCESS_REG command (PRM; mlx5_ifc.h
// access_register_in/out): the in mailbox is the 16-byte header (opcode,
// op_mod = 1 read / 0 write, register_id at bytes 10..11, argument at
// 12..15) and the register; the out mailbox the 16-byte header and the
// register. The tests check these positions against the command database.
const (
	OpAccessReg     = 0x805
	accessRegHeader = 16
	opModRegWrite   = 0
	opModRegRead    = 1
)

func registerID(in []byte) uint16 { return binary.BigEndian.Uint16(in[10:]) }

// Registers is a dev.Accessor over a Client: every access register cxray
// reads or writes, as one ACCESS_REG command each. Reads go at the
// read-only debug scope; writes at the configuration scope.
type Registers struct {
	c *Client
	// MaxRegisterSize bounds one register, as the ICMD mailbox bounds the
	// gateway path (0: no bound beyond the driver's).
	MaxRegisterSize int
}

// NewRegisters returns the register accessor of a client.
func NewRegisters(c *Client) *Registers { return &Registers{c: c} }

// Access implements dev.Accessor: data is the whole register (index fields
// filled in for a read); the answer has the same length.
func (r *Registers) Access(ctx context.Context, method regaccess.Method, id uint16, data []byte) ([]byte, error) {
	n := len(data)
	switch {
	case n == 0 || n%4 != 0:
		return nil, fmt.Errorf("fwctl: register 0x%04x: %d bytes is not a non-zero multiple of 4; use the register size from `cxray prm show`: %w", id, n, regaccess.ErrBadRequest)
	case r.MaxRegisterSize > 0 && n > r.MaxRegisterSize:
		return nil, fmt.Errorf("fwctl: register 0x%04x: %d bytes exceed the %d bytes one access carries: %w", id, n, r.MaxRegisterSize, regaccess.ErrBadRequest)
	}
	var opMod uint16
	switch method {
	case regaccess.Get:
		opMod = opModRegRead
	case regaccess.Set:
		opMod = opModRegWrite
	default:
		return nil, fmt.Errorf("fwctl: register 0x%04x: method %d is not GET (1) or SET (2): %w", id, method, regaccess.ErrBadRequest)
	}
	in := make([]byte, accessRegHeader+n)
	binary.BigEndian.PutUint16(in[0:], OpAccessReg)
	binary.BigEndian.PutUint16(in[6:], opMod)
	binary.BigEndian.PutUint16(in[10:], id)
	copy(in[accessRegHeader:], data)
	out, err := r.c.exec(ctx, in, accessRegHeader+n, method == regaccess.Set)
	if err != nil {
		var ce *CommandError
		if errors.As(err, &ce) {
			return nil, registerError(ce, id, method)
		}
		return nil, err
	}
	reg := make([]byte, n)
	copy(reg, out[accessRegHeader:])
	return reg, nil
}

// RegisterError is an ACCESS_REG the firmware answered with a non-zero
// command status. It carries the command status (with the syndrome) and
// the access-register status that status stands for, as mstflint maps
// them (mtcr_ul translate_cmd_status_to_reg_status), so code that speaks
// the gateway's register statuses (dev's ErrNotSupported, ErrBusy,
// ErrNoSuchInstance ...) reads an answer over fwctl the same way: errors.As
// finds either.
type RegisterError struct {
	Command  *CommandError
	Register *regaccess.StatusError // nil when the status has no register equivalent
}

func (e *RegisterError) Error() string { return e.Command.Error() }

// Unwrap gives both views.
func (e *RegisterError) Unwrap() []error {
	if e.Register == nil {
		return []error{e.Command}
	}
	return []error{e.Command, e.Register}
}

// regStatus maps a command status to the access-register status it means.
var regStatus = map[uint8]uint8{
	StatusInternal:    regaccess.StatusInternalError,
	StatusBadOp:       regaccess.StatusMethodNotSupported,
	StatusBadParam:    regaccess.StatusBadParameter,
	StatusBadSysState: regaccess.StatusRegisterNotSupported,
	StatusBadResource: regaccess.StatusResourceNotAvailable,
	StatusBusy:        regaccess.StatusBusy,
}

func registerError(ce *CommandError, id uint16, m regaccess.Method) *RegisterError {
	e := &RegisterError{Command: ce}
	if st, ok := regStatus[ce.Status]; ok {
		e.Register = &regaccess.StatusError{Status: st, RegisterID: id, Method: m}
	}
	return e
}

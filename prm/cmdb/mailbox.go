package cmdb

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/cxray/cxray/prm"
)

// Every command mailbox starts with the same header (PRM "Command
// Interface"; the kernel's layouts all begin with it, which the tests check
// layout by layout): in, opcode at bits 0..15 and op_mod at bits 48..63;
// out, status in byte 0 and the syndrome in bytes 4..7. The transport reads
// these for every command, so they are constants here.
const (
	HeaderBytes = 16 // the in and the out header are four dwords
)

// Opcode reads the opcode of an in mailbox (0 if it is too short).
func Opcode(in []byte) uint16 {
	if len(in) < 2 {
		return 0
	}
	return binary.BigEndian.Uint16(in)
}

// OpMod reads the op_mod of an in mailbox.
func OpMod(in []byte) uint16 {
	if len(in) < 8 {
		return 0
	}
	return binary.BigEndian.Uint16(in[6:])
}

// StatusOf reads the status and syndrome of an out mailbox.
func StatusOf(out []byte) (status uint8, syndrome uint32) {
	if len(out) < 8 {
		return 0, 0
	}
	return out[0], binary.BigEndian.Uint32(out[4:])
}

// Request builds the in mailbox of a command from field=value assignments,
// as `prm encode` does, with the opcode filled in. Fields it does not name
// stay zero.
func (db *DB) Request(c *Command, fields []prm.Assignment) ([]byte, error) {
	if c.In == "" {
		return nil, fmt.Errorf("%s (0x%x): no source cxray has describes its input mailbox; it cannot be built from field names", c.Name, c.Opcode)
	}
	p, err := db.Plan(c.In)
	if err != nil {
		return nil, err
	}
	buf := p.NewBuffer()
	for _, a := range fields {
		if strings.EqualFold(a.Path, "opcode") {
			return nil, &prm.FieldError{Path: a.Path, Msg: fmt.Sprintf("is set by the command name (%s is 0x%x)", c.Name, c.Opcode)}
		}
	}
	as := append([]prm.Assignment{{Path: "opcode", Value: fmt.Sprint(c.Opcode)}}, fields...)
	if err := p.Encode(buf, as); err != nil {
		return nil, err
	}
	return buf, nil
}

// OutBytes is the size of a command's out mailbox (the header alone when
// the layout is unknown).
func (db *DB) OutBytes(c *Command) int {
	if c.Out == "" {
		return HeaderBytes
	}
	p, err := db.Plan(c.Out)
	if err != nil {
		return HeaderBytes
	}
	return p.Bytes
}

// Reply decodes an out mailbox with the command's out layout.
func (db *DB) Reply(c *Command, out []byte) (*prm.Decoded, error) {
	if c.Out == "" {
		return nil, fmt.Errorf("%s (0x%x): no source cxray has describes its output mailbox", c.Name, c.Opcode)
	}
	p, err := db.Plan(c.Out)
	if err != nil {
		return nil, err
	}
	return p.Decode(out)
}

package dev

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cxray/cxray/access/fwctl"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/cmdb"
)

// Commander runs firmware commands: the fwctl client (access/fwctl) on a
// host, or the same client over the emulator's endpoint. A device has one
// when it was opened through fwctl or the emulator; Command needs it.
type Commander = fwctl.Commander

// ErrNoCommands says a device has no command interface attached.
var ErrNoCommands = errors.New("no command interface")

// AttachCommander gives the device a command interface (nil detaches it).
// Call it before the device is shared between goroutines.
func (d *Device) AttachCommander(c Commander) { d.cmds = c }

// AttachCommands gives the device a command interface that holds
// something of its own (fwctl's file); release runs on Close, after the
// register path is closed. Call it before the device is shared.
func (d *Device) AttachCommands(c Commander, release func() error) {
	d.cmds = c
	if release == nil {
		return
	}
	prev := d.close
	d.close = func() error {
		var err error
		if prev != nil {
			err = prev()
		}
		return errors.Join(err, release())
	}
}

// Commander returns the attached command interface, or nil.
func (d *Device) Commander() Commander { return d.cmds }

// CommandError wraps a command failure with the command's name: a refusal
// (Refused set), a transport error, or a firmware status (a
// *fwctl.CommandError inside).
type CommandError struct {
	Command string
	// Refused says cxray did not send it, and why.
	Refused string
	Err     error
}

func (e *CommandError) Error() string {
	if e.Refused != "" {
		return fmt.Sprintf("%s: not sent: %s", e.Command, e.Refused)
	}
	msg := e.Err.Error()
	if strings.HasPrefix(msg, e.Command+" ") {
		return msg // the firmware's answer names the command already
	}
	return fmt.Sprintf("%s: %v", e.Command, e.Err)
}

func (e *CommandError) Unwrap() error { return e.Err }

// Reply is a command answered by the firmware.
type Reply struct {
	Command *cmdb.Command
	// Request is the in mailbox sent.
	Request []byte
	// Decoded is the out mailbox through the command's out layout.
	Decoded *prm.Decoded
}

// Command runs a read-only command by name (QUERY_HCA_CAP) with the in
// mailbox built from field=value assignments, as `prm encode` builds it
// (the opcode is set from the name), and returns the out mailbox decoded.
// Commands that create, change or destroy objects are refused before
// anything is sent: only what the fwctl driver allows at its read-only
// debug scope, and the queries it allows at every scope, run here.
func (d *Device) Command(ctx context.Context, name string, fields []prm.Assignment) (*prm.Decoded, error) {
	r, err := d.RunCommand(ctx, name, fields)
	if err != nil {
		return nil, err
	}
	return r.Decoded, nil
}

// RunCommand is Command with the request and the command's facts.
func (d *Device) RunCommand(ctx context.Context, name string, fields []prm.Assignment) (*Reply, error) {
	db, err := cmdb.Load()
	if err != nil {
		return nil, err
	}
	c, err := db.Command(name)
	if err != nil {
		return nil, err
	}
	if d.cmds == nil {
		return nil, &CommandError{Command: c.Name, Err: fmt.Errorf("device %s has no command interface: commands need fwctl (Linux 6.15+ with mlx5_fwctl) or the emulator: %w", d.Name, ErrNoCommands)}
	}
	if c.Out == "" {
		return nil, &CommandError{Command: c.Name, Refused: "no source cxray has describes its out mailbox, so its answer could not be decoded"}
	}
	in, err := db.Request(c, fields)
	if err != nil {
		return nil, err
	}
	if reason := refusal(c, cmdb.OpMod(in)); reason != "" {
		return nil, &CommandError{Command: c.Name, Refused: reason}
	}
	out, err := d.cmds.Exec(ctx, in, db.OutBytes(c))
	if err != nil {
		return nil, &CommandError{Command: c.Name, Err: err}
	}
	if want := db.OutBytes(c); len(out) < want {
		// The firmware answered fewer bytes than the layout: decode what
		// came, the rest as zero, as the kernel's zeroed buffer would read.
		out = append(out, make([]byte, want-len(out))...)
	}
	dec, err := db.Reply(c, out)
	if err != nil {
		return nil, &CommandError{Command: c.Name, Err: err}
	}
	return &Reply{Command: c, Request: in, Decoded: dec}, nil
}

// refusal says why a command is not sent, or "" when it may be.
func refusal(c *cmdb.Command, opMod uint16) string {
	r, ok := c.Policy(opMod)
	switch {
	case !ok && len(c.Fwctl) == 0:
		verb := "it is not a query"
		if strings.HasPrefix(c.Name, "QUERY_") {
			verb = "the fwctl driver does not list it"
		}
		return fmt.Sprintf("%s: the fwctl driver lets user space send only queries and a few settings, and refuses %s at every scope", verb, c.Name)
	case !ok:
		return fmt.Sprintf("the fwctl driver refuses %s with op_mod 0x%x", c.Name, opMod)
	case r.Modifies:
		return fmt.Sprintf("%s changes the device (the driver allows it at scope %s); cxray's command path only reads", c.Name, r.Scope)
	}
	return ""
}

// IsRefused says a command was not sent because it is not read-only.
func IsRefused(err error) bool {
	var ce *CommandError
	return errors.As(err, &ce) && ce.Refused != ""
}

// IsCommandStatus says the firmware ran the command and answered a
// non-zero status (the object does not exist, the capability type is not
// offered ...): the device works, this question has no answer.
func IsCommandStatus(err error) bool {
	var ce *fwctl.CommandError
	return errors.As(err, &ce)
}

// IsNoSuchObject says the firmware answered that the object the command
// names does not exist: bad parameter (0x3) or bad resource (0x5), the
// answers to a QPN, key or namespace it does not know. That is the user's
// number to check, not a device fault.
func IsNoSuchObject(err error) bool {
	var ce *fwctl.CommandError
	return errors.As(err, &ce) && (ce.Status == 0x3 || ce.Status == 0x5)
}

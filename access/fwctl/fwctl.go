// Package fwctl sends ConnectX firmware commands through Linux's fwctl
// subsystem (Linux 6.15+, module mlx5_fwctl): the command mailboxes the PRM
// defines (mlx5_ifc.h *_in/*_out layouts), one ioctl each, at the scope the
// driver requires. It works where the config-space gateway does not: under
// kernel lockdown (Secure Boot) the read-only debug scope stays open.
//
// Layers, bottom up:
//
//   - RPC: one mailbox in, one out, at a scope. *Device is the real ioctl on
//     /dev/fwctl/fwctlN; the emulator implements the same interface
//     (emu/cmdif), so tests run every layer but the system call.
//   - Client: a Commander. It picks the scope from the command database's
//     copy of the driver's policy (prm/cmdb fwctl.facts), refuses what the
//     driver would refuse, retries a busy firmware a bounded number of times,
//     and turns a non-zero status into a *CommandError.
//   - Registers: a dev.Accessor over ACCESS_REG, so every register command
//     of cxray works over fwctl.
//
// Find maps a PCI function to its fwctl node through sysfs.
package fwctl

import (
	"context"
	"fmt"

	"github.com/cxray/cxray/access/vsec"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm/cmdb"
)

// RPC delivers one command mailbox at a scope and returns the out mailbox.
// An error means the command did not reach the firmware (an errno from the
// kernel, or a closed device); the firmware's own status is in the out
// mailbox's header.
type RPC interface {
	RPC(ctx context.Context, scope cmdb.Scope, in []byte, outLen int) ([]byte, error)
}

// Commander runs firmware commands: Exec sends an in mailbox and returns
// the out mailbox. A command the firmware answered with a non-zero status
// returns the out mailbox and a *CommandError.
type Commander interface {
	Exec(ctx context.Context, in []byte, outLen int) ([]byte, error)
}

// Client is a Commander over an RPC. Safe for concurrent use when the RPC
// is (the kernel serialises commands per device).
type Client struct {
	rpc RPC
	db  *cmdb.DB
	// AllowWrites lets commands the driver classes as changes (ACCESS_REG
	// writes, SET_HCA_CAP ...) through; reads only when false.
	allowWrites bool
	clk         clock.Clock
}

// Options tune a Client.
type Options struct {
	// AllowWrites permits commands that change the device. Register writes
	// need it (the register Accessor sets it per access).
	AllowWrites bool
	// Clock paces the busy retries (nil: the wall clock); the emulator
	// passes its own.
	Clock clock.Clock
}

// NewClient wraps an RPC (a *Device, or the emulator's endpoint).
func NewClient(rpc RPC, o Options) (*Client, error) {
	db, err := cmdb.Load()
	if err != nil {
		return nil, err
	}
	c := &Client{rpc: rpc, db: db, allowWrites: o.AllowWrites, clk: o.Clock}
	if c.clk == nil {
		c.clk = clock.Real{}
	}
	return c, nil
}

// DB is the command database the client checks commands against.
func (c *Client) DB() *cmdb.DB { return c.db }

// Scope returns the scope a mailbox needs, or an error saying why cxray
// will not send it: the driver refuses it at every scope, or it changes
// the device and writes are not allowed.
func (c *Client) Scope(in []byte) (cmdb.Scope, error) {
	return c.scope(in, c.allowWrites)
}

func (c *Client) scope(in []byte, writes bool) (cmdb.Scope, error) {
	if len(in) < cmdb.HeaderBytes {
		return 0, &Error{Op: "rpc", Kind: ErrBadRequest, Detail: fmt.Sprintf("the in mailbox is %d bytes, shorter than the %d-byte command header", len(in), cmdb.HeaderBytes)}
	}
	op, opMod := cmdb.Opcode(in), cmdb.OpMod(in)
	cmd, ok := c.db.CommandByOpcode(op)
	if !ok {
		return 0, &Error{Op: "rpc", Kind: ErrRefused, Detail: fmt.Sprintf("opcode 0x%x is not in the command database, and the fwctl driver allows only the commands it lists", op),
			Hint: "see `cxray prm search ^QUERY_` for the commands cxray can send"}
	}
	r, ok := cmd.Policy(opMod)
	if !ok {
		return 0, &Error{Op: "rpc", Kind: ErrRefused, Detail: fmt.Sprintf("%s (0x%x) creates, changes or destroys objects: the fwctl driver refuses it at every scope", cmd.Name, op),
			Hint: "only queries and a few settings can be sent through fwctl; see `cxray prm show " + cmd.Name + "`"}
	}
	if r.Modifies && !writes {
		return 0, &Error{Op: "rpc", Kind: ErrRefused, Detail: fmt.Sprintf("%s (0x%x) op_mod 0x%x changes the device, and this command path is read-only", cmd.Name, op, opMod),
			Hint: "use the command that makes the change (for registers: `cxray reg set`), which asks before writing"}
	}
	// Queries go at the read-only debug scope, which every query the
	// driver allows accepts (configuration-scope queries are allowed at
	// every scope) and which is compatible with lockdown; changes at
	// the lowest scope the driver takes them.
	if !r.Modifies {
		return cmdb.ScopeDebugReadOnly, nil
	}
	return r.Scope, nil
}

// Exec implements Commander.
func (c *Client) Exec(ctx context.Context, in []byte, outLen int) ([]byte, error) {
	return c.exec(ctx, in, outLen, c.allowWrites)
}

func (c *Client) exec(ctx context.Context, in []byte, outLen int, writes bool) ([]byte, error) {
	scope, err := c.scope(in, writes)
	if err != nil {
		return nil, err
	}
	if outLen < cmdb.HeaderBytes {
		return nil, &Error{Op: "rpc", Kind: ErrBadRequest, Detail: fmt.Sprintf("out mailbox of %d bytes is shorter than the %d-byte header", outLen, cmdb.HeaderBytes)}
	}
	op, opMod := cmdb.Opcode(in), cmdb.OpMod(in)
	// A busy firmware is asked again by the one policy of the access
	// layer (vsec.BusyRetry), as a register access through the gateway.
	retry := vsec.NewBusyRetry(ctx, c.clk)
	for {
		out, err := c.rpc.RPC(ctx, scope, in, outLen)
		if err != nil {
			return nil, err
		}
		if len(out) < cmdb.HeaderBytes {
			return nil, &Error{Op: "rpc", Kind: ErrBadResponse, Detail: fmt.Sprintf("the out mailbox of opcode 0x%x came back with %d bytes, shorter than its header", op, len(out))}
		}
		status, syndrome := cmdb.StatusOf(out)
		if status == StatusOK {
			return out, nil
		}
		if status == StatusBusy && retry.Again(ctx) {
			continue
		}
		ce := &CommandError{Opcode: op, OpMod: opMod, Status: status, Syndrome: syndrome}
		if cmd, ok := c.db.CommandByOpcode(op); ok {
			ce.Command = cmd.Name
		}
		if op == OpAccessReg && len(in) >= accessRegHeader {
			ce.Register = registerID(in)
		}
		return out, ce
	}
}

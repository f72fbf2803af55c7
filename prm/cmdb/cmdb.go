// Package cmdb is the command database: the layouts of the ConnectX
// command interface (every struct and union of the kernel's mlx5_ifc.h:
// command mailboxes, object contexts, capability pages, the initialization
// segment), the opcodes with their in and out layouts, the capability types
// with their pages, the command status codes, and what the Linux fwctl
// driver lets user space send at each scope.
//
// Three facts files make it, all built into the binary:
//
//   - ifc.facts, generated from the newest installed Debian
//     linux-headers-*-common mlx5_ifc.h (6.12; 6.1 stays a cross-check,
//     TestOlderHeadersAgree) and device.h by tools/gen/ifcgen (go generate
//     ./prm/cmdb). It carries the inputs' sha256 and holds names, offsets,
//     widths and values only.
//   - nvmf.facts, the NVMe-oF target-offload layouts, which exist only in
//     NVIDIA's OFED tree; hand-written from the facts of MLNX_OFED's
//     include/linux/mlx5/mlx5_ifc.h.
//   - fwctl.facts, the opcodes only the fwctl driver names and the scope it
//     allows each command at (drivers/fwctl/mlx5/main.c).
//
// The layouts are a prm.DB, so the register codec (plans, decode, encode,
// JSON) works on them unchanged.
package cmdb

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/cxray/cxray/prm"
)

// Scope is a fwctl RPC scope (include/uapi/fwctl/fwctl.h enum
// fwctl_rpc_scope). Higher scopes allow more.
type Scope uint32

// Scopes.
const (
	// ScopeConfiguration: device configuration, read and write, leaving the
	// device in a supported state.
	ScopeConfiguration Scope = 0
	// ScopeDebugReadOnly: debug information, read only; compatible with
	// kernel lockdown.
	ScopeDebugReadOnly Scope = 1
	// ScopeDebugWrite: debug writes; taints the kernel.
	ScopeDebugWrite Scope = 2
	// ScopeDebugWriteFull: everything; needs CAP_SYS_RAWIO, taints the kernel.
	ScopeDebugWriteFull Scope = 3
)

var scopeNames = [...]string{"configuration", "debug_read_only", "debug_write", "debug_write_full"}

func (s Scope) String() string {
	if int(s) < len(scopeNames) {
		return scopeNames[s]
	}
	return fmt.Sprintf("scope(%d)", uint32(s))
}

// ParseScope reads a scope name as String writes it.
func ParseScope(s string) (Scope, error) {
	for i, n := range scopeNames {
		if strings.EqualFold(s, n) {
			return Scope(i), nil
		}
	}
	return 0, fmt.Errorf("unknown fwctl scope %q (want %s)", s, strings.Join(scopeNames[:], ", "))
}

// OpModClass says which op_mod values a fwctl rule covers. ACCESS_REG is the
// one command the driver treats differently by op_mod: 0 writes, others read.
type OpModClass uint8

// Op_mod classes.
const (
	OpModAny     OpModClass = iota // every op_mod
	OpModZero                      // op_mod 0 (ACCESS_REG: write)
	OpModNonZero                   // op_mod != 0 (ACCESS_REG: read)
)

// Rule is one line of the fwctl driver's policy for a command: the lowest
// scope the driver accepts it at, and whether it changes the device (cxray
// sends only the ones that do not, unless a caller asks for a write).
type Rule struct {
	OpMod    OpModClass
	Scope    Scope
	Modifies bool
}

// Command is one firmware command.
type Command struct {
	Name   string // the kernel's name without MLX5_CMD_OP_ (QUERY_HCA_CAP)
	Opcode uint16
	// In and Out are the layouts of the mailboxes ("" when no source has
	// them).
	In, Out string
	// Origin names the facts file the command comes from.
	Origin string
	// Fwctl is the driver's policy; empty when the driver refuses the
	// command at every scope.
	Fwctl []Rule
}

// Policy returns the rule for an op_mod, and false when the fwctl driver
// refuses the command.
func (c *Command) Policy(opMod uint16) (Rule, bool) {
	for _, r := range c.Fwctl {
		if r.OpMod == OpModAny || (r.OpMod == OpModZero) == (opMod == 0) {
			return r, true
		}
	}
	return Rule{}, false
}

// ReadOnly says whether every op_mod of the command only reads: what the
// fwctl driver allows and does not class as a change.
func (c *Command) ReadOnly() bool {
	if len(c.Fwctl) == 0 {
		return false
	}
	for _, r := range c.Fwctl {
		if r.Modifies {
			return false
		}
	}
	return true
}

// CapType is a capability type: the op_mod of QUERY_HCA_CAP is its value
// times two plus one for the current values (zero for the maximum).
type CapType struct {
	Name  string // GENERAL, ESWITCH, ROCE, NVMF ...
	Value uint16
	// Node is the layout of the page ("" when no source names it).
	Node string
}

// Status is a command status code (MLX5_CMD_STAT_*).
type Status struct {
	Name  string // BAD_PARAM_ERR
	Value uint8
}

// DB is the command database.
type DB struct {
	// Layouts holds every layout. It has no registers: registers live in
	// the register database (prm/builtin).
	Layouts *prm.DB
	// Source and Revision say where the layouts come from.
	Source, Revision string
	// Header is the comment block of the generated facts (its inputs and
	// their sha256).
	Header []string

	Commands []*Command // sorted by name
	CapTypes []CapType  // sorted by value
	Statuses []Status   // sorted by value
	// Consts are named values of the kernel headers that no field carries
	// as its enum (the MKEY access modes, event types), in file order.
	Consts []Const

	byName   map[string]*Command
	byOpcode map[uint16]*Command
}

// Command finds a command by name (case-insensitive, with or without the
// MLX5_CMD_OP_ prefix) or by opcode written as a number ("0x100").
func (db *DB) Command(name string) (*Command, error) {
	if c, ok := db.byName[cmdKey(name)]; ok {
		return c, nil
	}
	if v, err := strconv.ParseUint(strings.TrimSpace(name), 0, 16); err == nil {
		if c, ok := db.byOpcode[uint16(v)]; ok {
			return c, nil
		}
	}
	msg := fmt.Sprintf("no command %q in the command database (%s)", name, db.Revision)
	if s := prm.Closest(strings.ToUpper(name), db.CommandNames(), 3); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, ", ") + "?"
	}
	return nil, &prm.NotFoundError{Msg: msg}
}

// cmdKey is how command names are compared: case-insensitively, with or
// without the kernel's prefix.
func cmdKey(name string) string {
	return strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(name)), "MLX5_CMD_OP_")
}

// CommandByOpcode finds a command by opcode.
func (db *DB) CommandByOpcode(op uint16) (*Command, bool) {
	c, ok := db.byOpcode[op]
	return c, ok
}

// CommandNames lists the command names, sorted.
func (db *DB) CommandNames() []string {
	out := make([]string, len(db.Commands))
	for i, c := range db.Commands {
		out[i] = c.Name
	}
	return out
}

// Layout finds a layout node by name, case-insensitively.
func (db *DB) Layout(name string) (*prm.Node, bool) {
	if n, ok := db.Layouts.Nodes[name]; ok {
		return n, true
	}
	for k, n := range db.Layouts.Nodes {
		if strings.EqualFold(k, name) {
			return n, true
		}
	}
	return nil, false
}

// LayoutNames lists the layouts that are definitions (not inline members,
// whose names hold a dot), sorted.
func (db *DB) LayoutNames() []string {
	var out []string
	for n := range db.Layouts.Nodes {
		if !strings.Contains(n, ".") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Plan compiles a layout.
func (db *DB) Plan(node string) (*prm.Plan, error) { return db.Layouts.Plan(node) }

// CapType finds a capability type by name ("eswitch", "ESWITCH",
// "general_2", "e_switch"; underscores and case do not matter) or value.
func (db *DB) CapType(name string) (CapType, error) {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "") }
	want := norm(name)
	for _, c := range db.CapTypes {
		if norm(c.Name) == want || (c.Node != "" && norm(c.Node) == want) {
			return c, nil
		}
	}
	if v, err := strconv.ParseUint(strings.TrimSpace(name), 0, 16); err == nil {
		for _, c := range db.CapTypes {
			if uint64(c.Value) == v {
				return c, nil
			}
		}
	}
	names := make([]string, len(db.CapTypes))
	for i, c := range db.CapTypes {
		names[i] = strings.ToLower(c.Name)
	}
	return CapType{}, &prm.NotFoundError{Msg: fmt.Sprintf("no capability type %q; types: %s", name, strings.Join(names, ", "))}
}

// Const is a named value of the kernel headers (MLX5_MKC_ACCESS_MODE_MTT).
type Const struct {
	Name  string
	Value int64
}

// ConstsWithPrefix returns the constants whose names start with prefix,
// with the prefix cut off (MLX5_MKC_ACCESS_MODE_ gives PA, MTT, ...).
func (db *DB) ConstsWithPrefix(prefix string) []Const {
	var out []Const
	for _, c := range db.Consts {
		if rest, ok := strings.CutPrefix(c.Name, prefix); ok && rest != "" {
			out = append(out, Const{Name: rest, Value: c.Value})
		}
	}
	return out
}

// ConstName returns the name (without prefix) of the constant of that
// prefix with value v, or "".
func (db *DB) ConstName(prefix string, v int64) string {
	for _, c := range db.ConstsWithPrefix(prefix) {
		if c.Value == v {
			return c.Name
		}
	}
	return ""
}

// StatusName returns the name of a status code ("" when unknown).
func (db *DB) StatusName(v uint8) string {
	for _, s := range db.Statuses {
		if s.Value == v {
			return s.Name
		}
	}
	return ""
}

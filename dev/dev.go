// Package dev is a ConnectX device as features use it: get and set a
// register by name with its index fields, decoded through the PRM database,
// with typed errors and context deadlines. It sits over one backend (the
// access-register path over the config-space gateway, on hardware or on the
// emulator) and never imports the emulator.
package dev

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cxray/cxray/access/regaccess"
	"github.com/cxray/cxray/prm"
)

// Accessor performs one access-register transaction. The regaccess client
// is one; tests may supply others.
type Accessor interface {
	Access(ctx context.Context, method regaccess.Method, id uint16, data []byte) ([]byte, error)
}

// Device is an opened adapter function.
type Device struct {
	// Name is what the user gave (-d), BDF the PCI address when known.
	Name string
	BDF  string
	// Backend says how the device is reached ("direct", "emulator").
	Backend string
	DB      *prm.DB
	acc     Accessor
	close   func() error
	// cmds is the command interface, when one is attached (command.go).
	cmds Commander
}

// New wraps an accessor. closeFn (may be nil) runs on Close.
func New(name, bdf, backend string, db *prm.DB, acc Accessor, closeFn func() error) *Device {
	return &Device{Name: name, BDF: bdf, Backend: backend, DB: db, acc: acc, close: closeFn}
}

// Close releases the backend.
func (d *Device) Close() error {
	if d.close == nil {
		return nil
	}
	return d.close()
}

// DefaultIndex lists the index fields that have one obvious value on an
// HCA; they are filled in when the user leaves them out, and reported.
var DefaultIndex = map[string]string{
	"local_port": "1",
	"pnat":       "0",
	"lp_msb":     "0",
	"slot_index": "0",
	"swid":       "0",
	"port_type":  "0",
	// PPCNT: the counter-group profile, and the priority or traffic class
	// (used only by the per-priority and per-TC groups).
	"grp_profile": "0",
	"prio_tc":     "0",
}

// Reading is a register read from a device.
type Reading struct {
	Register *prm.Register
	Plan     *prm.Plan
	Decoded  *prm.Decoded
	// Defaulted lists the index fields cxray filled in ("local_port=1").
	Defaulted []string
	// Request is the buffer sent (index and op fields filled in).
	Request []byte
}

// IndexError names the index fields a register needs.
type IndexError struct {
	Register string
	Missing  []string
	Hints    []string
}

func (e *IndexError) Error() string {
	return fmt.Sprintf("%s needs index field(s) %s; give them with --index %s", e.Register, strings.Join(e.Missing, ", "), strings.Join(e.Hints, " --index "))
}

// request builds the buffer of a GET: index and op fields from the user,
// obvious defaults for the rest, an error naming what is missing.
func (d *Device) request(reg *prm.Register, index, op []prm.Assignment, size int) (*prm.Plan, []byte, []string, error) {
	p, err := d.DB.RegisterPlan(reg)
	if err != nil {
		return nil, nil, nil, err
	}
	index, op = leafPaths(p, index, prm.AccessIndex), leafPaths(p, op, prm.AccessOP)
	given := map[string]bool{}
	for _, a := range append(append([]prm.Assignment{}, index...), op...) {
		given[strings.ToLower(a.Path)] = true
	}
	buf := p.NewBuffer()
	if size > len(buf) {
		buf = make([]byte, size)
	} else if reg.Size > len(buf) {
		buf = make([]byte, reg.Size)
	}
	var defaulted, missing, hints []string
	all := append([]prm.Assignment{}, index...)
	for _, l := range p.Leaves() {
		if l.Access != prm.AccessIndex || l.When != "" || given[strings.ToLower(l.Path)] {
			continue
		}
		if v, ok := DefaultIndex[l.Step.Name]; ok {
			all = append(all, prm.Assignment{Path: l.Path, Value: v})
			defaulted = append(defaulted, l.Path+"="+v)
			continue
		}
		missing = append(missing, l.Path)
		hint := l.Path + "=N"
		if es := l.Enum(); len(es) > 0 {
			hint = l.Path + "=" + es[0].Name
		}
		hints = append(hints, hint)
	}
	if len(missing) > 0 {
		return nil, nil, nil, &IndexError{Register: reg.Name, Missing: missing, Hints: hints}
	}
	for _, a := range index {
		if err := checkAccess(p, a, buf, prm.AccessIndex); err != nil {
			return nil, nil, nil, err
		}
	}
	for _, a := range op {
		if err := checkAccess(p, a, buf, prm.AccessOP); err != nil {
			return nil, nil, nil, err
		}
	}
	if err := p.Encode(buf, append(all, op...)); err != nil {
		return nil, nil, nil, err
	}
	sort.Strings(defaulted)
	return p, buf, defaulted, nil
}

// leafPaths lets users name nested index and op fields by their own name
// (group_opcode for page_data.pddr_troubleshooting_page_ext.group_opcode),
// as mstreg does, when exactly one such field has that name.
func leafPaths(p *prm.Plan, as []prm.Assignment, acc prm.Access) []prm.Assignment {
	out := make([]prm.Assignment, len(as))
	copy(out, as)
	for i, a := range out {
		if _, err := p.Resolve(a.Path, p.NewBuffer()); err == nil {
			continue
		}
		var match string
		n := 0
		for _, l := range p.Leaves() {
			if l.Access == acc && (l.Step.Name == a.Path || strings.HasSuffix(l.Path, "."+a.Path)) {
				match, n = l.Path, n+1
			}
		}
		if n == 1 {
			out[i].Path = match
		}
	}
	return out
}

func checkAccess(p *prm.Plan, a prm.Assignment, buf []byte, want prm.Access) error {
	t, err := p.Resolve(a.Path, buf)
	if err != nil {
		return err
	}
	if t.Step.Access != want {
		kind := "--index"
		if want == prm.AccessOP {
			kind = "--op"
		}
		return &prm.FieldError{Path: a.Path, Msg: fmt.Sprintf("is %s, not %s; %s takes only %s fields", accessName(t.Step.Access), want, kind, want)}
	}
	return nil
}

func accessName(a prm.Access) string {
	if a == prm.AccessNone {
		return "a container"
	}
	return a.String()
}

// Get reads a register. index and op give INDEX and OP fields by path;
// size is the buffer size for registers that end in a variable array (0: the
// database's size).
func (d *Device) Get(ctx context.Context, name string, index, op []prm.Assignment, size int) (*Reading, error) {
	reg, err := d.DB.Register(name)
	if err != nil {
		return nil, err
	}
	p, buf, defaulted, err := d.request(reg, index, op, size)
	if err != nil {
		return nil, err
	}
	out, err := d.acc.Access(ctx, regaccess.Get, uint16(reg.ID), buf)
	if err != nil {
		return nil, &AccessError{Register: reg.Name, Op: "read", Err: err}
	}
	dec, err := p.Decode(out)
	if err != nil {
		return nil, &AccessError{Register: reg.Name, Op: "decode", Err: err}
	}
	return &Reading{Register: reg, Plan: p, Decoded: dec, Defaulted: defaulted, Request: buf}, nil
}

// GetRaw reads a register by ID and length, for registers not in the
// database. data carries the index fields.
func (d *Device) GetRaw(ctx context.Context, id uint16, data []byte) ([]byte, error) {
	out, err := d.acc.Access(ctx, regaccess.Get, id, data)
	if err != nil {
		return nil, &AccessError{Register: fmt.Sprintf("0x%04x", id), Op: "read", Err: err}
	}
	return out, nil
}

// SetRaw writes a register by ID.
func (d *Device) SetRaw(ctx context.Context, id uint16, data []byte) ([]byte, error) {
	out, err := d.acc.Access(ctx, regaccess.Set, id, data)
	if err != nil {
		return nil, &AccessError{Register: fmt.Sprintf("0x%04x", id), Op: "write", Err: err}
	}
	return out, nil
}

// AccessError wraps a backend error with the register and operation.
type AccessError struct {
	Register string
	Op       string
	Err      error
}

func (e *AccessError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Op, e.Register, e.Err)
}

func (e *AccessError) Unwrap() error { return e.Err }

// Change is one field a Set changes.
type Change struct {
	Path   string
	Before string
	After  string
}

// Plan of a write: what would be sent, and what it changes.
type WritePlan struct {
	Reading *Reading // the register as read before
	After   *prm.Decoded
	Bytes   []byte // the exact buffer to send
	Changes []Change
}

// ROError refuses writes to fields the firmware owns.
type ROError struct {
	Register string
	Fields   []string
}

func (e *ROError) Error() string {
	return fmt.Sprintf("%s: %s read-only (RO); the firmware owns %s and cxray will not write %s; see the RW fields with 'cxray prm show %s'",
		e.Register, strings.Join(e.Fields, ", ")+plural(len(e.Fields), " is", " are"), plural(len(e.Fields), "it", "them"), plural(len(e.Fields), "it", "them"), e.Register)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// PrepareSet reads the register and works out the write: the read value
// with fields replaced. It refuses RO and INDEX fields among fields (index
// fields go in index) and writes nothing.
func (d *Device) PrepareSet(ctx context.Context, name string, index, fields []prm.Assignment) (*WritePlan, error) {
	reg, err := d.DB.Register(name)
	if err != nil {
		return nil, err
	}
	p, err := d.DB.RegisterPlan(reg)
	if err != nil {
		return nil, err
	}
	if len(fields) == 0 {
		return nil, fmt.Errorf("nothing to set; give field=value pairs (see 'cxray prm show %s' for the RW fields)", reg.Name)
	}
	probe := p.NewBuffer()
	var ro []string
	for _, a := range fields {
		t, err := p.Resolve(a.Path, probe)
		if err != nil {
			return nil, err
		}
		switch t.Step.Access {
		case prm.AccessRO:
			ro = append(ro, a.Path)
		case prm.AccessIndex:
			return nil, &prm.FieldError{Path: a.Path, Msg: "is an INDEX field; give it with --index, it selects which instance is written"}
		}
	}
	if len(ro) > 0 {
		return nil, &ROError{Register: reg.Name, Fields: ro}
	}
	before, err := d.Get(ctx, reg.Name, index, nil, 0)
	if err != nil {
		return nil, err
	}
	buf := append([]byte(nil), before.Decoded.Raw...)
	// Index fields as requested (the firmware may not echo them).
	if err := p.Encode(buf, indexAssignments(before)); err != nil {
		return nil, err
	}
	if err := p.Encode(buf, fields); err != nil {
		return nil, err
	}
	after, err := p.Decode(buf)
	if err != nil {
		return nil, err
	}
	wp := &WritePlan{Reading: before, After: after, Bytes: buf}
	old := map[string]string{}
	for _, r := range before.Decoded.Rows() {
		old[r.Path] = r.Text
	}
	for _, r := range after.Rows() {
		if old[r.Path] != r.Text {
			wp.Changes = append(wp.Changes, Change{Path: r.Path, Before: old[r.Path], After: r.Text})
		}
	}
	return wp, nil
}

// indexAssignments lists the index fields of the request that produced r.
func indexAssignments(r *Reading) []prm.Assignment {
	req, err := r.Plan.Decode(r.Request)
	if err != nil {
		return nil
	}
	var out []prm.Assignment
	for _, row := range req.Rows() {
		if row.Value.Step().Access == prm.AccessIndex && row.Value.Kind() == prm.KindUint {
			out = append(out, prm.Assignment{Path: row.Path, Value: fmt.Sprint(row.Value.Uint())})
		}
	}
	return out
}

// VerifyError says the read-back after a write does not hold what was
// written.
type VerifyError struct {
	Register   string
	Mismatches []Change // Before: written, After: read back
}

func (e *VerifyError) Error() string {
	parts := make([]string, len(e.Mismatches))
	for i, m := range e.Mismatches {
		parts[i] = fmt.Sprintf("%s wrote %s, reads %s", m.Path, m.Before, m.After)
	}
	return fmt.Sprintf("%s: the write was sent but the read-back differs (%s); the firmware may have refused or adjusted the value (check the field's rules in 'cxray prm show %s')", e.Register, strings.Join(parts, "; "), e.Register)
}

// ApplySet sends a prepared write and re-reads the register to verify that
// every RW field it changed holds the new value.
func (d *Device) ApplySet(ctx context.Context, wp *WritePlan, index []prm.Assignment) (*Reading, error) {
	reg := wp.Reading.Register
	if _, err := d.acc.Access(ctx, regaccess.Set, uint16(reg.ID), wp.Bytes); err != nil {
		return nil, &AccessError{Register: reg.Name, Op: "write", Err: err}
	}
	back, err := d.Get(ctx, reg.Name, index, nil, len(wp.Bytes))
	if err != nil {
		return nil, fmt.Errorf("the write was sent, but reading it back failed: %w", err)
	}
	got := map[string]prm.Row{}
	for _, r := range back.Decoded.Rows() {
		got[r.Path] = r
	}
	var bad []Change
	for _, c := range wp.Changes {
		r, ok := got[c.Path]
		if !ok || r.Value.Step().Access != prm.AccessRW {
			continue // WO and OP fields do not read back
		}
		if r.Text != c.After {
			bad = append(bad, Change{Path: c.Path, Before: c.After, After: r.Text})
		}
	}
	if len(bad) > 0 {
		return back, &VerifyError{Register: reg.Name, Mismatches: bad}
	}
	return back, nil
}

// IsNotSupported says the firmware does not implement the register.
func IsNotSupported(err error) bool { return errors.Is(err, regaccess.ErrRegisterNotSupported) }

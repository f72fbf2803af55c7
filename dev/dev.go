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
	"sync"

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
	// Backend says how the device is reached.
	Backend Backend
	DB      *prm.DB
	// Reference, when set, is the database the firmware is expected to
	// know (the built-in one): a request is never shorter than its layout
	// of the register, so an older --adb still reads firmware whose
	// registers grew since (MCIA: 144 bytes in Rev 0.51, 148 in 0.57).
	// Firmware answers a longer request with its own layout.
	Reference *prm.DB
	acc       Accessor
	close     func() error
	// cmds is the command interface, when one is attached (command.go).
	cmds Commander
	// gone is why the device was closed under its users (CloseAfter),
	// shared with the copies WithDB makes.
	gone *goneCause
}

type goneCause struct {
	mu  sync.Mutex
	err error
}

// New wraps an accessor. closeFn (may be nil) runs on Close.
func New(name, bdf string, backend Backend, db *prm.DB, acc Accessor, closeFn func() error) *Device {
	return &Device{Name: name, BDF: bdf, Backend: backend, DB: db, acc: acc, close: closeFn, gone: &goneCause{}}
}

// GoneError is an access to a device whose path was closed after an
// earlier failure of the same command (the device removed, its path
// lost): the earlier failure is the cause, and it is what the error says
// and unwraps to, rather than the closed client under it.
type GoneError struct{ Cause error }

func (e *GoneError) Error() string {
	return fmt.Sprintf("the device stopped answering earlier in this command (%v); check it with 'cxray status' and run the command again", e.Cause)
}

func (e *GoneError) Unwrap() error { return e.Cause }

// CloseAfter closes the device because of cause, a failure of the path to
// it: whoever still holds the device then gets a GoneError naming cause
// from every access, never the closed transport's own error.
func (d *Device) CloseAfter(cause error) error {
	if d.gone != nil && cause != nil {
		d.gone.mu.Lock()
		if d.gone.err == nil {
			d.gone.err = cause
		}
		d.gone.mu.Unlock()
	}
	return d.Close()
}

// goneErr is the GoneError of a device closed by CloseAfter, or nil.
func (d *Device) goneErr() error {
	if d.gone == nil {
		return nil
	}
	d.gone.mu.Lock()
	defer d.gone.mu.Unlock()
	if d.gone.err == nil {
		return nil
	}
	return &GoneError{Cause: d.gone.err}
}

// access is every register access of the device: the accessor's, unless
// the device was closed after a failure (CloseAfter).
func (d *Device) access(ctx context.Context, m regaccess.Method, id uint16, data []byte) ([]byte, error) {
	if err := d.goneErr(); err != nil {
		return nil, err
	}
	return d.acc.Access(ctx, m, id, data)
}

// WithDB is the device read through another database's layouts (the
// same backend; closing either closes both).
func (d *Device) WithDB(db *prm.DB) *Device {
	c := *d
	c.DB = db
	return &c
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
	// Added by later PRM revisions, each with a default that keeps the
	// older meaning: plane_ind 0 is the aggregated (non-planarized) port
	// (PAOS, PMLP, PPCNT, PTYS, PDDR from Rev 0.59), lp_gl 0 reads
	// local_port as a local port number (PPCNT), module_ind_type 0 is a
	// pluggable module (PDDR).
	"plane_ind":       "0",
	"lp_gl":           "0",
	"module_ind_type": "0",
}

// RegisterIndex are defaults for index fields whose names are too generic
// to default everywhere, by register.
var RegisterIndex = map[string]map[string]string{
	// MTMP from Rev 0.59: asic_index, ig and i address a switch's
	// internal diodes; 0 is the whole ASIC, the only answer an HCA has.
	"MTMP": {"asic_index": "0", "ig": "0", "i": "0"},
	// ROCE_ACCL from Rev 0.62: the adaptive-retransmission profile is
	// only read when adp_retrans_timeouts_profile_select is set.
	"ROCE_ACCL": {"adp_retx_profile_id": "0"},
	// The PCIe registers address a node of the PCIe hierarchy; depth 0,
	// node 0 is the adapter's own endpoint, and pcie_index is reserved
	// when the host reads (it selects a Socket-Direct PCIe link). DPNv,
	// from Rev 0.62, 0 (multi_topology_unaware_sw) keeps that addressing.
	"MPEIN": {"depth": "0", "pcie_index": "0", "node": "0", "DPNv": "0"},
	"MPCNT": {"depth": "0", "pcie_index": "0", "node": "0", "DPNv": "0"},
	"MPIR":  {"depth": "0", "pcie_index": "0", "node": "0", "DPNv": "0"},
	// PPLM from Rev 0.62 and SLRG from Rev 0.64: 0 selects the operational
	// (not test-mode) FEC settings and the per-lane grade, what older
	// revisions answer.
	"PPLM": {"test_mode": "0", "resilink_fec_ind": "0"},
	"SLRG": {"all_lanes": "0", "measurements_thresholds": "0"},
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

// IndexMeanings say what an index field's numbers select where the number
// alone does not (MTMP sensor_index, per its description in the PRM).
var IndexMeanings = map[string]map[string]string{
	"MTMP": {"sensor_index": "0 is the ASIC, 64+N the module in cage N (64 is module 0); 'cxray reg get MTCAP' lists the ASIC's sensors"},
	"MTBR": {"base_sensor_index": "0 is the ASIC, 64+N the module in cage N"},
}

// IndexError names the index fields a register needs.
type IndexError struct {
	Register string
	Missing  []string
	Hints    []string
	// Meanings say what the values of the missing fields select (an
	// enum's names, IndexMeanings).
	Meanings []string
}

func (e *IndexError) Error() string {
	s := fmt.Sprintf("%s needs index field(s) %s; give them with --index %s", e.Register, strings.Join(e.Missing, ", "), strings.Join(e.Hints, " --index "))
	if len(e.Meanings) > 0 {
		s += " (" + strings.Join(e.Meanings, "; ") + ")"
	}
	return s
}

// Prefer puts value in the hint of the missing field path (the caller
// knows better than the first enum name: the port's protocol for PTYS
// proto_mask).
func (e *IndexError) Prefer(path, value string) {
	for i, m := range e.Missing {
		if strings.EqualFold(m, path) {
			e.Hints[i] = m + "=" + value
		}
	}
}

// Is makes a missing or bad index an input error (prm.ErrInput).
func (e *IndexError) Is(target error) bool { return target == prm.ErrInput }

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
	n := max(len(p.NewBuffer()), size, reg.Size)
	if d.Reference != nil && d.Reference != d.DB {
		if rr, err := d.Reference.Register(reg.Name); err == nil && rr.ID == reg.ID {
			n = max(n, rr.Size)
		}
	}
	buf := make([]byte, n)
	var defaulted, missing, hints, meanings []string
	all := append([]prm.Assignment{}, index...)
	for _, l := range requiredIndex(p) {
		if given[strings.ToLower(l.Path)] {
			continue
		}
		v, ok := DefaultIndex[l.Step.Name]
		if rv, rok := RegisterIndex[reg.Name][l.Step.Name]; rok {
			v, ok = rv, true
		}
		if ok {
			all = append(all, prm.Assignment{Path: l.Path, Value: v})
			defaulted = append(defaulted, l.Path+"="+v)
			continue
		}
		missing = append(missing, l.Path)
		hint := l.Path + "=N"
		if es := l.Enum(); len(es) > 0 {
			// No single value is right for every port (PTYS proto_mask is
			// the port's protocol): the names, not the first of them.
			hint = l.Path + "=NAME"
			var names []string
			for _, e := range es {
				if !strings.HasPrefix(strings.ToLower(e.Name), "reserved") {
					names = append(names, e.Name)
				}
			}
			meanings = append(meanings, l.Path+": one of "+strings.Join(names, ", "))
		}
		if m, ok := IndexMeanings[reg.Name][l.Step.Name]; ok {
			hint = l.Path + "=0"
			meanings = append(meanings, l.Path+": "+m)
		}
		hints = append(hints, hint)
	}
	if len(missing) > 0 {
		return nil, nil, nil, &IndexError{Register: reg.Name, Missing: missing, Hints: hints, Meanings: meanings}
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

// requiredIndex lists the index fields every request of a layout must
// carry: those outside unions (an index field inside a union member is
// only meaningful with that member, and older databases give their unions
// no selector to tell). Cached per plan: it is asked on every read.
func requiredIndex(p *prm.Plan) []prm.Leaf {
	if v, ok := indexCache.Load(p); ok {
		return v.([]prm.Leaf)
	}
	inUnion := map[string]bool{}
	var walk func(s *prm.Step, path string, under bool)
	walk = func(s *prm.Step, path string, under bool) {
		switch s.Kind {
		case prm.KindStruct:
			for _, c := range s.Children {
				walk(c, joinPath(path, c.Name), under)
			}
		case prm.KindUnion:
			for _, c := range s.Children {
				walk(c, joinPath(path, c.Name), true)
			}
		default:
			if under {
				inUnion[path] = true
			}
		}
	}
	walk(p.Root, "", false)
	var out []prm.Leaf
	for _, l := range p.Leaves() {
		if l.Access == prm.AccessIndex && l.When == "" && l.Count == 0 && !inUnion[l.Path] {
			out = append(out, l)
		}
	}
	indexCache.Store(p, out)
	return out
}

var indexCache sync.Map // *prm.Plan -> []prm.Leaf

func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
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
	return d.get(ctx, name, index, op, nil, size)
}

// GetFields reads a register whose query takes fields that are not
// INDEX fields in the database (PDDR's module_info_ext, MCQI's
// data_size): index fields as for Get, then fields written into the
// request as given. It is still a GET.
func (d *Device) GetFields(ctx context.Context, name string, index, fields []prm.Assignment) (*Reading, error) {
	return d.get(ctx, name, index, nil, fields, 0)
}

func (d *Device) get(ctx context.Context, name string, index, op, fields []prm.Assignment, size int) (*Reading, error) {
	reg, err := d.DB.Register(name)
	var nf *prm.NotFoundError
	if errors.As(err, &nf) && d.Reference != nil && d.Reference != d.DB {
		// A register the user's database lacks (PGUID before Rev 0.56)
		// is read with the reference layout the firmware answers with.
		if _, rerr := d.Reference.Register(name); rerr == nil {
			return d.WithDB(d.Reference).get(ctx, name, index, op, fields, size)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(fields) > 0 {
		// The fields that are INDEX fields in this database select the
		// instance like any index; the others are written as given.
		p, err := d.DB.RegisterPlan(reg)
		if err != nil {
			return nil, err
		}
		probe := p.NewBuffer()
		var rest []prm.Assignment
		index = append([]prm.Assignment(nil), index...)
		for _, f := range leafPaths(p, fields, prm.AccessIndex) {
			if t, err := p.Resolve(f.Path, probe); err == nil && t.Step.Access == prm.AccessIndex {
				index = append(index, f)
			} else {
				rest = append(rest, f)
			}
		}
		fields = rest
	}
	p, buf, defaulted, err := d.request(reg, index, op, size)
	if err != nil {
		return nil, err
	}
	if len(fields) > 0 {
		if err := p.Encode(buf, fields); err != nil {
			return nil, err
		}
	}
	out, err := d.access(ctx, regaccess.Get, uint16(reg.ID), buf)
	if err != nil {
		return nil, &AccessError{Register: reg.Name, Op: "read", Err: err}
	}
	dec, err := p.Decode(out)
	if err != nil {
		return nil, &AccessError{Register: reg.Name, Op: "decode", Err: err}
	}
	return &Reading{Register: reg, Plan: p, Decoded: dec, Defaulted: defaulted, Request: buf}, nil
}

// CheckRequest builds the request a Get would send and reports what is
// wrong with it (an unknown register or field, a missing index field)
// without touching the device, so commands can refuse bad input at start.
func (d *Device) CheckRequest(name string, index, op []prm.Assignment) error {
	reg, err := d.DB.Register(name)
	if err != nil {
		return err
	}
	_, _, _, err = d.request(reg, index, op, 0)
	return err
}

// GetRaw reads a register by ID and length, for registers not in the
// database. data carries the index fields.
func (d *Device) GetRaw(ctx context.Context, id uint16, data []byte) ([]byte, error) {
	out, err := d.access(ctx, regaccess.Get, id, data)
	if err != nil {
		return nil, &AccessError{Register: fmt.Sprintf("0x%04x", id), Op: "read", Err: err}
	}
	return out, nil
}

// SetRaw writes a register by ID.
func (d *Device) SetRaw(ctx context.Context, id uint16, data []byte) ([]byte, error) {
	out, err := d.access(ctx, regaccess.Set, id, data)
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
	// Unverifiable lists the changed fields a read-back cannot confirm:
	// operation and write-only fields (ase, rst, clr), which the firmware
	// acts on and clears by design.
	Unverifiable []string
}

// EnumError refuses a value that is not one of an enum field's values.
type EnumError struct {
	Register, Path, Value string
	Names                 []string
}

func (e *EnumError) Error() string {
	return fmt.Sprintf("%s.%s=%s: not one of its values (%s); nothing was written; give --raw to write a value outside the list", e.Register, e.Path, e.Value, strings.Join(e.Names, ", "))
}

// Is makes an unknown enum name an input error (prm.ErrInput).
func (e *EnumError) Is(target error) bool { return target == prm.ErrInput }

// SetOptions tune PrepareSetWith.
type SetOptions struct {
	// AnyValue lets a number outside an enum field's values through
	// (reserved values, newer firmware's).
	AnyValue bool
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

// Is makes a write of a read-only field an input error (prm.ErrInput).
func (e *ROError) Is(target error) bool { return target == prm.ErrInput }

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
	return d.PrepareSetWith(ctx, name, index, fields, SetOptions{})
}

// PrepareSetWith is PrepareSet with options. A value outside an enum
// field's values is refused unless o.AnyValue.
func (d *Device) PrepareSetWith(ctx context.Context, name string, index, fields []prm.Assignment, o SetOptions) (*WritePlan, error) {
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
		if path, names, out := p.OutsideEnum(a); out && !o.AnyValue {
			return nil, &EnumError{Register: reg.Name, Path: path, Value: a.Value, Names: names}
		}
	}
	if len(ro) > 0 {
		return nil, &ROError{Register: reg.Name, Fields: ro}
	}
	if !o.AnyValue {
		if err := checkUpdateEnable(p, reg.Name, fields); err != nil {
			return nil, err
		}
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
			if acc := r.Value.Step().Access; acc == prm.AccessOP || acc == prm.AccessWO {
				wp.Unverifiable = append(wp.Unverifiable, r.Path)
			}
		}
	}
	return wp, nil
}

// UpdateEnable lists fields the firmware applies only when their update
// enable bit is set in the same write (PRM PAOS and PMAOS: ase "admin
// state update enable", ee "event update enable"); without it the write
// is taken and the field left as it was.
var UpdateEnable = map[string]map[string]string{
	"PAOS":  {"admin_status": "ase", "e": "ee"},
	"PMAOS": {"admin_status": "ase", "e": "ee"},
}

// checkUpdateEnable refuses, before anything is written, a field whose
// update enable bit the write leaves clear: the read-back would only say
// that the value did not take.
func checkUpdateEnable(p *prm.Plan, reg string, fields []prm.Assignment) error {
	en := UpdateEnable[reg]
	if en == nil {
		return nil
	}
	set := map[string]string{}
	for _, a := range fields {
		set[strings.ToLower(a.Path)] = strings.TrimSpace(a.Value)
	}
	for _, a := range fields {
		bit, ok := en[strings.ToLower(a.Path)]
		if !ok {
			continue
		}
		if _, err := p.Resolve(bit, p.NewBuffer()); err != nil {
			continue // a revision without the bit
		}
		if v, given := set[bit]; given {
			if n, err := prm.ParseUint(v); err == nil && n == 1 || strings.EqualFold(v, "true") {
				continue
			}
		}
		return &prm.FieldError{Path: a.Path, Msg: fmt.Sprintf("is applied by the firmware only with %s=1 in the same write (%s's update enable bit); add %s=1 (the write would be taken and %s left unchanged; --raw writes it as given)", bit, reg, bit, a.Path)}
	}
	return nil
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
	if _, err := d.access(ctx, regaccess.Set, uint16(reg.ID), wp.Bytes); err != nil {
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
func IsNotSupported(err error) bool { return errors.Is(err, ErrNotSupported) }

// DatabaseProblem marks IndexError as the database's: an index field the
// user's database has and no default covers.
func (*IndexError) DatabaseProblem() {}

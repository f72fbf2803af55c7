// Package revdiff compares two PRM register databases (two revisions of the
// ADB) and reports what changed: registers added, removed or renumbered, and
// for each register the fields that moved, were resized, renamed, merged,
// split, added, removed, or whose access kind or enum changed.
//
// Fields are compared as the layout compiler flattens them (prm.Plan), so
// every bit offset in a report is an absolute MSB-first offset from byte 0 of
// the register, the same convention as prm.Leaf. Only layout facts are
// compared; descriptions are ignored, so a database without them (the
// built-in one) diffs like the ADB it came from.
package revdiff

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cxray/cxray/prm"
)

// Options restrict and tune a diff.
type Options struct {
	// Names restricts the diff to these registers or layout nodes. A name is
	// looked up as a register first (case-insensitive, or a register ID such
	// as "0x9024"), then as a node, with or without the "_ext" suffix
	// ("config_item" finds config_item_ext). Empty means every register.
	Names []string
}

// Field change kinds.
const (
	Added   = "added"   // a field that is new (a container is reported once)
	Removed = "removed" // a field that is gone
	Moved   = "moved"   // same path, different offset within its parent
	Resized = "resized" // same path, different width, element count or variability
	Renamed = "renamed" // same bits under another name (or union member with the same selector value)
	Access  = "access"  // access kind changed (RO, RW, WO, INDEX, OP)
	Enum    = "enum"    // enum values added, removed, renamed or renumbered
	Merged  = "merged"  // several old fields replaced by one new field covering exactly their bits
	Split   = "split"   // one old field replaced by several new fields covering exactly its bits
	Retyped = "retyped" // same path and bits, but a plain field became a structure or union, or the reverse
)

// Report is the outcome of a diff. All lists are sorted.
type Report struct {
	OldRevision string `json:"old_revision"`
	NewRevision string `json:"new_revision"`
	OldSource   string `json:"old_source"`
	NewSource   string `json:"new_source"`
	// Names echoes Options.Names when the diff was restricted.
	Names []string `json:"names,omitempty"`

	AddedRegisters   []RegisterRef    `json:"added_registers"`
	RemovedRegisters []RegisterRef    `json:"removed_registers"`
	Changed          []RegisterChange `json:"changed"`
	// Unchanged counts registers (or nodes) present in both with no change.
	Unchanged int `json:"unchanged"`
	// UnchangedNames lists them when the diff was restricted by name, so a
	// caller can say "MGIR: no change" instead of printing nothing.
	UnchangedNames []string `json:"unchanged_names,omitempty"`
}

// RegisterRef names a register (or node) present on one side only.
type RegisterRef struct {
	Name   string `json:"name"`
	IsNode bool   `json:"is_node,omitempty"` // a layout node asked for by name, not a register
	ID     uint32 `json:"id,omitempty"`
	Node   string `json:"node"`
	Bytes  int    `json:"bytes"`
	// SameIDAs names a register on the other side with the same ID: a hint
	// that the register was renamed rather than replaced.
	SameIDAs string `json:"same_id_as,omitempty"`
}

// RegisterChange is a register (or node) present in both databases with at
// least one difference.
type RegisterChange struct {
	Name        string        `json:"name"`
	IsNode      bool          `json:"is_node,omitempty"`
	OldID       uint32        `json:"old_id,omitempty"`
	NewID       uint32        `json:"new_id,omitempty"`
	IDChanged   bool          `json:"id_changed,omitempty"`
	OldNode     string        `json:"old_node"`
	NewNode     string        `json:"new_node"`
	OldBytes    int           `json:"old_bytes"`
	NewBytes    int           `json:"new_bytes"`
	SizeChanged bool          `json:"size_changed,omitempty"`
	Fields      []FieldChange `json:"fields,omitempty"`
}

// FieldChange is one difference in a layout. A field whose offset, width,
// access and enum all changed gives four entries with the same Path.
type FieldChange struct {
	Kind string `json:"kind"`
	// Path is the field's path in the new layout; for removed and split it
	// is the old path.
	Path string `json:"path"`
	// OldPath is the old path when it differs from Path (renamed fields and
	// fields inside renamed containers).
	OldPath string     `json:"old_path,omitempty"`
	Old     *FieldInfo `json:"old,omitempty"`
	New     *FieldInfo `json:"new,omitempty"`
	// Parts lists, for merged, the old fields that New replaces and, for
	// split (and retyped), the new fields that replace Old.
	Parts []FieldInfo `json:"parts,omitempty"`
	// Enum details an enum change.
	Enum *EnumChange `json:"enum,omitempty"`
	// Repeat is set when the same change was found in every element of an
	// array of structures: the change is given for the first element.
	Repeat *Repeat `json:"repeat,omitempty"`
	// Detail says the change in words, as WriteText prints it.
	Detail string `json:"detail"`
}

// Repeat says which elements of an array of structures share a change.
type Repeat struct {
	Array      string `json:"array"`       // path of the array (new layout)
	First      int    `json:"first"`       // index of the first element
	Last       int    `json:"last"`        // index of the last element
	Count      int    `json:"count"`       // elements with the change
	StrideBits int    `json:"stride_bits"` // distance between elements
}

// FieldInfo describes one side of a field.
type FieldInfo struct {
	Path string `json:"path"`
	// BitOffset is the absolute MSB-first offset from byte 0.
	BitOffset int `json:"bit_offset"`
	// BitWidth is the width of the field; for an array of scalars, of one
	// element; for a structure, union or array of structures, of the whole.
	BitWidth int  `json:"bit_width"`
	Count    int  `json:"count,omitempty"`    // elements of an array
	Variable bool `json:"variable,omitempty"` // array runs to the end of the buffer
	// Type is "struct", "union" or "array" for containers, empty for a plain
	// field or an array of scalars.
	Type string `json:"type,omitempty"`
	// Leaves counts the plain fields inside a container.
	Leaves int         `json:"leaves,omitempty"`
	Access string      `json:"access,omitempty"`
	Enum   []EnumValue `json:"enum,omitempty"`
}

// EnumValue is one named value.
type EnumValue struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

// EnumChange details how a field's enum changed.
type EnumChange struct {
	Added      []EnumValue    `json:"added,omitempty"`
	Removed    []EnumValue    `json:"removed,omitempty"`
	Renamed    []EnumRename   `json:"renamed,omitempty"`
	Renumbered []EnumRenumber `json:"renumbered,omitempty"`
}

// EnumRename is a value whose name changed.
type EnumRename struct {
	Value   uint64 `json:"value"`
	OldName string `json:"old_name"`
	NewName string `json:"new_name"`
}

// EnumRenumber is a name whose value changed.
type EnumRenumber struct {
	Name     string `json:"name"`
	OldValue uint64 `json:"old_value"`
	NewValue uint64 `json:"new_value"`
}

// CountByKind tallies the field changes of every changed register by kind;
// a change repeated in every element of an array counts once.
func (r *Report) CountByKind() map[string]int {
	m := map[string]int{}
	for _, c := range r.Changed {
		for _, f := range c.Fields {
			m[f.Kind]++
		}
	}
	return m
}

// target is one thing to compare: a register or a node, on each side (nil
// or "" when missing on that side).
type target struct {
	name             string
	isNode           bool
	oldReg, newReg   *prm.Register
	oldNode, newNode string
}

// Diff compares old against new.
func Diff(old, new *prm.DB, opts Options) (*Report, error) {
	if old == nil || new == nil {
		return nil, fmt.Errorf("revdiff: both databases are needed")
	}
	rep := &Report{
		OldRevision: old.Revision, NewRevision: new.Revision,
		OldSource: old.Source, NewSource: new.Source,
		AddedRegisters: []RegisterRef{}, RemovedRegisters: []RegisterRef{}, Changed: []RegisterChange{},
	}
	var targets []target
	if len(opts.Names) == 0 {
		targets = allRegisters(old, new)
	} else {
		rep.Names = append([]string(nil), opts.Names...)
		seen := map[string]bool{}
		for _, name := range opts.Names {
			t, err := resolve(old, new, name)
			if err != nil {
				return nil, err
			}
			key := strings.ToUpper(t.name)
			if t.isNode {
				key = "node:" + key
			}
			if !seen[key] {
				seen[key] = true
				targets = append(targets, t)
			}
		}
		sort.Slice(targets, func(i, j int) bool { return targets[i].name < targets[j].name })
	}
	for _, t := range targets {
		if err := diffTarget(rep, old, new, t); err != nil {
			return nil, err
		}
	}
	sameIDHints(rep)
	return rep, nil
}

// allRegisters pairs the registers of both databases by upper-case name.
func allRegisters(old, new *prm.DB) []target {
	byKey := map[string]*target{}
	var keys []string
	get := func(r *prm.Register) *target {
		k := strings.ToUpper(r.Name)
		t, ok := byKey[k]
		if !ok {
			t = &target{name: r.Name}
			byKey[k] = t
			keys = append(keys, k)
		}
		return t
	}
	for _, r := range old.Registers {
		get(r).oldReg = r
	}
	for _, r := range new.Registers {
		t := get(r)
		t.newReg = r
		t.name = r.Name // the new spelling wins
	}
	sort.Strings(keys)
	out := make([]target, len(keys))
	for i, k := range keys {
		out[i] = *byKey[k]
	}
	return out
}

// resolve finds a name as a register on either side, else as a node.
func resolve(old, new *prm.DB, name string) (target, error) {
	name = strings.TrimSpace(name)
	regName := ""
	// Register() also takes IDs; the ID is turned into a name (the new
	// side's first) so that both sides are then paired by name.
	if r, err := new.Register(name); err == nil {
		regName = r.Name
	} else if r, err := old.Register(name); err == nil {
		regName = r.Name
	}
	if regName != "" {
		t := target{name: regName}
		t.oldReg, _ = old.Register(regName)
		t.newReg, _ = new.Register(regName)
		if t.oldReg != nil && strings.ToUpper(t.oldReg.Name) != strings.ToUpper(regName) {
			t.oldReg = nil // an ID-shaped name that is another register's ID
		}
		if t.newReg != nil && strings.ToUpper(t.newReg.Name) != strings.ToUpper(regName) {
			t.newReg = nil
		}
		return t, nil
	}
	on, nn := findNode(old, name), findNode(new, name)
	if on != "" || nn != "" {
		display := strings.TrimSuffix(strings.ToLower(name), "_ext")
		return target{name: display, isNode: true, oldNode: on, newNode: nn}, nil
	}
	cands := append(old.RegisterNames(), new.RegisterNames()...)
	for _, db := range []*prm.DB{old, new} {
		for n := range db.Nodes {
			cands = append(cands, strings.TrimSuffix(n, "_ext"))
		}
	}
	sort.Strings(cands)
	msg := fmt.Sprintf("%q is neither a register nor a layout node in %s or %s", name, old.Revision, new.Revision)
	if s := prm.Closest(name, dedupe(cands), 3); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, ", ") + "?"
	}
	return target{}, &prm.NotFoundError{Msg: msg}
}

// findNode looks a node up case-insensitively, with or without "_ext".
func findNode(db *prm.DB, name string) string {
	base := strings.TrimSuffix(strings.ToLower(name), "_ext")
	if base == "" {
		return ""
	}
	var hit string
	for n := range db.Nodes {
		l := strings.ToLower(n)
		if l == base+"_ext" {
			return n // the external database's spelling is the usual one
		}
		if l == base {
			hit = n
		}
	}
	return hit
}

func dedupe(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func diffTarget(rep *Report, old, new *prm.DB, t target) error {
	oldNode, newNode := t.oldNode, t.newNode
	if t.oldReg != nil {
		oldNode = t.oldReg.Node
	}
	if t.newReg != nil {
		newNode = t.newReg.Node
	}
	var op, np *prm.Plan
	var err error
	if oldNode != "" {
		if op, err = old.Plan(oldNode); err != nil {
			return fmt.Errorf("%s in %s: %w", t.name, old.Revision, err)
		}
	}
	if newNode != "" {
		if np, err = new.Plan(newNode); err != nil {
			return fmt.Errorf("%s in %s: %w", t.name, new.Revision, err)
		}
	}
	ref := func(r *prm.Register, node string, p *prm.Plan) RegisterRef {
		rr := RegisterRef{Name: t.name, IsNode: t.isNode, Node: node, Bytes: p.Bytes}
		if r != nil {
			rr.Name, rr.ID = r.Name, r.ID
		}
		return rr
	}
	switch {
	case op == nil && np == nil:
		return nil
	case op == nil:
		rep.AddedRegisters = append(rep.AddedRegisters, ref(t.newReg, newNode, np))
		return nil
	case np == nil:
		rep.RemovedRegisters = append(rep.RemovedRegisters, ref(t.oldReg, oldNode, op))
		return nil
	}
	rc := RegisterChange{Name: t.name, IsNode: t.isNode, OldNode: oldNode, NewNode: newNode, OldBytes: op.Bytes, NewBytes: np.Bytes}
	if t.oldReg != nil && t.newReg != nil {
		rc.Name, rc.OldID, rc.NewID = t.newReg.Name, t.oldReg.ID, t.newReg.ID
		rc.IDChanged = rc.OldID != rc.NewID
	}
	rc.SizeChanged = rc.OldBytes != rc.NewBytes
	rc.Fields = compareLayouts(op, np)
	if rc.IDChanged || rc.SizeChanged || len(rc.Fields) > 0 {
		rep.Changed = append(rep.Changed, rc)
	} else {
		rep.Unchanged++
		if len(rep.Names) > 0 {
			rep.UnchangedNames = append(rep.UnchangedNames, rc.Name)
		}
	}
	return nil
}

// sameIDHints marks added registers whose ID a removed register had, and the
// reverse: most such pairs are renames.
func sameIDHints(rep *Report) {
	removed := map[uint32]string{}
	for _, r := range rep.RemovedRegisters {
		if !r.IsNode {
			removed[r.ID] = r.Name
		}
	}
	added := map[uint32]string{}
	for i, r := range rep.AddedRegisters {
		if n, ok := removed[r.ID]; ok && !r.IsNode {
			rep.AddedRegisters[i].SameIDAs = n
			added[r.ID] = r.Name
		}
	}
	for i, r := range rep.RemovedRegisters {
		if n, ok := added[r.ID]; ok && !r.IsNode {
			rep.RemovedRegisters[i].SameIDAs = n
		}
	}
}

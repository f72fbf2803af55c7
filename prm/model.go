// Package prm is the PRM register database: the model of registers and their
// layouts, a bit-exact codec, and the diff between two revisions.
//
// Offsets follow the ADB convention on input (byte.bit with the bit counted
// from the LSB of a big-endian dword) and are exposed as MSB-first bit offsets
// from the start of the register (the mlx5_ifc.h convention).
package prm

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Access is a field's access kind as the PRM gives it.
type Access uint8

// Access kinds. AccessNone means the database gave none (containers, union
// members); such fields inherit their parent's kind for display.
const (
	AccessNone Access = iota
	AccessRO
	AccessRW
	AccessWO
	AccessIndex
	AccessOP
)

var accessNames = [...]string{"", "RO", "RW", "WO", "INDEX", "OP"}

func (a Access) String() string {
	if int(a) < len(accessNames) {
		return accessNames[a]
	}
	return fmt.Sprintf("Access(%d)", a)
}

// ParseAccess maps the ADB's spellings (RO, ReadOnly, INDEX, Index ...) to an
// Access. Unknown spellings are an error so that a malformed database is seen.
func ParseAccess(s string) (Access, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "":
		return AccessNone, nil
	case "RO", "READONLY":
		return AccessRO, nil
	case "RW", "READWRITE":
		return AccessRW, nil
	case "WO", "WRITEONLY":
		return AccessWO, nil
	case "INDEX":
		return AccessIndex, nil
	case "OP":
		return AccessOP, nil
	}
	return AccessNone, fmt.Errorf("unknown access kind %q (want RO, RW, WO, INDEX or OP)", s)
}

// EnumValue is one named value of a field.
type EnumValue struct {
	Name  string
	Value uint64
}

// Field is a member of a Node, as the database describes it.
type Field struct {
	Name  string
	Descr string
	// Offset and Size are in bits, ADB style: Offset is bytes*8 + the LSB-based
	// bit inside a big-endian dword. Size is the whole field (whole array for a
	// fixed array, one element for a VARIABLE array).
	Offset int
	Size   int
	Access Access
	// Subnode names the node type of a structured field ("" for plain bits).
	Subnode string
	Enum    []EnumValue
	// Arrays. IsArray is set when bounds were given.
	IsArray   bool
	LowBound  int
	HighBound int  // inclusive; meaningless when Variable
	Variable  bool // high_bound="VARIABLE": the array runs to the end of the buffer
	Dynamic   bool // arr_is_dynamic: the element count comes from SizeCondition
	// SizeCondition is a $(parent) path to a byte count (arr_is_dynamic).
	SizeCondition string
	// UnionSelector is a $(parent) path to the field that picks the member of
	// the union this field holds.
	UnionSelector string
	// SelectedBy is, on a union member, the enum name of the selector that
	// picks it.
	SelectedBy string
	// Condition is, on a member of a conditional union, the expression that
	// picks it; on the field holding such a union, the selector hint.
	Condition string
	// Format says how the bits are read beyond a number (text, BCD,
	// signed), as the description states it; see DetectFormat.
	Format Format
	// ValidWhen is when the field means something, as its description
	// states it ("Valid only when oper_status = 4'b0011"); nil when it
	// states nothing a field of the same node can check. See
	// DetectValidity.
	ValidWhen *Validity
	// Line is the source line (0 when unknown), for error messages.
	Line int

	owner *Node
}

// Owner is the node the field belongs to.
func (f *Field) Owner() *Node { return f.owner }

// Count is the number of array elements for a fixed array, 1 otherwise.
func (f *Field) Count() int {
	if !f.IsArray || f.Variable {
		return 1
	}
	return f.HighBound - f.LowBound + 1
}

// ElemSize is the size in bits of one array element (the field size for
// scalars and VARIABLE arrays).
func (f *Field) ElemSize() int {
	if !f.IsArray || f.Variable {
		return f.Size
	}
	return f.Size / f.Count()
}

// EnumName returns the name of value v, if the field's enum has one.
func (f *Field) EnumName(v uint64) (string, bool) {
	for _, e := range f.Enum {
		if e.Value == v {
			return e.Name, true
		}
	}
	return "", false
}

// EnumValueOf returns the value of an enum name (case-insensitive).
func (f *Field) EnumValueOf(name string) (uint64, bool) {
	for _, e := range f.Enum {
		if strings.EqualFold(e.Name, name) {
			return e.Value, true
		}
	}
	return 0, false
}

// Node is a structure or union type.
type Node struct {
	Name        string
	Descr       string
	Size        int // bits
	Union       bool
	Conditional bool // is_conditional: members carry Condition expressions
	Fields      []*Field
	Line        int
}

// Field returns the member with the given name.
func (n *Node) Field(name string) *Field {
	for _, f := range n.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func (n *Node) fieldFold(name string) *Field {
	for _, f := range n.Fields {
		if strings.EqualFold(f.Name, name) {
			return f
		}
	}
	return nil
}

// Validity is when a field means something: while a sibling field (Field,
// of the same node) holds Value, or any value but 0 (NonZero).
type Validity struct {
	Field   string
	Value   uint64
	NonZero bool
}

// String is the validity as the facts format keeps it: "oper_status=3" or
// "rtt_measure_valid!=0".
func (v Validity) String() string {
	if v.NonZero {
		return v.Field + "!=0"
	}
	return fmt.Sprintf("%s=%d", v.Field, v.Value)
}

// ParseValidity reads what String writes.
func ParseValidity(s string) (*Validity, error) {
	bad := fmt.Errorf("validity %q is not FIELD=N or FIELD!=0", s)
	if f, ok := strings.CutSuffix(s, "!=0"); ok {
		if !isIdent(f) {
			return nil, bad
		}
		return &Validity{Field: f, NonZero: true}, nil
	}
	f, v, ok := strings.Cut(s, "=")
	u, err := strconv.ParseUint(v, 10, 64)
	if !ok || !isIdent(f) || err != nil {
		return nil, bad
	}
	return &Validity{Field: f, Value: u}, nil
}

// isIdent says s is a field name: a letter, then letters, digits and _.
func isIdent(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '_')) {
			return false
		}
	}
	return s != ""
}

// Register is an access register: a name, an ID and the node of its layout.
type Register struct {
	Name string
	ID   uint32
	Node string
	// Size is the register size in bytes as the summary table gives it; it is
	// a minimum for registers ending in a VARIABLE array.
	Size int
}

// DB is a loaded register database.
type DB struct {
	// Source says where it came from: a file path or "built-in".
	Source string
	// Revision is the PRM revision ("Rev 0.57").
	Revision string
	// DocName is the source document name, when given.
	DocName string
	// HasDescriptions is false for the built-in, facts-only database.
	HasDescriptions bool
	// Notes say what was taken from another database to read this one
	// (AdoptSelectors), for the user.
	Notes []string

	Nodes     map[string]*Node
	Registers []*Register // sorted by name

	byName    map[string]*Register // upper-case name
	byID      map[uint32]*Register
	plans     planCache
	describer Describer
}

// Describer supplies description text to a database that has none (the
// built-in one), from an ADB of the same revision.
type Describer interface {
	// Node returns the node's description under "" and each field's under
	// its name.
	Node(name string) map[string]string
}

// SetDescriber attaches a source of descriptions.
func (db *DB) SetDescriber(d Describer) {
	db.describer = d
	db.HasDescriptions = d != nil || db.HasDescriptions
}

// FieldDescr returns a field's description, from the database or its
// describer ("" when there is none).
func (db *DB) FieldDescr(f *Field) string {
	if f == nil {
		return ""
	}
	if f.Descr != "" || db.describer == nil || f.owner == nil {
		return f.Descr
	}
	return db.describer.Node(f.owner.Name)[f.Name]
}

// NodeDescr returns a node's description.
func (db *DB) NodeDescr(n *Node) string {
	if n.Descr != "" || db.describer == nil {
		return n.Descr
	}
	return db.describer.Node(n.Name)[""]
}

// NewDB builds a database from nodes and registers and checks that every
// reference resolves. It is what the loaders call.
func NewDB(source, revision string, nodes map[string]*Node, regs []*Register) (*DB, error) {
	db := &DB{Source: source, Revision: revision, Nodes: nodes}
	db.byName = make(map[string]*Register, len(regs))
	db.byID = make(map[uint32]*Register, len(regs))
	for _, r := range regs {
		if _, ok := nodes[r.Node]; !ok {
			return nil, fmt.Errorf("register %s: layout node %q is not defined", r.Name, r.Node)
		}
		key := strings.ToUpper(r.Name)
		if _, dup := db.byName[key]; dup {
			return nil, fmt.Errorf("register %s is listed twice", r.Name)
		}
		db.byName[key] = r
		if _, dup := db.byID[r.ID]; !dup {
			db.byID[r.ID] = r
		}
		db.Registers = append(db.Registers, r)
	}
	sort.Slice(db.Registers, func(i, j int) bool { return db.Registers[i].Name < db.Registers[j].Name })
	for _, n := range nodes {
		for _, f := range n.Fields {
			f.owner = n
			if f.ValidWhen != nil {
				// Only a plain sibling can be checked; the name as the
				// node spells it.
				sib := n.fieldFold(f.ValidWhen.Field)
				if sib == nil || sib == f || sib.Subnode != "" || sib.IsArray || sib.Size > 64 {
					f.ValidWhen = nil
				} else {
					f.ValidWhen.Field = sib.Name
				}
			}
			if f.Subnode != "" {
				if _, ok := nodes[f.Subnode]; !ok {
					return nil, fmt.Errorf("node %s field %s (line %d): subnode %q is not defined", n.Name, f.Name, f.Line, f.Subnode)
				}
			}
		}
	}
	return db, nil
}

// Register finds a register by name (case-insensitive) or by ID written as a
// number ("0x9020").
func (db *DB) Register(name string) (*Register, error) {
	if r, ok := db.byName[strings.ToUpper(strings.TrimSpace(name))]; ok {
		return r, nil
	}
	if id, err := ParseUint(name); err == nil {
		if r, ok := db.byID[uint32(id)]; ok {
			return r, nil
		}
	}
	msg := fmt.Sprintf("no register %q in %s (%s)", name, db.Revision, db.Source)
	if s := Closest(name, db.RegisterNames(), 3); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, ", ") + "?"
	} else {
		msg += "; run 'cxray prm list' to see them all"
	}
	return nil, &NotFoundError{Msg: msg}
}

// RegisterByID finds a register by its ID.
func (db *DB) RegisterByID(id uint32) (*Register, bool) {
	r, ok := db.byID[id]
	return r, ok
}

// RegisterNames lists the register names, sorted.
func (db *DB) RegisterNames() []string {
	out := make([]string, len(db.Registers))
	for i, r := range db.Registers {
		out[i] = r.Name
	}
	return out
}

// Node returns the layout node of a register.
func (db *DB) Node(r *Register) *Node { return db.Nodes[r.Node] }

// FieldCount counts fields over all nodes.
func (db *DB) FieldCount() int {
	n := 0
	for _, nd := range db.Nodes {
		n += len(nd.Fields)
	}
	return n
}

// ErrInput is the kind of every error that is the caller's input, not
// the device: a name, a value, a dump, a file or a database entry that is
// wrong. Such error types answer errors.Is(err, ErrInput) (an Is method),
// so a command line maps them to a usage error (exit 2) by kind, and a new
// input error type cannot pass for a device error (exit 3).
var ErrInput = errors.New("bad input")

// NotFoundError is returned for unknown names; the message carries suggestions.
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

// Is makes a missing register or field an input error (ErrInput).
func (e *NotFoundError) Is(target error) bool { return target == ErrInput }

// Package nvconf is cxray's NV configuration (mlxconfig) support: the
// parameter database (mstflint's SQLite file, or the facts-only set built
// into cxray), the expressions that database uses for limits, dependencies
// and rules, the TLV codec (type dword per class, the configuration-item
// header, parameters inside TLV data), the raw-TLV file formats, and the
// operations on a device (query, validated read-modify-write, reset, backup,
// restore, firmware reset).
//
// Offsets and sizes follow the database's convention: "0xB.b" with the bit
// counted from the least significant bit of a big-endian dword, as the ADB
// does. Register layouts (MNVDA, MNVQC, ...) are never placed by hand: they
// come from the PRM database through prm.Plan.
package nvconf

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Type is a parameter's type.
type Type uint8

// Parameter types, as the database names them.
const (
	TypeBool Type = iota + 1
	TypeUnsigned
	TypeInteger
	TypeEnum
	TypeBinary
	TypeBytes
	TypeString
)

var typeNames = [...]string{"", "BOOL", "UNSIGNED", "INTEGER", "ENUM", "BINARY", "BYTES", "STRING"}

func (t Type) String() string {
	if int(t) < len(typeNames) && t != 0 {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// ParseType maps the database's type names.
func ParseType(s string) (Type, error) {
	for i, n := range typeNames {
		if i > 0 && strings.EqualFold(n, strings.TrimSpace(s)) {
			return Type(i), nil
		}
	}
	return 0, fmt.Errorf("unknown parameter type %q (want BOOL, UNSIGNED, INTEGER, ENUM, BINARY, BYTES or STRING)", s)
}

// EnumValue is one named value of an ENUM parameter.
type EnumValue struct {
	Name  string
	Value uint64
}

// TLV is one configuration item type.
type TLV struct {
	Name   string
	ID     uint32 // type_index / param_idx
	Class  Class
	Target string // NIC, NIC-internal, EXP_ROM, SWITCH
	// Cap marks a read-only capability TLV (nv_global_pci_cap ...): the
	// limits expressions refer to.
	Cap bool
	// Version is the data layout version the database describes.
	Version int
	Size    int // data bytes
	// Title is the database's mlxconfig_name of the TLV ("GLOBAL PCI CONF").
	Title  string
	Descr  string
	Params []*Param

	byName map[string]*Param
}

// Param returns a parameter of the TLV by its database name.
func (t *TLV) Param(name string) *Param { return t.byName[strings.ToLower(name)] }

// HasUserParams says whether any parameter has a user-visible name (only
// such TLVs are listed by query, as mstconfig does).
func (t *TLV) HasUserParams() bool {
	for _, p := range t.Params {
		if p.MlxName != "" {
			return true
		}
	}
	return false
}

// Param is one field of a TLV.
type Param struct {
	Name    string // database name (sriov_en)
	MlxName string // user-visible name (SRIOV_EN); "" for internal fields
	TLV     *TLV
	// OffsetText and SizeText are the database's "0xB.b" strings.
	OffsetText, SizeText string
	// Offset and Size in bits: 8*bytes + bit (bit counted from the LSB of
	// a big-endian dword).
	Offset, Size int
	Type         Type
	Enum         []EnumValue
	Dependency   string
	ValidBit     string // name of the sibling that says this field is set
	TempVars     string
	MinVal       string
	MaxVal       string
	Rule         string
	Regex        string
	FromVersion  int // hidden when the firmware's TLV version is older
	ArrayLen     int
	Descr        string
}

// IsArray says the parameter holds elements (NAME[i]) rather than one value.
// STRING and BYTES parameters carry an array length too, but are one value
// (a text or a byte string).
func (p *Param) IsArray() bool {
	return p.ArrayLen > 0 && p.Type != TypeString && p.Type != TypeBytes
}

// Elems is the number of elements: ArrayLen for arrays, 1 otherwise.
func (p *Param) Elems() int {
	if p.IsArray() {
		return p.ArrayLen
	}
	return 1
}

// ElemBits is the width of one element (of the whole value for scalars).
func (p *Param) ElemBits() int {
	if p.IsArray() {
		return p.Size / p.ArrayLen
	}
	return p.Size
}

// EnumName returns the name of value v.
func (p *Param) EnumName(v uint64) (string, bool) {
	for _, e := range p.Enum {
		if e.Value == v {
			return e.Name, true
		}
	}
	return "", false
}

// FullName is tlv.param, the name expressions use.
func (p *Param) FullName() string { return p.TLV.Name + "." + p.Name }

// DisplayName is the user-visible name, or tlv.param for internal fields.
func (p *Param) DisplayName() string {
	if p.MlxName != "" {
		return p.MlxName
	}
	return p.FullName()
}

// DB is a loaded parameter database.
type DB struct {
	// Source names where it came from (a file path, or "built-in").
	Source string
	// HasDescriptions is false for the built-in, facts-only set.
	HasDescriptions bool
	// TLVs, sorted by name.
	TLVs []*TLV
	// Warnings lists parameters left out because they do not fit their TLV
	// or their type is unusable, so a malformed database is visible.
	Warnings []string

	byName map[string]*TLV
	byKey  map[tlvKey]*TLV
	byMlx  map[string]*Param
}

type tlvKey struct {
	class Class
	id    uint32
}

// Limits of what a database may describe (the data of an NV access is at
// most 256 bytes; file TLVs can be larger, 512 gives room).
const (
	MaxTLVSize  = 1024
	MaxParams   = 256
	maxNameLen  = 128
	maxExprText = 4096
)

// NewDB checks and indexes TLVs. TLVs and parameters cxray cannot use (a
// duplicate name, a class or index the type dword cannot carry, a field
// outside its TLV) are left out with a warning, so one bad row does not make
// the whole database unusable.
func NewDB(source string, tlvs []*TLV, descriptions bool) (*DB, error) {
	db := &DB{Source: source, HasDescriptions: descriptions, byName: map[string]*TLV{}, byKey: map[tlvKey]*TLV{}, byMlx: map[string]*Param{}}
	for _, t := range tlvs {
		if t == nil {
			continue
		}
		if err := db.checkTLV(t); err != nil {
			db.Warnings = append(db.Warnings, fmt.Sprintf("TLV %q: %v; left out", t.Name, err))
			continue
		}
		key := strings.ToLower(t.Name)
		db.byName[key] = t
		if _, dup := db.byKey[tlvKey{t.Class, t.ID}]; !dup {
			db.byKey[tlvKey{t.Class, t.ID}] = t
		}
		kept := t.Params[:0:0]
		t.byName = map[string]*Param{}
		for _, p := range t.Params {
			p.TLV = t
			if err := p.check(); err != nil {
				db.Warnings = append(db.Warnings, fmt.Sprintf("%s.%s: %v; left out", t.Name, p.Name, err))
				continue
			}
			pk := strings.ToLower(p.Name)
			if _, dup := t.byName[pk]; dup {
				db.Warnings = append(db.Warnings, fmt.Sprintf("%s.%s is listed twice; the second is left out", t.Name, p.Name))
				continue
			}
			t.byName[pk] = p
			kept = append(kept, p)
			if p.MlxName != "" {
				mk := strings.ToUpper(p.MlxName)
				if _, dup := db.byMlx[mk]; dup {
					db.Warnings = append(db.Warnings, fmt.Sprintf("%s.%s: mlxconfig name %s is used twice; only the first is reachable by name", t.Name, p.Name, p.MlxName))
				} else {
					db.byMlx[mk] = p
				}
			}
		}
		t.Params = kept
		db.TLVs = append(db.TLVs, t)
	}
	if len(db.TLVs) == 0 {
		return nil, fmt.Errorf("%s holds no usable TLVs", source)
	}
	sort.Slice(db.TLVs, func(i, j int) bool { return db.TLVs[i].Name < db.TLVs[j].Name })
	// A valid bit must name a sibling of a plain number type.
	for _, t := range db.TLVs {
		for _, p := range t.Params {
			if p.ValidBit == "" {
				continue
			}
			vb := t.Param(p.ValidBit)
			if vb == nil || vb.IsArray() || vb.Size > 32 || vb.Type == TypeBytes || vb.Type == TypeString {
				db.Warnings = append(db.Warnings, fmt.Sprintf("%s.%s: valid bit %q is not a usable field of the TLV; it is ignored", t.Name, p.Name, p.ValidBit))
				p.ValidBit = ""
			}
		}
	}
	return db, nil
}

// checkTLV refuses a TLV cxray could not address or hold.
func (db *DB) checkTLV(t *TLV) error {
	switch {
	case t.Name == "" || len(t.Name) > maxNameLen:
		return fmt.Errorf("empty or overlong name")
	case db.byName[strings.ToLower(t.Name)] != nil:
		return fmt.Errorf("listed twice")
	case t.Size <= 0 || t.Size > MaxTLVSize:
		return fmt.Errorf("size %d bytes is outside 1..%d", t.Size, MaxTLVSize)
	case len(t.Params) > MaxParams:
		return fmt.Errorf("%d parameters; at most %d", len(t.Params), MaxParams)
	}
	_, err := TypeDword(Instance{TLV: t, Port: 1})
	return err
}

// check validates a parameter's placement and type.
func (p *Param) check() error {
	if p.Name == "" || len(p.Name) > maxNameLen || len(p.MlxName) > maxNameLen {
		return fmt.Errorf("empty or overlong name")
	}
	// The "0xB.b" texts are the source; the bit counts follow from them.
	if p.OffsetText != "" {
		off, err := ParseByteBit(p.OffsetText)
		if err != nil {
			return err
		}
		p.Offset = off
	}
	if p.SizeText != "" {
		sz, err := ParseByteBit(p.SizeText)
		if err != nil {
			return err
		}
		p.Size = sz
	}
	if p.Size <= 0 {
		return fmt.Errorf("size %s is not positive", p.SizeText)
	}
	for _, e := range []string{p.Dependency, p.TempVars, p.MinVal, p.MaxVal, p.Rule} {
		if len(e) > maxExprText {
			return fmt.Errorf("an expression is longer than %d characters", maxExprText)
		}
	}
	if p.Type == TypeEnum && len(p.Enum) == 0 {
		return fmt.Errorf("ENUM without values")
	}
	if p.ArrayLen < 0 || p.ArrayLen > 8*MaxTLVSize {
		return fmt.Errorf("array length %d is out of range", p.ArrayLen)
	}
	if p.IsArray() {
		if p.Size%p.ArrayLen != 0 {
			return fmt.Errorf("array of %d elements in %d bits does not divide evenly", p.ArrayLen, p.Size)
		}
		if es := p.Size / p.ArrayLen; es != 8 && es != 16 && es != 32 {
			return fmt.Errorf("array elements of %d bits (only 8, 16 and 32 are defined)", es)
		}
	}
	if (p.Type == TypeString || p.Type == TypeBytes) && p.Size%8 != 0 {
		return fmt.Errorf("%s of %d bits is not whole bytes", p.Type, p.Size)
	}
	if !p.IsArray() && p.Type != TypeString && p.Type != TypeBytes && p.Size > 64 {
		return fmt.Errorf("a %d-bit %s does not fit a number", p.Size, p.Type)
	}
	bit, err := p.startBit()
	if err != nil {
		return err
	}
	if bit < 0 || bit+p.Size > 8*p.TLV.Size {
		return fmt.Errorf("bits %d..%d lie outside the TLV's %d bytes", bit, bit+p.Size-1, p.TLV.Size)
	}
	return nil
}

// ParseByteBit reads the database's "0xB.b" notation into bits (8*B + b).
func ParseByteBit(s string) (int, error) {
	by, bi, err := splitByteBit(s)
	return 8*by + bi, err
}

// splitByteBit reads "0xB.b" into its byte and bit parts.
func splitByteBit(s string) (int, int, error) {
	s = strings.TrimSpace(s)
	bs, bits, hasBits := strings.Cut(s, ".")
	by, err := strconv.ParseUint(bs, 0, 16)
	if err != nil {
		return 0, 0, fmt.Errorf("%q is not byte.bit (0x4.16)", s)
	}
	var bi uint64
	if hasBits {
		if bi, err = strconv.ParseUint(bits, 10, 8); err != nil || bi > 31 {
			return 0, 0, fmt.Errorf("%q is not byte.bit (0x4.16): the bit part must be 0..31", s)
		}
	}
	return int(by), int(bi), nil
}

// TLV returns a TLV by name (case-insensitive).
func (db *DB) TLV(name string) *TLV { return db.byName[strings.ToLower(strings.TrimSpace(name))] }

// TLVByType returns the TLV of a class and index.
func (db *DB) TLVByType(c Class, id uint32) *TLV { return db.byKey[tlvKey{c, id}] }

// ParamByMlxName returns a parameter by its user-visible base name (without
// port or module suffix or index).
func (db *DB) ParamByMlxName(name string) *Param { return db.byMlx[strings.ToUpper(name)] }

// ParamCount counts parameters over all TLVs.
func (db *DB) ParamCount() int {
	n := 0
	for _, t := range db.TLVs {
		n += len(t.Params)
	}
	return n
}

// MlxNames lists every user-visible base name, sorted.
func (db *DB) MlxNames() []string {
	out := make([]string, 0, len(db.byMlx))
	for _, p := range db.byMlx {
		out = append(out, p.MlxName)
	}
	sort.Strings(out)
	return out
}

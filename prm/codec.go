package prm

import "fmt"

// Decoded is a register decoded from bytes: a tree of values stored flat
// (children contiguous, referenced by index), so that decoding allocates two
// pointer-free slices whatever the register's shape.
type Decoded struct {
	Plan *Plan
	Raw  []byte // a private copy of the input
	vals []val
}

// val is 32 bytes without pointers, so the slice of them costs the garbage
// collector nothing to scan.
type val struct {
	step   uint32 // index into Plan.steps
	index  int32  // array element index (with the low bound); -1 otherwise
	u      uint64
	at     uint32 // absolute MSB-first bit offset
	n      uint32 // composites: number of children; raw and text values: bits
	kids   uint32 // first child in vals
	member int16
	text   bool
}

// Value is a handle on one decoded element.
type Value struct {
	d *Decoded
	i uint32
}

// Union member picks.
const (
	MemberAll  = -1
	MemberNone = -2
)

// Root is the value of the whole register.
func (d *Decoded) Root() Value { return Value{d, 0} }

func (v Value) val() *val { return &v.d.vals[v.i] }

// Step is the layout step the value was decoded with.
func (v Value) Step() *Step { return v.d.Plan.steps[v.val().step] }

// Kind is the step's kind.
func (v Value) Kind() Kind { return v.Step().Kind }

// Index is the array element index (with the array's low bound), or -1.
func (v Value) Index() int { return int(v.val().index) }

// NotValid says why the value means nothing in this register: the
// condition its description states does not hold ("oper_status is
// plugged_enabled (1); valid only when oper_status == module_plugged_with_error (3)").
// "" when it holds or there is none.
func (v Value) NotValid() string {
	s := v.Step()
	if s.valid == nil {
		return ""
	}
	r := s.valid.r
	cur := getBits(v.d.Raw, int(v.val().at)-s.Bit+r.bit, r.width)
	if s.valid.nonZero && cur != 0 || !s.valid.nonZero && cur == s.valid.value {
		return ""
	}
	name := r.field.Name
	is := fmt.Sprint(cur)
	if e, ok := r.field.EnumName(cur); ok {
		is = fmt.Sprintf("%s (%d)", e, cur)
	}
	return fmt.Sprintf("%s is %s; valid only when %s", name, is, s.ValidWhen)
}

// Uint is the number held by a KindUint or KindJoined value.
func (v Value) Uint() uint64 { return v.val().u }

// Bit is the absolute MSB-first offset of the value in the buffer.
func (v Value) Bit() int { return int(v.val().at) }

// Raw holds the bytes of a KindBytes field, of an array shown as text, or of
// a union whose member could not be picked. It aliases Decoded.Raw.
func (v Value) Raw() []byte {
	x := v.val()
	kind := v.d.Plan.steps[x.step].Kind
	bits := int(x.n)
	if kind == KindArray && x.text {
		bits = int(x.u) // a text array keeps its elements; u holds its bits
	}
	if bits == 0 || !(x.text || kind == KindBytes || x.member == MemberNone) {
		return nil
	}
	s, e := int(x.at)/8, (int(x.at)+bits+7)/8
	return v.d.Raw[s:e:e]
}

// IsText says the value is an array (or wide field) shown as ASCII text.
func (v Value) IsText() bool { return v.val().text }

// Decoded is the register the value belongs to, for readings that depend
// on another field (PDDR's powers are dBm or µW by module_info_ext).
func (v Value) Decoded() *Decoded { return v.d }

// Member is, for a union, the index of the picked member, MemberAll when
// every member is shown (no selector), or MemberNone (Raw holds the bytes).
func (v Value) Member() int { return int(v.val().member) }

// Len is the number of children: struct members, array elements, shown union
// members.
func (v Value) Len() int {
	x := v.val()
	kind := v.d.Plan.steps[x.step].Kind
	if x.text && kind != KindArray || x.member == MemberNone || kind == KindBytes {
		return 0
	}
	return int(x.n)
}

// Kid returns child i.
func (v Value) Kid(i int) Value { return Value{v.d, v.val().kids + uint32(i)} }

// Name is the value's name: the field name, or "[i]" for an array element.
func (v Value) Name() string {
	if i := v.Index(); i >= 0 {
		return fmt.Sprintf("[%d]", i)
	}
	return v.Step().Name
}

// EnumName returns the enum name of a number leaf, when it has one.
func (v Value) EnumName() (string, bool) {
	s := v.Step()
	if s.Field == nil || s.Kind != KindUint || len(s.Field.Enum) == 0 {
		return "", false
	}
	return s.Field.EnumName(v.Uint())
}

// TextPadded returns the text of a text value without its NUL padding
// but with its space padding, so that it can be written back as it was.
func (v Value) TextPadded() string { return string(trimNUL(v.Raw())) }

// TextString returns the text of a text value without its padding.
func (v Value) TextString() string {
	b := v.Raw()
	end := len(b)
	for end > 0 && (b[end-1] == 0 || b[end-1] == ' ') {
		end--
	}
	return string(b[:end])
}

// LengthError reports a buffer of the wrong size.
type LengthError struct {
	Node      string
	Want, Got int
	Variable  bool
}

func (e *LengthError) Error() string {
	if e.Variable {
		return fmt.Sprintf("%s needs at least %d bytes, got %d", e.Node, e.Want, e.Got)
	}
	return fmt.Sprintf("%s is %d bytes (%d dwords), got %d", e.Node, e.Want, e.Want/4, e.Got)
}

// HasVariable says whether the layout ends in a VARIABLE array, so that
// buffers longer than the node are meaningful.
func (p *Plan) HasVariable() bool { return p.variable }

func hasVariable(s *Step) bool {
	if s.Kind == KindArray && s.Variable {
		return true
	}
	for _, c := range s.Children {
		if hasVariable(c) {
			return true
		}
	}
	return s.Elem != nil && hasVariable(s.Elem)
}

// Decode decodes buf, which must hold at least the node's size.
func (p *Plan) Decode(buf []byte) (*Decoded, error) {
	if len(buf) < p.Bytes {
		return nil, &LengthError{Node: p.Node.Name, Want: p.Bytes, Got: len(buf), Variable: p.variable}
	}
	out := &Decoded{}
	p.decodeInto(out, buf)
	return out, nil
}

// DecodeInto is Decode reusing d's storage, for loops that decode the same
// register again and again (monitoring, exporting). Values from d's previous
// contents become invalid.
func (p *Plan) DecodeInto(d *Decoded, buf []byte) error {
	if len(buf) < p.Bytes {
		return &LengthError{Node: p.Node.Name, Want: p.Bytes, Got: len(buf), Variable: p.variable}
	}
	p.decodeInto(d, buf)
	return nil
}

func (p *Plan) decodeInto(d *Decoded, buf []byte) {
	d.Plan = p
	d.Raw = append(d.Raw[:0], buf...)
	if d.vals == nil {
		hint := max(int(p.hint.Load()), 16)
		d.vals = make([]val, 1, hint)
	} else {
		d.vals = d.vals[:1]
	}
	d.decode(p.Root, 0, 0)
	if n := int32(len(d.vals)); n > p.hint.Load() {
		p.hint.Store(n)
	}
}

// reserve appends n slots and returns the index of the first; decode
// overwrites each slot whole, so they need no clearing.
func (d *Decoded) reserve(n int) uint32 {
	i := len(d.vals)
	if n <= cap(d.vals)-i {
		d.vals = d.vals[:i+n]
	} else {
		d.vals = append(d.vals, make([]val, n)...)
	}
	return uint32(i)
}

// decode fills slot i from step s at the given parent base.
func (d *Decoded) decode(s *Step, base int, i uint32) {
	at := base + s.Bit
	v := &d.vals[i]
	*v = val{step: s.id, index: -1, at: uint32(at)}
	switch s.Kind {
	case KindUint:
		v.u = getBits(d.Raw, at, s.Width)
	case KindJoined:
		v.u = getBits(d.Raw, at, s.Width)
		if s.Join == JoinText && at%8 == 0 {
			if b := d.Raw[at/8 : (at+s.Width)/8]; isText(b) {
				v.n, v.text = uint32(s.Width), true
			}
		}
	case KindBytes:
		v.n = uint32(s.Width)
		if s.Field != nil && s.Field.Format == FormatText && at%8 == 0 && s.Width%8 == 0 {
			v.text = isText(d.Raw[at/8 : (at+s.Width)/8])
		}
	case KindStruct:
		k := d.reserve(len(s.Children))
		d.vals[i].kids, d.vals[i].n = k, uint32(len(s.Children))
		for j, c := range s.Children {
			d.decode(c, at, k+uint32(j))
		}
	case KindUnion:
		m := s.pick(d.Raw, base)
		v.member = int16(m)
		switch m {
		case MemberNone:
			v.n = uint32(s.Width)
		case MemberAll:
			k := d.reserve(len(s.Children))
			d.vals[i].kids, d.vals[i].n = k, uint32(len(s.Children))
			for j, c := range s.Children {
				d.decode(c, at, k+uint32(j))
			}
		default:
			k := d.reserve(1)
			d.vals[i].kids, d.vals[i].n = k, 1
			d.decode(s.Children[m], at, k)
		}
	case KindArray:
		n := s.count(d.Raw, base, len(d.Raw)*8)
		ew := s.Elem.Width
		if s.Text {
			// Shown as text; the elements stay addressable (status_message[3]).
			if b := d.Raw[at/8 : (at+n*ew)/8]; isText(b) {
				v.u, v.text = uint64(n*ew), true
			}
		}
		k := d.reserve(n)
		d.vals[i].kids, d.vals[i].n = k, uint32(n)
		for j := 0; j < n; j++ {
			d.decode(s.Elem, at+j*ew, k+uint32(j))
			d.vals[k+uint32(j)].index = int32(s.Low + j)
		}
	}
}

// count is the number of elements of an array in this buffer.
func (s *Step) count(raw []byte, base, bits int) int {
	if !s.Variable {
		return s.Count
	}
	ew := s.Elem.Width
	avail := (bits - (base + s.Bit)) / ew
	if avail < 0 {
		avail = 0
	}
	if s.sizeSel != nil {
		nbytes := int(getBits(raw, base+s.sizeSel.bit, s.sizeSel.width))
		n := (nbytes*8 + ew - 1) / ew
		if n < avail {
			return n
		}
	}
	return avail
}

// pick chooses the union member for this buffer; base is the start of the
// structure holding the union.
func (s *Step) pick(raw []byte, base int) int {
	switch {
	case s.sel != nil:
		if i, ok := s.byValue[getBits(raw, base+s.sel.bit, s.sel.width)]; ok {
			return i
		}
		return MemberNone
	case len(s.conds) > 0:
		for _, c := range s.conds {
			if c.root.eval(raw, base) != 0 {
				return c.member
			}
		}
		return MemberNone
	}
	return MemberAll
}

// isText: printable ASCII followed only by NUL padding (all-zero is empty text).
func isText(b []byte) bool {
	i := 0
	for i < len(b) && b[i] >= 0x20 && b[i] < 0x7f {
		i++
	}
	for ; i < len(b); i++ {
		if b[i] != 0 {
			return false
		}
	}
	return true
}

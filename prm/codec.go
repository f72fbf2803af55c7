package prm

import "fmt"

// Value is one decoded element of a register.
type Value struct {
	Step  *Step
	Index int    // array element index (with the array's low bound); -1 if not an element
	U     uint64 // KindUint and KindJoined
	// Raw holds the bytes of a KindBytes field, of an array shown as text, or
	// of a union whose member could not be picked. It aliases Decoded.Raw.
	Raw  []byte
	Text bool    // Raw is ASCII text
	Kids []Value // struct members, array elements, picked union members
	// Member is, for a union, the index of the picked member, MemberAll when
	// every member is shown (no selector), or MemberNone (Raw holds the bytes).
	Member int
}

// Union member picks.
const (
	MemberAll  = -1
	MemberNone = -2
)

// Name is the value's name: the field name, or "[i]" for an array element.
func (v *Value) Name() string {
	if v.Index >= 0 {
		return fmt.Sprintf("[%d]", v.Index)
	}
	return v.Step.Name
}

// EnumName returns the enum name of a number leaf, when it has one.
func (v *Value) EnumName() (string, bool) {
	if v.Step.Field == nil || v.Step.Kind != KindUint || len(v.Step.Field.Enum) == 0 {
		return "", false
	}
	return v.Step.Field.EnumName(v.U)
}

// TextString returns the text of a text value without its padding.
func (v *Value) TextString() string {
	end := len(v.Raw)
	for end > 0 && (v.Raw[end-1] == 0 || v.Raw[end-1] == ' ') {
		end--
	}
	return string(v.Raw[:end])
}

// Decoded is a register decoded from bytes.
type Decoded struct {
	Plan *Plan
	Raw  []byte // a private copy of the input
	Root Value
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
func (p *Plan) HasVariable() bool { return hasVariable(p.Root) }

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
		return nil, &LengthError{Node: p.Node.Name, Want: p.Bytes, Got: len(buf), Variable: p.HasVariable()}
	}
	raw := make([]byte, len(buf))
	copy(raw, buf)
	hint := int(p.hint.Load())
	if hint < 16 {
		hint = 16
	}
	d := decoder{raw: raw, bits: len(raw) * 8}
	d.chunk = make([]Value, 0, hint)
	out := &Decoded{Plan: p, Raw: raw}
	d.decode(p.Root, 0, &out.Root)
	if used := int32(d.used); used > p.hint.Load() {
		p.hint.Store(used)
	}
	return out, nil
}

type decoder struct {
	raw   []byte
	bits  int
	chunk []Value
	used  int
}

// alloc hands out n values from the current chunk; chunks are never grown in
// place, so slices handed out stay valid.
func (d *decoder) alloc(n int) []Value {
	d.used += n
	if n > cap(d.chunk)-len(d.chunk) {
		size := 64
		if n > size {
			size = n
		}
		d.chunk = make([]Value, 0, size)
	}
	l := len(d.chunk)
	d.chunk = d.chunk[:l+n]
	return d.chunk[l : l+n : l+n]
}

func (d *decoder) slice(at, width int) []byte {
	s, e := at/8, (at+width+7)/8
	if e > len(d.raw) {
		e = len(d.raw)
	}
	if s > e {
		s = e
	}
	return d.raw[s:e:e]
}

func (d *decoder) decode(s *Step, base int, v *Value) {
	v.Step, v.Index, v.Member = s, -1, 0
	at := base + s.Bit
	switch s.Kind {
	case KindUint, KindJoined:
		v.U = getBits(d.raw, at, s.Width)
	case KindBytes:
		v.Raw = d.slice(at, s.Width)
	case KindStruct:
		v.Kids = d.alloc(len(s.Children))
		for i, c := range s.Children {
			d.decode(c, at, &v.Kids[i])
		}
	case KindUnion:
		m := s.pick(d.raw, base)
		v.Member = m
		switch m {
		case MemberNone:
			v.Raw = d.slice(at, s.Width)
		case MemberAll:
			v.Kids = d.alloc(len(s.Children))
			for i, c := range s.Children {
				d.decode(c, at, &v.Kids[i])
			}
		default:
			v.Kids = d.alloc(1)
			d.decode(s.Children[m], at, &v.Kids[0])
		}
	case KindArray:
		n := s.count(d.raw, base, d.bits)
		ew := s.Elem.Width
		if s.Text {
			if b := d.slice(at, n*ew); isText(b) {
				v.Raw, v.Text = b, true
				return
			}
		}
		v.Kids = d.alloc(n)
		for i := 0; i < n; i++ {
			d.decode(s.Elem, at+i*ew, &v.Kids[i])
			v.Kids[i].Index = s.Low + i
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

package prm

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Assignment is one "path=value" given by a user.
type Assignment struct {
	Path  string
	Value string
}

// ParseAssignments splits "path=value" arguments.
func ParseAssignments(args []string) ([]Assignment, error) {
	out := make([]Assignment, 0, len(args))
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not field=value (for example admin_status=up or local_port=0x1)", a)
		}
		out = append(out, Assignment{Path: k, Value: strings.TrimSpace(v)})
	}
	return out, nil
}

// FieldError is an encode error about one field; Valid lists the names that
// would have been accepted at that point of the path.
type FieldError struct {
	Path  string
	Msg   string
	Valid []string
}

func (e *FieldError) Error() string {
	s := e.Path + ": " + e.Msg
	if len(e.Valid) > 0 {
		s += "; valid here: " + strings.Join(e.Valid, ", ")
	}
	return s
}

// Is makes a bad field assignment an input error (ErrInput).
func (e *FieldError) Is(target error) bool { return target == ErrInput }

// Target is a resolved path: where its bits are in a buffer.
type Target struct {
	Path  string
	Step  *Step
	Bit   int // absolute MSB-first offset of the value
	Width int
	// Parent is the absolute start of the structure holding the step, where
	// union selectors are read.
	Parent int
	// Text is set for a text array addressed as a whole.
	Text bool
	// Select lists union selectors the path needs: set them if not set.
	Select []selection
}

type selection struct {
	union *Step
	base  int
	value uint64
	cond  bool // a conditional union: cannot be set automatically
	path  string
}

type seg struct {
	name  string
	index int
	has   bool
}

func splitPath(path string) ([]seg, error) {
	var out []seg
	for _, p := range strings.Split(path, ".") {
		s := seg{name: p}
		if i := strings.IndexByte(p, '['); i >= 0 {
			if !strings.HasSuffix(p, "]") {
				return nil, fmt.Errorf("bad index in %q (write name[N])", p)
			}
			n, err := strconv.ParseInt(p[i+1:len(p)-1], 0, 32)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("bad index in %q (write name[N])", p)
			}
			s.name, s.index, s.has = p[:i], int(n), true
		}
		if s.name == "" {
			return nil, fmt.Errorf("empty name in path %q", path)
		}
		out = append(out, s)
	}
	return out, nil
}

func childNames(s *Step) []string {
	out := make([]string, 0, len(s.Children))
	for _, c := range s.Children {
		out = append(out, c.Name)
	}
	return out
}

func findChild(s *Step, name string, whole bool) *Step {
	for i, c := range s.Children {
		if c.Name == name {
			// A GUID array addressed whole means its joined GUID.
			if whole && c.Kind == KindArray && i+1 < len(s.Children) {
				if n := s.Children[i+1]; n.Kind == KindJoined && n.Join == JoinGUID && n.Name == name {
					return n
				}
			}
			return c
		}
	}
	if j := nameMatch(s.Children, name); j >= 0 {
		return s.Children[j]
	}
	return nil
}

// nameMatch is the step named name: the exact name first, then its case,
// then the _ext spelling of later revisions (a layout may hold both foo
// and foo_ext: PPRT's prbs_lock_status). -1 when none is.
func nameMatch(steps []*Step, name string) int {
	idx, best := -1, 3
	for j, c := range steps {
		rank := 3
		switch {
		case c.Name == name:
			rank = 0
		case strings.EqualFold(c.Name, name):
			rank = 1
		case strings.EqualFold(c.Name, name+"_ext"):
			rank = 2
		}
		if rank < best {
			idx, best = j, rank
		}
	}
	return idx
}

// Resolve finds where path lives in buf (whose contents pick union members
// when the path does not name them). bufBits bounds variable arrays.
func (p *Plan) Resolve(path string, buf []byte) (*Target, error) {
	segs, err := splitPath(path)
	if err != nil {
		return nil, &FieldError{Path: path, Msg: err.Error()}
	}
	cur, parent := p.Root, 0
	t := &Target{Path: path}
	for i, sg := range segs {
		at := parent + cur.Bit
		var next *Step
		switch cur.Kind {
		case KindStruct:
			next = findChild(cur, sg.name, !sg.has)
			if next == nil {
				// name_hi / name_lo address the halves of a 64-bit value.
				if tg := halfOf(cur, sg, at, path, i == len(segs)-1); tg != nil {
					return tg, nil
				}
				return nil, &FieldError{Path: path, Msg: fmt.Sprintf("%s has no field %q", where(segs[:i], p), sg.name), Valid: childNames(cur)}
			}
		case KindUnion:
			idx := nameMatch(cur.Children, sg.name)
			if idx >= 0 {
				next = cur.Children[idx]
			}
			if next == nil {
				return nil, &FieldError{Path: path, Msg: fmt.Sprintf("%s is a union; name one of its members", where(segs[:i], p)), Valid: childNames(cur)}
			}
			if sel := cur.selectionFor(idx, parent); sel != nil {
				sel.path = joinSegs(segs[:i])
				t.Select = append(t.Select, *sel)
			}
		case KindUint:
			if cur.Field != nil && cur.Field.Subnode != "" && cur.Width == 64 && (sg.name == "hi" || sg.name == "lo") && i == len(segs)-1 {
				off := 0
				if sg.name == "lo" {
					off = 32
				}
				return &Target{Path: path, Step: cur, Bit: at + off, Width: 32, Parent: parent, Select: t.Select}, nil
			}
			return nil, &FieldError{Path: path, Msg: fmt.Sprintf("%s is a number field and has no members", where(segs[:i], p))}
		default:
			return nil, &FieldError{Path: path, Msg: fmt.Sprintf("%s has no members", where(segs[:i], p))}
		}
		parent, cur = at, next
		if sg.has {
			if cur.Kind != KindArray {
				return nil, &FieldError{Path: path, Msg: fmt.Sprintf("%s is not an array", sg.name)}
			}
			n := cur.count(buf, parent, len(buf)*8)
			if cur.Variable {
				n = (len(buf)*8 - (parent + cur.Bit)) / cur.Elem.Width
			}
			if sg.index < cur.Low || sg.index >= cur.Low+n {
				return nil, &FieldError{Path: path, Msg: fmt.Sprintf("index %d is out of range %d..%d of %s", sg.index, cur.Low, cur.Low+n-1, sg.name)}
			}
			parent = parent + cur.Bit + (sg.index-cur.Low)*cur.Elem.Width
			cur = cur.Elem
		}
	}
	at := parent + cur.Bit
	t.Step, t.Bit, t.Parent = cur, at, parent
	switch cur.Kind {
	case KindUint, KindJoined, KindBytes:
		t.Width = cur.Width
	case KindArray:
		if !cur.Text {
			return nil, &FieldError{Path: path, Msg: fmt.Sprintf("%s is an array; set elements as %s[%d]=...", cur.Name, cur.Name, cur.Low)}
		}
		t.Text = true
		t.Width = cur.count(buf, parent, len(buf)*8) * cur.Elem.Width
	case KindUnion:
		t.Width = cur.Width // raw bytes of the whole union
	default:
		return nil, &FieldError{Path: path, Msg: fmt.Sprintf("%s is a structure; set one of its fields", cur.Name), Valid: childNames(cur)}
	}
	if t.Bit+t.Width > len(buf)*8 {
		return nil, &FieldError{Path: path, Msg: fmt.Sprintf("lies past the end of the %d-byte buffer", len(buf))}
	}
	return t, nil
}

func halfOf(s *Step, sg seg, at int, path string, last bool) *Target {
	if !last || sg.has {
		return nil
	}
	for _, suf := range []string{"_hi", "_lo"} {
		base, ok := strings.CutSuffix(sg.name, suf)
		if !ok {
			continue
		}
		c := findChild(s, base, false)
		if c == nil || c.Kind != KindUint || c.Width != 64 || c.Field == nil || c.Field.Subnode == "" {
			continue
		}
		off := 0
		if suf == "_lo" {
			off = 32
		}
		return &Target{Path: path, Step: c, Bit: at + c.Bit + off, Width: 32, Parent: at}
	}
	return nil
}

func (s *Step) selectionFor(member, base int) *selection {
	if s.sel != nil {
		if v, ok := s.valueOf[member]; ok {
			return &selection{union: s, base: base, value: v}
		}
		return &selection{union: s, base: base, cond: true}
	}
	if len(s.conds) > 0 {
		return &selection{union: s, base: base, cond: true, value: uint64(member)}
	}
	return nil
}

func where(segs []seg, p *Plan) string {
	if len(segs) == 0 {
		return p.Node.Name
	}
	return joinSegs(segs)
}

func joinSegs(segs []seg) string {
	parts := make([]string, len(segs))
	for i, s := range segs {
		parts[i] = s.name
		if s.has {
			parts[i] += fmt.Sprintf("[%d]", s.index)
		}
	}
	return strings.Join(parts, ".")
}

// NewBuffer returns a zeroed buffer of the node's size.
func (p *Plan) NewBuffer() []byte { return make([]byte, p.Bytes) }

// Encode applies assignments to buf. It works on a copy and writes buf only
// when every assignment is valid, so a bad assignment leaves buf unchanged.
// Paths that do not pass through a union are applied first, so a selector set
// explicitly picks the members named later; a member named without its
// selector sets the selector.
func (p *Plan) Encode(buf []byte, as []Assignment) error {
	if len(buf) < p.Bytes {
		return &LengthError{Node: p.Node.Name, Want: p.Bytes, Got: len(buf), Variable: p.HasVariable()}
	}
	work := make([]byte, len(buf))
	copy(work, buf)
	// Resolve once. Positions do not depend on the buffer except through
	// variable arrays, so a path that fails now (an index past a length
	// field set by an earlier assignment) is resolved again when its turn
	// comes.
	targets := make([]*Target, len(as))
	order := make([]int, 0, len(as))
	var later []int
	for i, a := range as {
		t, err := p.Resolve(a.Path, work)
		if err == nil && len(t.Select) > 0 {
			later = append(later, i)
		} else {
			order = append(order, i)
		}
		targets[i] = t
	}
	order = append(order, later...)
	explicit := map[int]uint64{} // selector bit -> value set by the user
	for _, i := range order {
		a, t := as[i], targets[i]
		if t == nil {
			var err error
			if t, err = p.Resolve(a.Path, work); err != nil {
				return err
			}
		}
		for _, s := range t.Select {
			if err := applySelection(work, s, explicit, a.Path); err != nil {
				return err
			}
		}
		if err := t.write(work, a.Value); err != nil {
			return err
		}
		if t.Step.Field != nil && len(t.Select) == 0 {
			explicit[t.Bit] = getBits(work, t.Bit, min(t.Width, 64))
		}
	}
	copy(buf, work)
	return nil
}

func applySelection(work []byte, s selection, explicit map[int]uint64, path string) error {
	u := s.union
	if s.cond {
		if u.pick(work, s.base) == int(s.value) && len(u.conds) > 0 {
			return nil
		}
		if u.sel != nil {
			return &FieldError{Path: path, Msg: fmt.Sprintf("union %s has no selector value for this member", s.path)}
		}
		return &FieldError{Path: path, Msg: fmt.Sprintf("union %s picks its member by a condition (%s); set the fields it tests first", s.path, u.Selector)}
	}
	bit := s.base + u.sel.bit
	cur := getBits(work, bit, u.sel.width)
	if cur == s.value {
		return nil
	}
	if v, ok := explicit[bit]; ok && v != s.value {
		name := u.sel.field.Name
		want, _ := u.sel.field.EnumName(s.value)
		return &FieldError{Path: path, Msg: fmt.Sprintf("%s was set to %d, which does not select this member (it needs %s=%s)", name, v, name, want)}
	}
	setBits(work, bit, u.sel.width, s.value)
	return nil
}

// write parses value for the target and stores it.
func (t *Target) write(buf []byte, value string) error {
	s := t.Step
	switch {
	case t.Text || (s.Kind == KindJoined && s.Join == JoinText && !isNumberText(value)):
		b := []byte(value)
		n := t.Width / 8
		if len(b) > n {
			return &FieldError{Path: t.Path, Msg: fmt.Sprintf("text %q is %d bytes; the field holds %d", value, len(b), n)}
		}
		for _, c := range b {
			if c < 0x20 || c >= 0x7f {
				return &FieldError{Path: t.Path, Msg: "text must be printable ASCII"}
			}
		}
		start := t.Bit / 8
		for i := 0; i < n; i++ {
			var c byte
			if i < len(b) {
				c = b[i]
			}
			buf[start+i] = c
		}
		return nil
	case s.Kind == KindBytes || s.Kind == KindUnion:
		b, err := parseHexBytes(value)
		if err != nil {
			return &FieldError{Path: t.Path, Msg: err.Error()}
		}
		n := t.Width / 8
		if len(b) > n {
			return &FieldError{Path: t.Path, Msg: fmt.Sprintf("%d bytes given; the field holds %d", len(b), n)}
		}
		start := t.Bit / 8
		pad := n - len(b) // right-align, as a big number would be
		for i := 0; i < n; i++ {
			var c byte
			if i >= pad {
				c = b[i-pad]
			}
			buf[start+i] = c
		}
		return nil
	}
	v, err := parseValue(s, t.Width, value)
	if err != nil {
		return &FieldError{Path: t.Path, Msg: err.Error()}
	}
	setBits(buf, t.Bit, t.Width, v)
	return nil
}

func isNumberText(s string) bool {
	_, ok := parseBig(s)
	return ok
}

func parseHexBytes(s string) ([]byte, error) {
	h := strings.TrimPrefix(strings.TrimPrefix(strings.ReplaceAll(s, "_", ""), "0x"), "0X")
	if len(h)%2 == 1 {
		h = "0" + h
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return nil, fmt.Errorf("%q is not hex bytes (write 0x0011aabb...)", s)
	}
	return b, nil
}

// parseValue turns a user's value into the bits of a field: an enum name, a
// number in any base (negative numbers as two's complement), true/false for
// one bit, or a MAC address for a joined MAC.
func parseValue(s *Step, width int, value string) (uint64, error) {
	if value == "" {
		return 0, fmt.Errorf("no value given")
	}
	if s.Field != nil && len(s.Field.Enum) > 0 && width == s.Width {
		if v, ok := s.Field.EnumValueOf(value); ok {
			return v, nil
		}
	}
	if s.Kind == KindJoined && s.Join == JoinMAC && strings.ContainsAny(value, ":-") {
		return parseMAC(value)
	}
	if s.Kind == KindJoined && s.Join == JoinGUID && strings.Contains(value, ":") {
		return ParseGUID(value)
	}
	if s.Kind == KindJoined && s.Join == JoinDate && strings.Count(value, "-") == 2 && !strings.HasPrefix(value, "-") {
		return s.ParseDate(value)
	}
	if width == 1 {
		switch strings.ToLower(value) {
		case "true", "yes", "on":
			return 1, nil
		case "false", "no", "off":
			return 0, nil
		}
	}
	// Fast path: plain unsigned numbers, by far the common case.
	if u, err := strconv.ParseUint(value, 0, 64); err == nil {
		if !fits(u, width) {
			return 0, fmt.Errorf("%s does not fit in %d bits (largest is %d)", value, width, maxFor(width))
		}
		return u, nil
	}
	b, ok := parseBig(value)
	if !ok {
		msg := fmt.Sprintf("%q is not a number", value)
		if s.Field != nil && len(s.Field.Enum) > 0 {
			msg += "; use a number or one of: " + enumList(s.Field.Enum)
		} else {
			msg += " (use decimal, 0x.., 0o.. or 0b..)"
		}
		return 0, fmt.Errorf("%s", msg)
	}
	if b.Sign() < 0 {
		limit := new(big.Int).Lsh(big.NewInt(1), uint(width-1))
		if b.CmpAbs(limit) > 0 {
			return 0, fmt.Errorf("%s does not fit in %d bits (smallest is -%s)", value, width, limit)
		}
		b.Add(b, new(big.Int).Lsh(big.NewInt(1), uint(width)))
	}
	if b.BitLen() > width || b.BitLen() > 64 {
		return 0, fmt.Errorf("%s does not fit in %d bits (largest is %d)", value, width, maxFor(width))
	}
	return b.Uint64(), nil
}

func enumList(es []EnumValue) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = fmt.Sprintf("%s(%d)", e.Name, e.Value)
	}
	return strings.Join(parts, ", ")
}

func parseMAC(s string) (uint64, error) {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == '-' })
	if len(parts) != 6 {
		return 0, fmt.Errorf("%q is not a MAC address (aa:bb:cc:dd:ee:ff)", s)
	}
	var v uint64
	for _, p := range parts {
		b, err := strconv.ParseUint(p, 16, 8)
		if err != nil {
			return 0, fmt.Errorf("%q is not a MAC address (aa:bb:cc:dd:ee:ff)", s)
		}
		v = v<<8 | b
	}
	return v, nil
}

// FormatMAC prints the low 48 bits of v as a MAC address.
func FormatMAC(v uint64) string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", byte(v>>40), byte(v>>32), byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// FormatGUID prints a 64-bit GUID as sysfs and ibstat do
// (b83f:d203:00a1:b2c0).
func FormatGUID(g uint64) string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", g>>48, g>>32&0xffff, g>>16&0xffff, g&0xffff)
}

// Assignments lists path=value for every stored value of the decoded
// register (derived joined values are left out: their halves are listed).
// Encoding them into a zeroed buffer gives back every field's bits.
func (d *Decoded) Assignments() []Assignment {
	var out []Assignment
	var walk func(v Value, path string)
	walk = func(v Value, path string) {
		switch v.Kind() {
		case KindUint:
			out = append(out, Assignment{path, "0x" + strconv.FormatUint(v.Uint(), 16)})
		case KindBytes:
			out = append(out, Assignment{path, "0x" + hex.EncodeToString(v.Raw())})
		case KindUnion:
			if v.Member() == MemberNone {
				out = append(out, Assignment{path, "0x" + hex.EncodeToString(v.Raw())})
				return
			}
			for i := 0; i < v.Len(); i++ {
				k := v.Kid(i)
				walk(k, joinPath(path, k.Step().Name))
			}
		case KindArray:
			if v.IsText() {
				out = append(out, Assignment{path, string(trimNUL(v.Raw()))})
				return
			}
			for i := 0; i < v.Len(); i++ {
				k := v.Kid(i)
				walk(k, fmt.Sprintf("%s[%d]", path, k.Index()))
			}
		case KindStruct:
			for i := 0; i < v.Len(); i++ {
				k := v.Kid(i)
				walk(k, joinPath(path, k.Step().Name))
			}
		}
	}
	walk(d.Root(), "")
	return out
}

func trimNUL(b []byte) []byte {
	end := len(b)
	for end > 0 && b[end-1] == 0 {
		end--
	}
	return b[:end]
}

// OutsideEnum says whether a sets an enum field to a number none of its
// values has (admin_status=9), with the field's resolved path and its
// values as "name=value". A value the encoder refuses, or a field
// without an enum, is not outside: the encoder says what is wrong then.
func (p *Plan) OutsideEnum(a Assignment) (path string, values []string, outside bool) {
	t, err := p.Resolve(a.Path, p.NewBuffer())
	if err != nil || t.Step.Field == nil || len(t.Step.Field.Enum) == 0 || t.Step.Kind != KindUint {
		return "", nil, false
	}
	buf := p.NewBuffer()
	if err := p.Encode(buf, []Assignment{{Path: t.Path, Value: a.Value}}); err != nil {
		return "", nil, false
	}
	dec, err := p.Decode(buf)
	if err != nil {
		return "", nil, false
	}
	v, err := dec.Get(t.Path)
	if err != nil {
		return "", nil, false
	}
	for _, e := range t.Step.Field.Enum {
		if e.Value == v.Uint() {
			return "", nil, false
		}
		values = append(values, fmt.Sprintf("%s=%d", e.Name, e.Value))
	}
	return t.Path, values, true
}

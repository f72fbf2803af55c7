package hexdump

import (
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/cxray/cxray/prm"
)

// mstregRow reads "name | 0x00000196".
func (r *reader) mstregRow(n int, l, t string) error {
	if isRule(t) || strings.HasPrefix(strings.ToLower(t), "sending access register") {
		return nil
	}
	if strings.HasPrefix(t, "-E-") {
		return &Error{Line: n, Msg: "the dump holds the tool's error instead of data: " + strings.TrimSpace(t[3:])}
	}
	if strings.HasPrefix(t, "-I-") || strings.HasPrefix(t, "-W-") {
		return nil
	}
	name, data, ok := strings.Cut(t, "|")
	name, data = strings.TrimSpace(name), strings.TrimSpace(data)
	if !ok || !isFieldName(name) {
		return &Error{Line: n, Token: strings.TrimSpace(l), Msg: "not a row of the field table (name | 0x00000000)"}
	}
	if f := strings.Fields(data); len(f) != 1 || !looksHex(f[0]) {
		return &Error{Line: n, Token: data, Msg: "not a hex value"}
	}
	r.d.Fields = append(r.d.Fields, Field{Name: name, Value: data, Line: n})
	return nil
}

// cxrayRow reads a row of cxray's FIELD VALUE table: the path, then the
// value as FormatValue prints it. The raw value is kept: the number in
// the final parentheses when there is one ("up (1)", "0x1021 (4129)",
// "n/a (0xffff)"), else the first word; the text of a quoted value; a
// unit conversion after " = " is dropped.
func (r *reader) cxrayRow(n int, t string) error {
	if isRule(t) {
		return nil
	}
	f := strings.Fields(t)
	if len(f) < 2 || !isFieldName(f[0]) {
		return &Error{Line: n, Token: t, Msg: "not a row of the field table (FIELD VALUE)"}
	}
	name := f[0]
	v := strings.TrimSpace(t[len(name):])
	if strings.HasPrefix(v, `"`) {
		q, err := strconv.QuotedPrefix(v)
		if err != nil {
			return &Error{Line: n, Token: v, Msg: "unterminated quoted text"}
		}
		// The text of a number field comes with its raw value:
		// `"A2" (0x00004132)`; the raw value is exact.
		if rest := strings.TrimSpace(v[len(q):]); strings.HasPrefix(rest, "(") && strings.HasSuffix(rest, ")") && isNumber(rest[1:len(rest)-1]) {
			r.d.Fields = append(r.d.Fields, Field{Name: name, Value: rest[1 : len(rest)-1], Line: n})
			return nil
		}
		s, _ := strconv.Unquote(q)
		r.d.Fields = append(r.d.Fields, Field{Name: name, Value: s, Quoted: true, Line: n})
		return nil
	}
	if i := strings.Index(v, " = "); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	if strings.HasSuffix(v, ")") {
		if i := strings.LastIndexByte(v, '('); i >= 0 {
			if in := strings.TrimSpace(v[i+1 : len(v)-1]); isNumber(in) {
				v = in
			}
		}
	}
	if w := strings.Fields(v); len(w) > 0 {
		v = w[0]
	}
	r.d.Fields = append(r.d.Fields, Field{Name: name, Value: v, Line: n})
	return nil
}

func isNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	if hasPrefix0x(s) {
		return looksHex(s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// slot is a place in the layout a field dump can name.
type slot struct {
	path  string
	bit   int
	width int
	step  *prm.Step
	text  bool // takes quoted text
	whole bool // an array, union or wide field taken as bytes
}

type index struct {
	byPath map[string]*slot
	byLeaf map[string][]*slot
	// Variable arrays of numbers, by path and by leaf name, for element
	// indexes beyond the layout's one element.
	varArr map[string]*varArray
	bits   int
}

type varArray struct {
	bit, width, low int
	step            *prm.Step
}

func newIndex(p *prm.Plan) *index {
	ix := &index{byPath: map[string]*slot{}, byLeaf: map[string][]*slot{}, varArr: map[string]*varArray{}, bits: p.Bytes * 8}
	ix.walk(p.Root, "", 0, "")
	return ix
}

func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

func (ix *index) add(s *slot, leaf, suffix string) {
	// A GUID array's joined value has the array's name; cxray's tables
	// and JSON mean the GUID by it.
	if _, dup := ix.byPath[s.path]; !dup || s.step.Kind == prm.KindJoined && s.step.Join == prm.JoinGUID {
		ix.byPath[s.path] = s
	}
	if leaf != "" {
		ix.byLeaf[leaf] = append(ix.byLeaf[leaf], s)
		if suffix != "" {
			ix.byLeaf[leaf+suffix] = append(ix.byLeaf[leaf+suffix], s)
		}
	}
}

// walk lists the layout's places in the order mstreg prints leaves: each
// structure's members by their ADB offset, union members in database
// order, array elements by index. Only that order tells apart leaves of
// one name (mstreg prints leaf names, and union members repeat them).
// Inside element i of an array of structures mstreg names leaves
// "name_i"; suffix carries that "_i".
func (ix *index) walk(s *prm.Step, path string, base int, suffix string) {
	at := base + s.Bit
	switch s.Kind {
	case prm.KindStruct:
		kids := append([]*prm.Step(nil), s.Children...)
		sort.SliceStable(kids, func(i, j int) bool { return adbOffset(kids[i]) < adbOffset(kids[j]) })
		for _, c := range kids {
			ix.walk(c, joinPath(path, c.Name), at, suffix)
		}
	case prm.KindUnion:
		ix.add(&slot{path: path, bit: at, width: s.Width, step: s, whole: true}, "", "")
		for _, c := range s.Children {
			ix.walk(c, joinPath(path, c.Name), at, suffix)
		}
	case prm.KindArray:
		e := s.Elem
		n := s.Count
		if s.Variable {
			n = 1
		}
		scalar := e.Kind == prm.KindUint || e.Kind == prm.KindBytes
		ix.add(&slot{path: path, bit: at, width: n * e.Width, step: s, text: s.Text, whole: true}, "", "")
		if s.Variable && scalar {
			va := &varArray{bit: at, width: e.Width, low: s.Low, step: e}
			ix.varArr[path] = va
			ix.varArr[s.Name] = va
		}
		for i := 0; i < n; i++ {
			idx := s.Low + i
			p := fmt.Sprintf("%s[%d]", path, idx)
			if scalar {
				ix.add(&slot{path: p, bit: at + i*e.Width, width: e.Width, step: e, whole: e.Kind == prm.KindBytes}, fmt.Sprintf("%s[%d]", s.Name, idx), "")
				continue
			}
			ix.walk(e, p, at+i*e.Width, fmt.Sprintf("_%d", idx))
		}
	case prm.KindUint:
		ix.add(&slot{path: path, bit: at, width: s.Width, step: s}, s.Name, suffix)
		if s.Width == 64 && s.Field != nil && s.Field.Subnode != "" {
			// A uint64 node: mstreg prints its halves as name_hi, name_lo.
			ix.add(&slot{path: path + "_hi", bit: at, width: 32, step: s}, s.Name+"_hi", "")
			ix.add(&slot{path: path + "_lo", bit: at + 32, width: 32, step: s}, s.Name+"_lo", "")
		}
	case prm.KindBytes:
		ix.add(&slot{path: path, bit: at, width: s.Width, step: s, whole: true}, s.Name, suffix)
	case prm.KindJoined:
		ix.add(&slot{path: path, bit: at, width: s.Width, step: s, text: s.Join == prm.JoinText}, "", "")
	}
}

// adbOffset is the sort key of a member: its ADB offset (dword, then the
// bit counted from the dword's LSB), as mstreg orders them.
func adbOffset(s *prm.Step) int {
	if s.Field == nil {
		return 1 << 30 // derived joined values: not printed by mstreg
	}
	return s.Field.Offset
}

// Encode builds register bytes from a field dump through the layout of
// plan. Fields named by path (cxray) are found by path; fields named by
// leaf (mstreg) by name, the k-th row of a name taking the k-th place of
// that name in mstreg's order. Bits no field names stay zero. Two fields
// that give one bit different values are an error: that is how a dump of
// another register, or of another database revision, shows.
func (d *Dump) Encode(p *prm.Plan) ([]byte, error) {
	if d.Fields == nil {
		return nil, &Error{Msg: "not a field dump"}
	}
	ix := newIndex(p)
	type placed struct {
		s *slot
		f Field
	}
	var todo []placed
	seen := map[string]int{}
	for _, f := range d.Fields {
		s, err := ix.find(f, seen, !strings.HasPrefix(d.Format, "mstreg"))
		if err != nil {
			return nil, err
		}
		todo = append(todo, placed{s, f})
		if end := s.bit + s.width; end > ix.bits {
			ix.bits = (end + 31) &^ 31
		}
	}
	buf := make([]byte, (ix.bits+7)/8)
	owner := make([]int32, ix.bits) // 1-based index into todo
	for i, t := range todo {
		val, raw, err := value(t.s, t.f)
		if err != nil {
			return nil, err
		}
		for k := 0; k < t.s.width; k++ {
			var bit byte
			if raw != nil {
				bit = raw[k/8] >> (7 - k%8) & 1
			} else {
				bit = byte(val >> (t.s.width - 1 - k) & 1)
			}
			pos := t.s.bit + k
			cur := buf[pos/8] >> (7 - pos%8) & 1
			if o := owner[pos]; o != 0 && cur != bit {
				other := todo[o-1].f
				return nil, &Error{Line: t.f.Line, Token: t.f.Name, Msg: fmt.Sprintf("disagrees with %s on line %d about bit %d of %s (is the dump of another register, or from another revision of the database?)", other.Name, other.Line, pos, p.Node.Name)}
			}
			owner[pos] = int32(i + 1)
			if bit == 1 {
				buf[pos/8] |= 1 << (7 - pos%8)
			}
		}
	}
	return buf, nil
}

// find places a field: cxray names fields by path, mstreg by leaf name,
// where the k-th row of a name is the k-th place of that name.
func (ix *index) find(f Field, seen map[string]int, byPath bool) (*slot, error) {
	list := ix.byLeaf[f.Name]
	if s, ok := ix.byPath[f.Name]; ok && (byPath || len(list) == 0) {
		list = []*slot{s}
	}
	if len(list) > 0 {
		k := seen[f.Name]
		seen[f.Name] = k + 1
		if k >= len(list) {
			return nil, &Error{Line: f.Line, Token: f.Name, Msg: fmt.Sprintf("the dump names %s %d times; the layout has it %d times (a dump of another register or database revision?)", f.Name, k+1, len(list))}
		}
		return list[k], nil
	}
	if base, idx, ok := splitIndex(f.Name); ok {
		if va := ix.varArr[base]; va != nil && idx >= va.low {
			return &slot{path: f.Name, bit: va.bit + (idx-va.low)*va.width, width: va.width, step: va.step}, nil
		}
	}
	names := make([]string, 0, len(ix.byPath)+len(ix.byLeaf))
	for k := range ix.byPath {
		names = append(names, k)
	}
	for k := range ix.byLeaf {
		names = append(names, k)
	}
	msg := "no such field in this register's layout"
	if c := prm.Closest(f.Name, names, 3); len(c) > 0 {
		msg += "; did you mean " + strings.Join(c, ", ") + "?"
	}
	return nil, &Error{Line: f.Line, Token: f.Name, Msg: msg}
}

func splitIndex(name string) (string, int, bool) {
	i := strings.LastIndexByte(name, '[')
	if i <= 0 || !strings.HasSuffix(name, "]") {
		return "", 0, false
	}
	n, err := strconv.Atoi(name[i+1 : len(name)-1])
	if err != nil || n < 0 || n > MaxBytes {
		return "", 0, false
	}
	return name[:i], n, true
}

// value converts a field's text to its bits: a number for widths up to 64
// bits, bytes (MSB first) for wider places and text.
func value(s *slot, f Field) (uint64, []byte, error) {
	bad := func(msg string) error { return &Error{Line: f.Line, Token: f.Name, Msg: msg} }
	nbytes := (s.width + 7) / 8
	if f.str {
		// A JSON string: hex bytes of a wide place, the text of a text
		// place, else an enum name, a MAC or a number in a string.
		wide := s.whole || s.width > 64
		if !(wide && hasPrefix0x(f.Value) && looksHex(f.Value)) && (s.text || s.step.Kind == prm.KindJoined && s.step.Join == prm.JoinText) {
			f.Quoted = true
		}
	}
	if f.Quoted {
		if s.width%8 != 0 || !(s.text || s.whole || s.step.Kind == prm.KindJoined) {
			return 0, nil, bad(fmt.Sprintf("text %q given for a number field", f.Value))
		}
		if len(f.Value) > nbytes {
			return 0, nil, bad(fmt.Sprintf("text %q is %d bytes; the field holds %d", f.Value, len(f.Value), nbytes))
		}
		raw := make([]byte, nbytes)
		copy(raw, f.Value)
		return 0, raw, nil
	}
	v := f.Value
	if f.JSON {
		// cxray's JSON shows BCD fields as their decimal reading (2023,
		// "12:34") and joined dates as dates.
		if s.step.Kind == prm.KindJoined && s.step.Join == prm.JoinDate {
			u, err := s.step.ParseDate(v)
			if err == nil {
				return u, nil, nil
			}
		}
		if s.step.Field != nil && s.step.Field.Format == prm.FormatBCD && s.step.Kind == prm.KindUint {
			if d, err := strconv.ParseUint(strings.ReplaceAll(v, ":", ""), 10, 64); err == nil {
				return fitBits(s, prm.ToBCD(d), bad)
			}
		}
	}
	if strings.Count(v, ":") == 3 {
		g, err := prm.ParseGUID(v)
		if err != nil {
			return 0, nil, bad(err.Error())
		}
		return fitBits(s, g, bad)
	}
	if isMAC(v) {
		var u uint64
		for _, p := range strings.Split(v, ":") {
			b, _ := strconv.ParseUint(p, 16, 8)
			u = u<<8 | b
		}
		if s.width < 48 {
			return 0, nil, bad("a MAC address given for a field of " + strconv.Itoa(s.width) + " bits")
		}
		return fitBits(s, u, bad)
	}
	if s.step != nil && s.step.Field != nil && len(s.step.Field.Enum) > 0 && !isNumber(v) {
		if u, ok := s.step.Field.EnumValueOf(v); ok {
			return u, nil, nil
		}
	}
	b, ok := parseBig(v)
	if !ok {
		return 0, nil, bad(fmt.Sprintf("%q is not a number", v))
	}
	if b.Sign() < 0 {
		limit := new(big.Int).Lsh(big.NewInt(1), uint(s.width-1))
		if b.CmpAbs(limit) > 0 {
			return 0, nil, bad(fmt.Sprintf("%s does not fit in %d signed bits", v, s.width))
		}
		b.Add(b, new(big.Int).Lsh(big.NewInt(1), uint(s.width)))
	}
	if b.BitLen() > s.width {
		return 0, nil, bad(fmt.Sprintf("%s does not fit in %d bits", v, s.width))
	}
	if s.width > 64 {
		raw := make([]byte, nbytes)
		b.FillBytes(raw)
		if s.width%8 != 0 {
			// Left-align a value narrower than its bytes.
			shifted := new(big.Int).Lsh(b, uint(nbytes*8-s.width))
			shifted.FillBytes(raw)
		}
		return 0, raw, nil
	}
	return b.Uint64(), nil, nil
}

func fitBits(s *slot, u uint64, bad func(string) error) (uint64, []byte, error) {
	if s.width < 64 && u>>s.width != 0 {
		return 0, nil, bad(fmt.Sprintf("0x%x does not fit in %d bits", u, s.width))
	}
	if s.width > 64 {
		raw := make([]byte, (s.width+7)/8)
		new(big.Int).SetUint64(u).FillBytes(raw)
		return 0, raw, nil
	}
	return u, nil, nil
}

func isMAC(s string) bool {
	p := strings.Split(s, ":")
	if len(p) != 6 {
		return false
	}
	for _, x := range p {
		if len(x) != 2 || !looksHex(x) {
			return false
		}
	}
	return true
}

func parseBig(s string) (*big.Int, bool) {
	s = strings.ReplaceAll(s, "_", "")
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	base := 10
	if hasPrefix0x(s) {
		base, s = 16, s[2:]
	}
	if s == "" {
		return nil, false
	}
	v, ok := new(big.Int).SetString(s, base)
	if !ok {
		return nil, false
	}
	if neg {
		v.Neg(v)
	}
	return v, true
}

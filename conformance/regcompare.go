package conformance

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/cxray/cxray/prm"
)

// RegComparison is the outcome of comparing one register read by mstreg
// with the same register read by cxray.
type RegComparison struct {
	Register string
	// Rows is the number of rows mstreg printed; Compared of them had a
	// value in cxray's JSON, and Equal agreed.
	Rows, Compared, Equal int
	// NotShown are mstreg rows whose leaf cxray did not print: members of
	// a union other than the one the selector picks (mstreg prints every
	// member, decoding the same bytes each way).
	NotShown []string
	// Mismatches are leaves whose values differ.
	Mismatches []Mismatch
	// Problems are rows that could not be paired with a leaf of cxray's
	// layout, or leaves cxray printed that mstreg has no row for: the two
	// tools disagree about the register's layout.
	Problems []string
}

// OK says whether the readings agree: no mismatch, no layout problem, and
// at least one value compared.
func (c *RegComparison) OK() bool {
	return len(c.Mismatches) == 0 && len(c.Problems) == 0 && c.Compared > 0
}

// Mismatch is one leaf read differently by the two tools.
type Mismatch struct {
	Row    string // mstreg's row name
	Path   string // cxray's JSON path (with [i] for an element or .hi/.lo)
	Bit    int    // MSB-first bit offset in the register
	Width  int
	Mstreg uint32
	Cxray  string // what cxray's JSON holds there
}

func (m Mismatch) String() string {
	return fmt.Sprintf("%-28s mstreg 0x%08x  cxray %-20s (%s, bit %d, %d bits)", m.Row, m.Mstreg, m.Cxray, m.Path, m.Bit, m.Width)
}

// Report renders the comparison for a test log: counts, then every
// mismatch and problem.
func (c *RegComparison) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d mstreg rows, %d compared with cxray, %d equal, %d mismatches, %d not shown by cxray (other union members), %d layout problems\n",
		c.Register, c.Rows, c.Compared, c.Equal, len(c.Mismatches), len(c.NotShown), len(c.Problems))
	for _, m := range c.Mismatches {
		fmt.Fprintf(&b, "  MISMATCH %s\n", m)
	}
	for _, p := range c.Problems {
		fmt.Fprintf(&b, "  LAYOUT   %s\n", p)
	}
	return b.String()
}

// atom is a bit range of the layout that mstreg prints as one row: a plain
// leaf, one element of a scalar array, one dword half of a 64-bit leaf, or
// one dword of a wide byte field.
type atom struct {
	leaf       *prm.Leaf
	bit, width int
	elem       int // array element (0-based), or dword of a byte field; -1 otherwise
	half       int // 0 whole, 1 high dword, 2 low dword of a 64-bit leaf
}

func (a atom) label() string {
	switch {
	case a.half == 1:
		return a.leaf.Path + ".hi"
	case a.half == 2:
		return a.leaf.Path + ".lo"
	case a.elem >= 0:
		return fmt.Sprintf("%s[%d]", a.leaf.Path, a.elem)
	}
	return a.leaf.Path
}

type span struct{ bit, width int }

func atoms(plan *prm.Plan) (map[span][]atom, []prm.Leaf) {
	leaves := plan.Leaves()
	idx := map[span][]atom{}
	add := func(a atom) { idx[span{a.bit, a.width}] = append(idx[span{a.bit, a.width}], a) }
	for i := range leaves {
		l := &leaves[i]
		if l.Joined {
			continue
		}
		switch {
		case l.Count > 0 || l.Variable && l.Step.Kind == prm.KindArray:
			n := max(l.Count, 1)
			for k := 0; k < n; k++ {
				add(atom{leaf: l, bit: l.Bit + k*l.Width, width: l.Width, elem: k})
			}
		case l.Width == 64:
			add(atom{leaf: l, bit: l.Bit, width: 32, elem: -1, half: 1})
			add(atom{leaf: l, bit: l.Bit + 32, width: 32, elem: -1, half: 2})
		case l.Width > 64 && l.Width%32 == 0:
			for k := 0; k < l.Width/32; k++ {
				add(atom{leaf: l, bit: l.Bit + 32*k, width: 32, elem: k})
			}
		default:
			add(atom{leaf: l, bit: l.Bit, width: l.Width, elem: -1})
		}
	}
	return idx, leaves
}

var (
	suffixIndex = regexp.MustCompile(`\[\d+\]$`)
	suffixNum   = regexp.MustCompile(`_\d+$`)
)

// baseName strips what mstreg adds to a leaf's name: [i] for scalar array
// elements, _i for fields of array-of-structure elements, _hi/_lo for the
// halves of 64-bit leaves.
func baseName(s string) []string {
	s = suffixIndex.ReplaceAllString(s, "")
	out := []string{s}
	if t, ok := strings.CutSuffix(s, "_hi"); ok {
		out = append(out, t)
	}
	if t, ok := strings.CutSuffix(s, "_lo"); ok {
		out = append(out, t)
	}
	if t := suffixNum.ReplaceAllString(s, ""); t != s {
		out = append(out, t)
	}
	return out
}

// leafName is the last segment of a leaf path, without an index.
func leafName(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		path = path[i+1:]
	}
	return suffixIndex.ReplaceAllString(path, "")
}

func nameMatches(row, path string) bool {
	ln := leafName(path)
	for _, b := range baseName(row) {
		if b == ln {
			return true
		}
	}
	return false
}

// CompareRegister compares `mstreg --get` (values, with the positions of
// its rows from `mstreg --show_reg`, layout) with the "fields" object of
// `cxray reg get REG -o json --raw`, decoded with json.Decoder.UseNumber.
// plan is the register's layout in the database cxray used; it maps each
// mstreg row, by bit position and name, to the path where cxray's JSON
// holds the same leaf. Values are compared as numbers: cxray's text (PSID,
// vendor names) is turned back into the bytes mstreg prints.
func CompareRegister(register string, plan *prm.Plan, values []MstregValue, layout []MstregField, fields map[string]any) (*RegComparison, error) {
	if len(values) != len(layout) {
		return nil, fmt.Errorf("%s: mstreg --get printed %d rows but --show_reg %d", register, len(values), len(layout))
	}
	c := &RegComparison{Register: register, Rows: len(values)}
	idx, leaves := atoms(plan)
	compared := map[string]bool{} // leaf paths with at least one row compared
	for i, v := range values {
		f := layout[i]
		if f.Name != v.Name {
			return nil, fmt.Errorf("%s: row %d is %q in --get but %q in --show_reg", register, i, v.Name, f.Name)
		}
		var cands []atom
		for _, a := range idx[span{f.Bit(), f.Size}] {
			if nameMatches(f.Name, a.leaf.Path) {
				cands = append(cands, a)
			}
		}
		if len(cands) == 0 {
			c.Problems = append(c.Problems, fmt.Sprintf("mstreg row %s (byte 0x%x, bits %d..%d) has no leaf of that name and place in cxray's layout%s",
				f.Name, f.Addr, f.LSB, f.LSB+f.Size-1, near(idx, f.Bit(), f.Size)))
			continue
		}
		found := false
		for _, a := range cands {
			got, st, err := lookup(plan, fields, a)
			if err != nil {
				c.Problems = append(c.Problems, fmt.Sprintf("mstreg row %s: cxray's %s: %v", f.Name, a.label(), err))
				found = true
				break
			}
			if st != shown {
				continue
			}
			found = true
			c.Compared++
			compared[a.leaf.Path] = true
			if got.equal(v.Value, a) {
				c.Equal++
			} else {
				c.Mismatches = append(c.Mismatches, Mismatch{Row: f.Name, Path: a.label(), Bit: a.bit, Width: a.width, Mstreg: v.Value, Cxray: got.String()})
			}
			break
		}
		if !found {
			c.NotShown = append(c.NotShown, f.Name)
		}
	}
	// The other way round: every leaf cxray printed must have had a row.
	for i := range leaves {
		l := &leaves[i]
		if l.Joined || compared[l.Path] {
			continue
		}
		a := atom{leaf: l, bit: l.Bit, width: l.Width, elem: -1}
		if l.Count > 0 {
			a.elem = 0
		}
		if _, st, err := lookup(plan, fields, a); err == nil && st == shown {
			c.Problems = append(c.Problems, fmt.Sprintf("cxray prints %s (bit %d, %d bits) but mstreg has no row for it", l.Path, l.Bit, l.Width))
		}
	}
	return c, nil
}

// near lists the leaves that overlap a bit range, to explain a row that
// matched none.
func near(idx map[span][]atom, bit, width int) string {
	var s []string
	for sp, as := range idx {
		if sp.bit < bit+width && bit < sp.bit+sp.width {
			for _, a := range as {
				s = append(s, fmt.Sprintf("%s (bit %d, %d bits)", a.label(), a.bit, a.width))
			}
		}
	}
	if len(s) == 0 {
		return " (nothing of cxray's overlaps it)"
	}
	sort.Strings(s)
	if len(s) > 6 {
		s = append(s[:6], "...")
	}
	return "; cxray has there: " + strings.Join(s, ", ")
}

type lookupState int

const (
	shown    lookupState = iota
	notShown             // a union member cxray did not pick
	rawUnion             // the union is shown as raw bytes
)

// jsonValue is what cxray's JSON holds for an atom.
type jsonValue struct {
	num     uint64
	isNum   bool
	text    []byte // text of an array shown as ASCII, padding stripped
	isText  bool
	elemLen int // bytes per element (text)
	raw     string
}

func (j jsonValue) String() string {
	switch {
	case j.isText:
		return strconv.Quote(string(j.text))
	case j.isNum:
		return fmt.Sprintf("0x%08x", j.num)
	}
	return j.raw
}

// equal compares mstreg's value with cxray's. Text is compared byte by
// byte; past the end of cxray's text (which drops trailing NULs and
// spaces) a byte may be NUL or space.
func (j jsonValue) equal(v uint32, a atom) bool {
	if !j.isText {
		return j.isNum && j.num == uint64(v)
	}
	n := j.elemLen
	for b := 0; b < n; b++ {
		got := byte(v >> (8 * (n - 1 - b)))
		pos := a.elem*n + b
		switch {
		case pos < len(j.text):
			if got != j.text[pos] {
				return false
			}
		case got != 0 && got != ' ':
			return false
		}
	}
	return true
}

// lookup walks cxray's JSON along the atom's leaf path, following the
// layout's steps, and returns the atom's value.
func lookup(plan *prm.Plan, fields map[string]any, a atom) (jsonValue, lookupState, error) {
	segs, err := splitPath(a.leaf.Path)
	if err != nil {
		return jsonValue{}, 0, err
	}
	step := plan.Root
	var cur any = fields
	for _, sg := range segs {
		child := childStep(step, sg.name)
		if child == nil {
			return jsonValue{}, 0, fmt.Errorf("no step %q in the layout", sg.name)
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			if step.Kind == prm.KindUnion {
				return jsonValue{}, rawUnion, nil
			}
			return jsonValue{}, 0, fmt.Errorf("%s: expected an object, got %T", sg.name, cur)
		}
		next, ok := obj[sg.name]
		if !ok {
			if step.Kind == prm.KindUnion {
				return jsonValue{}, notShown, nil
			}
			return jsonValue{}, 0, fmt.Errorf("cxray's JSON lacks %q", sg.name)
		}
		step, cur = child, next
		if sg.index >= 0 {
			list, ok := cur.([]any)
			if !ok || step.Kind != prm.KindArray {
				return jsonValue{}, 0, fmt.Errorf("%s[%d]: expected a list", sg.name, sg.index)
			}
			k := sg.index - step.Low
			if k < 0 || k >= len(list) {
				return jsonValue{}, 0, fmt.Errorf("%s[%d]: index out of the list of %d", sg.name, sg.index, len(list))
			}
			step, cur = step.Elem, list[k]
		}
	}
	if _, ok := cur.(map[string]any); ok && step.Kind == prm.KindUnion {
		return jsonValue{}, notShown, nil
	}
	v, err := leafValue(step, cur, a)
	return v, shown, err
}

type segment struct {
	name  string
	index int
}

func splitPath(p string) ([]segment, error) {
	var out []segment
	for _, s := range strings.Split(p, ".") {
		sg := segment{name: s, index: -1}
		if i := strings.IndexByte(s, '['); i >= 0 {
			n, err := strconv.Atoi(strings.TrimSuffix(s[i+1:], "]"))
			if err != nil || !strings.HasSuffix(s, "]") {
				return nil, fmt.Errorf("bad path segment %q", s)
			}
			sg = segment{name: s[:i], index: n}
		}
		out = append(out, sg)
	}
	return out, nil
}

func childStep(s *prm.Step, name string) *prm.Step {
	for _, c := range s.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func leafValue(step *prm.Step, v any, a atom) (jsonValue, error) {
	switch step.Kind {
	case prm.KindUint:
		n, err := jsonUint(v)
		if err != nil {
			return jsonValue{}, err
		}
		switch a.half {
		case 1:
			n >>= 32
		case 2:
			n &= 0xFFFFFFFF
		}
		return jsonValue{num: n, isNum: true}, nil
	case prm.KindArray:
		switch x := v.(type) {
		case string:
			if step.Elem == nil || step.Elem.Width%8 != 0 || step.Elem.Width > 32 {
				return jsonValue{}, fmt.Errorf("text %q in an array of %d-bit elements", x, step.Elem.Width)
			}
			return jsonValue{text: []byte(x), isText: true, elemLen: step.Elem.Width / 8}, nil
		case []any:
			if a.elem < 0 || a.elem >= len(x) {
				return jsonValue{}, fmt.Errorf("element %d of a list of %d", a.elem, len(x))
			}
			n, err := jsonUint(x[a.elem])
			if err != nil {
				return jsonValue{}, err
			}
			return jsonValue{num: n, isNum: true}, nil
		}
		return jsonValue{}, fmt.Errorf("array as %T", v)
	case prm.KindBytes:
		s, ok := v.(string)
		b, err := hex.DecodeString(strings.TrimPrefix(s, "0x"))
		if !ok || err != nil || a.elem < 0 || 4*a.elem+4 > len(b) {
			return jsonValue{}, fmt.Errorf("byte field as %v, want a hex string covering dword %d", v, a.elem)
		}
		d := b[4*a.elem:]
		return jsonValue{num: uint64(d[0])<<24 | uint64(d[1])<<16 | uint64(d[2])<<8 | uint64(d[3]), isNum: true}, nil
	}
	return jsonValue{}, fmt.Errorf("unexpected step kind %d", step.Kind)
}

// jsonUint reads a number of cxray's JSON: a JSON number, or a decimal
// string for values above 2^53. An enum name is an error (use --raw).
func jsonUint(v any) (uint64, error) {
	switch x := v.(type) {
	case json.Number:
		return strconv.ParseUint(x.String(), 10, 64)
	case float64:
		return uint64(x), nil
	case string:
		if n, err := strconv.ParseUint(x, 10, 64); err == nil {
			return n, nil
		}
		return 0, fmt.Errorf("%q is not a number (an enum name? read with --raw)", x)
	}
	return 0, fmt.Errorf("%v (%T) is not a number", v, v)
}

// DecodeJSON decodes cxray's JSON output keeping numbers exact.
func DecodeJSON(b []byte, into any) error {
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	return d.Decode(into)
}

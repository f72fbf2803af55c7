package revdiff

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cxray/cxray/prm"
)

type itemType uint8

const (
	tLeaf itemType = iota // plain field or array of scalars (what prm.Leaves lists)
	tStruct
	tUnion
	tArray // array of structures: children are the elements "[i]"
)

var typeNames = [...]string{"", "struct", "union", "array"}

// item is one node of a flattened layout: the containers that prm.Leaves
// walks through are kept, because renames, merges and additions are best
// reported at the highest level where they happen.
type item struct {
	name   string // field name, or "[i]" for an array element
	index  int    // array elements: the index i
	path   string // as prm.Leaves spells it
	typ    itemType
	bit    int // absolute MSB-first offset
	width  int // leaf: one element; container: the whole
	count  int // leaf arrays of scalars: elements (0 for plain fields)
	vary   bool
	access prm.Access
	enum   []prm.EnumValue
	kids   []*item
	leaves int // leaves at or below this item

	// Union members: how the union picks this member.
	sel      *selector
	selValue uint64
	hasSel   bool
	cond     string
}

// selector is the field that picks the member of a union, located relative
// to the structure holding the union.
type selector struct {
	path       string
	bit, width int
	field      *prm.Field
}

// span is the number of bits the item covers.
func (it *item) span() int {
	if it.typ == tLeaf && it.count > 1 {
		return it.width * it.count
	}
	return it.width
}

func (it *item) end() int { return it.bit + it.span() }

// build flattens a compiled layout the way prm.Plan.Leaves does (same paths,
// offsets and array handling), keeping the containers. Joined values are
// derived from other leaves and left out.
func build(p *prm.Plan) *item {
	return buildStep(p.Root, "", "", 0)
}

func buildStep(s *prm.Step, name, path string, parent int) *item {
	at := parent + s.Bit
	it := &item{name: name, path: path, bit: at, width: s.Width, access: s.Access}
	switch s.Kind {
	case prm.KindStruct, prm.KindUnion:
		it.typ = tStruct
		if s.Kind == prm.KindUnion {
			it.typ = tUnion
		}
		for _, c := range s.Children {
			if c.Kind == prm.KindJoined {
				continue
			}
			it.kids = append(it.kids, buildStep(c, c.Name, joinPath(path, c.Name), at))
		}
		if s.Kind == prm.KindStruct {
			for _, c := range s.Children {
				if c.Kind == prm.KindUnion {
					markMembers(s, c, it.kid(c.Name))
				}
			}
		}
	case prm.KindArray:
		if s.Elem.Kind == prm.KindUint || s.Elem.Kind == prm.KindBytes {
			it.typ = tLeaf
			it.width, it.count, it.vary = s.Elem.Width, s.Count, s.Variable
			it.enum = enumOf(s.Elem)
			break
		}
		it.typ, it.vary = tArray, s.Variable
		n := s.Count
		if s.Variable {
			n = 1
		}
		it.count = n
		for i := 0; i < n; i++ {
			idx := fmt.Sprintf("[%d]", s.Low+i)
			e := buildStep(s.Elem, idx, path+idx, at+i*s.Elem.Width)
			e.index = s.Low + i
			it.kids = append(it.kids, e)
		}
	default:
		it.typ = tLeaf
		it.enum = enumOf(s)
	}
	for _, k := range it.kids {
		it.leaves += k.leaves
	}
	if it.typ == tLeaf {
		it.leaves = 1
	}
	return it
}

// kid finds a child by name.
func (it *item) kid(name string) *item {
	for _, k := range it.kids {
		if k.name == name {
			return k
		}
	}
	return nil
}

func enumOf(s *prm.Step) []prm.EnumValue {
	if s.Field == nil || s.Kind != prm.KindUint {
		return nil
	}
	return s.Field.Enum
}

func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// markMembers records on each member of union u (held by structure s) the
// selector value or condition that picks it. The selector is resolved the
// way the layout compiler does: a $(parent) path through s's members.
func markMembers(s, u *prm.Step, ui *item) {
	if ui == nil || u.Field == nil {
		return
	}
	var sel *selector
	if u.Field.UnionSelector != "" {
		sel = resolveSelector(s, u.Field.UnionSelector)
	}
	for _, m := range u.Children {
		mi := ui.kid(m.Name)
		if mi == nil || m.Field == nil {
			continue
		}
		mi.cond = m.Field.Condition
		if sel != nil && m.Field.SelectedBy != "" {
			if v, ok := sel.field.EnumValueOf(m.Field.SelectedBy); ok {
				mi.sel, mi.selValue, mi.hasSel = sel, v, true
			}
		}
	}
}

func resolveSelector(s *prm.Step, path string) *selector {
	p := strings.TrimSpace(path)
	for _, pre := range []string{"$(parent).", "#(parent)."} {
		p = strings.TrimPrefix(p, pre)
	}
	cur, bit := s, 0
	for _, seg := range strings.Split(p, ".") {
		var next *prm.Step
		for _, c := range cur.Children {
			if c.Name == seg && c.Kind != prm.KindJoined {
				next = c
				break
			}
		}
		if next == nil {
			return nil
		}
		bit += next.Bit
		cur = next
	}
	if cur.Kind != prm.KindUint || cur.Field == nil || len(cur.Field.Enum) == 0 {
		return nil
	}
	return &selector{path: p, bit: bit, width: cur.Width, field: cur.Field}
}

// leafList lists the leaves below it, in layout order.
func (it *item) leafList() []*item {
	var out []*item
	var walk func(*item)
	walk = func(x *item) {
		if x.typ == tLeaf {
			out = append(out, x)
			return
		}
		for _, k := range x.kids {
			walk(k)
		}
	}
	walk(it)
	return out
}

// signature describes the layout below a container relative to its start,
// without its own name: two union members with the same signature hold the
// same fields at the same places.
func (it *item) signature() string {
	var b strings.Builder
	prefix := len(it.path)
	var rows []string
	for _, l := range it.leafList() {
		rows = append(rows, fmt.Sprintf("%s@%d/%d*%d", l.path[prefix:], l.bit-it.bit, l.width, l.count))
	}
	sort.Strings(rows)
	fmt.Fprintf(&b, "%d:%d:", it.typ, it.span())
	b.WriteString(strings.Join(rows, ","))
	return b.String()
}

// info describes the item for a report.
func (it *item) info() *FieldInfo {
	fi := &FieldInfo{Path: it.path, BitOffset: it.bit, BitWidth: it.width, Type: typeNames[it.typ], Variable: it.vary}
	if it.typ == tLeaf {
		if it.count > 1 || it.vary {
			fi.Count = it.count
		}
		for _, e := range it.enum {
			fi.Enum = append(fi.Enum, EnumValue{Name: e.Name, Value: e.Value})
		}
	} else {
		fi.Leaves = it.leaves
		if it.typ == tArray {
			fi.Count = it.count
		}
	}
	if it.access != prm.AccessNone {
		fi.Access = it.access.String()
	}
	return fi
}

package prm

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cxray/cxray/internal/lazyre"
)

// Kind is what a Step holds.
type Kind uint8

// Step kinds.
const (
	KindUint   Kind = iota // an unsigned number of at most 64 bits
	KindBytes              // a plain field wider than 64 bits, kept as bytes
	KindStruct             // a structure of named members
	KindUnion              // a union: one member picked by a selector or condition
	KindArray              // fixed or variable array
	KindJoined             // derived: two halves of one value shown joined (read from both)
)

// JoinStyle says how a KindJoined step is shown.
type JoinStyle uint8

// Join styles.
const (
	JoinNumber JoinStyle = iota // a 64-bit number (counters, GUIDs)
	JoinMAC                     // a 48-bit MAC address
	JoinText                    // ASCII text split in halves (MTMP sensor_name)
	JoinDate                    // BCD year, month and day side by side (MGIR fw_info)
	JoinGUID                    // the low 64 bits of a GUID array (PGUID node_guid)
)

// Step is one element of a compiled layout. Bit offsets are MSB-first and
// relative to the start of the enclosing structure (for array elements and
// union members: to the element or union start).
type Step struct {
	Name   string
	Field  *Field // the database field; nil for the root and derived steps
	Kind   Kind
	Bit    int // MSB-first offset
	Width  int // bits; for arrays the element width times the count (one element if variable)
	Access Access

	Children []*Step // struct and union members

	// Arrays.
	Elem     *Step // element template at Bit 0
	Count    int   // fixed element count
	Low      int   // index of the first element
	Variable bool  // runs to the end of the buffer (or to SizeCondition)
	sizeSel  *ref  // dynamic arrays: byte count
	Text     bool  // may hold ASCII text (PSID, vendor name)

	// Unions.
	sel      *ref           // selector, relative to the same base as Bit
	byValue  map[uint64]int // selector value -> member index
	valueOf  map[int]uint64 // member index -> its selector value
	conds    []cond         // conditional unions: member index -> condition
	Selector string         // the selector or condition text, for display
	When     map[int]string // member index -> human condition ("page_select == Module_info_page (0x3)")

	// valid is when the value means something (Field.ValidWhen), resolved
	// against the enclosing structure; ValidWhen says it in words
	// ("oper_status == module_plugged_with_error (0x3)").
	valid     *validRef
	ValidWhen string

	// Derived joined values.
	Join  JoinStyle
	Parts [2]*Step // high part, low part (JoinDate: first and last; JoinGUID: the array)
	Joins []*Step  // JoinDate: every part, in bit order

	id uint32 // index in Plan.steps
}

// ref is a resolved $(parent) path: a bit range relative to the base of the
// structure that holds the union or array.
type ref struct {
	bit, width int
	field      *Field
}

// Plan is the compiled layout of one node: everything decode and encode need,
// worked out once.
type Plan struct {
	DB    *DB
	Node  *Node
	Root  *Step
	Bytes int // node size in bytes
	// Warnings lists what could not be resolved (a selector path that does
	// not exist, a member whose selected_by is not in the enum); decode then
	// falls back to showing all members or raw bytes.
	Warnings []string

	steps    []*Step      // every step, by id
	variable bool         // the layout has a VARIABLE array
	hint     atomic.Int32 // values the largest decode so far needed
}

type planCache struct {
	mu sync.Mutex
	m  map[string]*Plan
}

// Plan returns the compiled layout of a node, compiling it on first use.
func (db *DB) Plan(node string) (*Plan, error) {
	db.plans.mu.Lock()
	defer db.plans.mu.Unlock()
	if p, ok := db.plans.m[node]; ok {
		return p, nil
	}
	n, ok := db.Nodes[node]
	if !ok {
		return nil, &NotFoundError{Msg: fmt.Sprintf("no node %q in the database", node)}
	}
	c := compiler{db: db}
	root, err := c.node(n, n.Name, nil, 0, AccessNone, 0)
	if err != nil {
		return nil, err
	}
	p := &Plan{DB: db, Node: n, Root: root, Bytes: (n.Size + 7) / 8, Warnings: c.warnings, variable: hasVariable(root)}
	p.number(root)
	if db.plans.m == nil {
		db.plans.m = map[string]*Plan{}
	}
	db.plans.m[node] = p
	return p, nil
}

// number gives every step its index in p.steps.
func (p *Plan) number(s *Step) {
	s.id = uint32(len(p.steps))
	p.steps = append(p.steps, s)
	for _, c := range s.Children {
		p.number(c)
	}
	if s.Elem != nil {
		p.number(s.Elem)
	}
}

// RegisterPlan is Plan for a register's node.
func (db *DB) RegisterPlan(r *Register) (*Plan, error) { return db.Plan(r.Node) }

type compiler struct {
	db       *DB
	warnings []string
}

const maxDepth = 32

// msbOffset converts an ADB (LSB-in-dword) offset of a field of width w to an
// MSB-first offset. containerBits is the size of the node the field sits in:
// nodes smaller than a dword number their bits inside their own size.
func msbOffset(off, w, containerBits int) int {
	if w >= 32 {
		return off
	}
	span := 32
	if containerBits > 0 && containerBits < 32 {
		span = containerBits
	}
	return (off &^ 31) + span - off%32 - w
}

// MSBOffset is msbOffset for a field of a node of at least a dword: the bit
// from the most significant bit of byte 0, as mlx5_ifc.h counts.
func MSBOffset(adbOffset, width int) int { return msbOffset(adbOffset, width, 0) }

func (c *compiler) node(n *Node, name string, f *Field, bit int, acc Access, depth int) (*Step, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("node %s: nesting deeper than %d (a node that contains itself?)", n.Name, maxDepth)
	}
	if isUint64(n) {
		return &Step{Name: name, Field: f, Kind: KindUint, Bit: bit, Width: 64, Access: acc}, nil
	}
	s := &Step{Name: name, Field: f, Kind: KindStruct, Bit: bit, Width: n.Size, Access: acc}
	if n.Union {
		s.Kind = KindUnion
	}
	for _, cf := range n.Fields {
		ch, err := c.field(n, cf, acc, depth)
		if err != nil {
			return nil, err
		}
		s.Children = append(s.Children, ch)
	}
	if s.Kind == KindStruct {
		// Resolve selectors of unions and sizes of dynamic arrays against this
		// structure, now that all its members are known.
		for _, ch := range s.Children {
			c.resolve(n, s, ch)
			c.validity(n, s, ch)
		}
		s.Children = appendJoins(s.Children)
	}
	return s, nil
}

func isUint64(n *Node) bool {
	if n.Size != 64 || len(n.Fields) != 2 || n.Union {
		return false
	}
	hi, lo := n.Field("hi"), n.Field("lo")
	return hi != nil && lo != nil && hi.Offset == 0 && hi.Size == 32 && lo.Offset == 32 && lo.Size == 32 && hi.Subnode == "" && lo.Subnode == ""
}

func (c *compiler) field(parent *Node, f *Field, parentAcc Access, depth int) (*Step, error) {
	acc := f.Access
	if acc == AccessNone {
		acc = parentAcc
	}
	var sub *Node
	if f.Subnode != "" {
		sub = c.db.Nodes[f.Subnode]
		if sub == nil {
			return nil, fmt.Errorf("node %s field %s: subnode %q is not defined", parent.Name, f.Name, f.Subnode)
		}
	}
	elemW := f.ElemSize()
	if elemW <= 0 {
		return nil, fmt.Errorf("node %s field %s: zero-size element", parent.Name, f.Name)
	}
	span := 32
	if parent.Size < 32 {
		span = parent.Size
	}
	if elemW < 32 && f.Offset%32+elemW > span {
		return nil, fmt.Errorf("node %s field %s (line %d): %d bits at bit %d of a dword cross the dword's end", parent.Name, f.Name, f.Line, elemW, f.Offset%32)
	}
	bit := msbOffset(f.Offset, elemW, parent.Size)
	total := f.Size
	if f.IsArray && f.Variable {
		// The ADB counts one element in the node size, mlx5_ifc.h none.
		total = 0
	}
	if bit < 0 || bit+total > parent.Size {
		return nil, fmt.Errorf("node %s field %s (line %d): bits %d..%d lie outside the node's %d bits", parent.Name, f.Name, f.Line, bit, bit+total-1, parent.Size)
	}
	elem := func(at int) (*Step, error) {
		if sub != nil {
			return c.node(sub, f.Name, f, at, acc, depth+1)
		}
		k := KindUint
		if elemW > 64 {
			k = KindBytes
		}
		return &Step{Name: f.Name, Field: f, Kind: k, Bit: at, Width: elemW, Access: acc}, nil
	}
	if !f.IsArray {
		return elem(bit)
	}
	e, err := elem(0)
	if err != nil {
		return nil, err
	}
	s := &Step{Name: f.Name, Field: f, Kind: KindArray, Bit: bit, Access: acc, Elem: e, Low: f.LowBound, Variable: f.Variable}
	if f.Variable {
		s.Width = elemW
	} else {
		s.Count = f.Count()
		s.Width = elemW * s.Count
	}
	s.Text = sub == nil && (elemW == 8 || elemW == 32) && (textName(f.Name) || f.Format == FormatText)
	return s, nil
}

// textName says whether a byte array of this name is meant to hold ASCII.
var textNameRE = lazyre.New(`(^|_)(psid|name|pn|sn|rev|serial|part_number|product_ver|vsd|string)$`)

func textName(name string) bool { return textNameRE.MatchString(strings.ToLower(name)) }

// resolve links a union or dynamic array member of struct s (of node n) to
// the sibling fields that select its member or give its size.
func (c *compiler) resolve(n *Node, s, ch *Step) {
	f := ch.Field
	if f == nil {
		return
	}
	if ch.Kind == KindArray && f.Dynamic && f.SizeCondition != "" {
		r, err := c.ref(n, s, f.SizeCondition)
		if err != nil {
			c.warn("%s.%s: size_condition %q: %v; the array runs to the end of the buffer", n.Name, f.Name, f.SizeCondition, err)
		} else {
			ch.sizeSel = r
		}
	}
	if ch.Kind != KindUnion {
		return
	}
	un := c.db.Nodes[f.Subnode]
	ch.When = map[int]string{}
	if un.Conditional {
		for i, m := range ch.Children {
			if m.Field == nil || m.Field.Condition == "" {
				continue
			}
			ch.Selector = f.Condition
			cd, err := parseCond(m.Field.Condition, func(path string) (*ref, error) { return c.ref(n, s, path) })
			if err != nil {
				c.warn("%s.%s member %s: condition %q: %v", n.Name, f.Name, m.Name, m.Field.Condition, err)
				continue
			}
			cd.member = i
			ch.conds = append(ch.conds, cd)
			ch.When[i] = cd.text
		}
		return
	}
	if f.UnionSelector == "" {
		return // no selector: decode shows every member
	}
	ch.Selector = f.UnionSelector
	r, err := c.ref(n, s, f.UnionSelector)
	if err != nil {
		c.warn("%s.%s: union_selector %q: %v; all members are shown", n.Name, f.Name, f.UnionSelector, err)
		return
	}
	ch.sel = r
	ch.byValue = map[uint64]int{}
	selName := strings.TrimPrefix(strings.TrimPrefix(f.UnionSelector, "$(parent)."), "#(parent).")
	for i, m := range ch.Children {
		if m.Field == nil || m.Field.SelectedBy == "" {
			continue
		}
		v, ok := r.field.EnumValueOf(m.Field.SelectedBy)
		if !ok {
			c.warn("%s.%s member %s: selected_by %q is not a value of %s", n.Name, f.Name, m.Name, m.Field.SelectedBy, selName)
			continue
		}
		if _, dup := ch.byValue[v]; !dup {
			ch.byValue[v] = i
		}
		if ch.valueOf == nil {
			ch.valueOf = map[int]uint64{}
		}
		if _, dup := ch.valueOf[i]; !dup {
			ch.valueOf[i] = v
		}
		ch.When[i] = fmt.Sprintf("%s == %s (0x%x)", selName, m.Field.SelectedBy, v)
	}
}

// validRef is a resolved Field.ValidWhen.
type validRef struct {
	r       *ref
	value   uint64
	nonZero bool
}

// validity links a plain member of struct s to the sibling its
// description makes it depend on.
func (c *compiler) validity(n *Node, s, ch *Step) {
	f := ch.Field
	if f == nil || f.ValidWhen == nil || ch.Kind != KindUint {
		return
	}
	r, err := c.ref(n, s, "$(parent)."+f.ValidWhen.Field)
	if err != nil {
		return // the database checked the sibling; a layout that hides it leaves the field as it is
	}
	ch.valid = &validRef{r: r, value: f.ValidWhen.Value, nonZero: f.ValidWhen.NonZero}
	if f.ValidWhen.NonZero {
		ch.ValidWhen = f.ValidWhen.Field + " != 0"
	} else if name, ok := r.field.EnumName(f.ValidWhen.Value); ok {
		ch.ValidWhen = fmt.Sprintf("%s == %s (%d)", f.ValidWhen.Field, name, f.ValidWhen.Value)
	} else {
		ch.ValidWhen = fmt.Sprintf("%s == %d", f.ValidWhen.Field, f.ValidWhen.Value)
	}
}

func (c *compiler) warn(format string, args ...any) {
	c.warnings = append(c.warnings, fmt.Sprintf(format, args...))
}

// ref resolves "$(parent).a.b" against struct s of node n: the path walks
// named members through nested structures (not arrays or unions).
func (c *compiler) ref(n *Node, s *Step, path string) (*ref, error) {
	p := strings.TrimSpace(path)
	switch {
	case strings.HasPrefix(p, "$(parent)."):
		p = p[len("$(parent)."):]
	case strings.HasPrefix(p, "#(parent)."):
		p = p[len("#(parent)."):]
	default:
		return nil, fmt.Errorf("only $(parent).field paths are supported")
	}
	cur, bit := s, 0
	for _, seg := range strings.Split(p, ".") {
		var next *Step
		for _, ch := range cur.Children {
			if ch.Name == seg {
				next = ch
				break
			}
		}
		if next == nil {
			return nil, fmt.Errorf("%s has no member %q", n.Name, seg)
		}
		bit += next.Bit
		cur = next
	}
	if cur.Kind != KindUint {
		return nil, fmt.Errorf("%q is not a plain number field", path)
	}
	return &ref{bit: bit, width: cur.Width, field: cur.Field}, nil
}

// appendJoins adds derived steps for values split in two halves:
// X_high/X_low and X_hi/X_lo (32+32 bits), X_msb/X_lsb when adjacent, and
// MACs split as X_47_32/X_31_0. The high half must end where the low half
// starts; the joined step follows the low half.
func appendJoins(ch []*Step) []*Step {
	byName := make(map[string]*Step, len(ch))
	for _, s := range ch {
		byName[s.Name] = s
	}
	type pair struct {
		hi, lo string
		style  JoinStyle
	}
	pairs := [...]pair{{"_high", "_low", JoinNumber}, {"_hi", "_lo", JoinNumber}, {"_msb", "_lsb", JoinNumber}, {"_47_32", "_31_0", JoinMAC}}
	var out []*Step
	for _, lo := range ch {
		out = append(out, lo)
		if g := guidJoin(lo); g != nil && byName[lo.Name] == lo {
			out = append(out, g)
		}
		if lo.Kind != KindUint {
			continue
		}
		for _, p := range pairs {
			base, ok := strings.CutSuffix(lo.Name, p.lo)
			if !ok || base == "" || byName[base] != nil {
				continue
			}
			hi := byName[base+p.hi]
			if hi == nil || hi.Kind != KindUint || hi.Bit+hi.Width != lo.Bit || hi.Width+lo.Width > 64 {
				continue
			}
			if p.style == JoinMAC && hi.Width+lo.Width != 48 {
				continue
			}
			style := p.style
			textual := textName(base) || hi.Field != nil && hi.Field.Format == FormatText
			if style == JoinNumber && textual && hi.Width%8 == 0 && lo.Width%8 == 0 {
				style = JoinText
			}
			out = append(out, &Step{Name: base, Kind: KindJoined, Bit: hi.Bit, Width: hi.Width + lo.Width, Access: hi.Access, Join: style, Parts: [2]*Step{hi, lo}})
		}
	}
	if d := dateJoin(byName); d != nil {
		// After the last of its parts, like the other joined values.
		for i, s := range out {
			if s == d.Parts[1] {
				out = append(out[:i+1], append([]*Step{d}, out[i+1:]...)...)
				break
			}
		}
	}
	return out
}

// guidJoin: an array of two or four dwords named *guid holds a GUID in
// its last two dwords (PGUID's 128-bit node_guid, port_guid, sys_guid);
// the joined value has the array's name, and JSON shows it in the array's
// place.
func guidJoin(s *Step) *Step {
	if s.Kind != KindArray || s.Variable || s.Elem.Kind != KindUint || s.Elem.Width != 32 || (s.Count != 2 && s.Count != 4) {
		return nil
	}
	if !strings.HasSuffix(strings.ToLower(s.Name), "guid") {
		return nil
	}
	return &Step{Name: s.Name, Kind: KindJoined, Bit: s.Bit + (s.Count-2)*32, Width: 64, Access: s.Access, Join: JoinGUID, Parts: [2]*Step{s, s}}
}

// dateJoin: BCD fields year, month and day that sit side by side (in any
// order) are also shown as one date, "date".
func dateJoin(byName map[string]*Step) *Step {
	if byName["date"] != nil {
		return nil
	}
	var parts []*Step
	for _, n := range []string{"year", "month", "day"} {
		s := byName[n]
		if s == nil || s.Kind != KindUint || s.Field == nil || s.Field.Format != FormatBCD {
			return nil
		}
		parts = append(parts, s)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].Bit < parts[j].Bit })
	width := 0
	for i, p := range parts {
		if i > 0 && parts[i-1].Bit+parts[i-1].Width != p.Bit {
			return nil
		}
		width += p.Width
	}
	if width > 64 {
		return nil
	}
	first, last := parts[0], parts[len(parts)-1]
	return &Step{Name: "date", Kind: KindJoined, Bit: first.Bit, Width: width, Access: first.Access, Join: JoinDate, Parts: [2]*Step{first, last}, Joins: parts}
}

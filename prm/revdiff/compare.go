package revdiff

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cxray/cxray/prm"
)

// compareLayouts diffs two compiled layouts. The root sizes are compared by
// the caller (RegisterChange.SizeChanged).
func compareLayouts(op, np *prm.Plan) []FieldChange {
	return pair(build(op), build(np), 0, 0, true)
}

// change starts a FieldChange about the pair (either may be nil).
func change(kind string, o, n *item) FieldChange {
	c := FieldChange{Kind: kind}
	if o != nil {
		c.Old = o.info()
		c.Path = o.path
	}
	if n != nil {
		c.New = n.info()
		c.Path = n.path
	}
	if o != nil && n != nil && o.path != n.path {
		c.OldPath = o.path
	}
	return c
}

// pair compares two items known to be the same field (by name, or by a
// rename found by the caller) and returns the changes in and below them.
// ob and nb are the offsets of their parents: an item is "moved" only when
// its place inside its parent changed, so a moved structure is reported
// once rather than once per field inside it.
func pair(o, n *item, ob, nb int, top bool) []FieldChange {
	if (o.typ == tLeaf) != (n.typ == tLeaf) {
		return []FieldChange{retyped(o, n)}
	}
	var out []FieldChange
	// The root's size is the register's; array elements follow from the
	// array's element size, reported on the array.
	if !top && !strings.HasPrefix(n.name, "[") {
		out = append(out, placement(o, n, ob, nb)...)
	}
	if o.typ == tLeaf {
		if o.access != n.access {
			c := change(Access, o, n)
			c.Detail = fmt.Sprintf("%s → %s", accessName(o.access), accessName(n.access))
			out = append(out, c)
		}
		if ec := diffEnum(o.enum, n.enum); ec != nil {
			c := change(Enum, o, n)
			c.Enum = ec
			c.Detail = enumDetail(ec)
			out = append(out, c)
		}
		return out
	}
	if o.typ != n.typ {
		c := change(Retyped, o, n)
		c.Detail = fmt.Sprintf("%s → %s", describe(o), describe(n))
		out = append(out, c)
	}
	return append(out, children(o, n)...)
}

// placement reports a paired item that moved inside its parent or changed
// size. A field that kept one of its ends and changed width was resized, not
// moved: in the PRM's terms a field that grows toward the MSB keeps its
// offset (0x28.0 stays 0x28.0). Only when neither end stayed is it both.
func placement(o, n *item, ob, nb int) []FieldChange {
	oFrom, nFrom := o.bit-ob, n.bit-nb
	oTo, nTo := oFrom+o.span(), nFrom+n.span()
	sized := sizeDetail(o, n)
	moved := oFrom != nFrom && (sized == "" || oTo != nTo)
	var out []FieldChange
	if moved {
		c := change(Moved, o, n)
		c.Detail = fmt.Sprintf("%s → %s", pos(o), pos(n))
		if sized != "" {
			c.Detail += " (and resized)"
		}
		out = append(out, c)
	}
	if sized != "" {
		c := change(Resized, o, n)
		c.Detail = sized
		switch {
		case moved:
			c.Detail += " (and moved)"
		case pos(o) == pos(n):
			c.Detail += " at " + pos(n)
		default:
			c.Detail += ", " + pos(o) + " → " + pos(n)
		}
		out = append(out, c)
	}
	return out
}

func accessName(a prm.Access) string {
	if a == prm.AccessNone {
		return "none"
	}
	return a.String()
}

// sizeDetail says how the size of a paired item changed, or "" if it did not.
func sizeDetail(o, n *item) string {
	switch {
	case o.typ == tLeaf && (o.count > 1 || n.count > 1 || o.vary || n.vary):
		if o.width == n.width && o.count == n.count && o.vary == n.vary {
			return ""
		}
		return fmt.Sprintf("%s → %s", arrayShape(o), arrayShape(n))
	case o.typ == tArray && n.typ == tArray:
		if o.width == n.width && o.count == n.count && o.vary == n.vary {
			return ""
		}
		return fmt.Sprintf("%s → %s", arrayShape(o), arrayShape(n))
	case o.span() != n.span():
		return fmt.Sprintf("%s → %s", bits(o.span()), bits(n.span()))
	}
	return ""
}

func arrayShape(it *item) string {
	ew := it.width
	if it.typ == tArray && len(it.kids) > 0 {
		ew = it.kids[0].width
	}
	switch {
	case it.vary:
		return fmt.Sprintf("variable array of %s", bits(ew))
	case it.count > 1 || it.typ == tArray:
		return fmt.Sprintf("%d × %s", it.count, bits(ew))
	}
	return bits(ew)
}

func bits(n int) string {
	if n == 1 {
		return "1 bit"
	}
	if n%8 == 0 && n >= 64 {
		return fmt.Sprintf("%d bytes", n/8)
	}
	return fmt.Sprintf("%d bits", n)
}

// pos writes an offset the way the PRM and the ADB do: a dword-aligned byte
// offset and, for fields inside one dword, the bit of their LSB.
func pos(it *item) string {
	w := it.span()
	if w < 32 && it.bit%32+w <= 32 {
		return fmt.Sprintf("0x%x.%d", it.bit/32*4, 32-it.bit%32-w)
	}
	if it.bit%8 == 0 {
		return fmt.Sprintf("0x%x", it.bit/8)
	}
	return fmt.Sprintf("bit %d", it.bit)
}

// describe says what an item is in a few words.
func describe(it *item) string {
	switch it.typ {
	case tStruct:
		return fmt.Sprintf("struct (%s, %s)", bits(it.span()), plural(it.leaves, "field"))
	case tUnion:
		return fmt.Sprintf("union (%s, %s)", bits(it.span()), plural(len(it.kids), "member"))
	case tArray:
		return fmt.Sprintf("array of structs (%s, %s)", arrayShape(it), plural(it.leaves, "field"))
	}
	if it.count > 1 || it.vary {
		return arrayShape(it)
	}
	return bits(it.width)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// retyped handles a field that is plain on one side and a container on the
// other. When the container's fields cover exactly the plain field's bits
// it is a split (or, the other way, a merge); otherwise, as for a union,
// only the change of type can be said.
func retyped(o, n *item) FieldChange {
	if n.typ != tLeaf && n.typ != tUnion && o.bit == n.bit && o.span() == n.span() {
		if parts := n.leafList(); len(parts) >= 2 && tiles(parts, o.bit, o.end()) {
			c := change(Split, o, n)
			c.Path = o.path
			c.Parts = infos(parts)
			c.Detail = fmt.Sprintf("%s → %s", o.path, pathList(parts))
			return c
		}
	}
	if o.typ != tLeaf && o.typ != tUnion && o.bit == n.bit && o.span() == n.span() {
		if parts := o.leafList(); len(parts) >= 2 && tiles(parts, n.bit, n.end()) {
			c := change(Merged, o, n)
			c.Parts = infos(parts)
			c.Detail = fmt.Sprintf("%s → %s", pathList(parts), n.path)
			return c
		}
	}
	c := change(Retyped, o, n)
	c.Detail = fmt.Sprintf("%s at %s → %s at %s", describe(o), pos(o), describe(n), pos(n))
	return c
}

// tiles says whether the items cover [from, to) exactly, without overlap.
func tiles(parts []*item, from, to int) bool {
	ps := append([]*item(nil), parts...)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].bit < ps[j].bit })
	at := from
	for _, p := range ps {
		if p.bit != at {
			return false
		}
		at = p.end()
	}
	return at == to
}

func infos(items []*item) []FieldInfo {
	out := make([]FieldInfo, len(items))
	for i, it := range items {
		out[i] = *it.info()
	}
	return out
}

func pathList(items []*item) string {
	ps := make([]string, len(items))
	for i, it := range items {
		ps[i] = it.path
	}
	return strings.Join(ps, " + ")
}

// siblings collects the changes among the members of one pair of
// containers, each with the changes below it, to be put in layout order.
type siblings struct {
	o, n   *item
	events []event
}

// event is one change (or one paired member with the changes inside it) at
// the level of a container's members.
type event struct {
	at   int // offset inside the parent: new side, or old side for what is gone
	path string
	rank int
	out  []FieldChange
}

// add records a change at this level, followed by more (the changes inside
// a renamed member).
func (s *siblings) add(c FieldChange, more ...FieldChange) {
	at := 0
	if c.New != nil {
		at = c.New.BitOffset - s.n.bit
	} else {
		at = c.Old.BitOffset - s.o.bit
	}
	s.events = append(s.events, event{at: at, path: c.Path, rank: kindRank[c.Kind], out: append([]FieldChange{c}, more...)})
}

// addPair records the changes inside a pair matched by name.
func (s *siblings) addPair(po, pn *item) {
	if out := pair(po, pn, s.o.bit, s.n.bit, false); len(out) > 0 {
		s.events = append(s.events, event{at: pn.bit - s.n.bit, path: pn.path, rank: -1, out: out})
	}
}

// flatten orders the events by place, then path, then kind. Members of a
// union all start at the same place, so each member's changes stay together.
func (s *siblings) flatten() []FieldChange {
	sort.SliceStable(s.events, func(i, j int) bool {
		a, b := &s.events[i], &s.events[j]
		if a.at != b.at {
			return a.at < b.at
		}
		if a.path != b.path {
			return a.path < b.path
		}
		return a.rank < b.rank
	})
	var out []FieldChange
	for _, e := range s.events {
		out = append(out, e.out...)
	}
	return out
}

// children pairs the members of two paired containers and compares each
// pair; what is left over is classified as renamed, merged, split, added or
// removed, at the highest level (a new structure is one "added").
func children(o, n *item) []FieldChange {
	if o.typ == tArray && n.typ == tArray {
		if out, ok := collapseElements(o, n); ok {
			return out
		}
	}
	s := &siblings{o: o, n: n}
	type pr struct{ o, n *item }
	var pairs []pr // matched by name
	usedO := make([]bool, len(o.kids))
	usedN := make([]bool, len(n.kids))
	newByName := make(map[string]int, len(n.kids))
	for j, k := range n.kids {
		newByName[k.name] = j
	}
	for i, k := range o.kids {
		if j, ok := newByName[k.name]; ok && !usedN[j] {
			usedO[i], usedN[j] = true, true
			pairs = append(pairs, pr{k, n.kids[j]})
		}
	}
	unionPair := o.typ == tUnion && n.typ == tUnion
	structPair := o.typ != tUnion && n.typ != tUnion

	// rename pairs leftovers one to one when key gives exactly one
	// candidate on each side; ambiguity means we cannot tell, so nothing is
	// paired.
	rename := func(key func(it *item, base int) (string, bool), why func(a, b *item) string) {
		oc, nc := map[string][]int{}, map[string][]int{}
		for i, k := range o.kids {
			if !usedO[i] {
				if sk, ok := key(k, o.bit); ok {
					oc[sk] = append(oc[sk], i)
				}
			}
		}
		for j, k := range n.kids {
			if !usedN[j] {
				if sk, ok := key(k, n.bit); ok {
					nc[sk] = append(nc[sk], j)
				}
			}
		}
		for i, k := range o.kids {
			if usedO[i] {
				continue
			}
			sk, ok := key(k, o.bit)
			if !ok || len(oc[sk]) != 1 || len(nc[sk]) != 1 {
				continue
			}
			j := nc[sk][0]
			usedO[i], usedN[j] = true, true
			c := change(Renamed, k, n.kids[j])
			c.Detail = "was " + k.path
			if w := why(k, n.kids[j]); w != "" {
				c.Detail += " (" + w + ")"
			}
			s.add(c, pair(k, n.kids[j], o.bit, n.bit, false)...)
		}
	}

	if unionPair {
		// Members of a union all start at its start, so their position says
		// nothing. What picks them does: the selector value (when the
		// selector sits at the same place on both sides), the condition
		// text, or failing that an identical layout.
		rename(func(it *item, _ int) (string, bool) {
			if !it.hasSel {
				return "", false
			}
			return fmt.Sprintf("sel@%d/%d=%d", it.sel.bit, it.sel.width, it.selValue), true
		}, func(a, b *item) string {
			name, _ := b.sel.field.EnumName(b.selValue)
			return fmt.Sprintf("both selected by %s = %s (0x%x)", b.sel.path, name, b.selValue)
		})
		rename(func(it *item, _ int) (string, bool) { return "cond:" + it.cond, it.cond != "" },
			func(a, b *item) string { return "both selected when " + b.cond })
		rename(func(it *item, _ int) (string, bool) {
			return it.signature(), it.typ != tLeaf
		}, func(a, b *item) string { return "same layout" })
	}
	if structPair {
		rename(func(it *item, base int) (string, bool) {
			return fmt.Sprintf("%d@%d/%d*%d:%v", it.typ, it.bit-base, it.width, it.count, it.vary), true
		}, func(a, b *item) string { return "" })
	}

	var oLeft, nLeft []int
	collect := func() {
		oLeft, nLeft = oLeft[:0], nLeft[:0]
		for i := range o.kids {
			if !usedO[i] {
				oLeft = append(oLeft, i)
			}
		}
		for j := range n.kids {
			if !usedN[j] {
				nLeft = append(nLeft, j)
			}
		}
	}
	collect()
	if structPair && len(oLeft) > 0 && len(nLeft) > 0 {
		s.mergeSplit(oLeft, nLeft, usedO, usedN)
		collect()
	}
	for _, i := range oLeft {
		k := o.kids[i]
		c := change(Removed, k, nil)
		c.Detail = fmt.Sprintf("%s at %s", describe(k), pos(k))
		s.add(c)
	}
	for _, j := range nLeft {
		k := n.kids[j]
		c := change(Added, nil, k)
		c.Detail = fmt.Sprintf("%s at %s", describe(k), pos(k))
		if k.access != prm.AccessNone {
			c.Detail += ", " + k.access.String()
		}
		s.add(c)
	}
	for _, p := range pairs {
		s.addPair(p.o, p.n)
	}
	return s.flatten()
}

// collapseElements compares two arrays of structures element by element.
// When every element present on both sides changed in exactly the same way
// (same kinds, relative paths and offsets), the changes are given once, for
// the first element, with Repeat saying where else they hold; elements added
// or removed by a count change are listed as such. ok is false when the
// elements differ from each other (then each is listed).
func collapseElements(o, n *item) (out []FieldChange, ok bool) {
	newByName := make(map[string]*item, len(n.kids))
	for _, k := range n.kids {
		newByName[k.name] = k
	}
	var first []FieldChange
	var sig string
	var paired []*item
	oldPaired := map[string]bool{}
	for _, oe := range o.kids {
		ne := newByName[oe.name]
		if ne == nil {
			continue
		}
		cs := pair(oe, ne, o.bit, n.bit, false)
		for _, c := range cs {
			if c.Repeat != nil {
				return nil, false // nested repeats: list them plainly
			}
		}
		ns := normalize(cs, oe, ne)
		if len(paired) == 0 {
			first, sig = cs, ns
		} else if ns != sig {
			return nil, false
		}
		paired = append(paired, ne)
		oldPaired[oe.name] = true
	}
	if len(paired) < 2 {
		return nil, false
	}
	s := &siblings{o: o, n: n}
	if len(first) > 0 {
		rep := &Repeat{Array: n.path, First: paired[0].index, Last: paired[len(paired)-1].index, Count: len(paired)}
		if len(paired) > 1 {
			rep.StrideBits = paired[1].bit - paired[0].bit
		}
		for i := range first {
			first[i].Repeat = rep
		}
		s.events = append(s.events, event{at: paired[0].bit - n.bit, path: paired[0].path, rank: -1, out: first})
	}
	for _, oe := range o.kids {
		if !oldPaired[oe.name] {
			c := change(Removed, oe, nil)
			c.Detail = fmt.Sprintf("%s at %s", describe(oe), pos(oe))
			s.add(c)
		}
	}
	for _, ne := range n.kids {
		if !oldPaired[ne.name] {
			c := change(Added, nil, ne)
			c.Detail = fmt.Sprintf("%s at %s", describe(ne), pos(ne))
			s.add(c)
		}
	}
	return s.flatten(), true
}

// normalize renders element changes with paths and offsets made relative to
// the element, so that two elements' changes can be compared.
func normalize(cs []FieldChange, oe, ne *item) string {
	rel := func(p string) string {
		switch {
		case p == "":
			return ""
		case prm.HasPrefixPath(p, ne.path):
			return "N" + p[len(ne.path):]
		case prm.HasPrefixPath(p, oe.path):
			return "O" + p[len(oe.path):]
		}
		return p
	}
	fi := func(f FieldInfo, base int) FieldInfo {
		f.Path = rel(f.Path)
		f.BitOffset -= base
		return f
	}
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s|%s|%s|", c.Kind, rel(c.Path), rel(c.OldPath))
		if c.Old != nil {
			fmt.Fprintf(&b, "%+v|", fi(*c.Old, oe.bit))
		}
		if c.New != nil {
			fmt.Fprintf(&b, "%+v|", fi(*c.New, ne.bit))
		}
		base := ne.bit
		if c.Kind == Merged {
			base = oe.bit // merged parts are old fields
		}
		for _, p := range c.Parts {
			fmt.Fprintf(&b, "%+v|", fi(p, base))
		}
		if c.Enum != nil {
			fmt.Fprintf(&b, "%+v", *c.Enum)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// inside lists the unused members of c lying within [from, to), offsets
// relative to c's start.
func inside(c *item, used []bool, from, to int) []*item {
	var out []*item
	for i, k := range c.kids {
		if used[i] {
			continue
		}
		if r := k.bit - c.bit; r >= from && r+k.span() <= to {
			out = append(out, k)
		}
	}
	return out
}

func markUsed(c *item, used []bool, items []*item) {
	for i, k := range c.kids {
		for _, x := range items {
			if k == x {
				used[i] = true
			}
		}
	}
}

// mergeSplit finds, among the unpaired members of two structures, new
// members covering exactly several old ones (merged) and old members covered
// exactly by several new ones (split).
func (s *siblings) mergeSplit(oLeft, nLeft []int, usedO, usedN []bool) {
	o, n := s.o, s.n
	for _, j := range nLeft {
		nk := n.kids[j]
		if usedN[j] {
			continue
		}
		from := nk.bit - n.bit
		parts := inside(o, usedO, from, from+nk.span())
		if len(parts) < 2 || !tilesRel(parts, o.bit, from, from+nk.span()) {
			continue
		}
		usedN[j] = true
		markUsed(o, usedO, parts)
		sortByBit(parts)
		c := change(Merged, nil, nk)
		c.Parts = infos(parts)
		c.Detail = fmt.Sprintf("%s → %s, %s", pathList(parts), nk.path, describe(nk))
		s.add(c)
	}
	for _, i := range oLeft {
		ok := o.kids[i]
		if usedO[i] {
			continue
		}
		from := ok.bit - o.bit
		parts := inside(n, usedN, from, from+ok.span())
		if len(parts) < 2 || !tilesRel(parts, n.bit, from, from+ok.span()) {
			continue
		}
		usedO[i] = true
		markUsed(n, usedN, parts)
		sortByBit(parts)
		c := change(Split, ok, nil)
		c.Parts = infos(parts)
		c.Detail = fmt.Sprintf("%s → %s", ok.path, pathList(parts))
		s.add(c)
	}
}

func sortByBit(items []*item) {
	sort.SliceStable(items, func(i, j int) bool { return items[i].bit < items[j].bit })
}

// tilesRel is tiles with offsets relative to base.
func tilesRel(parts []*item, base, from, to int) bool {
	return tiles(parts, base+from, base+to)
}

var kindRank = map[string]int{Removed: 0, Split: 1, Merged: 2, Renamed: 3, Retyped: 4, Moved: 5, Resized: 6, Access: 7, Enum: 8, Added: 9}

// diffEnum compares two enums: by name first, then leftover names with the
// same value (one to one) are renames.
func diffEnum(o, n []prm.EnumValue) *EnumChange {
	if len(o) == 0 && len(n) == 0 {
		return nil
	}
	ec := &EnumChange{}
	oByName := map[string]uint64{}
	for _, e := range o {
		oByName[e.Name] = e.Value
	}
	nByName := map[string]uint64{}
	for _, e := range n {
		nByName[e.Name] = e.Value
	}
	var oOnly, nOnly []prm.EnumValue
	for _, e := range o {
		if v, ok := nByName[e.Name]; !ok {
			oOnly = append(oOnly, e)
		} else if v != e.Value {
			ec.Renumbered = append(ec.Renumbered, EnumRenumber{Name: e.Name, OldValue: e.Value, NewValue: v})
		}
	}
	for _, e := range n {
		if _, ok := oByName[e.Name]; !ok {
			nOnly = append(nOnly, e)
		}
	}
	byVal := func(es []prm.EnumValue) map[uint64][]int {
		m := map[uint64][]int{}
		for i, e := range es {
			m[e.Value] = append(m[e.Value], i)
		}
		return m
	}
	ov, nv := byVal(oOnly), byVal(nOnly)
	renamedO, renamedN := map[int]bool{}, map[int]bool{}
	for i, e := range oOnly {
		if len(ov[e.Value]) == 1 && len(nv[e.Value]) == 1 {
			j := nv[e.Value][0]
			renamedO[i], renamedN[j] = true, true
			ec.Renamed = append(ec.Renamed, EnumRename{Value: e.Value, OldName: e.Name, NewName: nOnly[j].Name})
		}
	}
	for i, e := range oOnly {
		if !renamedO[i] {
			ec.Removed = append(ec.Removed, EnumValue{Name: e.Name, Value: e.Value})
		}
	}
	for j, e := range nOnly {
		if !renamedN[j] {
			ec.Added = append(ec.Added, EnumValue{Name: e.Name, Value: e.Value})
		}
	}
	if len(ec.Added)+len(ec.Removed)+len(ec.Renamed)+len(ec.Renumbered) == 0 {
		return nil
	}
	sort.Slice(ec.Added, func(i, j int) bool { return enumLess(ec.Added[i], ec.Added[j]) })
	sort.Slice(ec.Removed, func(i, j int) bool { return enumLess(ec.Removed[i], ec.Removed[j]) })
	sort.Slice(ec.Renamed, func(i, j int) bool { return ec.Renamed[i].Value < ec.Renamed[j].Value })
	sort.Slice(ec.Renumbered, func(i, j int) bool { return ec.Renumbered[i].Name < ec.Renumbered[j].Name })
	return ec
}

func enumLess(a, b EnumValue) bool {
	if a.Value != b.Value {
		return a.Value < b.Value
	}
	return a.Name < b.Name
}

func enumDetail(ec *EnumChange) string {
	var parts []string
	list := func(es []EnumValue) string {
		s := make([]string, len(es))
		for i, e := range es {
			s[i] = fmt.Sprintf("%s=0x%x", e.Name, e.Value)
		}
		return strings.Join(s, ", ")
	}
	if len(ec.Added) > 0 {
		parts = append(parts, "added "+list(ec.Added))
	}
	if len(ec.Removed) > 0 {
		parts = append(parts, "removed "+list(ec.Removed))
	}
	if len(ec.Renamed) > 0 {
		s := make([]string, len(ec.Renamed))
		for i, r := range ec.Renamed {
			s[i] = fmt.Sprintf("0x%x %s → %s", r.Value, r.OldName, r.NewName)
		}
		parts = append(parts, "renamed "+strings.Join(s, ", "))
	}
	if len(ec.Renumbered) > 0 {
		s := make([]string, len(ec.Renumbered))
		for i, r := range ec.Renumbered {
			s[i] = fmt.Sprintf("%s 0x%x → 0x%x", r.Name, r.OldValue, r.NewValue)
		}
		parts = append(parts, "renumbered "+strings.Join(s, ", "))
	}
	return strings.Join(parts, "; ")
}

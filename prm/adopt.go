package prm

import (
	"fmt"
	"sort"
	"strings"
)

// AdoptSelectors gives a union that names no selector the one ref names for
// the same field of the same node, with ref's selected_by on the members
// both databases have by name. Older PRM databases (Rev 0.51 has no
// union_selector on PPCNT counter_set, PDDR page_data or MPCNT
// counter_set) leave the member to the reader, and a decode would show
// every member as if each held the answer: counters of one group read as
// the counters of all the others. The selector field must be the same
// field in both (name, offset and width); a selector value whose name db's
// enum lacks is taken from ref's enum. It returns a note per union given a
// selector, for the user (a database matter, not the device's), and must
// run before the first Plan.
func (db *DB) AdoptSelectors(ref *DB) []string {
	if ref == nil || ref == db {
		return nil
	}
	var notes []string
	names := make([]string, 0, len(db.Nodes))
	for name := range db.Nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		n, rn := db.Nodes[name], ref.Nodes[name]
		if rn == nil {
			continue
		}
		for _, f := range n.Fields {
			if note := db.adoptSelector(ref, n, rn, f); note != "" {
				notes = append(notes, note)
			}
		}
	}
	if len(notes) > 0 {
		db.Notes = append(db.Notes, notes...)
		db.plans.mu.Lock()
		db.plans.m = map[string]*Plan{}
		db.plans.mu.Unlock()
	}
	return notes
}

func (db *DB) adoptSelector(ref *DB, n, rn *Node, f *Field) string {
	if f.UnionSelector != "" || f.Subnode == "" {
		return ""
	}
	un := db.Nodes[f.Subnode]
	if un == nil || !un.Union || un.Conditional {
		return ""
	}
	rf := rn.Field(f.Name)
	if rf == nil || rf.UnionSelector == "" || rf.Subnode == "" || ref.Nodes[rf.Subnode] == nil {
		return ""
	}
	// Only a selector that is a field of the same node, the same in both.
	selName, ok := strings.CutPrefix(rf.UnionSelector, "$(parent).")
	if !ok || strings.Contains(selName, ".") {
		return ""
	}
	sel, rsel := n.Field(selName), rn.Field(selName)
	if sel == nil || rsel == nil || sel.Offset != rsel.Offset || sel.Size != rsel.Size || sel.Subnode != "" {
		return ""
	}
	run := ref.Nodes[rf.Subnode]
	var picked []string
	for _, m := range un.Fields {
		rm := run.Field(m.Name)
		if rm == nil || rm.SelectedBy == "" || m.SelectedBy != "" {
			continue
		}
		if _, ok := sel.EnumValueOf(rm.SelectedBy); !ok {
			v, ok := rsel.EnumValueOf(rm.SelectedBy)
			if !ok {
				continue
			}
			if _, taken := sel.EnumName(v); taken {
				continue // db names this value otherwise: do not guess
			}
			sel.Enum = append(sel.Enum, EnumValue{Name: rm.SelectedBy, Value: v})
		}
		m.SelectedBy = rm.SelectedBy
		picked = append(picked, m.Name)
	}
	if len(picked) == 0 {
		return ""
	}
	f.UnionSelector = rf.UnionSelector
	rev := db.Revision
	if rev == "" {
		rev = "this database"
	}
	return fmt.Sprintf("%s.%s: %s names no selector for its members; %s's (%s) picks %d of its %d members", n.Name, f.Name, rev, ref.Revision, selName, len(picked), len(un.Fields))
}

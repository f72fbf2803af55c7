package revdiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cxray/cxray/prm"
)

// fld makes a plain field at MSB-first bit msb, converting to the ADB's
// offset convention (LSB-based bit inside a big-endian dword) so that the
// tests can be read in the same convention as the report.
func fld(name string, msb, width int, acc prm.Access) *prm.Field {
	off := msb
	if width < 32 {
		off = msb/32*32 + 32 - msb%32 - width
	}
	return &prm.Field{Name: name, Offset: off, Size: width, Access: acc}
}

func sub(name, node string, msb, width int) *prm.Field {
	f := fld(name, msb, width, prm.AccessNone)
	f.Subnode = node
	return f
}

// arr makes f an array of n elements (its width is the whole array).
func arr(f *prm.Field, n int) *prm.Field {
	f.IsArray, f.LowBound, f.HighBound = true, 0, n-1
	return f
}

func member(name, node string, width int, selectedBy string) *prm.Field {
	return &prm.Field{Name: name, Subnode: node, Offset: 0, Size: width, SelectedBy: selectedBy}
}

func withEnum(f *prm.Field, kv ...any) *prm.Field {
	for i := 0; i < len(kv); i += 2 {
		f.Enum = append(f.Enum, prm.EnumValue{Name: kv[i].(string), Value: uint64(kv[i+1].(int))})
	}
	return f
}

func node(name string, bits int, union bool, fs ...*prm.Field) *prm.Node {
	return &prm.Node{Name: name, Size: bits, Union: union, Fields: fs}
}

func mkDB(t *testing.T, rev string, nodes []*prm.Node, regs ...*prm.Register) *prm.DB {
	t.Helper()
	m := map[string]*prm.Node{}
	for _, n := range nodes {
		m[n.Name] = n
	}
	db, err := prm.NewDB("test:"+rev, rev, m, regs)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// tinyPair builds two revisions of a few registers that exercise every
// classification once. Offsets are MSB-first.
func tinyPair(t *testing.T) (old, new *prm.DB) {
	RO, RW, IDX := prm.AccessRO, prm.AccessRW, prm.AccessIndex
	selOld := withEnum(fld("sel", 248, 8, IDX), "PAGE_A", 1, "PAGE_B", 2)
	selNew := withEnum(fld("sel", 248, 8, IDX), "PAGE_A", 1, "PAGE_B", 2, "PAGE_C", 3)
	pageOld := sub("page", "page_u", 256, 64)
	pageOld.UnionSelector = "$(parent).sel"
	pageNew := sub("page", "page_u", 256, 64)
	pageNew.UnionSelector = "$(parent).sel"

	oldNodes := []*prm.Node{
		node("test_ext", 512, false,
			fld("keep", 0, 8, RW),
			fld("mv", 8, 4, RW),        // moved to 12
			fld("rs", 20, 4, RW),       // grows toward the MSB: 16..24
			fld("rs2", 24, 4, RW),      // grows toward the LSB: 24..32
			fld("mr", 32, 8, RW),       // neither end kept: 44..48
			fld("old_name", 48, 8, RW), // renamed
			fld("acc", 56, 8, RO),      // RO -> RW
			withEnum(fld("en", 64, 8, RW), "A", 0, "B", 1, "C", 2, "D", 3),
			fld("wide", 96, 32, RW),              // split into hi + lo
			fld("p1", 128, 8, RW),                // p1 + p2 merged into whole
			fld("p2", 136, 24, RW),               //
			fld("gone", 168, 4, RW),              // removed
			fld("n1", 192, 16, RW),               // n1 + n2 merged into a structure
			fld("n2", 208, 16, RW),               //
			arr(sub("ent", "ent_s", 320, 96), 3), // 3 structures, each grows a flag
			selOld, pageOld,
		),
		node("page_u", 64, true,
			member("page_a_old", "page_a_s", 64, "PAGE_A"),
			member("page_b", "page_b_s", 64, "PAGE_B"),
			member("anon_old", "anon_s", 64, ""),   // no selector, same layout as anon_new
			member("other_old", "other_s", 64, ""), // no selector, different layout
		),
		node("page_a_s", 64, false, fld("x", 0, 32, RO)),
		node("page_b_s", 64, false, fld("y", 0, 32, RO)),
		node("anon_s", 64, false, fld("q", 0, 16, RO)),
		node("other_s", 64, false, fld("r", 0, 16, RO)),
		node("ent_s", 32, false, fld("k", 0, 4, RW)),
		node("hdr_ext", 32, false, fld("h", 0, 16, RW)),
	}

	newNodes := []*prm.Node{
		node("test_ext", 512, false,
			fld("keep", 0, 8, RW),
			fld("mv", 12, 4, RW),
			fld("rs", 16, 8, RW),
			fld("rs2", 24, 8, RW),
			fld("mr", 44, 4, RW),
			fld("new_name", 48, 8, RW),
			fld("acc", 56, 8, RW),
			withEnum(fld("en", 64, 8, RW), "A", 0, "B2", 1, "C", 5, "E", 7),
			fld("hi", 96, 16, RW),
			fld("lo", 112, 16, RW),
			fld("whole", 128, 32, RW),
			fld("fresh", 160, 4, RO), // added
			sub("n", "n_s", 192, 32),
			arr(sub("ent", "ent_s2", 320, 96), 3),
			selNew, pageNew,
		),
		node("n_s", 32, false, fld("a", 0, 8, RW), fld("b", 8, 24, RW)),
		node("page_u", 64, true,
			member("page_a_new", "page_a_s2", 64, "PAGE_A"), // renamed by selector
			member("page_b", "page_b_s", 64, "PAGE_B"),
			member("page_c", "page_b_s", 64, "PAGE_C"), // added
			member("anon_new", "anon_s", 64, ""),
			member("other_new", "other2_s", 64, ""),
		),
		node("page_a_s2", 64, false, fld("x", 0, 32, RO), fld("z", 32, 8, RO)),
		node("page_b_s", 64, false, fld("y", 0, 32, RO)),
		node("anon_s", 64, false, fld("q", 0, 16, RO)),
		node("other2_s", 64, false, fld("s", 0, 16, RO)),
		node("ent_s2", 32, false, fld("k", 0, 4, RW), fld("flag", 7, 1, RW)),
		node("hdr_ext", 32, false, fld("h", 0, 16, RW), fld("g", 16, 8, RO)),
		node("plain_ext", 32, false, fld("v", 0, 32, RW)),
	}

	oldNodes = append(oldNodes, node("plain_ext", 32, false, fld("v", 0, 32, RW)))
	old = mkDB(t, "Rev A", oldNodes,
		&prm.Register{Name: "TEST", ID: 0x1, Node: "test_ext", Size: 64},
		&prm.Register{Name: "GONE", ID: 0x2, Node: "plain_ext", Size: 4},
		&prm.Register{Name: "Renum", ID: 0x4, Node: "plain_ext", Size: 4},
		&prm.Register{Name: "SAME", ID: 0x6, Node: "plain_ext", Size: 4},
		&prm.Register{Name: "OLDNAME", ID: 0x7, Node: "plain_ext", Size: 4},
	)
	new = mkDB(t, "Rev B", newNodes,
		&prm.Register{Name: "TEST", ID: 0x1, Node: "test_ext", Size: 64},
		&prm.Register{Name: "FRESH", ID: 0x3, Node: "plain_ext", Size: 4},
		&prm.Register{Name: "RENUM", ID: 0x5, Node: "plain_ext", Size: 4},
		&prm.Register{Name: "SAME", ID: 0x6, Node: "plain_ext", Size: 4},
		&prm.Register{Name: "NEWNAME", ID: 0x7, Node: "plain_ext", Size: 4},
	)
	return old, new
}

// line renders a change compactly for assertions.
func line(c FieldChange) string {
	s := c.Kind + " " + c.Path
	if c.OldPath != "" {
		s += " <- " + c.OldPath
	}
	if len(c.Parts) > 0 {
		var ps []string
		for _, p := range c.Parts {
			ps = append(ps, p.Path)
		}
		s += " [" + strings.Join(ps, "+") + "]"
	}
	if c.Repeat != nil {
		s += fmt.Sprintf(" x%d", c.Repeat.Count)
	}
	return s
}

func lines(cs []FieldChange) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = line(c)
	}
	return out
}

func TestTinyClassification(t *testing.T) {
	old, new := tinyPair(t)
	rep, err := Diff(old, new, Options{})
	if err != nil {
		t.Fatal(err)
	}

	var added, removed []string
	for _, r := range rep.AddedRegisters {
		added = append(added, fmt.Sprintf("%s:0x%x:%s", r.Name, r.ID, r.SameIDAs))
	}
	for _, r := range rep.RemovedRegisters {
		removed = append(removed, fmt.Sprintf("%s:0x%x:%s", r.Name, r.ID, r.SameIDAs))
	}
	if got, want := strings.Join(added, ","), "FRESH:0x3:,NEWNAME:0x7:OLDNAME"; got != want {
		t.Errorf("added registers %s, want %s", got, want)
	}
	if got, want := strings.Join(removed, ","), "GONE:0x2:,OLDNAME:0x7:NEWNAME"; got != want {
		t.Errorf("removed registers %s, want %s", got, want)
	}
	if rep.Unchanged != 1 {
		t.Errorf("unchanged = %d, want 1 (SAME)", rep.Unchanged)
	}
	if len(rep.Changed) != 2 || rep.Changed[0].Name != "RENUM" || rep.Changed[1].Name != "TEST" {
		t.Fatalf("changed = %+v, want RENUM and TEST", rep.Changed)
	}
	renum := rep.Changed[0]
	if !renum.IDChanged || renum.OldID != 0x4 || renum.NewID != 0x5 || len(renum.Fields) != 0 || renum.SizeChanged {
		t.Errorf("RENUM: %+v, want only the ID changed 0x4 -> 0x5", renum)
	}

	tc := rep.Changed[1]
	if tc.IDChanged || tc.SizeChanged {
		t.Errorf("TEST: ID or size reported changed: %+v", tc)
	}
	want := []string{
		"moved mv",
		"resized rs",
		"resized rs2",
		"moved mr",
		"resized mr",
		"renamed new_name <- old_name",
		"access acc",
		"enum en",
		"split wide [hi+lo]",
		"merged whole [p1+p2]",
		"added fresh",
		"removed gone",
		"merged n [n1+n2]",
		"added ent[0].flag x3",
		"renamed page.page_a_new <- page.page_a_old",
		"added page.page_a_new.z",
		"renamed page.anon_new <- page.anon_old",
		"added page.page_c",
		"removed page.other_old",
		"added page.other_new",
		"enum sel",
	}
	got := lines(tc.Fields)
	if !sameSet(got, want) {
		t.Errorf("TEST changes:\n got  %q\n want %q", got, want)
	}

	byLine := map[string]FieldChange{}
	for _, c := range tc.Fields {
		byLine[line(c)] = c
	}
	// Positions and details that a wrong classifier would get wrong.
	if c := byLine["moved mv"]; c.Old.BitOffset != 8 || c.New.BitOffset != 12 || c.New.BitWidth != 4 {
		t.Errorf("mv: %+v %+v", c.Old, c.New)
	}
	if c := byLine["resized rs"]; c.Old.BitWidth != 4 || c.New.BitWidth != 8 || c.Old.BitOffset != 20 || c.New.BitOffset != 16 {
		t.Errorf("rs: %+v %+v", c.Old, c.New)
	}
	if c := byLine["access acc"]; c.Old.Access != "RO" || c.New.Access != "RW" {
		t.Errorf("acc: %+v %+v", c.Old, c.New)
	}
	ec := byLine["enum en"].Enum
	if ec == nil {
		t.Fatal("en: no enum change")
	}
	if fmt.Sprint(ec.Added) != "[{E 7}]" || fmt.Sprint(ec.Removed) != "[{D 3}]" ||
		fmt.Sprint(ec.Renamed) != "[{1 B B2}]" || fmt.Sprint(ec.Renumbered) != "[{C 2 5}]" {
		t.Errorf("en enum change: %+v", *ec)
	}
	if c := byLine["merged whole [p1+p2]"]; c.New.BitOffset != 128 || c.New.BitWidth != 32 || c.Parts[0].BitWidth != 8 || c.Parts[1].BitWidth != 24 {
		t.Errorf("merge: %+v", c)
	}
	if c := byLine["merged n [n1+n2]"]; c.New.Type != "struct" || c.New.Leaves != 2 {
		t.Errorf("merge into struct: %+v", c.New)
	}
	if c := byLine["added ent[0].flag x3"]; c.Repeat.Array != "ent" || c.Repeat.First != 0 || c.Repeat.Last != 2 || c.Repeat.StrideBits != 32 || c.New.BitOffset != 327 {
		t.Errorf("array repeat: %+v %+v", c.Repeat, c.New)
	}
	if c := byLine["renamed page.page_a_new <- page.page_a_old"]; !strings.Contains(c.Detail, "sel = PAGE_A") {
		t.Errorf("union rename detail %q does not name the selector", c.Detail)
	}
	if c := byLine["enum sel"]; fmt.Sprint(c.Enum.Added) != "[{PAGE_C 3}]" {
		t.Errorf("sel enum: %+v", c.Enum)
	}

	// Kind totals, so that a change counted twice or in the wrong bucket
	// shows up.
	wantCounts := map[string]int{Moved: 2, Resized: 3, Renamed: 3, Access: 1, Enum: 2, Split: 1, Merged: 2, Added: 5, Removed: 2}
	if got := rep.CountByKind(); fmt.Sprint(got) != fmt.Sprint(wantCounts) {
		t.Errorf("counts %v, want %v", got, wantCounts)
	}

	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Rev A → Rev B", "register ID 0x4 → 0x5", "p1 + p2 → whole", "wide → hi + lo", "same in each of ent[0..2]", "same ID as removed OLDNAME"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("text output lacks %q:\n%s", s, buf.String())
		}
	}
}

func sameSet(a, b []string) bool {
	x := append([]string(nil), a...)
	y := append([]string(nil), b...)
	sort.Strings(x)
	sort.Strings(y)
	return strings.Join(x, "\n") == strings.Join(y, "\n")
}

// A union without selectors whose members only share a size must not be
// paired by position: that would call two unrelated pages a rename.
func TestUnionMembersNotPairedByPosition(t *testing.T) {
	mk := func(rev, a, b string) *prm.DB {
		return mkDB(t, rev, []*prm.Node{
			node("r_ext", 64, false, sub("u", "u_ext", 0, 64)),
			node("u_ext", 64, true, member(a, "s1", 64, ""), member(b, "s2", 64, "")),
			node("s1", 64, false, fld("f"+a, 0, 8, prm.AccessRO)),
			node("s2", 64, false, fld("f"+b, 0, 16, prm.AccessRO)),
		}, &prm.Register{Name: "R", ID: 1, Node: "r_ext", Size: 8})
	}
	rep, err := Diff(mk("1", "a", "b"), mk("2", "c", "d"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"removed u.a", "removed u.b", "added u.c", "added u.d"}
	if got := lines(rep.Changed[0].Fields); !sameSet(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}

	// Two members with the same layout on each side: identical layouts
	// cannot tell which became which, so nothing is paired.
	same := func(rev, a, b string) *prm.DB {
		return mkDB(t, rev, []*prm.Node{
			node("r_ext", 64, false, sub("u", "u_ext", 0, 64)),
			node("u_ext", 64, true, member(a, "s", 64, ""), member(b, "s", 64, "")),
			node("s", 64, false, fld("f", 0, 8, prm.AccessRO)),
		}, &prm.Register{Name: "R", ID: 1, Node: "r_ext", Size: 8})
	}
	rep, err = Diff(same("1", "a", "b"), same("2", "c", "d"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := lines(rep.Changed[0].Fields); !sameSet(got, want) {
		t.Errorf("identical layouts: got %q, want %q", got, want)
	}
}

// Names select registers (any case, or by ID) and nodes (with or without
// "_ext"); unknown names are an error with a suggestion.
func TestNames(t *testing.T) {
	old, new := tinyPair(t)
	for _, name := range []string{"hdr", "HDR", "hdr_ext"} {
		rep, err := Diff(old, new, Options{Names: []string{name}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(rep.Changed) != 1 || !rep.Changed[0].IsNode || rep.Changed[0].Name != "hdr" || rep.Changed[0].NewNode != "hdr_ext" {
			t.Fatalf("%s: %+v", name, rep.Changed)
		}
		if got := lines(rep.Changed[0].Fields); fmt.Sprint(got) != "[added g]" {
			t.Errorf("%s: %q", name, got)
		}
	}
	rep, err := Diff(old, new, Options{Names: []string{"same", "0x4", "gone", "fresh"}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rep.UnchangedNames) != "[SAME]" || len(rep.Changed) != 1 || rep.Changed[0].Name != "RENUM" ||
		len(rep.RemovedRegisters) != 1 || len(rep.AddedRegisters) != 1 {
		t.Errorf("restricted report: %+v", rep)
	}
	_, err = Diff(old, new, Options{Names: []string{"TESTT"}})
	var nf *prm.NotFoundError
	if err == nil || !asNotFound(err, &nf) || !strings.Contains(err.Error(), "TEST") {
		t.Errorf("unknown name: err = %v", err)
	}
}

func asNotFound(err error, target **prm.NotFoundError) bool {
	e, ok := err.(*prm.NotFoundError)
	if ok {
		*target = e
	}
	return ok
}

func TestSelfTinyAndJSON(t *testing.T) {
	old, new := tinyPair(t)
	for _, db := range []*prm.DB{old, new} {
		rep, err := Diff(db, db, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Changed)+len(rep.AddedRegisters)+len(rep.RemovedRegisters) != 0 || rep.Unchanged != len(db.Registers) {
			t.Errorf("self diff of %s: %+v", db.Revision, rep)
		}
	}
	rep, _ := Diff(old, new, Options{})
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"old_revision":"Rev A"`, `"added_registers"`, `"bit_offset"`, `"bit_width"`, `"old_path":"old_name"`, `"parts"`, `"stride_bits":32`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

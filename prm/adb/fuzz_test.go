package adb_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/adb"
	"github.com/cxray/cxray/prm/facts"
)

// layoutOnly compares what the facts format keeps: not descriptions or
// source lines, and expressions up to their spacing (facts keep each on
// one line).
var layoutOnly = cmp.Options{
	cmpopts.IgnoreFields(prm.Node{}, "Descr", "Line"),
	cmpopts.IgnoreFields(prm.Field{}, "Descr", "Line"),
	cmpopts.IgnoreUnexported(prm.Field{}),
	cmp.FilterPath(func(p cmp.Path) bool {
		switch p.Last().String() {
		case ".SizeCondition", ".UnionSelector", ".SelectedBy", ".Condition":
			return true
		}
		return false
	}, cmp.Comparer(func(a, b string) bool {
		return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
	})),
}

// Whatever loads survives the facts format: load, emit facts, read them
// back, emit again, and the two emissions are the same text (facts keep
// every layout attribute the ADB gave), the revision and registers agree,
// and every register plans to the same leaves. Decoding zeros and writing
// JSON must not panic.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(adb.Tiny))
	f.Add([]byte(`<NodesDefinition><node name="a" size="0x4.0"><field name="b" offset="0x0.0" size="0x0.1" low_bound="0" high_bound="VARIABLE"/></node></NodesDefinition>`))
	f.Add([]byte("<NodesDefinition>&\u00a0</NodesDefinition>")) // the parser quotes a no-break space
	f.Fuzz(func(t *testing.T, data []byte) {
		db, err := adb.Load("fuzz.adb", data)
		if err != nil {
			// A message never echoes binary garbage: printable UTF-8 only.
			if msg := err.Error(); !utf8.ValidString(msg) || strings.IndexFunc(msg, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) >= 0 {
				t.Fatalf("unprintable message %q", msg)
			}
			return
		}
		var first bytes.Buffer
		if err := facts.Write(&first, db, nil); err != nil {
			t.Fatalf("facts.Write: %v", err)
		}
		back, err := facts.Read("fuzz.facts", first.String())
		if err != nil {
			t.Fatalf("the facts of a database that loaded do not read back: %v\n%s", err, first.String())
		}
		var second bytes.Buffer
		if err := facts.Write(&second, back, nil); err != nil {
			t.Fatalf("facts.Write after Read: %v", err)
		}
		if d := cmp.Diff(first.String(), second.String()); d != "" {
			t.Fatalf("facts differ after a round trip (-first +second):\n%s", d)
		}
		if back.Revision != db.Revision {
			t.Errorf("revision %q became %q", db.Revision, back.Revision)
		}
		if d := cmp.Diff(db.Nodes, back.Nodes, layoutOnly); d != "" {
			t.Errorf("layouts (-adb +facts):\n%s", d)
		}
		if d := cmp.Diff(db.Registers, back.Registers); d != "" {
			t.Errorf("registers (-adb +facts):\n%s", d)
		}
		for i, r := range db.Registers {
			p, err := db.RegisterPlan(r)
			q, err2 := back.RegisterPlan(back.Registers[i])
			if (err == nil) != (err2 == nil) {
				t.Fatalf("%s: plans %v from the ADB, %v from its facts", r.Name, err, err2)
			}
			if err != nil {
				continue
			}
			if d := cmp.Diff(p.Leaves(), q.Leaves(), cmpopts.IgnoreFields(prm.Leaf{}, "Step")); d != "" {
				t.Errorf("%s leaves (-adb +facts):\n%s", r.Name, d)
			}
			if p.Bytes > 1<<16 {
				continue
			}
			if d, err := p.Decode(make([]byte, p.Bytes)); err == nil {
				d.AppendJSON(nil, prm.JSONOptions{})
			}
		}
	})
}

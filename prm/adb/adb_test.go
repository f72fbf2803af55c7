package adb

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"

	"github.com/cxray/cxray/prm"
)

func TestParseSize(t *testing.T) {
	cases := map[string]int{
		"0x4.16": 48, "0x0.8": 8, "0x10": 128, "0x10.0": 128, ".5": 5, "4.3": 35, "0x2c.31": 0x2c*8 + 31, "16": 128,
	}
	for in, want := range cases {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "0x4.z", "0x4.0x1", ".", "0xffffffffff"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

func TestParseEnum(t *testing.T) {
	es, err := ParseEnum("up=0x1, down = 0x2,_4_VLs=0x3,dec=10")
	if err != nil {
		t.Fatal(err)
	}
	want := []prm.EnumValue{{Name: "up", Value: 1}, {Name: "down", Value: 2}, {Name: "_4_VLs", Value: 3}, {Name: "dec", Value: 10}}
	if len(es) != len(want) {
		t.Fatalf("%v", es)
	}
	for i := range want {
		if es[i] != want[i] {
			t.Errorf("entry %d: %v, want %v", i, es[i], want[i])
		}
	}
	if _, err := ParseEnum("up"); err == nil {
		t.Error("entry without value accepted")
	}
}

const tiny = `<NodesDefinition>
<config big_endian_arr="1" />
<info source_doc_name="x" source_doc_version="Rev 9.99" />
<node name="foo_ext" descr="Foo\;second line" size="0x8.0" >
	<field name="a" descr="A &amp; b" access="RW" offset="0x0.24" size="0x0.8" enum="x=0x1,y=0x2" />
	<field name="arr" descr="" access="RO" offset="0x4.24" size="0x4.0" low_bound="0" high_bound="3" />
</node>
<node name="access_reg_summary_ctrl_ext" descr="" attr_is_union="1" size="0x4.0" >
	<field name="id" descr="" subnode="enum_entry" enum="FOO=0x1234" offset="0x0.0" size="0x4.0" />
</node>
<node name="enum_entry" descr="" size="0x4.0" >
</node>
<node name="access_reg_summary_ext" descr="" attr_is_union="1" size="0x8" >
	<field name="foo" descr="" subnode="foo_ext" capability="0" offset="0x0.0" selected_by="FOO" size="0x8" />
</node>
</NodesDefinition>
`

func TestLoadTiny(t *testing.T) {
	db, err := Load("tiny.adb", []byte(tiny))
	if err != nil {
		t.Fatal(err)
	}
	if db.Revision != "Rev 9.99" || len(db.Registers) != 1 || db.Registers[0].ID != 0x1234 || db.Registers[0].Size != 8 {
		t.Fatalf("%s %v", db.Revision, db.Registers)
	}
	n := db.Nodes["foo_ext"]
	if n.Descr != "Foo\nsecond line" || n.Fields[0].Descr != "A & b" {
		t.Errorf("descriptions %q %q", n.Descr, n.Fields[0].Descr)
	}
	p, err := db.Plan("foo_ext")
	if err != nil {
		t.Fatal(err)
	}
	ls := p.Leaves()
	if ls[0].Bit != 0 || ls[0].Width != 8 || ls[1].Bit != 32 || ls[1].Width != 8 || ls[1].Count != 4 {
		t.Errorf("leaves %+v", ls)
	}
}

func TestLoadErrors(t *testing.T) {
	cases := map[string]string{
		strings.Replace(tiny, `size="0x0.8" enum`, `size="0x0.q" enum`, 1):        "tiny.adb:5: node foo_ext: field a: size",
		strings.Replace(tiny, `access="RO"`, `access="Sometimes"`, 1):             "tiny.adb:6:",
		strings.Replace(tiny, `</node>`, ``, 1):                                   "tiny.adb:",
		strings.Replace(tiny, `subnode="foo_ext"`, `subnode="nope_ext"`, 1):       `"nope_ext" is not defined`,
		strings.Replace(tiny, `access_reg_summary_ctrl_ext`, `something_else`, 1): "no register table",
		"<foo/>": "not an ADB file",
		strings.Replace(tiny, `high_bound="3"`, `high_bound="2"`, 1):         "does not divide into 3 elements",
		strings.Replace(tiny, `big_endian_arr="1"`, `big_endian_arr="0"`, 1): "big_endian_arr=0 is not supported",
	}
	for in, want := range cases {
		_, err := Load("tiny.adb", []byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
}

// Every revision in shared/prm-history loads, with its revision string and
// the register counts of its register table.
func TestHistory(t *testing.T) {
	want := map[string]int{"Rev 0.51": 158, "Rev 0.56": 199, "Rev 0.57": 192, "Rev 0.59": 153, "Rev 0.61": 168, "Rev 0.62": 186, "Rev 0.64": 206}
	paths, _ := filepath.Glob(prmhistorytest.Require(t) + "/hca-ext-rev*.adb")
	if len(paths) != len(want) {
		t.Fatalf("found %d revisions in %s, want %d", len(paths), prmhistorytest.Require(t), len(want))
	}
	for _, p := range paths {
		db, err := LoadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := want[db.Revision]; !ok || n != len(db.Registers) {
			t.Errorf("%s: %s with %d registers", p, db.Revision, len(db.Registers))
		}
		for _, r := range db.Registers {
			if _, err := db.RegisterPlan(r); err != nil {
				t.Errorf("%s %s: %v", db.Revision, r.Name, err)
			}
		}
	}
}

func TestDescriptionsIndex(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tiny.adb")
	os.WriteFile(p, []byte(tiny), 0o644)
	d, err := OpenDescriptions(p)
	if err != nil {
		t.Fatal(err)
	}
	if d.Revision != "Rev 9.99" {
		t.Errorf("revision %q", d.Revision)
	}
	m := d.Node("foo_ext")
	if m[""] != "Foo\nsecond line" || m["a"] != "A & b" {
		t.Errorf("descriptions %q", m)
	}
	if len(d.Node("missing")) != 0 {
		t.Error("descriptions for a missing node")
	}
}

// <include file> pulls nodes from a second file, relative to the first.
func TestInclude(t *testing.T) {
	dir := t.TempDir()
	main := strings.Replace(tiny, `<node name="foo_ext"`, `<include file="sub/extra.adb" />
<node name="foo_ext"`, 1)
	main = strings.Replace(main, `<field name="arr"`, `<field name="more" subnode="extra_ext" offset="0x4.0" size="0x4.0" />
	<field name="arr"`, 1)
	main = strings.Replace(main, `size="0x8.0" >`, `size="0xc.0" >`, 1)
	main = strings.Replace(main, `offset="0x4.24" size="0x4.0" low_bound`, `offset="0x8.24" size="0x4.0" low_bound`, 1)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "main.adb"), []byte(main), 0o644)
	os.WriteFile(filepath.Join(dir, "sub", "extra.adb"), []byte(`<NodesDefinition>
<node name="extra_ext" descr="" size="0x4.0" >
	<field name="x" descr="" access="RW" offset="0x0.0" size="0x0.16" />
</node>
</NodesDefinition>
`), 0o644)
	db, err := LoadFile(filepath.Join(dir, "main.adb"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.Plan("foo_ext")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range p.Leaves() {
		if l.Path == "more.x" && l.Bit == 48 && l.Width == 16 {
			found = true
		}
	}
	if !found {
		t.Errorf("included node not used: %+v", p.Leaves())
	}
}

// A file that is no XML is named for what it is, before the XML parser
// quotes its bytes: mstflint's NV database (SQLite) points at --nvdb.
func TestLoadNotXML(t *testing.T) {
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"sqlite": {append([]byte("SQLite format 3\x00"), make([]byte, 100)...), "give it with --nvdb"},
		"gzip":   {[]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3}, "gunzip"},
		"binary": {[]byte("<\x00\x01\x02\xff\xfe garbage"), "is binary"},
	} {
		_, err := Load("x.adb", c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.ContainsRune(err.Error(), 0) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	// UTF-8 text cut inside a rune at the sniffed window is still text.
	text := []byte(strings.Repeat("<!-- é -->", 60) + tiny)
	if _, err := Load("x.adb", text); err != nil && strings.Contains(err.Error(), "is binary") {
		t.Errorf("UTF-8 text called binary: %v", err)
	}
}

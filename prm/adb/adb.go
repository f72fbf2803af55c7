// Package adb loads NVIDIA's ADB register databases (the XML files that
// mstflint and MFT install) into a prm.DB.
package adb

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cxray/cxray/prm"
)

// Where the real databases live. mstflint's Debian package installs the
// first; NVIDIA MFT installs under /usr/share/mft (never required).
var (
	MstflintPath = "/usr/share/mstflint/prm_dbs/hca/ext/register_access_table.adb"
	MFTPaths     = []string{
		"/usr/share/mft/prm_dbs/hca/ext/register_access_table.adb",
		"/usr/share/mft/prm_dbs/hca/register_access_table.adb",
		"/opt/mellanox/mft/share/prm_dbs/hca/ext/register_access_table.adb",
	}
)

// Installed returns the paths of the installed ADBs on this machine, MFT's
// first (it is usually newer), then mstflint's.
func Installed() []string {
	var out []string
	for _, p := range append(append([]string{}, MFTPaths...), MstflintPath) {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	return out
}

// Error is a malformed-database error with its file and line.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// LoadFile parses an ADB file and builds the database.
func LoadFile(path string) (*prm.DB, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read register database: %w (give another with --adb FILE or $CXRAY_ADB)", err)
	}
	return Load(path, data)
}

// Load parses ADB XML held in data; name is used in messages and to resolve
// <include> elements relative to it.
func Load(name string, data []byte) (*prm.DB, error) {
	if err := sniff(name, data); err != nil {
		return nil, err
	}
	p := &parser{nodes: map[string]*prm.Node{}}
	if err := p.parse(name, data, 0); err != nil {
		return nil, err
	}
	regs, err := registerTable(name, p.nodes)
	if err != nil {
		return nil, err
	}
	db, err := prm.NewDB(name, p.revision, p.nodes, regs)
	if err != nil {
		return nil, &Error{File: name, Msg: err.Error()}
	}
	db.DocName = p.docName
	db.HasDescriptions = true
	return db, nil
}

// sniff refuses a file that is plainly no XML before the XML parser says
// something less useful ("illegal character U+0000"): mstflint's NV
// parameter database (SQLite), given to --adb instead of --nvdb, is the
// usual one. The file's bytes are never echoed.
func sniff(name string, data []byte) error {
	head := data[:min(len(data), 512)]
	switch {
	case bytes.HasPrefix(data, []byte("SQLite format 3\x00")):
		return &Error{File: name, Msg: "is an SQLite database (mstflint's NV parameter database, mlxconfig_host.db?), not a register database: give it with --nvdb (or $CXRAY_NVDB); --adb takes NVIDIA's register_access_table.adb (XML)"}
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		return &Error{File: name, Msg: "is gzip-compressed: decompress it (gunzip) and give the .adb (XML) with --adb"}
	case bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(trimPartialRune(head)):
		return &Error{File: name, Msg: "is binary, not a register database: --adb takes NVIDIA's register_access_table.adb (XML), or 'builtin'"}
	}
	return nil
}

// printable keeps a message of the XML parser, which may quote the file,
// to printable text. strconv.Quote escapes what unicode.IsPrint refuses,
// which includes the odd spaces (U+00A0) that QuoteToGraphic would keep.
func printable(s string) string {
	q := strconv.Quote(strings.ToValidUTF8(s, "?"))
	return q[1 : len(q)-1]
}

// trimPartialRune drops a UTF-8 sequence cut by the 512-byte window.
func trimPartialRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if utf8.Valid(b) {
			return b
		}
		b = b[:len(b)-1]
	}
	return b
}

type parser struct {
	nodes    map[string]*prm.Node
	revision string
	docName  string
}

const maxIncludeDepth = 8

func (p *parser) parse(name string, data []byte, depth int) error {
	if depth > maxIncludeDepth {
		return &Error{File: name, Msg: "includes nested too deep (a loop?)"}
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	lines := lineCounter{data: data}
	var cur *prm.Node
	sawRoot := false
	for {
		off := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				if se.Msg == "unexpected EOF" {
					// Refused whole: a cut database is never half loaded.
					return &Error{File: name, Line: se.Line, Msg: "the file ends inside its XML: it was cut short (a partial download or copy); use a complete register database"}
				}
				return &Error{File: name, Line: se.Line, Msg: "not valid XML: " + printable(se.Msg)}
			}
			return &Error{File: name, Line: lines.at(off), Msg: err.Error()}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			line := lines.at(off)
			attrs := attrMap(t.Attr)
			switch t.Name.Local {
			case "NodesDefinition":
				sawRoot = true
			case "config":
				if v, ok := attrs["big_endian_arr"]; ok && strings.TrimSpace(v) != "1" {
					return &Error{File: name, Line: line, Msg: "big_endian_arr=" + v + " is not supported (every NVIDIA HCA database uses 1)"}
				}
			case "info":
				if v, ok := attrs["source_doc_version"]; ok && p.revision == "" {
					p.revision = strings.TrimSpace(v)
				}
				if v, ok := attrs["source_doc_name"]; ok && p.docName == "" {
					p.docName = v
				}
			case "include":
				if err := p.include(name, attrs, line, depth); err != nil {
					return err
				}
			case "node":
				if cur != nil {
					return &Error{File: name, Line: line, Msg: "<node> inside <node " + cur.Name + ">"}
				}
				n, err := parseNode(attrs, line)
				if err != nil {
					return &Error{File: name, Line: line, Msg: err.Error()}
				}
				if _, dup := p.nodes[n.Name]; dup {
					return &Error{File: name, Line: line, Msg: "node " + n.Name + " is defined twice"}
				}
				p.nodes[n.Name] = n
				cur = n
			case "field":
				if cur == nil {
					return &Error{File: name, Line: line, Msg: "<field> outside a <node>"}
				}
				f, err := parseField(attrs, line)
				if err != nil {
					return &Error{File: name, Line: line, Msg: printable(fmt.Sprintf("node %s: %v", cur.Name, err))}
				}
				cur.Fields = append(cur.Fields, f)
			}
		case xml.EndElement:
			if t.Name.Local == "node" {
				cur = nil
			}
		}
	}
	if !sawRoot {
		return &Error{File: name, Msg: "not an ADB file: no <NodesDefinition> element"}
	}
	return nil
}

func (p *parser) include(from string, attrs map[string]string, line, depth int) error {
	base := filepath.Dir(from)
	var files []string
	if f := attrs["file"]; f != "" {
		files = append(files, filepath.Join(base, f))
	}
	if dir := attrs["dir"]; dir != "" {
		m, _ := filepath.Glob(filepath.Join(base, dir, "*.adb"))
		sort.Strings(m)
		files = append(files, m...)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return &Error{File: from, Line: line, Msg: "include: " + err.Error()}
		}
		if err := p.parse(f, data, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func attrMap(as []xml.Attr) map[string]string {
	m := make(map[string]string, len(as))
	for _, a := range as {
		m[a.Name.Local] = a.Value
	}
	return m
}

// Descr turns ADB description text into plain text: "\;" is its line break.
func Descr(s string) string {
	s = strings.ReplaceAll(s, `\;`, "\n")
	return strings.TrimRight(s, " \n")
}

func parseNode(a map[string]string, line int) (*prm.Node, error) {
	name := strings.TrimSpace(a["name"])
	if name == "" {
		return nil, errors.New("<node> without a name")
	}
	size, err := ParseSize(a["size"])
	if err != nil {
		return nil, fmt.Errorf("node %s: size: %v", printable(name), err)
	}
	return &prm.Node{
		Name:        name,
		Descr:       Descr(a["descr"]),
		Size:        size,
		Union:       a["attr_is_union"] == "1",
		Conditional: a["is_conditional"] == "1",
		Line:        line,
	}, nil
}

func parseField(a map[string]string, line int) (*prm.Field, error) {
	f := &prm.Field{
		Name:          strings.TrimSpace(a["name"]),
		Descr:         Descr(a["descr"]),
		Subnode:       strings.TrimSpace(a["subnode"]),
		UnionSelector: strings.TrimSpace(a["union_selector"]),
		SelectedBy:    strings.TrimSpace(a["selected_by"]),
		Condition:     strings.TrimSpace(a["condition"]),
		SizeCondition: strings.TrimSpace(a["size_condition"]),
		Dynamic:       a["arr_is_dynamic"] == "1",
		Line:          line,
	}
	if f.Name == "" {
		return nil, errors.New("<field> without a name")
	}
	f.Format = prm.DetectFormat(f.Descr)
	f.ValidWhen = prm.DetectValidity(f.Descr)
	var err error
	if f.Offset, err = ParseSize(a["offset"]); err != nil {
		return nil, fmt.Errorf("field %s: offset: %v", f.Name, err)
	}
	if f.Size, err = ParseSize(a["size"]); err != nil {
		return nil, fmt.Errorf("field %s: size: %v", f.Name, err)
	}
	acc := a["access"]
	if acc == "" {
		acc = a["rw"]
	}
	if f.Access, err = prm.ParseAccess(acc); err != nil {
		return nil, fmt.Errorf("field %s: %v", f.Name, err)
	}
	if e := a["enum"]; e != "" {
		if f.Enum, err = ParseEnum(e); err != nil {
			return nil, fmt.Errorf("field %s: enum: %v", f.Name, err)
		}
	}
	lo, hasLo := a["low_bound"]
	hi, hasHi := a["high_bound"]
	if hasLo || hasHi {
		f.IsArray = true
		if f.LowBound, err = atoi(lo); err != nil {
			return nil, fmt.Errorf("field %s: low_bound: %v", f.Name, err)
		}
		if strings.EqualFold(strings.TrimSpace(hi), "VARIABLE") {
			f.Variable = true
		} else {
			if f.HighBound, err = atoi(hi); err != nil {
				return nil, fmt.Errorf("field %s: high_bound: %v", f.Name, err)
			}
			if f.HighBound < f.LowBound {
				return nil, fmt.Errorf("field %s: high_bound %d is below low_bound %d", f.Name, f.HighBound, f.LowBound)
			}
			if n := f.HighBound - f.LowBound + 1; f.Size%n != 0 {
				return nil, fmt.Errorf("field %s: size %d bits does not divide into %d elements", f.Name, f.Size, n)
			}
		}
	}
	if f.Size <= 0 {
		return nil, fmt.Errorf("field %s: size must be positive", f.Name)
	}
	return f, nil
}

func atoi(s string) (int, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 0, 32)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a non-negative number", s)
	}
	return int(v), nil
}

// ParseSize parses an ADB offset or size into bits: "0xB.b" is B bytes
// (any base) plus b bits (decimal); ".b" is bits; a plain number is bytes.
func ParseSize(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("missing")
	}
	bytePart, bitPart, hasDot := strings.Cut(s, ".")
	var bytesN, bits uint64
	var err error
	if bytePart != "" {
		if bytesN, err = strconv.ParseUint(bytePart, 0, 32); err != nil {
			return 0, fmt.Errorf("%q: byte part is not a number", s)
		}
	}
	if hasDot && bitPart != "" {
		if bits, err = strconv.ParseUint(bitPart, 10, 32); err != nil {
			return 0, fmt.Errorf("%q: bit part must be decimal", s)
		}
	}
	if bytePart == "" && (!hasDot || bitPart == "") {
		return 0, fmt.Errorf("%q is empty", s)
	}
	total := bytesN*8 + bits
	if total > 1<<28 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int(total), nil
}

// ParseEnum parses "NAME=0xV,NAME2=V2".
func ParseEnum(s string) ([]prm.EnumValue, error) {
	var out []prm.EnumValue
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		if !ok || name == "" || val == "" {
			return nil, fmt.Errorf("entry %q is not NAME=VALUE", part)
		}
		v, err := strconv.ParseUint(val, 0, 64)
		if err != nil {
			// The ADB writes values in hex, sometimes without the 0x.
			if v, err = strconv.ParseUint(val, 16, 64); err != nil {
				return nil, fmt.Errorf("entry %q: value is not a number", part)
			}
		}
		out = append(out, prm.EnumValue{Name: name, Value: v})
	}
	return out, nil
}

// registerTable reads the register name→ID enum (on the "id" field of the
// access_reg_summary_ctrl node) and joins it to the members of the
// access_reg_summary union by their selected_by names.
func registerTable(file string, nodes map[string]*prm.Node) ([]*prm.Register, error) {
	ctrl := findNode(nodes, "access_reg_summary_ctrl")
	sum := findNode(nodes, "access_reg_summary")
	if ctrl == nil || sum == nil {
		return nil, &Error{File: file, Msg: "no register table: the access_reg_summary_ctrl and access_reg_summary nodes are missing (is this an HCA or switch register_access_table.adb?)"}
	}
	idf := ctrl.Field("id")
	if idf == nil || len(idf.Enum) == 0 {
		return nil, &Error{File: file, Line: ctrl.Line, Msg: "register table: " + ctrl.Name + ".id has no enum of register IDs"}
	}
	members := map[string]*prm.Field{}
	for _, m := range sum.Fields {
		if m.SelectedBy != "" && m.Subnode != "" {
			members[m.SelectedBy] = m
		}
	}
	var regs []*prm.Register
	for _, e := range idf.Enum {
		m, ok := members[e.Name]
		if !ok {
			continue // listed but without a layout: nothing to decode
		}
		regs = append(regs, &prm.Register{Name: e.Name, ID: uint32(e.Value), Node: m.Subnode, Size: (m.Size + 7) / 8})
	}
	if len(regs) == 0 {
		return nil, &Error{File: file, Line: sum.Line, Msg: "register table is empty"}
	}
	return regs, nil
}

func findNode(nodes map[string]*prm.Node, base string) *prm.Node {
	if n, ok := nodes[base+"_ext"]; ok {
		return n
	}
	return nodes[base]
}

// lineCounter turns byte offsets into line numbers, moving forward only.
type lineCounter struct {
	data []byte
	off  int64
	line int
}

func (l *lineCounter) at(off int64) int {
	if l.line == 0 {
		l.line = 1
	}
	if off > int64(len(l.data)) {
		off = int64(len(l.data))
	}
	if off < l.off {
		l.off, l.line = 0, 1
	}
	l.line += bytes.Count(l.data[l.off:off], []byte{'\n'})
	l.off = off
	// The offset points at the whitespace before the element; skip it.
	i := off
	for i < int64(len(l.data)) && (l.data[i] == '\n' || l.data[i] == ' ' || l.data[i] == '\t' || l.data[i] == '\r') {
		i++
	}
	return l.line + bytes.Count(l.data[off:i], []byte{'\n'})
}

// Package ifc reads the Linux kernel's mlx5_ifc.h, the driver's own
// description of the ConnectX command and register layouts, into prm nodes.
// It is a second source, independent of NVIDIA's ADB, used to cross-check it.
//
// The header describes every layout as a C struct or union of "u8 name[0xW];"
// members, where W is a width in bits and positions accumulate MSB-first in
// declaration order. Parse turns each struct/union mlx5_ifc_* definition into
// a prm.Node whose field offsets use the ADB convention, so that prm's plan
// compiler turns them back into MSB-first positions.
package ifc

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cxray/cxray/internal/lazyre"
	"github.com/cxray/cxray/prm"
)

// SearchGlobs are where Find looks for the header: Debian/Ubuntu header
// packages and source trees under /usr/src, and Fedora's kernel-devel.
var SearchGlobs = []string{
	"/usr/src/*/include/linux/mlx5/mlx5_ifc.h",
	"/usr/src/kernels/*/include/linux/mlx5/mlx5_ifc.h",
}

// Find returns the path of the newest installed mlx5_ifc.h.
func Find() (string, error) {
	all, err := FindAll()
	if err != nil {
		return "", err
	}
	return all[0], nil
}

// FindAll returns every installed mlx5_ifc.h, newest first: the command
// database comes from the newest, and the older ones (Debian's 6.1) stay
// cross-checks.
func FindAll() ([]string, error) {
	var all []string
	for _, g := range SearchGlobs {
		m, err := filepath.Glob(g)
		if err != nil {
			return nil, fmt.Errorf("search for mlx5_ifc.h: bad pattern %q: %v", g, err)
		}
		for _, p := range m {
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				all = append(all, p)
			}
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no kernel mlx5_ifc.h found (looked for %s); install the kernel headers, on Debian with 'apt-get install linux-headers-amd64'", strings.Join(SearchGlobs, ", "))
	}
	sort.Slice(all, func(i, j int) bool { return versionLess(all[j], all[i]) })
	return all, nil
}

// versionLess orders paths so that digit runs compare as numbers:
// linux-headers-6.1.0-9 sorts before linux-headers-6.1.0-57.
func versionLess(a, b string) bool {
	for a != "" && b != "" {
		ra, rb := run(a), run(b)
		if ra != rb {
			if isDigit(ra[0]) && isDigit(rb[0]) {
				na, nb := strings.TrimLeft(ra, "0"), strings.TrimLeft(rb, "0")
				if len(na) != len(nb) {
					return len(na) < len(nb)
				}
				if na != nb {
					return na < nb
				}
			} else {
				return ra < rb
			}
		}
		a, b = a[len(ra):], b[len(rb):]
	}
	return len(a) < len(b)
}

// run returns the leading run of digits or of non-digits of s.
func run(s string) string {
	d := isDigit(s[0])
	i := 1
	for i < len(s) && isDigit(s[i]) == d {
		i++
	}
	return s[:i]
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Header is a parsed mlx5_ifc.h.
type Header struct {
	// Source is the main file's path (or the name given to Parse).
	Source string
	// Files lists every file read: the main one, then followed includes.
	Files []string
	// Nodes holds one node per struct or union definition, named without the
	// mlx5_ifc_ prefix and _bits suffix, plus one per named inline
	// struct/union member, named "<parent>.<member>".
	Nodes map[string]*prm.Node
	// Types are the names of the nodes that come from definitions (not inline
	// members), sorted.
	Types []string
	// RegisterIDs maps the kernel's register names (MLX5_REG_PMAOS →
	// "PMAOS") to their IDs, from the enumerators in the files read
	// (LoadFile also reads driver.h next to mlx5_ifc.h, where they live).
	RegisterIDs map[string]uint32
	// Warnings are oddities that do not stop the layout, such as a
	// reserved_at_X whose X is not its real position.
	Warnings []string

	where map[string]string  // node -> "file:line" of its definition
	bits  map[*prm.Field]int // MSB-first offset of each field in its node, for checking prm's conversion
	// untyped marks "u8 x[]" arrays: open-ended, with no element width (the
	// node gives them 1-bit elements).
	untyped map[*prm.Field]bool
	// enumerators of every file read, in order (enums.go).
	enumerators []Enumerator
}

// Bit returns the MSB-first offset of a field (of its first element) from
// the start of its node, as the header lays it out.
func (h *Header) Bit(f *prm.Field) (int, bool) {
	b, ok := h.bits[f]
	return b, ok
}

// Where returns "file:line" of a node's definition.
func (h *Header) Where(node string) string { return h.where[node] }

// Error is a problem in the header, with its place.
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

// maxIncludes bounds how many quoted includes LoadFile follows.
const maxIncludes = 16

// LoadFile parses the header at path. Quoted includes that sit next to it
// (mlx5_ifc.h includes mlx5_ifc_fpga.h, whose structs it embeds) are read
// too, so that every referenced layout resolves, and so is driver.h for the
// register IDs.
func LoadFile(path string) (*Header, error) {
	var units []*unit
	var warnings []string
	seen := map[string]bool{}
	// driver.h is not included by mlx5_ifc.h but holds the register IDs.
	queue := []string{path, filepath.Join(filepath.Dir(path), "driver.h")}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		src, err := os.ReadFile(p)
		if err != nil {
			if p == path {
				return nil, fmt.Errorf("read kernel header: %w (give the path to mlx5_ifc.h, or install the kernel headers: 'apt-get install linux-headers-amd64')", err)
			}
			continue // an include we cannot read: its types are reported as undefined if used
		}
		u, err := scan(p, src)
		if err != nil {
			if p == path {
				return nil, err
			}
			// A helper file we cannot read only costs what it would add.
			warnings = append(warnings, fmt.Sprintf("skipped %s: %v", p, err))
			continue
		}
		units = append(units, u)
		for _, inc := range u.includes {
			if len(seen)+len(queue) >= maxIncludes {
				break
			}
			queue = append(queue, filepath.Join(filepath.Dir(p), inc))
		}
	}
	h, err := build(units)
	if err != nil {
		return nil, err
	}
	h.Warnings = append(warnings, h.Warnings...)
	return h, nil
}

// Parse parses header text; name is used in messages. Includes are not
// followed, so layouts that embed structs from another file fail to resolve.
func Parse(name string, src []byte) (*Header, error) {
	u, err := scan(name, src)
	if err != nil {
		return nil, err
	}
	return build([]*unit{u})
}

// DB wraps the header's nodes in a prm.DB so that plans can be compiled over
// them. The header has no register IDs, so every definition becomes a
// synthetic register named after its node, with IDs counting up from 1.
func (h *Header) DB() (*prm.DB, error) {
	regs := make([]*prm.Register, 0, len(h.Types))
	seen := map[string]bool{}
	for i, name := range h.Types {
		// prm looks registers up case-insensitively; a second layout whose
		// name differs only in case gets no register (its plan still
		// compiles by node name).
		if up := strings.ToUpper(name); !seen[up] {
			seen[up] = true
			regs = append(regs, &prm.Register{Name: name, ID: uint32(i + 1), Node: name, Size: (h.Nodes[name].Size + 7) / 8})
		}
	}
	rev := "mlx5_ifc.h"
	if v := KernelVersion(h.Source); v != "" {
		rev += " (" + v + ")"
	}
	return prm.NewDB(h.Source, rev, h.Nodes, regs)
}

// KernelVersion extracts the package or tree name from a header path, such
// as "linux-headers-6.1.0-57-common", or "" if the path has none.
func KernelVersion(path string) string {
	for _, part := range strings.Split(filepath.ToSlash(path), "/") {
		if strings.HasPrefix(part, "linux-") {
			return part
		}
	}
	if i := strings.Index(path, "/kernels/"); i >= 0 {
		rest := path[i+len("/kernels/"):]
		if j := strings.IndexByte(rest, '/'); j > 0 {
			return rest[:j]
		}
	}
	return ""
}

// ---- lexer ----

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tNumber
	tPunct
)

type token struct {
	kind tokKind
	text string
	line int
}

// lex splits C source into tokens, dropping comments and preprocessor lines.
// It also returns the quoted #include names, which LoadFile follows.
func lex(file string, src []byte, macros map[string]string) ([]token, []string, error) {
	var toks []token
	var includes []string
	line := 1
	bol := true // only blanks so far on this line: '#' starts a directive
	i := 0
	n := len(src)
	skipComment := func() error { // at "/*"
		start := line
		i += 2
		for i < n {
			if src[i] == '*' && i+1 < n && src[i+1] == '/' {
				i += 2
				return nil
			}
			if src[i] == '\n' {
				line++
			}
			i++
		}
		return &Error{File: file, Line: start, Msg: "comment is not closed (missing */)"}
	}
	for i < n {
		c := src[i]
		switch {
		case c == '\n':
			line++
			bol = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '/' && i+1 < n && src[i+1] == '/':
			for i < n && src[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < n && src[i+1] == '*':
			if err := skipComment(); err != nil {
				return nil, nil, err
			}
			continue
		case c == '#' && bol:
			// A directive runs to the end of the line, continued by a
			// backslash; comments inside it may span lines and read as a
			// blank.
			var text strings.Builder
			for i < n && src[i] != '\n' {
				if src[i] == '\\' && i+1 < n && src[i+1] == '\n' {
					i += 2
					line++
					text.WriteByte(' ')
					continue
				}
				if src[i] == '/' && i+1 < n && src[i+1] == '*' {
					if err := skipComment(); err != nil {
						return nil, nil, err
					}
					text.WriteByte(' ')
					continue
				}
				if src[i] == '/' && i+1 < n && src[i+1] == '/' {
					for i < n && src[i] != '\n' {
						i++
					}
					break
				}
				text.WriteByte(src[i])
				i++
			}
			if inc, ok := quotedInclude(text.String()); ok {
				includes = append(includes, inc)
			}
			if name, body, ok := objectMacro(text.String()); ok && macros != nil && len(macros) < maxMacros {
				macros[name] = body
			}
			continue
		}
		bol = false
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			for j < n && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || isDigit(src[j])) {
				j++
			}
			toks = append(toks, token{tIdent, string(src[i:j]), line})
			i = j
		case isDigit(c):
			// A C preprocessing number: digits, letters, '_' and '.'.
			j := i + 1
			for j < n && (src[j] == '_' || src[j] == '.' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || isDigit(src[j])) {
				j++
			}
			toks = append(toks, token{tNumber, string(src[i:j]), line})
			i = j
		case c == '"' || c == '\'':
			// String and character literals are skipped whole so that their
			// contents are not read as code.
			start := line
			j := i + 1
			for j < n && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' && j+1 < n {
					j++
				}
				j++
			}
			if j >= n || src[j] != c {
				return nil, nil, &Error{File: file, Line: start, Msg: "string or character literal is not closed"}
			}
			toks = append(toks, token{tPunct, string(c), line})
			i = j + 1
		default:
			toks = append(toks, token{tPunct, string(c), line})
			i++
		}
	}
	toks = append(toks, token{tEOF, "", line})
	return toks, includes, nil
}

// maxMacros bounds how many #define bodies are kept for array sizes.
const maxMacros = 1 << 14

// objectMacro splits "#define NAME body" (not a function-like macro).
func objectMacro(dir string) (name, body string, ok bool) {
	s := strings.TrimLeft(strings.TrimSpace(dir)[1:], " \t")
	s, ok = strings.CutPrefix(s, "define")
	if !ok || s == "" || (s[0] != ' ' && s[0] != '\t') {
		return "", "", false
	}
	s = strings.TrimLeft(s, " \t")
	j := 0
	for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || j > 0 && isDigit(s[j])) {
		j++
	}
	if j == 0 || j < len(s) && s[j] == '(' {
		return "", "", false
	}
	return s[:j], strings.TrimSpace(s[j:]), true
}

// quotedInclude returns the file of an `#include "file"` directive.
func quotedInclude(dir string) (string, bool) {
	s := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(dir), "#"))
	s, ok := strings.CutPrefix(s, "include")
	if !ok {
		return "", false
	}
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '"' {
		return "", false
	}
	end := strings.IndexByte(s[1:], '"')
	if end <= 0 {
		return "", false
	}
	f := s[1 : 1+end]
	// Only plain names next to the including file: no directories, so that a
	// header cannot make us read arbitrary paths.
	if strings.ContainsAny(f, `/\`) {
		return "", false
	}
	return f, true
}

// ---- parser: definitions ----

// unit is one scanned file.
type unit struct {
	file     string
	includes []string
	aggs     []*agg
	regIDs   map[string]uint32
	enums    []Enumerator
}

// agg is a struct or union body as written.
type agg struct {
	file    string
	line    int
	union   bool
	cname   string // C tag, "" for inline bodies
	members []*member
}

type memberKind uint8

const (
	mBits   memberKind = iota // u8 name[0xW]
	mNamed                    // struct/union mlx5_ifc_T name
	mInline                   // struct/union { ... } name
)

// member is one declarator of a struct or union body.
type member struct {
	line  int
	name  string // "" for an anonymous inline struct/union
	kind  memberKind
	width int    // mBits: bits of one element (1 for untyped "u8 x[]")
	ref   string // mNamed: node name of the type
	union bool   // mNamed, mInline: declared as union
	body  *agg   // mInline

	array    bool
	count    int  // fixed arrays
	flexible bool // "[]" or "[0]": runs to the end of the buffer
	untyped  bool // "u8 x[]": no element width given
}

// Limits that keep hostile input from exhausting memory or the stack.
const (
	maxBits    = 1 << 28 // largest node, in bits (32 MiB)
	maxDepth   = 32      // inline struct/union nesting
	maxNesting = 64      // named layouts inside one another
	maxEval    = 1 << 16 // tokens evaluated in array-size expressions, per file
)

type parser struct {
	file   string
	toks   []token
	pos    int
	macros map[string]string // object-like #defines, for array sizes
	evals  int               // expression tokens evaluated so far (bounded by maxEval)
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *parser) errf(line int, format string, args ...any) error {
	return &Error{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) expect(text string, what string) (token, error) {
	t := p.next()
	if t.text != text || t.kind == tEOF {
		got := t.text
		if t.kind == tEOF {
			got = "end of file"
		}
		return t, p.errf(t.line, "expected %q %s, found %q", text, what, got)
	}
	return t, nil
}

// scan lexes a file and collects its mlx5_ifc struct and union definitions;
// everything else (enums, #defines, other declarations) is skipped.
func scan(file string, src []byte) (*unit, error) {
	macros := map[string]string{}
	toks, includes, err := lex(file, src, macros)
	if err != nil {
		return nil, err
	}
	p := &parser{file: file, toks: toks, macros: macros}
	u := &unit{file: file, includes: includes, regIDs: map[string]uint32{}}
	for p.peek().kind != tEOF {
		t := p.next()
		if t.kind == tIdent && strings.HasPrefix(t.text, "MLX5_REG_") && p.peek().text == "=" && p.toks[p.pos+1].kind == tNumber {
			// An enumerator of the register-ID enum in driver.h.
			if v, err := number(p.toks[p.pos+1]); err == nil && v <= 0xffff {
				u.regIDs[strings.TrimPrefix(t.text, "MLX5_REG_")] = uint32(v)
			}
			continue
		}
		if t.kind != tIdent || (t.text != "struct" && t.text != "union") {
			continue
		}
		name := p.peek()
		if name.kind != tIdent || !strings.HasPrefix(name.text, "mlx5_ifc_") || p.toks[p.pos+1].text != "{" {
			continue // a use, a forward declaration or someone else's type
		}
		p.next()
		a, err := p.body(t.text == "union", name.text, t.line, 0)
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(";", "after the definition of "+name.text); err != nil {
			return nil, err
		}
		u.aggs = append(u.aggs, a)
	}
	// Enumerators last, so that their names do not change how array sizes
	// read (the layouts parse as they always did).
	u.enums = p.enums()
	return u, nil
}

// NodeName is the node name of a C tag: mlx5_ifc_pmaos_reg_bits → pmaos_reg.
func NodeName(ctag string) string {
	return strings.TrimSuffix(strings.TrimPrefix(ctag, "mlx5_ifc_"), "_bits")
}

// body parses "{ members }" of a struct or union.
func (p *parser) body(union bool, cname string, line, depth int) (*agg, error) {
	if depth > maxDepth {
		return nil, p.errf(line, "inline structs and unions nested deeper than %d", maxDepth)
	}
	open, err := p.expect("{", "to open the body")
	if err != nil {
		return nil, err
	}
	a := &agg{file: p.file, line: line, union: union, cname: cname}
	what := cname
	if what == "" {
		what = "inline " + kindWord(union)
	}
	for p.peek().text != "}" {
		if p.peek().kind == tEOF {
			return nil, p.errf(open.line, "%s: body is not closed (missing '}')", what)
		}
		if err := p.member(a, what, depth); err != nil {
			return nil, err
		}
	}
	p.next()
	return a, nil
}

func kindWord(union bool) string {
	if union {
		return "union"
	}
	return "struct"
}

// member parses one member declaration (possibly with several declarators).
func (p *parser) member(a *agg, what string, depth int) error {
	t := p.next()
	tmpl := member{line: t.line}
	switch {
	case t.text == ";":
		return nil // a stray semicolon is harmless
	case t.kind == tIdent && t.text == "u8":
		tmpl.kind = mBits
	case t.kind == tIdent && t.text == "DECLARE_FLEX_ARRAY":
		return p.flexArray(a, what, t)
	case t.kind == tIdent && (t.text == "struct" || t.text == "union"):
		tmpl.union = t.text == "union"
		if p.peek().text == "{" {
			b, err := p.body(tmpl.union, "", t.line, depth+1)
			if err != nil {
				return err
			}
			tmpl.kind, tmpl.body = mInline, b
			if p.peek().text == ";" {
				p.next()
				m := tmpl
				a.members = append(a.members, &m) // anonymous member
				return nil
			}
			break
		}
		ty := p.next()
		if ty.kind != tIdent || !strings.HasPrefix(ty.text, "mlx5_ifc_") {
			return p.errf(ty.line, "%s: member type %s %s is not an mlx5_ifc layout", what, t.text, ty.text)
		}
		tmpl.kind, tmpl.ref = mNamed, NodeName(ty.text)
	default:
		return p.errf(t.line, "%s: unexpected %q; members must be 'u8 name[0xW];', 'struct|union mlx5_ifc_T name;' or an inline struct/union", what, t.text)
	}
	for {
		m := tmpl
		nt := p.next()
		if nt.kind != tIdent {
			return p.errf(nt.line, "%s: expected a member name, found %q", what, nt.text)
		}
		m.name, m.line = nt.text, nt.line
		if err := p.dims(&m, what); err != nil {
			return err
		}
		a.members = append(a.members, &m)
		sep := p.next()
		if sep.text == ";" {
			return nil
		}
		if sep.text != "," {
			return p.errf(sep.line, "%s: member %s: expected ';' or ',', found %q", what, m.name, sep.text)
		}
	}
}

// flexArray parses DECLARE_FLEX_ARRAY(struct mlx5_ifc_T, name);, which
// newer headers (6.2 on) write for a flexible array inside a union, where C
// allows no plain "T name[0];" (include/linux/stddef.h). It declares the
// same member as "struct mlx5_ifc_T name[0];".
func (p *parser) flexArray(a *agg, what string, t token) error {
	if _, err := p.expect("(", "after DECLARE_FLEX_ARRAY"); err != nil {
		return err
	}
	kw := p.next()
	if kw.text != "struct" && kw.text != "union" {
		return p.errf(kw.line, "%s: DECLARE_FLEX_ARRAY of %q: only arrays of mlx5_ifc structs and unions are layouts", what, kw.text)
	}
	ty := p.next()
	if ty.kind != tIdent || !strings.HasPrefix(ty.text, "mlx5_ifc_") {
		return p.errf(ty.line, "%s: member type %s %s is not an mlx5_ifc layout", what, kw.text, ty.text)
	}
	if _, err := p.expect(",", "between DECLARE_FLEX_ARRAY's type and name"); err != nil {
		return err
	}
	nt := p.next()
	if nt.kind != tIdent {
		return p.errf(nt.line, "%s: expected a member name, found %q", what, nt.text)
	}
	if _, err := p.expect(")", "to close DECLARE_FLEX_ARRAY"); err != nil {
		return err
	}
	if _, err := p.expect(";", "after DECLARE_FLEX_ARRAY(...)"); err != nil {
		return err
	}
	a.members = append(a.members, &member{line: nt.line, name: nt.text, kind: mNamed, ref: NodeName(ty.text), union: kw.text == "union", array: true, flexible: true})
	return nil
}

// dims parses the bracket suffixes of a declarator and sets the width and
// array shape. For u8 members the last bracket is the width in bits.
func (p *parser) dims(m *member, what string) error {
	var ds []int // -1 for "[]"
	for p.peek().text == "[" {
		p.next()
		if p.peek().text == "]" {
			p.next()
			ds = append(ds, -1)
			continue
		}
		nt := p.peek()
		var expr []token
		for p.peek().text != "]" {
			if t := p.peek(); t.kind == tEOF || t.text == ";" || t.text == "{" || t.text == "}" || t.text == "[" {
				return p.errf(t.line, "%s: member %s: array size is not closed (missing ']')", what, m.name)
			}
			expr = append(expr, p.next())
		}
		p.next()
		v, err := p.eval(expr)
		if err != nil {
			return p.errf(nt.line, "%s: member %s: array size: %v", what, m.name, err)
		}
		ds = append(ds, v)
		if len(ds) > 2 {
			return p.errf(nt.line, "%s: member %s has more than two dimensions", what, m.name)
		}
	}
	switch m.kind {
	case mBits:
		switch len(ds) {
		case 0:
			return p.errf(m.line, "%s: u8 %s has no bit width (write u8 %s[0xW])", what, m.name, m.name)
		case 1:
			if ds[0] <= 0 { // u8 x[] or u8 x[0]: an open-ended bit string
				m.array, m.flexible, m.untyped, m.width = true, true, true, 1
			} else {
				m.width = ds[0]
			}
		case 2:
			if ds[1] <= 0 {
				return p.errf(m.line, "%s: member %s has no element width (write %s[N][0xW])", what, m.name, m.name)
			}
			m.array, m.width = true, ds[1]
			if ds[0] <= 0 {
				m.flexible = true
			} else {
				m.count = ds[0]
			}
		}
	default:
		switch len(ds) {
		case 0:
		case 1:
			m.array = true
			if ds[0] <= 0 {
				m.flexible = true
			} else {
				m.count = ds[0]
			}
		default:
			return p.errf(m.line, "%s: member %s: arrays of structs have one dimension", what, m.name)
		}
	}
	return nil
}

// number parses a C integer literal (hex, octal or decimal, with optional
// U/L suffixes) in the range the layouts allow.
func number(t token) (int64, error) {
	s := strings.TrimRight(t.text, "uUlL")
	base := 10
	switch {
	case len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X"):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	v, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a valid C integer", t.text)
	}
	if v > maxValue {
		return 0, fmt.Errorf("%s is too large", t.text)
	}
	return int64(v), nil
}

// ---- layout ----

// placed is a field at an MSB-first position; ADB offsets are worked out once
// the size of the node holding it is known.
type placed struct {
	f    *prm.Field
	bit  int
	elem int // width of one element (the field's width for scalars)
}

type layout struct {
	size  int
	items []placed
}

type builder struct {
	h     *Header
	defs  map[string]*agg
	state map[string]int8 // 1 building, 2 done
	depth int             // named layouts being built, one inside the other
}

func build(units []*unit) (*Header, error) {
	h := &Header{Source: units[0].file, Nodes: map[string]*prm.Node{}, RegisterIDs: map[string]uint32{}, where: map[string]string{}, bits: map[*prm.Field]int{}, untyped: map[*prm.Field]bool{}}
	b := &builder{h: h, defs: map[string]*agg{}, state: map[string]int8{}}
	var order []string
	for _, u := range units {
		h.Files = append(h.Files, u.file)
		for name, id := range u.regIDs {
			h.RegisterIDs[name] = id
		}
		h.enumerators = append(h.enumerators, u.enums...)
		for _, a := range u.aggs {
			name := NodeName(a.cname)
			if prev, dup := b.defs[name]; dup {
				return nil, &Error{File: a.file, Line: a.line, Msg: fmt.Sprintf("%s %s is defined twice (first at %s:%d); node names drop mlx5_ifc_ and _bits, so the two clash", kindWord(a.union), a.cname, prev.file, prev.line)}
			}
			if name == "" || strings.Contains(name, ".") {
				return nil, &Error{File: a.file, Line: a.line, Msg: fmt.Sprintf("%s: empty layout name", a.cname)}
			}
			b.defs[name] = a
			order = append(order, name)
		}
	}
	for _, name := range order {
		if _, err := b.node(name, b.defs[name].line, b.defs[name].file); err != nil {
			return nil, err
		}
	}
	h.Types = order
	sort.Strings(h.Types)
	return h, nil
}

// node lays out a named definition (once) and returns its node.
func (b *builder) node(name string, line int, file string) (*prm.Node, error) {
	switch b.state[name] {
	case 2:
		return b.h.Nodes[name], nil
	case 1:
		return nil, &Error{File: file, Line: line, Msg: fmt.Sprintf("layout %s contains itself", name)}
	}
	a, ok := b.defs[name]
	if !ok {
		return nil, &Error{File: file, Line: line, Msg: fmt.Sprintf("layout mlx5_ifc_%s(_bits) is not defined in %s (is the header that defines it missing?)", name, strings.Join(b.h.Files, ", "))}
	}
	if b.depth >= maxNesting {
		return nil, &Error{File: file, Line: line, Msg: fmt.Sprintf("layout %s: layouts nested more than %d deep", name, maxNesting)}
	}
	b.depth++
	defer func() { b.depth-- }()
	b.state[name] = 1
	l, err := b.layout(a, name, 0)
	if err != nil {
		return nil, err
	}
	n, err := b.finish(name, a, l)
	if err != nil {
		return nil, err
	}
	b.h.where[name] = fmt.Sprintf("%s:%d", a.file, a.line)
	b.state[name] = 2
	return n, nil
}

// IsReserved says whether a member name is a reserved gap, which the ADB
// leaves out as well.
func IsReserved(name string) bool {
	return name == "reserved" || strings.HasPrefix(name, "reserved_")
}

// layout places the members of a body at MSB-first positions relative to
// its start. name is the node name the body belongs to (for inline nodes
// and messages).
func (b *builder) layout(a *agg, name string, depth int) (*layout, error) {
	if depth > maxDepth {
		return nil, &Error{File: a.file, Line: a.line, Msg: name + ": inline structs and unions nested too deep"}
	}
	l := &layout{}
	pos := 0
	names := map[string]int{}
	seen := func(m string, line int) error {
		if prev, dup := names[m]; dup {
			return &Error{File: a.file, Line: line, Msg: fmt.Sprintf("%s: member %s is declared twice (first at line %d)", name, m, prev)}
		}
		names[m] = line
		return nil
	}
	for i, m := range a.members {
		start := pos
		if a.union {
			start = 0
		}
		errf := func(format string, args ...any) error {
			return &Error{File: a.file, Line: m.line, Msg: fmt.Sprintf("%s.%s: ", name, m.name) + fmt.Sprintf(format, args...)}
		}
		f := &prm.Field{Name: m.name, Line: m.line}
		elem := 0
		switch m.kind {
		case mBits:
			elem = m.width
		case mNamed:
			sub, err := b.node(m.ref, m.line, a.file)
			if err != nil {
				return nil, err
			}
			if sub.Union != m.union {
				return nil, errf("declared as %s %s but defined as a %s", kindWord(m.union), m.ref, kindWord(sub.Union))
			}
			f.Subnode, elem = m.ref, sub.Size
			if sub.Size == 0 && onlyFlexible(sub) && !m.array {
				// A struct that is only a flexible array (6.12's
				// qp_pas_list_in: pas[0]) has no bits of its own; its data
				// runs past the layout, which a zero-width field cannot say.
				// Left out, as the other flexible tails are placed by their
				// own fields.
				b.warn(a.file, m.line, "%s.%s: %s holds only flexible arrays; left out", name, m.name, m.ref)
				continue
			}
		case mInline:
			if m.name == "" {
				// An anonymous member: C puts its members straight into the
				// enclosing body, so they are flattened here.
				inner, err := b.layout(m.body, name, depth+1)
				if err != nil {
					return nil, err
				}
				for _, it := range inner.items {
					if err := seen(it.f.Name, it.f.Line); err != nil {
						return nil, err
					}
					it.bit += start
					l.items = append(l.items, it)
				}
				if err := b.advance(l, &pos, start, inner.size, a, m, name); err != nil {
					return nil, err
				}
				continue
			}
			sub := name + "." + m.name
			inner, err := b.layout(m.body, sub, depth+1)
			if err != nil {
				return nil, err
			}
			if _, err := b.finish(sub, m.body, inner); err != nil {
				return nil, err
			}
			b.h.where[sub] = fmt.Sprintf("%s:%d", a.file, m.body.line)
			f.Subnode, elem = sub, inner.size
		}
		if err := seen(m.name, m.line); err != nil {
			return nil, err
		}
		if elem <= 0 {
			return nil, errf("has zero width; the ADB convention cannot place it")
		}
		total := elem
		switch {
		case m.flexible:
			f.IsArray, f.Variable, f.Size = true, true, elem
			total = 0
			if m.untyped {
				b.h.untyped[f] = true
			}
			if !a.union && i != len(a.members)-1 {
				b.warn(a.file, m.line, "%s.%s: flexible array is not the last member", name, m.name)
			}
		case m.array:
			if int64(m.count)*int64(elem) > maxBits {
				return nil, errf("array of %d × %d bits is too large", m.count, elem)
			}
			total = m.count * elem
			f.IsArray, f.LowBound, f.HighBound, f.Size = true, 0, m.count-1, total
		default:
			f.Size = elem
		}
		if IsReserved(m.name) {
			if x, ok := strings.CutPrefix(m.name, "reserved_at_"); ok {
				if v, err := strconv.ParseUint(x, 16, 64); err == nil && int(v) != start {
					b.warn(a.file, m.line, "%s.%s is at bit 0x%x", name, m.name, start)
				}
			}
		} else {
			l.items = append(l.items, placed{f: f, bit: start, elem: elem})
		}
		if err := b.advance(l, &pos, start, total, a, m, name); err != nil {
			return nil, err
		}
	}
	if !a.union {
		l.size = pos
	}
	return l, nil
}

// advance moves past a member of the given width: structs accumulate, unions
// take the largest member.
func (b *builder) advance(l *layout, pos *int, start, width int, a *agg, m *member, name string) error {
	end := start + width
	if end > maxBits {
		return &Error{File: a.file, Line: m.line, Msg: fmt.Sprintf("%s: layout grows past %d bits", name, maxBits)}
	}
	if a.union {
		l.size = max(l.size, end)
	} else {
		*pos = end
	}
	return nil
}

// finish converts positions to ADB offsets and registers the node.
func (b *builder) finish(name string, a *agg, l *layout) (*prm.Node, error) {
	n := &prm.Node{Name: name, Size: l.size, Union: a.union, Line: a.line}
	if a.cname != "" {
		n.Descr = kindWord(a.union) + " " + a.cname
	}
	for _, it := range splitReserved(l.items, l.size) {
		off, err := adbOffset(it.bit, it.elem, l.size)
		if err != nil {
			return nil, &Error{File: a.file, Line: it.f.Line, Msg: fmt.Sprintf("%s.%s: %v", name, it.f.Name, err)}
		}
		it.f.Offset = off
		b.h.bits[it.f] = it.bit
		n.Fields = append(n.Fields, it.f)
	}
	b.h.Nodes[name] = n
	return n, nil
}

// misspeltReserved matches reserved fields whatever their spelling (6.12's
// pcam_enhanced_features has "resereved_at_54").
var misspeltReserved = lazyre.New(`^res[a-z]*ved_at_[0-9a-f]+$`)

// splitReserved cuts a reserved scalar that crosses a dword boundary (which
// no ADB offset can express) into one reserved_at_<bit> piece per dword.
// Reserved bits carry no value, so nothing is lost; every other field that
// crosses a boundary stays an error in adbOffset.
func splitReserved(items []placed, size int) []placed {
	var out []placed
	for _, it := range items {
		name := it.f.Name
		if it.f.IsArray || it.elem >= 32 || it.bit%32+it.elem <= 32 || size < 32 || !(IsReserved(name) || misspeltReserved.MatchString(name)) {
			out = append(out, it)
			continue
		}
		for bit, end := it.bit, it.bit+it.elem; bit < end; {
			w := min(end, (bit/32+1)*32) - bit
			f := *it.f
			f.Name, f.Size = fmt.Sprintf("reserved_at_%x", bit), w
			out = append(out, placed{f: &f, bit: bit, elem: w})
			bit += w
		}
	}
	return out
}

// adbOffset is the inverse of prm's conversion: for an element narrower than
// a dword, the ADB gives the position of its LSB inside its big-endian dword
// (inside the node itself for nodes narrower than a dword); wider elements
// are given by their first bit.
func adbOffset(bit, w, container int) (int, error) {
	if w >= 32 {
		return bit, nil
	}
	span := 32
	if container > 0 && container < 32 {
		span = container
	}
	if bit%32+w > span {
		return 0, fmt.Errorf("%d bits at bit 0x%x cross a dword boundary, which the ADB offset convention cannot express", w, bit)
	}
	return bit&^31 + span - bit%32 - w, nil
}

func (b *builder) warn(file string, line int, format string, args ...any) {
	b.h.Warnings = append(b.h.Warnings, fmt.Sprintf("%s:%d: ", file, line)+fmt.Sprintf(format, args...))
}

// onlyFlexible says a node has fields and every one is a flexible array.
func onlyFlexible(n *prm.Node) bool {
	for _, f := range n.Fields {
		if !f.Variable {
			return false
		}
	}
	return len(n.Fields) > 0
}

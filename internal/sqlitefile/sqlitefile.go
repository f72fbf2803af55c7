// Package sqlitefile reads the rows of a table from an SQLite 3 database
// file held in memory: read-only, rowid tables only, no SQL.
//
// cxray reads exactly one kind of SQLite file, mstflint's NV parameter
// database (two small tables, read whole). A full SQL engine linked for that
// cost every command about 4 MB of binary and a third of its start-up
// (docs/performance.md, "The CLI's size and start-up"). This reader follows
// the file format (https://www.sqlite.org/fileformat2.html: the header, the
// b-tree pages, cells, overflow chains and the record format) and checks the
// structure as it goes, as SQLite's quick_check does: every page in range and
// used once, cells inside their page and not overlapping, rowids in order,
// each record's header matching its length. A damaged file is refused whole
// with a *CorruptError.
package sqlitefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CorruptError is a file whose structure is not SQLite's: damaged or cut
// short.
type CorruptError struct{ Msg string }

func (e *CorruptError) Error() string { return e.Msg }

func corrupt(format string, a ...any) error {
	return &CorruptError{Msg: fmt.Sprintf(format, a...)}
}

// File is an SQLite database read from memory.
type File struct {
	b        []byte
	pageSize int
	usable   int
	pages    int
	schema   []schemaRow
}

type schemaRow struct {
	typ, name, sql string
	root           int
}

// maxPages bounds what one file may hold (mstflint's host database has 72
// pages of 4 KiB), so a hostile header cannot make the reader walk forever.
const maxPages = 1 << 16

// Open reads the header and the schema of b and checks every page of the
// file: each b-tree, overflow chain and freelist page is used once, and
// none is left over.
func Open(b []byte) (*File, error) {
	if len(b) < 100 || string(b[:16]) != "SQLite format 3\x00" {
		return nil, corrupt("not an SQLite 3 file")
	}
	ps := int(binary.BigEndian.Uint16(b[16:]))
	if ps == 1 {
		ps = 65536
	}
	if ps < 512 || ps&(ps-1) != 0 {
		return nil, corrupt("page size %d is not one SQLite uses", ps)
	}
	if b[56+3] != 1 || binary.BigEndian.Uint32(b[56:]) != 1 {
		return nil, corrupt("text encoding %d is not UTF-8", binary.BigEndian.Uint32(b[56:]))
	}
	f := &File{b: b, pageSize: ps, usable: ps - int(b[20])}
	if f.usable < 480 {
		return nil, corrupt("usable page size %d is too small", f.usable)
	}
	if len(b)%ps != 0 {
		return nil, corrupt("the file is %d bytes, not a whole number of %d-byte pages", len(b), ps)
	}
	f.pages = len(b) / ps
	if f.pages > maxPages {
		return nil, corrupt("%d pages: more than this reader accepts (%d)", f.pages, maxPages)
	}
	if binary.BigEndian.Uint32(b[52:]) != 0 {
		// auto-vacuum keeps pointer-map pages, which this reader does not
		// account for; mstflint's databases do not use it.
		return nil, corrupt("auto-vacuum databases are not read")
	}
	used := make([]bool, f.pages+1)
	rows, err := f.walk(1, true, used)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	for _, r := range rows {
		v := r.vals
		if len(v) < 5 {
			return nil, corrupt("schema row %d has %d columns, want 5", r.rowid, len(v))
		}
		root, ok := v[3].(int64)
		sr := schemaRow{typ: text(v[0]), name: text(v[1]), sql: text(v[4]), root: int(root)}
		if sr.typ == "table" || sr.typ == "index" {
			if !ok || root < 1 || int(root) > f.pages {
				// Views and triggers have root 0; a table's is a page.
				return nil, corrupt("schema: %s %q has root page %v", sr.typ, sr.name, v[3])
			}
			if _, err := f.walk(sr.root, sr.typ == "table", used); err != nil {
				return nil, fmt.Errorf("%s %s: %w", sr.typ, sr.name, err)
			}
		}
		f.schema = append(f.schema, sr)
	}
	if err := f.freelist(used); err != nil {
		return nil, err
	}
	for p := 1; p <= f.pages; p++ {
		if !used[p] && !f.lockByte(p) {
			return nil, corrupt("page %d is never used", p)
		}
	}
	return f, nil
}

// lockByte says p is the page holding the byte range SQLite locks at 1 GiB,
// which is never used.
func (f *File) lockByte(p int) bool { return p == 1<<30/f.pageSize+1 }

func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return ""
}

// page returns page p (1-based) and the offset of its b-tree header.
func (f *File) page(p int) ([]byte, int) {
	pg := f.b[(p-1)*f.pageSize : p*f.pageSize]
	if p == 1 {
		return pg, 100
	}
	return pg, 0
}

func (f *File) use(used []bool, p int, what string) error {
	if p < 1 || p > f.pages {
		return corrupt("%s page %d is outside the file's %d pages", what, p, f.pages)
	}
	if used[p] {
		return corrupt("page %d is used twice (as %s)", p, what)
	}
	used[p] = true
	return nil
}

func (f *File) freelist(used []bool) error {
	trunk := int(binary.BigEndian.Uint32(f.b[32:]))
	want := int(binary.BigEndian.Uint32(f.b[36:]))
	n := 0
	for trunk != 0 {
		if err := f.use(used, trunk, "freelist trunk"); err != nil {
			return err
		}
		n++
		pg, _ := f.page(trunk)
		leaves := int(binary.BigEndian.Uint32(pg[4:]))
		if leaves > f.usable/4-2 {
			return corrupt("freelist trunk page %d lists %d leaves", trunk, leaves)
		}
		for i := 0; i < leaves; i++ {
			if err := f.use(used, int(binary.BigEndian.Uint32(pg[8+4*i:])), "freelist leaf"); err != nil {
				return err
			}
			n++
		}
		trunk = int(binary.BigEndian.Uint32(pg))
	}
	if n != want {
		return corrupt("the freelist has %d pages; the header says %d", n, want)
	}
	return nil
}

// row is one row: its rowid and its values, each nil (NULL), int64,
// float64, string (text) or []byte (blob).
type row struct {
	rowid int64
	vals  []any
}

// walk reads the b-tree rooted at page root in key order, marking its pages
// (and their overflow pages) used. Index b-trees are walked for their
// structure only; table rows are returned.
func (f *File) walk(root int, table bool, used []bool) ([]row, error) {
	var rows []row
	var last int64
	first := true
	var visit func(p, depth int) error
	visit = func(p, depth int) error {
		if depth > 20 {
			return corrupt("b-tree deeper than 20 levels at page %d", p)
		}
		if err := f.use(used, p, "b-tree"); err != nil {
			return err
		}
		pg, h := f.page(p)
		kind := pg[h]
		leaf := kind == 0x0d || kind == 0x0a
		switch {
		case table && (kind == 0x0d || kind == 0x05), !table && (kind == 0x0a || kind == 0x02):
		default:
			return corrupt("page %d has b-tree type %#x", p, kind)
		}
		hdr := 12
		if leaf {
			hdr = 8
		}
		ncell := int(binary.BigEndian.Uint16(pg[h+3:]))
		start := int(binary.BigEndian.Uint16(pg[h+5:]))
		if start == 0 {
			start = 65536
		}
		ptrEnd := h + hdr + 2*ncell
		if ptrEnd > start || start > f.usable {
			return corrupt("page %d: %d cells do not fit (content starts at %d)", p, ncell, start)
		}
		type span struct{ from, to int }
		spans := make([]span, 0, ncell)
		for i := 0; i < ncell; i++ {
			off := int(binary.BigEndian.Uint16(pg[h+hdr+2*i:]))
			if off < start || off >= f.usable {
				return corrupt("page %d: cell %d at %d is outside the content area", p, i, off)
			}
			c := pg[off:f.usable]
			var n int
			if !leaf {
				if len(c) < 4 {
					return corrupt("page %d: cell %d is cut", p, i)
				}
				child := int(binary.BigEndian.Uint32(c))
				if err := visit(child, depth+1); err != nil {
					return err
				}
				n = 4
			}
			if table && !leaf {
				key, k := varint(c[n:])
				if k == 0 {
					return corrupt("page %d: cell %d is cut", p, i)
				}
				if !first && key < last {
					return corrupt("page %d: key %d is below a rowid under it (%d)", p, key, last)
				}
				n += k
				spans = append(spans, span{off, off + n})
				continue
			}
			size, k := varint(c[n:])
			if k == 0 || size < 0 || size > int64(f.pages)*int64(f.pageSize) {
				return corrupt("page %d: cell %d has a bad payload size", p, i)
			}
			n += k
			var rowid int64
			if table {
				rowid, k = varint(c[n:])
				if k == 0 {
					return corrupt("page %d: cell %d is cut", p, i)
				}
				n += k
			}
			payload, cell, err := f.payload(c[n:], int(size), table, used)
			if err != nil {
				return fmt.Errorf("page %d cell %d: %w", p, i, err)
			}
			spans = append(spans, span{off, off + n + cell})
			if !table {
				if _, err := record(payload); err != nil {
					return fmt.Errorf("page %d cell %d: %w", p, i, err)
				}
				continue
			}
			if !first && rowid <= last {
				return corrupt("page %d: rowid %d after %d: out of order", p, rowid, last)
			}
			first, last = false, rowid
			vals, err := record(payload)
			if err != nil {
				return fmt.Errorf("page %d rowid %d: %w", p, rowid, err)
			}
			rows = append(rows, row{rowid: rowid, vals: vals})
		}
		for i := range spans {
			for j := range spans {
				if i != j && spans[i].from < spans[j].to && spans[j].from < spans[i].to {
					return corrupt("page %d: cells %d and %d overlap", p, i, j)
				}
			}
		}
		if !leaf {
			return visit(int(binary.BigEndian.Uint32(pg[h+8:])), depth+1)
		}
		return nil
	}
	return rows, visit(root, 0)
}

// payload gathers a cell's payload of size bytes: the part on the page and
// the rest from its overflow chain. It returns the payload and how many
// bytes the cell takes on its page after the size and rowid.
func (f *File) payload(c []byte, size int, table bool, used []bool) ([]byte, int, error) {
	u := f.usable
	x := u - 35
	if !table {
		x = (u-12)*64/255 - 23
	}
	if size <= x {
		if size > len(c) {
			return nil, 0, corrupt("payload of %d bytes runs past the page", size)
		}
		return c[:size], size, nil
	}
	m := (u-12)*32/255 - 23
	local := m + (size-m)%(u-4)
	if local > x {
		local = m
	}
	if local+4 > len(c) {
		return nil, 0, corrupt("payload runs past the page")
	}
	out := make([]byte, 0, size)
	out = append(out, c[:local]...)
	next := int(binary.BigEndian.Uint32(c[local:]))
	for len(out) < size {
		if err := f.use(used, next, "overflow"); err != nil {
			return nil, 0, err
		}
		pg, _ := f.page(next)
		n := min(size-len(out), u-4)
		out = append(out, pg[4:4+n]...)
		next = int(binary.BigEndian.Uint32(pg))
	}
	if next != 0 {
		return nil, 0, corrupt("overflow chain goes on past its payload (page %d)", next)
	}
	return out, local + 4, nil
}

// varint reads an SQLite varint: 1 to 9 bytes, big-endian, 7 bits a byte
// and all 8 of the ninth. n is 0 when b is cut short.
func varint(b []byte) (v int64, n int) {
	var u uint64
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			return int64(u<<8 | uint64(b[i])), 9
		}
		u = u<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return int64(u), i + 1
		}
	}
	return 0, 0
}

// record decodes a record: its header (size, then a serial type per
// column) must account for every byte of the payload.
func record(p []byte) ([]any, error) {
	hs, n := varint(p)
	if n == 0 || hs < int64(n) || hs > int64(len(p)) {
		return nil, corrupt("record header size %d does not fit its %d bytes", hs, len(p))
	}
	var types []int64
	for i := n; i < int(hs); {
		t, k := varint(p[i:hs])
		if k == 0 {
			return nil, corrupt("record header is cut")
		}
		if t == 10 || t == 11 || t < 0 {
			return nil, corrupt("record has serial type %d", t)
		}
		types = append(types, t)
		i += k
	}
	body := p[hs:]
	vals := make([]any, 0, len(types))
	for _, t := range types {
		n := serialSize(t)
		if n > len(body) {
			return nil, corrupt("record's values run past its payload")
		}
		v := body[:n]
		body = body[n:]
		switch {
		case t == 0:
			vals = append(vals, nil)
		case t <= 6:
			var x int64
			if v[0]&0x80 != 0 {
				x = -1
			}
			for _, c := range v {
				x = x<<8 | int64(c)
			}
			vals = append(vals, x)
		case t == 7:
			vals = append(vals, math.Float64frombits(binary.BigEndian.Uint64(v)))
		case t == 8, t == 9:
			vals = append(vals, t-8)
		case t%2 == 0:
			vals = append(vals, append([]byte(nil), v...))
		default:
			if !utf8.Valid(v) {
				return nil, corrupt("record holds text that is not UTF-8")
			}
			vals = append(vals, string(v))
		}
	}
	if len(body) != 0 {
		return nil, corrupt("record has %d bytes its header does not account for", len(body))
	}
	return vals, nil
}

func serialSize(t int64) int {
	switch {
	case t <= 4:
		return int(t)
	case t == 5:
		return 6
	case t == 6, t == 7:
		return 8
	case t <= 11:
		return 0
	case t%2 == 0:
		return int((t - 12) / 2)
	default:
		return int((t - 13) / 2)
	}
}

// ErrNoTable is a table the schema does not name.
var ErrNoTable = errors.New("no such table")

// Table returns a table's column names (as its CREATE TABLE statement spells
// them) and its rows in rowid order, each value as text the way
// database/sql scans into a string (NULL as ""; a column declared INTEGER
// PRIMARY KEY reads as the rowid).
func (f *File) Table(name string) ([]string, [][]string, error) {
	var sr *schemaRow
	for i := range f.schema {
		if f.schema[i].typ == "table" && strings.EqualFold(f.schema[i].name, name) {
			sr = &f.schema[i]
		}
	}
	if sr == nil {
		return nil, nil, fmt.Errorf("%w: %s", ErrNoTable, name)
	}
	cols, rowidCol, err := columns(sr.sql)
	if err != nil {
		return nil, nil, fmt.Errorf("table %s: %w", name, err)
	}
	used := make([]bool, f.pages+1)
	rows, err := f.walk(sr.root, true, used)
	if err != nil {
		return nil, nil, fmt.Errorf("table %s: %w", name, err)
	}
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		if len(r.vals) > len(cols) {
			return nil, nil, corrupt("table %s rowid %d has %d values for %d columns", name, r.rowid, len(r.vals), len(cols))
		}
		row := make([]string, len(cols))
		for i, v := range r.vals {
			row[i] = textOf(v)
		}
		if rowidCol >= 0 && (rowidCol >= len(r.vals) || r.vals[rowidCol] == nil) {
			row[rowidCol] = strconv.FormatInt(r.rowid, 10)
		}
		out = append(out, row)
	}
	return cols, out, nil
}

func textOf(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return x
	case []byte:
		return string(x)
	}
	return ""
}

// columns reads the column names of a CREATE TABLE statement, and which
// column (if any) is an INTEGER PRIMARY KEY, stored as the rowid.
func columns(sql string) ([]string, int, error) {
	open := strings.IndexByte(sql, '(')
	end := strings.LastIndexByte(sql, ')')
	if open < 0 || end < open {
		return nil, -1, corrupt("CREATE TABLE statement has no column list: %q", sql)
	}
	if strings.Contains(strings.ToUpper(sql[end:]), "WITHOUT ROWID") {
		return nil, -1, errors.New("WITHOUT ROWID tables are not read")
	}
	var defs []string
	depth, from := 0, open+1
	quote := byte(0)
	for i := open + 1; i < end; i++ {
		c := sql[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '[':
			quote = ']'
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			defs = append(defs, sql[from:i])
			from = i + 1
		}
	}
	defs = append(defs, sql[from:end])
	var cols []string
	rowid := -1
	for _, d := range defs {
		d = strings.TrimSpace(d)
		word, rest := firstWord(d)
		switch strings.ToUpper(word) {
		case "", "CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN":
			if word == "" {
				return nil, -1, corrupt("CREATE TABLE statement has an empty column: %q", sql)
			}
			continue
		}
		up := strings.ToUpper(strings.Join(strings.Fields(rest), " "))
		if strings.HasPrefix(up, "INTEGER PRIMARY KEY") && !strings.Contains(up, "DESC") {
			rowid = len(cols)
		}
		cols = append(cols, word)
	}
	if len(cols) == 0 {
		return nil, -1, corrupt("CREATE TABLE statement has no columns: %q", sql)
	}
	return cols, rowid, nil
}

// firstWord splits a column definition into its name (unquoted) and the
// rest.
func firstWord(d string) (string, string) {
	if d == "" {
		return "", ""
	}
	if close, ok := map[byte]byte{'"': '"', '`': '`', '[': ']', '\'': '\''}[d[0]]; ok {
		if i := strings.IndexByte(d[1:], close); i >= 0 {
			return d[1 : i+1], d[i+2:]
		}
		return "", ""
	}
	// An unquoted name ends where SQLite's tokenizer ends an identifier:
	// at the first byte that is not a letter, digit, '_' or '$' (non-ASCII
	// bytes are identifier bytes), so "CHECK(" reads as the keyword CHECK.
	i := strings.IndexFunc(d, func(r rune) bool {
		return r < 0x80 && !(r == '_' || r == '$' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	if i < 0 {
		return d, ""
	}
	return d[:i], d[i:]
}

// Package hexdump reads register bytes the way people paste them: dwords
// ("0x00000218 0x00000000"), runs of hex digits, `hexdump -C`, `xxd` and
// `od` lines, ethtool's `-m ... hex on` dump, `rdma -j resource show ... -r`
// data, mstreg's and mlxreg's complete `--get` outputs (the "Address | Data"
// dword table and the "Field Name | Data" field table), and cxray's own
// `reg get`, `reg get --id`, `prm decode` and `prm encode` outputs.
//
// Two kinds of dump come out. A byte dump (Dump.Bytes): every line that
// carries an address lands at that address, lines without one follow the
// previous line, a gap is zero-filled with a note, and two lines that put
// different bytes at one address are an error. A field dump (Dump.Fields):
// mstreg's named form and cxray's tables give field values, not bytes;
// Dump.Encode turns them into bytes through a register's layout.
//
// The ASCII column of hexdump -C, xxd and od is never data, whatever it
// holds: it is found by the line's structure, not by what its text looks
// like.
package hexdump

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxBytes bounds a byte dump. Registers are at most a few KiB and a module
// EEPROM dump with every page is well under this; an address beyond it is
// a typo or another kind of file.
const MaxBytes = 1 << 20

// Error points at the bad token.
type Error struct {
	Line  int
	Token string
	Msg   string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	if e.Token == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("line %d: %q: %s", e.Line, e.Token, e.Msg)
}

// Dump is what a pasted text holds.
type Dump struct {
	// Format names what was recognised ("mstreg --get (Address | Data)",
	// "xxd", ...), for messages.
	Format string
	// Register is the register the dump names, when it names one (cxray's
	// "MGIR (0x9020) on emu" heading, prm encode's "PMAOS, 16 bytes:").
	Register string
	// Bytes is the byte dump; nil for a field dump.
	Bytes []byte
	// Fields is the field dump, in the order given; nil for a byte dump.
	Fields []Field
	// Notes say what was assumed: zero-filled gaps, octal offsets.
	Notes []string
	// Gaps are the byte ranges of Bytes that no line of the dump set (a
	// dump that starts at 0xb0, a cut): zero-filled in Bytes, and known
	// to be missing, so a reader can say what the dump does not cover.
	Gaps []Range
}

// Range is a byte range, From inclusive, To exclusive.
type Range struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// Missing says whether any byte of [from, to) is in a gap.
func (d *Dump) Missing(from, to int) bool {
	if to > len(d.Bytes) {
		return true
	}
	for _, g := range d.Gaps {
		if g.From < to && from < g.To {
			return true
		}
	}
	return false
}

// Field is one field value of a field dump.
type Field struct {
	// Name is as printed: a dotted path (cxray) or a leaf name, maybe
	// with an array index (mstreg: "temperature", "psid[3]").
	Name string
	// Value is the raw value as text: a number ("0x00000196", "406",
	// "-10"), a MAC ("b8:3f:d2:d2:0a:20"), or, when Quoted, the text of a
	// text field.
	Value  string
	Quoted bool
	// JSON marks a string from a JSON document: text, an enum name, a MAC
	// or a number, told apart by the field it lands in.
	JSON bool
	Line int

	str bool // a JSON string (not a number)
}

// Parse returns the bytes of a byte dump. A field dump is an error that
// says to decode it with the register's layout (Read and Dump.Encode).
func Parse(text string) ([]byte, error) {
	d, err := Read(text)
	if err != nil {
		return nil, err
	}
	if d.Fields != nil {
		return nil, &Error{Msg: "this is a table of field values (" + d.Format + "), not bytes; give it to 'cxray prm decode REG', which knows the register's layout"}
	}
	return d.Bytes, nil
}

// ReadBytes is Read for file contents that may be binary: `ethtool -m DEV
// raw on` and `xxd -r` write the bytes themselves. Data that is not text
// (a NUL or other control byte, or invalid UTF-8) is taken as the bytes.
func ReadBytes(data []byte) (*Dump, error) {
	if isBinary(data) {
		if len(data) > MaxBytes {
			return nil, &Error{Msg: fmt.Sprintf("the file holds %d bytes of binary data, more than any dump (%d); is it the right file?", len(data), MaxBytes)}
		}
		return &Dump{Format: "binary", Bytes: append([]byte(nil), data...)}, nil
	}
	return Read(string(data))
}

func isBinary(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' {
			return true
		}
	}
	return !utf8.Valid(b)
}

// Read recognises the dump's form and returns its bytes or its fields.
func Read(text string) (*Dump, error) {
	text = strings.TrimPrefix(text, "\ufeff")
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		return readJSON(t)
	}
	r := &reader{d: &Dump{}, endMark: -1}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if err := r.line(i+1, strings.TrimRight(l, "\r")); err != nil {
			return nil, err
		}
		if r.stop {
			break
		}
	}
	return r.finish()
}

// mode is what the lines seen so far established.
type mode uint8

const (
	modeUnknown mode = iota
	modeBytes
	modeMstregFields // "Field Name | Data"
	modeCxrayFields  // "FIELD  VALUE"
)

type reader struct {
	d    *Dump
	mode mode
	stop bool

	// Byte dumps.
	buf     []byte
	lineOf  []int32 // the line that set each byte; 0 when none did
	cursor  int     // where a line without an address goes
	last    []byte  // the previous addressed line, for "*" repeats
	repeat  bool    // a "*" line is pending
	loose   []tok   // data tokens of lines without an address
	looseAt []int   // where each loose line's tokens start
	formats []string
	addrHdr bool // "Address | Data" or "ADDRESS DATA" seen
	ethHdr  bool // ethtool's "Offset Values" seen
	endMark int  // a final bare offset line of hexdump -C / od (-1 none)
	octal   bool
	hasData bool
}

type tok struct {
	line int
	s    string
}

func (r *reader) format(f string) {
	for _, x := range r.formats {
		if x == f {
			return
		}
	}
	r.formats = append(r.formats, f)
}

func (r *reader) line(n int, l string) error {
	trim := strings.TrimSpace(l)
	if trim == "" {
		return nil
	}
	switch r.mode {
	case modeMstregFields:
		return r.mstregRow(n, l, trim)
	case modeCxrayFields:
		return r.cxrayRow(n, trim)
	}
	if skip, err := r.heading(n, trim); skip || err != nil {
		return err
	}
	if r.mode == modeMstregFields || r.mode == modeCxrayFields {
		return nil
	}
	// A field table without its heading.
	if !r.hasData {
		if name, _, ok := strings.Cut(trim, "|"); ok && isFieldName(strings.TrimSpace(name)) && !looksHex(strings.TrimSpace(name)) {
			r.mode = modeMstregFields
			r.d.Format = "mstreg --get (Field Name | Data)"
			return r.mstregRow(n, l, trim)
		}
		if f := strings.Fields(trim); len(f) >= 2 && isFieldName(f[0]) && !looksHex(f[0]) && !strings.HasSuffix(f[0], ":") && !strings.Contains(trim, "|") {
			r.mode = modeCxrayFields
			r.d.Format = "cxray field table"
			return r.cxrayRow(n, trim)
		}
	}
	r.mode = modeBytes
	r.hasData = true
	return r.byteLine(n, l, trim)
}

// heading consumes the lines around the data: tool banners, column
// headings, rules. It switches to a field mode on a field-table heading.
func (r *reader) heading(n int, t string) (bool, error) {
	low := strings.ToLower(t)
	fields := strings.Fields(low)
	switch {
	case strings.HasPrefix(t, "-E-"):
		return true, &Error{Line: n, Msg: "the dump holds the tool's error instead of data: " + strings.TrimSpace(t[3:])}
	case strings.HasPrefix(t, "-I-"), strings.HasPrefix(t, "-W-"):
		return true, nil
	case strings.HasPrefix(low, "sending access register"):
		return true, nil
	case isRule(t):
		return true, nil
	case len(fields) == 3 && fields[0] == "address" && fields[1] == "|" && fields[2] == "data",
		len(fields) == 2 && fields[0] == "address|" && fields[1] == "data":
		r.addrHdr = true
		r.format("mstreg --get (Address | Data)")
		return true, nil
	case len(fields) == 2 && fields[0] == "address" && fields[1] == "data":
		r.addrHdr = true
		r.format("cxray reg get --id")
		return true, nil
	case len(fields) >= 4 && fields[0] == "field" && fields[1] == "name" && fields[2] == "|" && fields[3] == "data":
		if r.hasData {
			return true, &Error{Line: n, Token: t, Msg: "a field table after bytes; paste one dump at a time"}
		}
		r.mode = modeMstregFields
		r.d.Format = "mstreg --get (Field Name | Data)"
		return true, nil
	case len(fields) == 2 && t == strings.ToUpper(t) && fields[0] == "field" && fields[1] == "value":
		if r.hasData {
			return true, &Error{Line: n, Token: t, Msg: "a field table after bytes; paste one dump at a time"}
		}
		r.mode = modeCxrayFields
		r.d.Format = "cxray field table"
		return true, nil
	case len(fields) == 2 && fields[0] == "offset" && fields[1] == "values":
		r.ethHdr = true
		r.format("ethtool -m hex")
		return true, nil
	case low == "non-zero fields:":
		// prm encode: what follows restates the bytes above as fields.
		r.stop = true
		return true, nil
	}
	// rdma's text form runs the byte values together.
	if strings.HasSuffix(t, ">") && (strings.HasPrefix(t, "link ") || strings.HasPrefix(t, "dev ")) {
		return true, &Error{Line: n, Token: t, Msg: "rdma's text output runs the data bytes together without separators; run 'rdma -j resource show ... -r' and paste its JSON"}
	}
	// cxray reg get: "MGIR (0x9020) on emu (0000:03:00.0); defaulted x".
	if f := strings.Fields(t); len(f) >= 3 && f[1] != "|" && strings.HasPrefix(f[1], "(0x") && strings.HasSuffix(f[1], ")") && f[2] == "on" && isFieldName(f[0]) {
		r.d.Register = f[0]
		return true, nil
	}
	// prm encode "PMAOS, 16 bytes:", reg set --dry-run "dry run: would
	// send SET of register 0x5006, 16 bytes:".
	if strings.HasSuffix(low, " bytes:") {
		if name, _, ok := strings.Cut(t, ","); ok && isFieldName(name) {
			r.d.Register = name
		}
		return true, nil
	}
	// Prose around the data: "written; read back:", "note: ...".
	if strings.HasPrefix(low, "note:") || strings.HasSuffix(t, ":") && !looksHex(strings.TrimSuffix(strings.Fields(t)[0], ":")) {
		return true, nil
	}
	// C arrays from xxd -i.
	if strings.HasPrefix(low, "unsigned ") || t == "};" || t == "}" {
		return true, nil
	}
	return false, nil
}

// isRule: a line of =, -, + (table rules).
func isRule(t string) bool {
	n := 0
	for _, c := range t {
		switch c {
		case '=', '-', '+':
			n++
		case ' ', '\t', '|':
		default:
			return false
		}
	}
	return n >= 3
}

// isFieldName: a dotted path of identifiers with optional [N] indexes.
func isFieldName(s string) bool {
	if s == "" || !(s[0] == '_' || s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '.' || c == '[' || c == ']' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func (r *reader) finish() (*Dump, error) {
	d := r.d
	if r.mode == modeMstregFields || r.mode == modeCxrayFields {
		if len(d.Fields) == 0 {
			return nil, &Error{Msg: "the field table has no rows"}
		}
		return d, nil
	}
	if err := r.flushLoose(); err != nil {
		return nil, err
	}
	if r.repeat {
		return nil, &Error{Msg: "the dump ends in a '*' line (repeated lines) without the final offset that says how far they repeat; paste the whole output"}
	}
	if r.endMark >= 0 && r.endMark > len(r.buf) && r.endMark <= MaxBytes {
		r.noteGap(len(r.buf), r.endMark, "the final offset line")
		r.grow(r.endMark)
	}
	if len(r.formats) > 0 {
		d.Format = strings.Join(r.formats, ", ")
	} else if d.Format == "" {
		d.Format = "hex"
	}
	d.Bytes = r.buf
	if d.Bytes == nil {
		d.Bytes = []byte{}
	}
	if r.octal {
		d.Notes = append(d.Notes, "offsets of 7 digits were read as octal, as od prints them by default")
	}
	// Report gaps: bytes no line set, inside the dump.
	for i := 0; i < len(r.lineOf); {
		if r.lineOf[i] != 0 {
			i++
			continue
		}
		j := i
		for j < len(r.lineOf) && r.lineOf[j] == 0 {
			j++
		}
		d.Gaps = append(d.Gaps, Range{i, j})
		if !r.gapNoted(i, j) {
			d.Notes = append(d.Notes, fmt.Sprintf("bytes 0x%x..0x%x are not in the dump; taken as zero", i, j-1))
		}
		i = j
	}
	return d, nil
}

func (r *reader) gapNoted(from, to int) bool {
	for _, n := range r.d.Notes {
		if strings.HasPrefix(n, fmt.Sprintf("bytes 0x%x..0x%x ", from, to-1)) {
			return true
		}
	}
	return false
}

func (r *reader) noteGap(from, to int, why string) {
	r.d.Notes = append(r.d.Notes, fmt.Sprintf("bytes 0x%x..0x%x are not in the dump (up to %s); taken as zero", from, to-1, why))
}

func (r *reader) grow(n int) {
	for len(r.buf) < n {
		r.buf = append(r.buf, 0)
		r.lineOf = append(r.lineOf, 0)
	}
}

// put places b at off, refusing a byte that another line set differently.
func (r *reader) put(line, off int, b []byte) error {
	if off < 0 || off+len(b) > MaxBytes {
		return &Error{Line: line, Msg: fmt.Sprintf("offset 0x%x is beyond %d bytes; is this a dump of a register or module EEPROM?", off, MaxBytes)}
	}
	r.grow(off + len(b))
	for i, c := range b {
		at := off + i
		if prev := r.lineOf[at]; prev != 0 && r.buf[at] != c {
			return &Error{Line: line, Msg: fmt.Sprintf("byte 0x%x is 0x%02x here but 0x%02x on line %d; two lines give different bytes for one address (two dumps pasted together?)", at, c, r.buf[at], prev)}
		}
		r.buf[at] = c
		r.lineOf[at] = int32(line)
	}
	r.cursor = off + len(b)
	return nil
}

// placeAddressed puts an addressed line, first filling a pending "*"
// repeat up to the new address.
func (r *reader) placeAddressed(line, off int, b []byte) error {
	if err := r.flushLoose(); err != nil {
		return err
	}
	if r.repeat {
		r.repeat = false
		if len(r.last) == 0 {
			return &Error{Line: line, Msg: "a '*' line with no line before it to repeat"}
		}
		for at := r.cursor; at < off; at += len(r.last) {
			n := min(len(r.last), off-at)
			if err := r.put(line-1, at, r.last[:n]); err != nil {
				return err
			}
		}
	}
	if err := r.put(line, off, b); err != nil {
		return err
	}
	if len(b) > 0 {
		r.last = b
	}
	return nil
}

// flushLoose converts the pending tokens of lines without an address. The
// dword-or-byte reading of tokens is decided over all of them together, as
// before addresses were honoured: "0x218, 0" is two dwords.
func (r *reader) flushLoose() error {
	if len(r.loose) == 0 {
		return nil
	}
	dwords := false
	for _, t := range r.loose {
		if hasPrefix0x(t.s) && len(t.s) != 4 {
			dwords = true
		}
	}
	for _, t := range r.loose {
		dw := dwords && (hasPrefix0x(t.s) || len(strings.ReplaceAll(t.s, "_", "")) < 8)
		b, err := token(t.s, dw)
		if err != nil {
			return &Error{Line: t.line, Token: t.s, Msg: err.Error()}
		}
		if err := r.put(t.line, r.cursor, b); err != nil {
			return err
		}
	}
	r.loose = r.loose[:0]
	return nil
}

func (r *reader) addLoose(line int, fields []string) {
	for _, f := range fields {
		r.loose = append(r.loose, tok{line, f})
	}
}

// byteLine reads one line of a byte dump.
func (r *reader) byteLine(n int, l, t string) error {
	if t == "*" {
		if err := r.flushLoose(); err != nil {
			return err
		}
		r.repeat = true
		r.format("repeated lines (*)")
		return nil
	}
	f := strings.Fields(t)
	// "OFFSET: ..." — xxd, ethtool -m hex, cxray prm encode / dry run.
	if off, ok := strings.CutSuffix(f[0], ":"); ok && looksHex(off) {
		return r.colonLine(n, t, off)
	}
	// od -t x1z: the ASCII column is between > and <; the hex
	// digits before it hold no '>'.
	if i := strings.IndexByte(t, '>'); i > 0 && strings.HasSuffix(t, "<") && isOffsetBytes(strings.Fields(t[:i])) {
		return r.offsetBytes(n, strings.Fields(t[:i]), "od")
	}
	// mstreg / mlxreg "0x00000004 | 0x00000196".
	if before, after, ok := strings.Cut(t, "|"); ok {
		b := strings.Fields(before)
		if len(b) == 1 && looksHex(b[0]) {
			if strings.Contains(after, "|") {
				return &Error{Line: n, Token: t, Msg: "more than two columns; paste only the address and data"}
			}
			return r.addressDwords(n, b[0], strings.Fields(after), "mstreg --get (Address | Data)")
		}
		// hexdump -C: "00000010  00 11 ... |ascii|"; the ASCII column
		// starts at the first bar (hex digits and spaces hold none).
		if isOffsetBytes(b) {
			return r.offsetBytes(n, b, "hexdump -C")
		}
		if strings.TrimSpace(before) == "" {
			r.addLoose(n, splitTokens(after))
			return nil
		}
		return &Error{Line: n, Token: strings.TrimSpace(before), Msg: "not an address column (mstreg rows look like 0x00000004 | 0x00000196)"}
	}
	// hexdump -C without the ASCII column, od -A x -t x1, od -t x1.
	if isOffsetBytes(f) {
		return r.offsetBytes(n, f, "hexdump -C")
	}
	// The bare offset that ends hexdump -C and od output.
	if len(f) == 1 && isOffset(f[0]) && len(r.formats) > 0 && (r.lastWasOffsetForm() || r.repeat) {
		off, err := r.offsetValue(n, f[0])
		if err != nil {
			return err
		}
		if r.repeat {
			return r.placeAddressed(n, off, nil)
		}
		r.endMark = off
		return nil
	}
	// Words of hexdump's default format and od -x are in the byte order
	// of the machine that printed them: refuse rather than guess.
	if len(f) >= 2 && isOffset(f[0]) && allWords(f[1:]) {
		return &Error{Line: n, Token: t, Msg: "this looks like hexdump or od output in 16-bit words, whose byte order is the printing machine's; print the bytes with 'hexdump -C', 'xxd' or 'od -A x -t x1' instead"}
	}
	// mstreg rows after an "Address | Data" heading, cxray's "ADDRESS DATA"
	// rows: "0x00000004  0x00000196".
	if len(f) == 2 && hasPrefix0x(f[0]) && hasPrefix0x(f[1]) && r.addrHdr {
		return r.addressDwords(n, f[0], f[1:], "")
	}
	// ethtool -m hex on of older ethtool: "0x0000\t\t03 04 ...".
	if len(f) >= 2 && hasPrefix0x(f[0]) && len(f[0]) == 6 && allBytes(f[1:]) {
		off, _ := strconv.ParseUint(f[0][2:], 16, 32)
		b, err := bytesOf(n, f[1:])
		if err != nil {
			return err
		}
		r.format("ethtool -m hex")
		return r.placeAddressed(n, int(off), b)
	}
	r.addLoose(n, splitTokens(l))
	return nil
}

func (r *reader) lastWasOffsetForm() bool {
	for _, f := range r.formats {
		if f == "hexdump -C" || f == "od" || f == "xxd" {
			return true
		}
	}
	return false
}

func splitTokens(l string) []string {
	if i := commentStart(l); i >= 0 {
		l = l[:i]
	}
	return strings.FieldsFunc(l, func(r rune) bool {
		return r == ' ' || r == '\t' || r == ',' || r == ';' || r == '\r' || r == '{' || r == '}'
	})
}

// commentStart finds a '#' that starts a comment: at the start of the line
// or after white space. (The ASCII columns, which may hold '#', never get
// here.)
func commentStart(l string) int {
	for i := 0; i < len(l); i++ {
		if l[i] == '#' && (i == 0 || l[i-1] == ' ' || l[i-1] == '\t' || l[i-1] == ',') {
			return i
		}
	}
	return -1
}

// addressDwords reads "ADDR | DWORD..." rows.
func (r *reader) addressDwords(n int, addr string, data []string, format string) error {
	off, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(addr, "0x"), "0X"), 16, 32)
	if err != nil {
		return &Error{Line: n, Token: addr, Msg: "not an address"}
	}
	if format != "" {
		r.format(format)
	}
	var out []byte
	for _, d := range data {
		b, err := token(d, true)
		if err != nil {
			return &Error{Line: n, Token: d, Msg: err.Error()}
		}
		out = append(out, b...)
	}
	return r.placeAddressed(n, int(off), out)
}

// colonLine reads "OFFSET: data [ASCII]": xxd (hex groups, then the ASCII
// column after two spaces), ethtool -m hex (bytes), cxray's prm encode and
// dry-run lines (0x dwords).
func (r *reader) colonLine(n int, t, offText string) error {
	off, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(offText, "0x"), "0X"), 16, 32)
	if err != nil || off > MaxBytes {
		return &Error{Line: n, Token: offText, Msg: "not an offset"}
	}
	rest := strings.TrimLeft(t[strings.IndexByte(t, ':')+1:], " \t")
	f := strings.Fields(rest)
	if len(f) == 0 {
		return r.placeAddressed(n, int(off), nil)
	}
	if hasPrefix0x(f[0]) {
		// cxray: "0x00: 0x00010101 0x00000000".
		var out []byte
		for _, d := range splitTokens(rest) {
			b, err := token(d, true)
			if err != nil {
				return &Error{Line: n, Token: d, Msg: err.Error()}
			}
			out = append(out, b...)
		}
		r.format("dwords at offsets")
		return r.placeAddressed(n, int(off), out)
	}
	// xxd: hex groups separated by single spaces; two spaces end them
	// and the ASCII column follows (as many characters as bytes, fewer
	// when trailing spaces were trimmed).
	hexPart, ascii, gap := strings.Cut(rest, "  ")
	groups := strings.Fields(hexPart)
	var out []byte
	for _, g := range groups {
		if !looksHex(g) || len(g)%2 == 1 {
			return &Error{Line: n, Token: g, Msg: "not a group of hex bytes"}
		}
		b, _ := token(g, false)
		out = append(out, b...)
	}
	if gap {
		if a := strings.TrimLeft(ascii, " "); utf8.RuneCountInString(a) > len(out) && len(strings.TrimSpace(ascii)) > 0 {
			// More text than bytes: not an ASCII column but more data
			// (ethtool separates nothing with two spaces, so this is
			// a line with a wide gap); read it as data.
			more, err := bytesOfGroups(n, strings.Fields(ascii))
			if err != nil {
				return &Error{Line: n, Token: strings.TrimSpace(ascii), Msg: "after the hex bytes: more characters than bytes, so not an ASCII column, and not hex either"}
			}
			out = append(out, more...)
		}
		r.format("xxd")
	} else if allBytes(groups) {
		r.format("ethtool -m hex")
	} else {
		r.format("xxd")
	}
	return r.placeAddressed(n, int(off), out)
}

func bytesOfGroups(n int, gs []string) ([]byte, error) {
	var out []byte
	for _, g := range gs {
		if !looksHex(g) || len(g)%2 == 1 || hasPrefix0x(g) {
			return nil, &Error{Line: n, Token: g, Msg: "not hex"}
		}
		b, _ := token(g, false)
		out = append(out, b...)
	}
	return out, nil
}

// offsetBytes reads "OFFSET b0 b1 ..." (hexdump -C, od -t x1).
func (r *reader) offsetBytes(n int, f []string, format string) error {
	off, err := r.offsetValue(n, f[0])
	if err != nil {
		return err
	}
	b, err := bytesOf(n, f[1:])
	if err != nil {
		return err
	}
	r.format(format)
	return r.placeAddressed(n, off, b)
}

// offsetValue reads an offset column: 8 digits (hexdump -C) and 6 (od -A
// x) are hex; 7 (od's default) are octal.
func (r *reader) offsetValue(n int, s string) (int, error) {
	base := 16
	if len(s) == 7 {
		base = 8
		r.octal = true
	}
	v, err := strconv.ParseUint(s, base, 32)
	if err != nil {
		if base == 8 {
			return 0, &Error{Line: n, Token: s, Msg: "a 7-digit offset is octal (od's default) and this is not; print offsets in hex with 'od -A x' or use 'hexdump -C'"}
		}
		return 0, &Error{Line: n, Token: s, Msg: "not an offset"}
	}
	return int(v), nil
}

func isOffset(s string) bool { return (len(s) >= 6 && len(s) <= 8) && looksHex(s) && !hasPrefix0x(s) }

// isOffsetBytes: an offset column followed by at least one and at most 32
// two-digit bytes.
func isOffsetBytes(f []string) bool {
	return len(f) >= 2 && len(f) <= 33 && isOffset(f[0]) && allBytes(f[1:])
}

func allBytes(f []string) bool {
	for _, x := range f {
		if len(x) != 2 || !looksHex(x) {
			return false
		}
	}
	return len(f) > 0
}

func allWords(f []string) bool {
	for _, x := range f {
		if len(x) != 4 || !looksHex(x) {
			return false
		}
	}
	return len(f) > 0
}

func bytesOf(n int, f []string) ([]byte, error) {
	out := make([]byte, 0, len(f))
	for _, x := range f {
		v, err := strconv.ParseUint(x, 16, 8)
		if err != nil {
			return nil, &Error{Line: n, Token: x, Msg: "not a hex byte"}
		}
		out = append(out, byte(v))
	}
	return out, nil
}

func hasPrefix0x(s string) bool { return len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") }

func looksHex(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if s == "" {
		return false
	}
	return strings.Trim(s, "0123456789abcdefABCDEF_") == ""
}

// token reads one data token. A token without 0x is a run of bytes and
// must have an even number of digits. Tokens with 0x are numbers: two
// digits are a byte; with dword set each is a big-endian dword,
// zero-extended ("0x218" is 00 00 02 18), and longer ones must be whole
// dwords.
func token(f string, dword bool) ([]byte, error) {
	s := f
	if hasPrefix0x(s) {
		s = s[2:]
	}
	s = strings.ReplaceAll(s, "_", "")
	if s == "" {
		return nil, fmt.Errorf("no digits")
	}
	if dword {
		if len(s) <= 8 {
			s = strings.Repeat("0", 8-len(s)) + s
		} else if len(s)%8 != 0 {
			return nil, fmt.Errorf("%d hex digits is not a whole number of dwords; write each dword as 8 digits", len(s))
		}
	}
	if len(s)%2 == 1 {
		return nil, fmt.Errorf("odd number of hex digits (%d); write whole bytes, e.g. 0x%s", len(s), strings.Repeat("0", 8-len(s)%8)+s)
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not hex")
	}
	return b, nil
}

// Package hexdump reads register bytes the way people paste them: dwords
// ("0x00000218 0x00000000"), runs of hex digits, `hexdump -C` and `xxd`
// lines, mstreg's "Address | Data" rows, with commas, colons and comments.
package hexdump

import (
	"bufio"
	"fmt"
	"strings"
)

// Error points at the bad token.
type Error struct {
	Line  int
	Token string
	Msg   string
}

func (e *Error) Error() string {
	return fmt.Sprintf("line %d: %q: %s", e.Line, e.Token, e.Msg)
}

// Parse returns the bytes of a hex dump. Tokens are separated by white
// space, commas or semicolons. A token without 0x is a run of bytes and must
// have an even number of digits. Tokens with 0x are numbers: if every one has
// exactly two digits they are bytes ("0x00, 0x02"), otherwise each is a
// big-endian dword, zero-extended ("0x218" is 00 00 02 18), and longer ones
// must be whole dwords; among dwords, a plain token shorter than 8 digits is
// a dword too ("0x218, 0"). On a line
// that looks like `hexdump -C` or `xxd` output, the leading offset and the
// trailing ASCII column are skipped; on "ADDR | DATA" rows (mstreg) the
// address column is skipped. Text after '#' is a comment.
func Parse(text string) ([]byte, error) {
	type tok struct {
		line int
		s    string
	}
	var toks []tok
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		l := sc.Text()
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		// hexdump -C: the ASCII column between bars.
		if i := strings.IndexByte(l, '|'); i >= 0 && strings.Count(l, "|") >= 2 && strings.HasSuffix(strings.TrimSpace(l), "|") && isHexdumpC(l[:i]) {
			l = l[:i]
		}
		// mstreg "0x00000000 | 0x00000218": keep the data column.
		if before, after, ok := strings.Cut(l, "|"); ok {
			if strings.Contains(after, "|") {
				return nil, &Error{Line: line, Token: strings.TrimSpace(l), Msg: "more than two columns; paste only the data"}
			}
			if len(strings.Fields(before)) == 1 && looksHex(strings.TrimSpace(before)) {
				l = after
			} else if strings.TrimSpace(before) != "" {
				return nil, &Error{Line: line, Token: strings.TrimSpace(before), Msg: "not an address column"}
			} else {
				l = after
			}
		}
		fields := strings.FieldsFunc(l, func(r rune) bool {
			return r == ' ' || r == '\t' || r == ',' || r == ';' || r == '\r'
		})
		if len(fields) == 0 {
			continue
		}
		// xxd "00000010: 0000 0218 ...": an offset ending in a colon.
		if strings.HasSuffix(fields[0], ":") {
			if !looksHex(strings.TrimSuffix(fields[0], ":")) {
				return nil, &Error{Line: line, Token: fields[0], Msg: "not an offset"}
			}
			fields = fields[1:]
			if n := len(fields); n > 0 && !looksHex(fields[n-1]) {
				fields = fields[:n-1] // xxd's ASCII column
			}
		} else if isHexdumpC(l) {
			fields = fields[1:]
		}
		for _, f := range fields {
			toks = append(toks, tok{line, f})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	dwords := false
	for _, t := range toks {
		if hasPrefix0x(t.s) && len(t.s) != 4 {
			dwords = true
		}
	}
	var out []byte
	for _, t := range toks {
		// Among dwords a short plain token ("0") is a dword too.
		dw := dwords && (hasPrefix0x(t.s) || len(strings.ReplaceAll(t.s, "_", "")) < 8)
		b, err := token(t.s, dw)
		if err != nil {
			return nil, &Error{Line: t.line, Token: t.s, Msg: err.Error()}
		}
		out = append(out, b...)
	}
	return out, nil
}

func hasPrefix0x(s string) bool { return len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") }

// isHexdumpC: an offset of 7 or 8 hex digits followed only by two-digit
// groups, as `hexdump -C` and `od -A x -t x1` print.
func isHexdumpC(l string) bool {
	f := strings.Fields(l)
	if len(f) < 2 || (len(f[0]) != 7 && len(f[0]) != 8) || !looksHex(f[0]) {
		return false
	}
	for _, x := range f[1:] {
		if len(x) != 2 || !looksHex(x) {
			return false
		}
	}
	return true
}

func looksHex(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if unhex(s[i]) < 0 {
			return false
		}
	}
	return true
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

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
	b := make([]byte, len(s)/2)
	for i := range b {
		hi, lo := unhex(s[2*i]), unhex(s[2*i+1])
		if hi < 0 || lo < 0 {
			return nil, fmt.Errorf("not hex")
		}
		b[i] = byte(hi<<4 | lo)
	}
	return b, nil
}

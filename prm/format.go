package prm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cxray/cxray/internal/lazyre"
)

// Format says how a field's bits are meant to be read, beyond "a number":
// the PRM gives it in prose (descriptions), and the built-in database
// carries what our generator derived from that prose (prm/facts "fmt=").
type Format uint8

// Formats.
const (
	FormatNone   Format = iota
	FormatText          // ASCII characters ("ASCII Vendor name ...")
	FormatBCD           // decimal digits in nibbles ("17:43 will be coded as 0x1743")
	FormatSigned        // two's complement ("2's complement", "threshold in dBm")
)

var formatNames = [...]string{"", "text", "bcd", "signed"}

func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", f)
}

// ParseFormat reads a Format's name.
func ParseFormat(s string) (Format, error) {
	for i, n := range formatNames {
		if s == n {
			return Format(i), nil
		}
	}
	return FormatNone, fmt.Errorf("unknown field format %q (want text, bcd or signed)", s)
}

var (
	asciiRE  = lazyre.New(`(?i)\bascii\b`)
	bcdRE    = lazyre.New(`(?i)\bBCD\b|coded as\b[^.]*\b0x[0-9]+\b`)
	signedRE = lazyre.New(`(?i)\b(2'?s|two'?s)[ -]complement\b|\bin dBm([^/a-z]|$)`)
)

// DetectFormat derives a field's Format from its description, the way the
// PRM states it. Fields whose reading depends on another field (PDDR's
// powers are dBm or µW by module_info_ext) get none here; prm/units knows
// them.
func DetectFormat(descr string) Format {
	switch {
	case descr == "":
		return FormatNone
	case bcdRE.MatchString(descr):
		return FormatBCD
	case asciiRE.MatchString(descr):
		return FormatText
	case signedRE.MatchString(descr):
		return FormatSigned
	}
	return FormatNone
}

// validRE finds the PRM's "Valid only when X = V" (V a number or a
// Verilog literal such as 4'b0011) and "valid only if X is set" (or true).
var validRE = lazyre.New(`(?i)\bvalid only (?:when|if)\s+([a-z][a-z0-9_]*)\s*(?:==?\s*([0-9]+'[bdh][0-9a-f_]+|0x[0-9a-f]+|[0-9]+|'[0-9]')(?:[^0-9a-z_']|$)|\s+is\s+(?:set|true)\b)`)

// DetectValidity derives when a field means something from its
// description, the way the PRM states it ("Valid only when oper_status =
// 4'b0011", "Valid only if eth_proto_lp_valid is set"); nil when it states
// no such condition. Whether the field named is a sibling is checked when
// the database is put together (NewDB).
func DetectValidity(descr string) *Validity {
	m := validRE.FindStringSubmatch(descr)
	if m == nil {
		return nil
	}
	if m[2] == "" {
		return &Validity{Field: m[1], NonZero: true}
	}
	v, ok := parseLiteral(m[2])
	if !ok {
		return nil
	}
	return &Validity{Field: m[1], Value: v}
}

// parseLiteral reads 3, 0x3, '1' and Verilog's 4'b0011, 8'h1f, 4'd3.
func parseLiteral(s string) (uint64, bool) {
	s = strings.ToLower(strings.ReplaceAll(s, "_", ""))
	if len(s) == 3 && s[0] == '\'' && s[2] == '\'' {
		s = s[1:2]
	}
	if i := strings.IndexByte(s, '\''); i > 0 && i+1 < len(s) {
		base := map[byte]int{'b': 2, 'd': 10, 'h': 16}[s[i+1]]
		v, err := strconv.ParseUint(s[i+2:], base, 64)
		return v, err == nil && base != 0
	}
	v, err := strconv.ParseUint(s, 0, 64)
	return v, err == nil
}

// bcdDigits reads v as BCD; ok is false when a nibble is above 9.
func bcdDigits(v uint64, width int) (uint64, bool) {
	var out, mul uint64 = 0, 1
	for i := 0; i < (width+3)/4; i++ {
		d := v >> (4 * i) & 0xf
		if d > 9 {
			return 0, false
		}
		out += d * mul
		mul *= 10
	}
	return out, true
}

// textOfUint reads a number field that holds ASCII (vendor_rev: "aligned to
// right padded with 0h on the left"; date_code) as its characters: NUL
// padding on either side, printable characters between.
func textOfUint(v uint64, width int) (string, bool) {
	if width%8 != 0 || width < 16 {
		return "", false
	}
	b := make([]byte, width/8)
	for i := range b {
		b[i] = byte(v >> (width - 8 - 8*i))
	}
	s, e := 0, len(b)
	for s < e && b[s] == 0 {
		s++
	}
	for e > s && b[e-1] == 0 {
		e--
	}
	if s == e {
		return "", false
	}
	for _, c := range b[s:e] {
		if c < 0x20 || c >= 0x7f {
			return "", false
		}
	}
	return string(b[s:e]), true
}

// signedOf is v read as two's complement in width bits.
func signedOf(v uint64, width int) int64 {
	if width <= 0 || width >= 64 {
		return int64(v)
	}
	if v>>(width-1)&1 == 1 {
		return int64(v) - int64(1)<<width
	}
	return int64(v)
}

// ParseGUID reads "b83f:d203:00d2:0a20".
func ParseGUID(s string) (uint64, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 4 {
		return 0, fmt.Errorf("%q is not a GUID (xxxx:xxxx:xxxx:xxxx)", s)
	}
	var g uint64
	for _, p := range parts {
		v, err := strconv.ParseUint(p, 16, 16)
		if err != nil || len(p) != 4 {
			return 0, fmt.Errorf("%q is not a GUID (xxxx:xxxx:xxxx:xxxx)", s)
		}
		g = g<<16 | v
	}
	return g, nil
}

// dateOf formats a joined BCD date (the value of a JoinDate step).
func (s *Step) dateOf(u uint64) (string, bool) {
	var y, m, d uint64
	for _, p := range s.Joins {
		shift := s.Width - (p.Bit - s.Bit) - p.Width
		raw := u >> shift & (1<<p.Width - 1)
		v, ok := bcdDigits(raw, p.Width)
		if !ok {
			return "", false
		}
		switch p.Name {
		case "year":
			y = v
		case "month":
			m = v
		case "day":
			d = v
		}
	}
	if y < 100 {
		y += 2000 // "Year= 0x04" for 2004 in the PRM's example
	}
	return fmt.Sprintf("%04d-%02d-%02d", y, m, d), true
}

// ParseDate reads a date as a JoinDate step shows it ("2023-10-05") back
// into the step's bits.
func (s *Step) ParseDate(text string) (uint64, error) {
	var y, m, d int
	if _, err := fmt.Sscanf(text, "%d-%d-%d", &y, &m, &d); err != nil || m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, fmt.Errorf("%q is not a date (YYYY-MM-DD)", text)
	}
	var u uint64
	for _, p := range s.Joins {
		var v int
		switch p.Name {
		case "year":
			v = y
			if p.Width <= 8 {
				v %= 100
			}
		case "month":
			v = m
		case "day":
			v = d
		}
		b, err := strconv.ParseUint(strconv.Itoa(v), 16, 64)
		if err != nil || b >= 1<<p.Width {
			return 0, fmt.Errorf("%q does not fit the date fields", text)
		}
		shift := s.Width - (p.Bit - s.Bit) - p.Width
		u |= b << shift
	}
	return u, nil
}

// ToBCD writes the decimal number v in BCD digits (2023 -> 0x2023).
func ToBCD(v uint64) uint64 {
	var out uint64
	for shift := 0; v > 0; shift += 4 {
		out |= (v % 10) << shift
		v /= 10
	}
	return out
}

// isBCD says a number leaf is BCD.
func isBCD(s *Step) bool { return s.Field != nil && s.Field.Format == FormatBCD && s.Kind == KindUint }

func isSigned(s *Step) bool {
	return s.Field != nil && s.Field.Format == FormatSigned && s.Kind == KindUint
}

func isTextNumber(s *Step) bool {
	return s.Field != nil && s.Field.Format == FormatText && s.Kind == KindUint
}

// formatBCD renders a BCD number: "2023", "10", and for an hour field of
// four digits "12:34".
func formatBCD(s *Step, u uint64) (string, bool) {
	v, ok := bcdDigits(u, s.Width)
	if !ok {
		return "", false
	}
	if strings.Contains(strings.ToLower(s.Name), "hour") && s.Width == 16 {
		return fmt.Sprintf("%02d:%02d", v/100, v%100), true
	}
	return strconv.FormatUint(v, 10), true
}

// PartNames names the fields a joined value is made of, for display.
func (s *Step) PartNames() []string {
	switch {
	case s.Kind != KindJoined:
		return nil
	case s.Join == JoinDate:
		out := make([]string, len(s.Joins))
		for i, p := range s.Joins {
			out[i] = p.Name
		}
		return out
	case s.Join == JoinGUID:
		a := s.Parts[0]
		return []string{fmt.Sprintf("%s[%d]", a.Name, a.Low+a.Count-2), fmt.Sprintf("%s[%d]", a.Name, a.Low+a.Count-1)}
	}
	return []string{s.Parts[0].Name, s.Parts[1].Name}
}

// JoinName is how a joined value is shown: number, mac, text, date, guid.
func (j JoinStyle) String() string {
	return [...]string{"number", "mac", "text", "date", "guid"}[j]
}

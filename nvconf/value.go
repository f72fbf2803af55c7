package nvconf

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/cxray/cxray/prm"
)

// Labels of BOOL values, as mstconfig prints them.
const (
	boolTrue  = "True"
	boolFalse = "False"
)

// ValueError refuses a value; Allowed says what would be accepted, so the
// message can name it.
type ValueError struct {
	Param   string
	Value   string
	Msg     string
	Allowed string
}

func (e *ValueError) Error() string {
	s := fmt.Sprintf("%s=%s: %s", e.Param, e.Value, e.Msg)
	if e.Allowed != "" {
		s += "; allowed: " + e.Allowed
	}
	return s
}

// Is makes a bad parameter value an input error (prm.ErrInput).
func (e *ValueError) Is(target error) bool { return target == prm.ErrInput }

// Format renders an element value for people: True(1), ETH(2), 8, 0x1f.
func (p *Param) Format(v uint64) string {
	switch p.Type {
	case TypeBool:
		if v == 0 {
			return boolFalse + "(0)"
		}
		if v == 1 {
			return boolTrue + "(1)"
		}
	case TypeEnum:
		if n, ok := p.EnumName(v); ok {
			return fmt.Sprintf("%s(%d)", n, v)
		}
	case TypeBinary:
		return "0x" + strconv.FormatUint(v, 16)
	case TypeInteger:
		w := p.ElemBits()
		if w < 64 && w > 0 && v>>(uint(w)-1)&1 == 1 {
			return strconv.FormatInt(int64(v)-int64(1)<<uint(w), 10)
		}
	}
	return strconv.FormatUint(v, 10)
}

// FormatData renders element i of the parameter from TLV data (i is ignored
// for STRING and BYTES, which render whole).
func (p *Param) FormatData(data []byte, i int) string {
	switch p.Type {
	case TypeString:
		b := p.RawBytes(data)
		end := 0
		for end < len(b) && b[end] != 0 {
			end++
		}
		return strconv.Quote(string(b[:end]))
	case TypeBytes:
		return "0x" + hex.EncodeToString(p.RawBytes(data))
	}
	v, err := p.Get(data, i)
	if err != nil {
		return "N/A"
	}
	return p.Format(v)
}

// Allowed describes the values the parameter's type accepts (without the
// device's limits): the enum names, True/False, or the range of the width.
func (p *Param) Allowed() string {
	switch p.Type {
	case TypeBool:
		return "True(1), False(0)"
	case TypeEnum:
		parts := make([]string, len(p.Enum))
		for i, e := range p.Enum {
			parts[i] = fmt.Sprintf("%s(%d)", e.Name, e.Value)
		}
		return strings.Join(parts, ", ")
	case TypeString:
		return fmt.Sprintf("text of at most %d characters", p.Size/8)
	case TypeBytes:
		return fmt.Sprintf("hex bytes, at most %d", p.Size/8)
	case TypeInteger:
		w := p.ElemBits()
		return fmt.Sprintf("%d..%d", -(int64(1) << uint(w-1)), int64(1)<<uint(w-1)-1)
	case TypeBinary:
		return fmt.Sprintf("hex 0x0..0x%x", maxFor(p.ElemBits()))
	}
	return fmt.Sprintf("0..%d", maxFor(p.ElemBits()))
}

func maxFor(w int) uint64 {
	if w >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(w) - 1
}

// Parse turns a user's value into an element value: an enum name or known
// number, True/False or 1/0 for booleans, decimal or 0x.. for numbers, hex
// for BINARY. Anything else is a *ValueError naming the allowed values.
func (p *Param) Parse(name, s string) (uint64, error) {
	s = strings.TrimSpace(s)
	bad := func(msg string) error {
		return &ValueError{Param: name, Value: s, Msg: msg, Allowed: p.Allowed()}
	}
	if s == "" {
		return 0, bad("no value given")
	}
	w := p.ElemBits()
	switch p.Type {
	case TypeBool:
		switch strings.ToLower(s) {
		case "true", "1", "yes", "on", "enabled":
			return 1, nil
		case "false", "0", "no", "off", "disabled":
			return 0, nil
		}
		return 0, bad(fmt.Sprintf("%s is a boolean", name))
	case TypeEnum:
		for _, e := range p.Enum {
			if strings.EqualFold(e.Name, s) {
				return e.Value, nil
			}
		}
		label := s
		if open := strings.IndexByte(s, '('); open > 0 && strings.HasSuffix(s, ")") {
			label = s[:open] // accept what query prints: ETH(2)
			for _, e := range p.Enum {
				if strings.EqualFold(e.Name, label) {
					return e.Value, nil
				}
			}
		}
		if v, err := strconv.ParseUint(s, 0, 64); err == nil {
			if _, ok := p.EnumName(v); ok {
				return v, nil
			}
			return 0, bad(fmt.Sprintf("%d is not one of %s's values", v, name))
		}
		return 0, bad(fmt.Sprintf("unknown value %q", s))
	case TypeString, TypeBytes:
		return 0, bad(fmt.Sprintf("%s is %s; give it whole", name, p.Type))
	case TypeInteger:
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return 0, bad("not a whole number")
		}
		lo, hi := -(int64(1) << uint(w-1)), int64(1)<<uint(w-1)-1
		if w >= 64 {
			return uint64(v), nil
		}
		if v < lo || v > hi {
			return 0, bad(fmt.Sprintf("%d does not fit in %d bits", v, w))
		}
		return uint64(v) & maxFor(w), nil
	case TypeBinary:
		h := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
		h = strings.NewReplacer(":", "", "-", "", "_", "").Replace(h)
		v, err := strconv.ParseUint(h, 16, 64)
		if err != nil {
			return 0, bad("not a hex number")
		}
		if v > maxFor(w) {
			return 0, bad(fmt.Sprintf("0x%x does not fit in %d bits", v, w))
		}
		return v, nil
	}
	if l := strings.ToLower(s); l == "true" || l == "false" {
		return 0, bad(fmt.Sprintf("%s is a number, not a boolean", name))
	}
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		if _, ierr := strconv.ParseInt(s, 0, 64); ierr == nil {
			return 0, bad("negative numbers are not allowed here")
		}
		return 0, bad(fmt.Sprintf("%s is a number (decimal or 0x..)", name))
	}
	if v > maxFor(w) {
		return 0, bad(fmt.Sprintf("%d does not fit in %d bits", v, w))
	}
	return v, nil
}

// ParseBytes turns a value for a STRING (text) or BYTES (hex) parameter into
// the bytes to store, zero-padded to the parameter's size.
func (p *Param) ParseBytes(name, s string) ([]byte, error) {
	n := p.Size / 8
	out := make([]byte, n)
	switch p.Type {
	case TypeString:
		if len(s) > n {
			return nil, &ValueError{Param: name, Value: s, Msg: fmt.Sprintf("%d characters; the field holds %d", len(s), n), Allowed: p.Allowed()}
		}
		for _, c := range []byte(s) {
			if c < 0x20 || c >= 0x7f {
				return nil, &ValueError{Param: name, Value: s, Msg: "only printable ASCII is allowed", Allowed: p.Allowed()}
			}
		}
		copy(out, s)
	case TypeBytes:
		h := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "0x"), "0X")
		h = strings.NewReplacer(":", "", "-", "", " ", "", "_", "").Replace(h)
		b, err := hex.DecodeString(h)
		if err != nil {
			return nil, &ValueError{Param: name, Value: s, Msg: "not hex bytes", Allowed: p.Allowed()}
		}
		if len(b) > n {
			return nil, &ValueError{Param: name, Value: s, Msg: fmt.Sprintf("%d bytes; the field holds %d", len(b), n), Allowed: p.Allowed()}
		}
		copy(out, b)
	default:
		return nil, fmt.Errorf("%s is %s, not text or bytes", name, p.Type)
	}
	return out, nil
}

// SetBytes stores b (from ParseBytes) into a STRING or BYTES parameter.
func (p *Param) SetBytes(data, b []byte) error {
	dst := p.RawBytes(data)
	if dst == nil || len(b) != len(dst) {
		return fmt.Errorf("%s: %d bytes do not fit the %d-byte field", p.DisplayName(), len(b), len(dst))
	}
	copy(dst, b)
	return nil
}

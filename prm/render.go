package prm

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// JSONOptions tune AppendJSON.
type JSONOptions struct {
	// Raw prints enum leaves as their numbers instead of their names.
	Raw bool
}

const maxSafeJSON = 1 << 53

// AppendJSON appends the decoded register as one JSON object that follows
// the register layout (ARCHITECTURE.md §4): numbers (decimal strings above
// 2^53), enum names, ASCII text as strings, arrays as lists, joined halves as
// an extra key next to them, MACs as "aa:bb:cc:dd:ee:ff".
func (d *Decoded) AppendJSON(b []byte, opt JSONOptions) []byte {
	return appendValueJSON(b, d.Root(), opt)
}

// AppendJSON appends one value as JSON.
func (v Value) AppendJSON(b []byte, opt JSONOptions) []byte { return appendValueJSON(b, v, opt) }

func appendNumber(b []byte, v uint64) []byte {
	if v >= maxSafeJSON {
		b = append(b, '"')
		b = strconv.AppendUint(b, v, 10)
		return append(b, '"')
	}
	return strconv.AppendUint(b, v, 10)
}

func appendValueJSON(b []byte, v Value, opt JSONOptions) []byte {
	s := v.Step()
	switch s.Kind {
	case KindUint:
		if !opt.Raw {
			if n, ok := v.EnumName(); ok {
				return strconv.AppendQuote(b, n)
			}
		}
		return appendNumber(b, v.Uint())
	case KindJoined:
		if s.Join == JoinMAC {
			return strconv.AppendQuote(b, FormatMAC(v.Uint()))
		}
		if v.IsText() {
			return strconv.AppendQuote(b, v.TextString())
		}
		return appendNumber(b, v.Uint())
	case KindBytes:
		return appendHexString(b, v.Raw())
	case KindArray:
		if v.IsText() {
			return strconv.AppendQuote(b, v.TextString())
		}
		b = append(b, '[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValueJSON(b, v.Kid(i), opt)
		}
		return append(b, ']')
	case KindUnion:
		if v.Member() == MemberNone {
			return appendHexString(b, v.Raw())
		}
	}
	b = append(b, '{')
	for i := 0; i < v.Len(); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		k := v.Kid(i)
		b = strconv.AppendQuote(b, k.Step().Name)
		b = append(b, ':')
		b = appendValueJSON(b, k, opt)
	}
	return append(b, '}')
}

func appendHexString(b, raw []byte) []byte {
	b = append(b, '"', '0', 'x')
	b = hex.AppendEncode(b, raw)
	return append(b, '"')
}

// Row is one line of a decoded register in a table.
type Row struct {
	Path  string
	Value Value
	// Text is the value as a person reads it: number in hex and decimal, the
	// enum name, the text, the MAC.
	Text string
}

// Rows flattens the decoded register into table rows, one per leaf, in
// layout order.
func (d *Decoded) Rows() []Row {
	var out []Row
	var walk func(v Value, path string)
	walk = func(v Value, path string) {
		switch v.Kind() {
		case KindStruct:
			for i := 0; i < v.Len(); i++ {
				k := v.Kid(i)
				walk(k, joinPath(path, k.Step().Name))
			}
			return
		case KindUnion:
			if v.Member() != MemberNone {
				for i := 0; i < v.Len(); i++ {
					k := v.Kid(i)
					walk(k, joinPath(path, k.Step().Name))
				}
				return
			}
		case KindArray:
			if !v.IsText() {
				for i := 0; i < v.Len(); i++ {
					k := v.Kid(i)
					walk(k, fmt.Sprintf("%s[%d]", path, k.Index()))
				}
				return
			}
		}
		out = append(out, Row{Path: path, Value: v, Text: FormatValue(v)})
	}
	walk(d.Root(), "")
	return out
}

func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// FormatValue renders a leaf for people.
func FormatValue(v Value) string {
	s := v.Step()
	switch s.Kind {
	case KindUint:
		if n, ok := v.EnumName(); ok {
			return n + " (" + strconv.FormatUint(v.Uint(), 10) + ")"
		}
		return formatHexDec(v.Uint(), s.Width)
	case KindJoined:
		if s.Join == JoinMAC {
			return FormatMAC(v.Uint())
		}
		if v.IsText() {
			return strconv.Quote(v.TextString())
		}
		return formatHexDec(v.Uint(), s.Width)
	case KindArray:
		return strconv.Quote(v.TextString())
	}
	return "0x" + hex.EncodeToString(v.Raw())
}

func formatHexDec(u uint64, width int) string {
	if u < 10 {
		return strconv.FormatUint(u, 10)
	}
	digits := (width + 3) / 4
	return fmt.Sprintf("0x%0*x (%d)", digits, u, u)
}

// FormatRaw renders a leaf like FormatValue but numbers without enum names.
func FormatRaw(v Value) string {
	if v.Kind() == KindUint {
		return formatHexDec(v.Uint(), v.Step().Width)
	}
	return FormatValue(v)
}

// Get finds a decoded value by path ("fw_info.psid", "lane_module_mapping[2].module").
func (d *Decoded) Get(path string) (Value, error) {
	segs, err := splitPath(path)
	if err != nil {
		return Value{}, &FieldError{Path: path, Msg: err.Error()}
	}
	cur := d.Root()
	for i, sg := range segs {
		var next Value
		found := false
		names := []string{}
		for j := 0; j < cur.Len(); j++ {
			k := cur.Kid(j)
			names = append(names, k.Step().Name)
			if n := k.Step().Name; n == sg.name || strings.EqualFold(n, sg.name) || strings.EqualFold(n, sg.name+"_ext") {
				next, found = k, true
				break
			}
		}
		if !found {
			msg := fmt.Sprintf("%s has no field %q", where(segs[:i], d.Plan), sg.name)
			if cur.Kind() == KindUnion {
				msg = fmt.Sprintf("union %s does not hold %q in this data", where(segs[:i], d.Plan), sg.name)
			}
			return Value{}, &FieldError{Path: path, Msg: msg, Valid: names}
		}
		cur = next
		if sg.has {
			if cur.Kind() != KindArray || cur.IsText() {
				return Value{}, &FieldError{Path: path, Msg: sg.name + " is not an array of elements"}
			}
			found = false
			for j := 0; j < cur.Len(); j++ {
				if k := cur.Kid(j); k.Index() == sg.index {
					cur, found = k, true
					break
				}
			}
			if !found {
				return Value{}, &FieldError{Path: path, Msg: fmt.Sprintf("index %d is out of range", sg.index)}
			}
		}
	}
	return cur, nil
}

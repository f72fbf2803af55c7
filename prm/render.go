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
// the register layout: numbers (decimal strings above
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
		if !opt.Raw && v.NotValid() == "" {
			if n, ok := v.EnumName(); ok {
				return strconv.AppendQuote(b, n)
			}
			u := v.Uint()
			switch {
			case isBCD(s):
				if t, ok := formatBCD(s, u); ok && strings.Contains(t, ":") {
					return strconv.AppendQuote(b, t) // an hour, "12:34"
				}
				if d, ok := bcdDigits(u, s.Width); ok {
					return appendNumber(b, d)
				}
			case isTextNumber(s):
				if t, ok := textOfUint(u, s.Width); ok {
					return strconv.AppendQuote(b, strings.TrimRight(t, " "))
				}
			case isSigned(s):
				if n := signedOf(u, s.Width); n < 0 {
					return strconv.AppendInt(b, n, 10)
				}
			}
		}
		return appendNumber(b, v.Uint())
	case KindJoined:
		switch {
		case s.Join == JoinMAC:
			return strconv.AppendQuote(b, FormatMAC(v.Uint()))
		case s.Join == JoinGUID:
			return strconv.AppendQuote(b, FormatGUID(v.Uint()))
		case s.Join == JoinDate && !opt.Raw:
			if t, ok := s.dateOf(v.Uint()); ok {
				return strconv.AppendQuote(b, t)
			}
		case v.IsText():
			return strconv.AppendQuote(b, v.TextString())
		}
		return appendNumber(b, v.Uint())
	case KindBytes:
		if v.IsText() {
			return strconv.AppendQuote(b, v.TextString())
		}
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
	first := true
	for i := 0; i < v.Len(); i++ {
		k := v.Kid(i)
		if i+1 < v.Len() && k.Kind() == KindArray {
			// A GUID array is shown as its joined GUID, which follows it
			// under the same name.
			if n := v.Kid(i + 1); n.Kind() == KindJoined && n.Step().Join == JoinGUID && n.Step().Name == k.Step().Name {
				continue
			}
		}
		if !first {
			b = append(b, ',')
		}
		first = false
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

// NotValid lists the fields that mean nothing in this register, by path,
// with why (Value.NotValid): for JSON, whose values are the bare numbers.
func (d *Decoded) NotValid() map[string]string {
	out := map[string]string{}
	for _, row := range d.Rows() {
		if row.Value.Kind() == KindUint {
			if why := row.Value.NotValid(); why != "" {
				out[row.Path] = why
			}
		}
	}
	return out
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

// FormatValue renders a leaf for people: the value as the PRM means it,
// and, where that is not the plain number, the raw bits in parentheses
// ("up (1)", "2023 (0x2023)", "12:34 (0x1234)", "0xfff6 (-10)",
// `"A2" (0x00004132)`). Text keeps its space padding, so that the table
// can be read back (hexdump) into the same bytes.
func FormatValue(v Value) string {
	s := v.Step()
	switch s.Kind {
	case KindUint:
		u := v.Uint()
		if why := v.NotValid(); why != "" {
			// The number as it is, never an enum name or a unit: it
			// means nothing now.
			return formatHexDec(u, s.Width) + " (not valid: " + why + ")"
		}
		if n, ok := v.EnumName(); ok {
			return n + " (" + strconv.FormatUint(u, 10) + ")"
		}
		switch {
		case isBCD(s):
			if t, ok := formatBCD(s, u); ok {
				if t == strconv.FormatUint(u, 10) {
					return t
				}
				return t + " (" + hexOf(u, s.Width) + ")"
			}
		case isTextNumber(s):
			if t, ok := textOfUint(u, s.Width); ok {
				return strconv.Quote(t) + " (" + hexOf(u, s.Width) + ")"
			}
		case isSigned(s):
			if n := signedOf(u, s.Width); n < 0 {
				return hexOf(u, s.Width) + " (" + strconv.FormatInt(n, 10) + ")"
			}
		}
		return formatHexDec(u, s.Width)
	case KindJoined:
		switch {
		case s.Join == JoinMAC:
			return FormatMAC(v.Uint())
		case s.Join == JoinGUID:
			return FormatGUID(v.Uint())
		case s.Join == JoinDate:
			if t, ok := s.dateOf(v.Uint()); ok {
				return t + " (" + hexOf(v.Uint(), s.Width) + ")"
			}
		case v.IsText():
			return strconv.Quote(v.TextPadded())
		}
		return formatHexDec(v.Uint(), s.Width)
	case KindArray:
		if v.IsText() {
			return strconv.Quote(v.TextPadded())
		}
		return fmt.Sprintf("{%d elements}", v.Len())
	case KindStruct:
		return fmt.Sprintf("{%d fields}", v.Len())
	case KindUnion:
		if v.Member() != MemberNone {
			return fmt.Sprintf("{%d fields}", v.Len())
		}
	case KindBytes:
		if v.IsText() {
			return strconv.Quote(v.TextPadded())
		}
	}
	return "0x" + hex.EncodeToString(v.Raw())
}

func hexOf(u uint64, width int) string {
	return fmt.Sprintf("0x%0*x", (width+3)/4, u)
}

func formatHexDec(u uint64, width int) string {
	if u < 10 {
		return strconv.FormatUint(u, 10)
	}
	digits := (width + 3) / 4
	return fmt.Sprintf("0x%0*x (%d)", digits, u, u)
}

// FormatRaw renders a leaf like FormatValue but numbers as numbers: no
// enum names, BCD digits, text of number fields, signed readings or dates.
func FormatRaw(v Value) string {
	if v.Kind() == KindUint && v.NotValid() != "" {
		return FormatValue(v)
	}
	if k := v.Kind(); k == KindUint || k == KindJoined && v.Step().Join == JoinDate {
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
		// The exact name first, then its case, then the _ext spelling of
		// later revisions: PPRT has both prbs_lock_status and
		// prbs_lock_status_ext, the _ext one first.
		best := 3
		for j := 0; j < cur.Len(); j++ {
			k := cur.Kid(j)
			n := k.Step().Name
			names = append(names, n)
			rank := 3
			switch {
			case n == sg.name:
				rank = 0
			case strings.EqualFold(n, sg.name):
				rank = 1
			case strings.EqualFold(n, sg.name+"_ext"):
				rank = 2
			}
			if rank < best {
				next, found, best = k, true, rank
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
			if cur.Kind() != KindArray {
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

// Shown is the value path names as a whole register's JSON shows it: a
// GUID array (PGUID node_guid, four dwords) is its joined GUID, which
// follows it under the same name; anything else is Get's value.
func (d *Decoded) Shown(path string) (Value, error) {
	v, err := d.Get(path)
	if err != nil || v.Kind() != KindArray {
		return v, err
	}
	parent := d.Root()
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		if parent, err = d.Get(path[:i]); err != nil {
			return v, nil
		}
	}
	for j := 0; j+1 < parent.Len(); j++ {
		if k := parent.Kid(j); k.i == v.i {
			if n := parent.Kid(j + 1); n.Kind() == KindJoined && n.Step().Join == JoinGUID && n.Step().Name == k.Step().Name {
				return n, nil
			}
			break
		}
	}
	return v, nil
}

// Path is the value's path from the register's root as Rows prints it
// ("fw_info.psid", "lane_module_mapping[2].module"); "" for the root.
func (v Value) Path() string {
	var find func(c Value, path string) (string, bool)
	find = func(c Value, path string) (string, bool) {
		if c.i == v.i {
			return path, true
		}
		for i := 0; i < c.Len(); i++ {
			k := c.Kid(i)
			p := joinPath(path, k.Step().Name)
			if c.Kind() == KindArray {
				p = fmt.Sprintf("%s[%d]", path, k.Index())
			}
			if s, ok := find(k, p); ok {
				return s, true
			}
		}
		return "", false
	}
	p, _ := find(v.d.Root(), "")
	return p
}

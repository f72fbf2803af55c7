package prm

import (
	"encoding/hex"
	"fmt"
	"strconv"
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
	return appendValueJSON(b, &d.Root, opt)
}

func appendNumber(b []byte, v uint64) []byte {
	if v >= maxSafeJSON {
		b = append(b, '"')
		b = strconv.AppendUint(b, v, 10)
		return append(b, '"')
	}
	return strconv.AppendUint(b, v, 10)
}

func appendValueJSON(b []byte, v *Value, opt JSONOptions) []byte {
	switch v.Step.Kind {
	case KindUint:
		if !opt.Raw {
			if n, ok := v.EnumName(); ok {
				return strconv.AppendQuote(b, n)
			}
		}
		return appendNumber(b, v.U)
	case KindJoined:
		if v.Step.Join == JoinMAC {
			return strconv.AppendQuote(b, FormatMAC(v.U))
		}
		return appendNumber(b, v.U)
	case KindBytes:
		return strconv.AppendQuote(b, "0x"+hex.EncodeToString(v.Raw))
	case KindArray:
		if v.Text {
			return strconv.AppendQuote(b, v.TextString())
		}
		b = append(b, '[')
		for i := range v.Kids {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValueJSON(b, &v.Kids[i], opt)
		}
		return append(b, ']')
	case KindUnion:
		if v.Member == MemberNone {
			return strconv.AppendQuote(b, "0x"+hex.EncodeToString(v.Raw))
		}
	}
	b = append(b, '{')
	for i := range v.Kids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, v.Kids[i].Step.Name)
		b = append(b, ':')
		b = appendValueJSON(b, &v.Kids[i], opt)
	}
	return append(b, '}')
}

// Row is one line of a decoded register in a table.
type Row struct {
	Path  string
	Step  *Step
	Value *Value
	// Text is the value as a person reads it: number in hex and decimal, the
	// enum name, the text, the MAC.
	Text string
}

// Rows flattens the decoded register into table rows, one per leaf, in
// layout order.
func (d *Decoded) Rows() []Row {
	var out []Row
	var walk func(v *Value, path string)
	walk = func(v *Value, path string) {
		switch v.Step.Kind {
		case KindStruct:
			for i := range v.Kids {
				walk(&v.Kids[i], joinPath(path, v.Kids[i].Step.Name))
			}
			return
		case KindUnion:
			if v.Member != MemberNone {
				for i := range v.Kids {
					walk(&v.Kids[i], joinPath(path, v.Kids[i].Step.Name))
				}
				return
			}
		case KindArray:
			if !v.Text {
				for i := range v.Kids {
					walk(&v.Kids[i], fmt.Sprintf("%s[%d]", path, v.Kids[i].Index))
				}
				return
			}
		}
		out = append(out, Row{Path: path, Step: v.Step, Value: v, Text: FormatValue(v)})
	}
	walk(&d.Root, "")
	return out
}

func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// FormatValue renders a leaf for people.
func FormatValue(v *Value) string {
	switch v.Step.Kind {
	case KindUint:
		s := formatHexDec(v.U, v.Step.Width)
		if n, ok := v.EnumName(); ok {
			return n + " (" + strconv.FormatUint(v.U, 10) + ")"
		}
		return s
	case KindJoined:
		if v.Step.Join == JoinMAC {
			return FormatMAC(v.U)
		}
		return formatHexDec(v.U, v.Step.Width)
	case KindArray:
		return strconv.Quote(v.TextString())
	}
	return "0x" + hex.EncodeToString(v.Raw)
}

func formatHexDec(u uint64, width int) string {
	if u < 10 {
		return strconv.FormatUint(u, 10)
	}
	digits := (width + 3) / 4
	return fmt.Sprintf("0x%0*x (%d)", digits, u, u)
}

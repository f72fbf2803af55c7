package ifc

import (
	"fmt"
	"strconv"
	"strings"
)

// Besides the layouts, the kernel headers name the numbers that go into
// them: command opcodes (MLX5_CMD_OP_* in mlx5_ifc.h), capability types
// (enum mlx5_cap_type in device.h), command status codes (MLX5_CMD_STAT_*),
// and field values (MLX5_QPC_STATE_*). They are C enumerators: a name,
// "= expression" or the previous value plus one. The enum scanner collects
// every enumerator whose value it can work out, in file order.

// Enumerator is one named constant of a C enum definition.
type Enumerator struct {
	Name  string
	Value int64
	// Enum is the enum's tag ("mlx5_cap_type"), "" for an anonymous enum.
	Enum string
	// Block numbers the enum definitions of a file from 0, so enumerators
	// defined together can be told from others with a similar prefix.
	Block int
	File  string
	Line  int
}

// maxEnumerators bounds how many enumerators one file may define.
const maxEnumerators = 1 << 15

// ScanEnums returns the enumerators of every enum definition in src (a C
// header). Enumerators whose value cannot be worked out (an expression over
// names this file does not define, or out of range) are left out, and so are
// the ones after them that count on from them.
func ScanEnums(file string, src []byte) ([]Enumerator, error) {
	macros := map[string]string{}
	toks, _, err := lex(file, src, macros)
	if err != nil {
		return nil, err
	}
	p := &parser{file: file, toks: toks, macros: macros}
	return p.enums(), nil
}

// enums walks the token stream for "enum [tag] { ... }" and evaluates the
// enumerators; identifiers in value expressions resolve to enumerators
// defined before them in the same file, or to object-like macros.
func (p *parser) enums() []Enumerator {
	var out []Enumerator
	block := 0
	toks := p.toks
	for i := 0; i < len(toks); i++ {
		if toks[i].kind != tIdent || toks[i].text != "enum" {
			continue
		}
		j, tag := i+1, ""
		if j < len(toks) && toks[j].kind == tIdent {
			tag, j = toks[j].text, j+1
		}
		if j >= len(toks) || toks[j].text != "{" {
			continue // a use ("enum mlx5_cap_type t"), not a definition
		}
		j++
		next, known := int64(0), true
		for j < len(toks) && toks[j].text != "}" && toks[j].kind != tEOF && len(out) < maxEnumerators {
			name := toks[j]
			if name.kind != tIdent {
				break // not an enumerator list after all
			}
			j++
			var expr []token
			if j < len(toks) && toks[j].text == "=" {
				j++
				depth := 0
				for j < len(toks) && toks[j].kind != tEOF {
					t := toks[j]
					if depth == 0 && (t.text == "," || t.text == "}") {
						break
					}
					switch t.text {
					case "(":
						depth++
					case ")":
						depth--
					}
					expr = append(expr, t)
					j++
				}
			}
			if expr != nil {
				v, err := p.evalDepth(expr, 0)
				known = err == nil
				next = v
			}
			if known && (next > maxValue || next < -maxValue) {
				known = false // counted past what expressions may hold
			}
			if known {
				out = append(out, Enumerator{Name: name.text, Value: next, Enum: tag, Block: block, File: p.file, Line: name.line})
				if p.macros != nil && len(p.macros) < maxMacros {
					p.macros[name.text] = strconv.FormatInt(next, 10)
				}
				next++
			}
			if j < len(toks) && toks[j].text == "," {
				j++
			}
		}
		block++
		i = j
	}
	return out
}

// Enumerators lists the enumerators of every file the header was read from
// (LoadFile: mlx5_ifc.h, its includes and driver.h), in file order.
func (h *Header) Enumerators() []Enumerator { return h.enumerators }

// Lookup returns the value of an enumerator by name.
func Lookup(es []Enumerator, name string) (int64, bool) {
	for _, e := range es {
		if e.Name == name {
			return e.Value, true
		}
	}
	return 0, false
}

// WithPrefix returns the enumerators whose names start with prefix, in
// order, with the prefix cut off the name.
func WithPrefix(es []Enumerator, prefix string) []Enumerator {
	var out []Enumerator
	for _, e := range es {
		if rest, ok := strings.CutPrefix(e.Name, prefix); ok && rest != "" {
			e.Name = rest
			out = append(out, e)
		}
	}
	return out
}

// String gives "NAME = 0xV (file:line)".
func (e Enumerator) String() string {
	return fmt.Sprintf("%s = 0x%x (%s:%d)", e.Name, e.Value, e.File, e.Line)
}

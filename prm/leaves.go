package prm

import (
	"fmt"
	"strings"
)

// Leaf is one named bit range of a layout, for listing and comparing.
type Leaf struct {
	Path     string
	Bit      int // absolute MSB-first offset from byte 0
	Width    int // bits; for a scalar array, one element
	Count    int // elements of a scalar array listed once (0 for plain fields)
	Variable bool
	Access   Access
	Step     *Step
	// When is the condition under which a union member holds this leaf, for
	// leaves inside unions ("page_select == Module_info_page (0x3)").
	When   string
	Joined bool // derived: two halves shown as one value
}

// Field returns the database field behind the leaf (nil for joined values).
func (l *Leaf) Field() *Field { return l.Step.Field }

// Enum returns the leaf's enum values.
func (l *Leaf) Enum() []EnumValue {
	if l.Step.Field == nil || l.Step.Kind != KindUint {
		return nil
	}
	return l.Step.Field.Enum
}

// Leaves lists every leaf of the layout: plain fields, scalar arrays once
// (with Count), arrays of structures element by element (a VARIABLE array by
// its first element), the members of every union, and joined values.
func (p *Plan) Leaves() []Leaf {
	var out []Leaf
	var walk func(s *Step, path string, parent int, when string)
	walk = func(s *Step, path string, parent int, when string) {
		at := parent + s.Bit
		switch s.Kind {
		case KindStruct:
			for _, c := range s.Children {
				walk(c, joinPath(path, c.Name), at, when)
			}
			return
		case KindUnion:
			for i, c := range s.Children {
				w := when
				if cond := s.When[i]; cond != "" {
					w = joinWhen(when, cond)
				}
				walk(c, joinPath(path, c.Name), at, w)
			}
			return
		case KindArray:
			if s.Elem.Kind == KindUint || s.Elem.Kind == KindBytes {
				out = append(out, Leaf{Path: path, Bit: at, Width: s.Elem.Width, Count: s.Count, Variable: s.Variable, Access: s.Access, Step: s, When: when})
				return
			}
			n := s.Count
			if s.Variable {
				n = 1
			}
			for i := 0; i < n; i++ {
				walk(s.Elem, fmt.Sprintf("%s[%d]", path, s.Low+i), at+i*s.Elem.Width, when)
			}
			return
		}
		out = append(out, Leaf{Path: path, Bit: at, Width: s.Width, Access: s.Access, Step: s, When: when, Joined: s.Kind == KindJoined})
	}
	walk(p.Root, "", 0, "")
	return out
}

func joinWhen(a, b string) string {
	if a == "" {
		return b
	}
	return a + " and " + b
}

// AccessOrDefault gives the access kind to show: leaves with none inherit
// RO, the kind of union members and containers in practice.
func (l *Leaf) AccessOrDefault() Access {
	if l.Access == AccessNone {
		return AccessRO
	}
	return l.Access
}

// ByteRange describes a leaf's place as "0x4.16:8", ADB style, for people
// who read the PDF: dword-aligned byte offset, LSB-based bit, width.
func (l *Leaf) ByteRange() string {
	dw := (l.Bit / 32) * 4
	if l.Width >= 32 || l.Count > 1 {
		return fmt.Sprintf("0x%x", l.Bit/8)
	}
	lsb := 32 - l.Bit%32 - l.Width
	return fmt.Sprintf("0x%x.%d", dw, lsb)
}

// HasPrefixPath reports whether path is under prefix (dotted).
func HasPrefixPath(path, prefix string) bool {
	if prefix == "" {
		return true
	}
	return path == prefix || strings.HasPrefix(path, prefix+".") || strings.HasPrefix(path, prefix+"[")
}

package nvconf

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// ParamInfo is one parameter as `config show-params` lists it.
type ParamInfo struct {
	Name        string            `json:"name"`
	Field       string            `json:"field"`
	TLV         string            `json:"tlv"`
	Class       string            `json:"class"`
	TypeDword   string            `json:"type_dword"`
	Type        string            `json:"type"`
	Offset      string            `json:"offset"`
	Size        string            `json:"size"`
	Values      map[string]uint64 `json:"values,omitempty"`
	Allowed     string            `json:"allowed"`
	Min         string            `json:"min,omitempty"`
	Max         string            `json:"max,omitempty"`
	Dependency  string            `json:"dependency,omitempty"`
	Rule        string            `json:"rule,omitempty"`
	ValidBit    string            `json:"valid_bit,omitempty"`
	FromVersion int               `json:"from_tlv_version,omitempty"`
	ArrayLength int               `json:"array_length,omitempty"`
	Capability  bool              `json:"capability,omitempty"`
	Description string            `json:"description,omitempty"`
}

// Params lists the parameters whose name, TLV or description matches re
// (nil: all), by name; internal adds the fields without a user-visible
// name (valid bits, capability fields).
func (db *DB) Params(re *regexp.Regexp, internal bool) []ParamInfo {
	list := []ParamInfo{}
	for _, t := range db.TLVs {
		for _, p := range t.Params {
			if p.MlxName == "" && !internal {
				continue
			}
			name := NamePattern(p)
			if re != nil && !re.MatchString(name) && !re.MatchString(t.Name) && !re.MatchString(p.Descr) && !re.MatchString(t.Title) {
				continue
			}
			typ := Instance{TLV: t, Port: 1}.Type()
			j := ParamInfo{Name: name, Field: p.FullName(), TLV: t.Name, Class: t.Class.String(), TypeDword: fmt.Sprintf("0x%08x", typ),
				Type: p.Type.String(), Offset: p.OffsetText, Size: p.SizeText, Allowed: p.Allowed(), Min: p.MinVal, Max: p.MaxVal,
				Rule: p.Rule, ValidBit: p.ValidBit, FromVersion: p.FromVersion, ArrayLength: p.ArrayLen, Capability: t.Cap, Description: DescriptionText(p.Descr)}
			if d := strings.TrimSpace(p.Dependency); d != "" && !strings.EqualFold(d, "ignore_dependency") {
				j.Dependency = d
			}
			if len(p.Enum) > 0 {
				j.Values = map[string]uint64{}
				for _, e := range p.Enum {
					j.Values[e.Name] = e.Value
				}
			}
			list = append(list, j)
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return list
}

// DescriptionText turns the database's "\;" line separators into line
// breaks.
func DescriptionText(s string) string {
	lines := strings.Split(strings.TrimSpace(s), `\;`)
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// NamePattern is a parameter's name with its instance pattern:
// NAME_P<n> per port, NAME_M<n> per module, NAME[0..k] for arrays.
func NamePattern(p *Param) string {
	n := p.DisplayName()
	switch p.TLV.Class {
	case ClassPort:
		n += "_P<n>"
	case ClassModule:
		n += "_M<n>"
	}
	if p.IsArray() {
		n += fmt.Sprintf("[0..%d]", p.ArrayLen-1)
	}
	return n
}

// Difference is one TLV two configurations hold differently.
type Difference struct {
	TLV     string   `json:"tlv"`
	Type    string   `json:"type"`
	In      string   `json:"in"` // a, b or both
	Changes []string `json:"changes,omitempty"`
}

// Differences lists what differs between configurations a and b, TLV by
// TLV and parameter by parameter, by type.
func (db *DB) Differences(d Diff) []Difference {
	out := []Difference{}
	add := func(r RawTLV, where string, other []byte) {
		e := Difference{TLV: db.DescribeType(r.Header.Type), Type: fmt.Sprintf("0x%08x", r.Header.Type), In: where}
		if in, ok := db.InstanceOf(r.Header.Type); ok {
			switch where {
			case "a":
				e.Changes = ParamDelta(in, r.Data, nil)
			case "b":
				e.Changes = ParamDelta(in, nil, r.Data)
			default:
				e.Changes = ParamDelta(in, other, r.Data)
			}
		}
		out = append(out, e)
	}
	for _, r := range d.OnlyA {
		add(r, "a", nil)
	}
	for _, r := range d.OnlyB {
		add(r, "b", nil)
	}
	for _, c := range d.Changed {
		add(c[1], "both", c[0].Data)
		if len(out[len(out)-1].Changes) == 0 {
			out[len(out)-1].Changes = []string{fmt.Sprintf("version %d -> %d, or bytes outside the named parameters differ", c[0].Header.Version, c[1].Header.Version)}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}

package nvconf

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cxray/cxray/internal/lazyre"
	"github.com/cxray/cxray/prm"
)

// Layout is how many instances of each class a device has: ports for port
// TLVs (NAME_P1..), modules for module TLVs (NAME_M0..), and the host and
// function the host-class TLVs are read for.
type Layout struct {
	Ports    int
	Modules  int
	Host     int
	Function int
}

// Instances lists the instances of a TLV on a device of this layout.
func (l Layout) Instances(t *TLV) []Instance {
	switch t.Class {
	case ClassPort:
		out := make([]Instance, 0, l.Ports)
		for p := 1; p <= l.Ports; p++ {
			out = append(out, Instance{TLV: t, Port: p})
		}
		return out
	case ClassModule:
		out := make([]Instance, 0, l.Modules)
		for m := 0; m < l.Modules; m++ {
			out = append(out, Instance{TLV: t, Module: m})
		}
		return out
	case ClassHostPF:
		return []Instance{{TLV: t, Host: l.Host, Function: l.Function}}
	case ClassHost:
		return []Instance{{TLV: t, Host: l.Host}}
	}
	return []Instance{{TLV: t}}
}

// Ref is a parameter as a user names it: which parameter, in which
// instance, and (for arrays) which element.
type Ref struct {
	Param *Param
	Inst  Instance
	// Index is the array element, or -1 for a scalar or a whole array.
	Index int
}

// Name is the user-visible name: SRIOV_EN, LINK_TYPE_P1,
// HOST_CHAINING_DESCRIPTORS[2].
func (r Ref) Name() string {
	n := r.Param.DisplayName() + r.Inst.Suffix()
	if r.Index >= 0 {
		n += "[" + strconv.Itoa(r.Index) + "]"
	}
	return n
}

// Refs lists the references of a parameter on a device of layout l: one per
// instance, and one per element for arrays.
func (l Layout) Refs(p *Param) []Ref {
	var out []Ref
	for _, in := range l.Instances(p.TLV) {
		if p.IsArray() {
			for i := 0; i < p.ArrayLen; i++ {
				out = append(out, Ref{Param: p, Inst: in, Index: i})
			}
			continue
		}
		out = append(out, Ref{Param: p, Inst: in, Index: -1})
	}
	return out
}

// NameError is an unknown or incomplete parameter name; the message says
// what would work.
type NameError struct{ Msg string }

func (e *NameError) Error() string { return e.Msg }

// Is makes an unknown parameter name an input error (prm.ErrInput).
func (e *NameError) Is(target error) bool { return target == prm.ErrInput }

var (
	suffixRE = lazyre.New(`^(.+)_([PM])(\d+)$`)
	indexRE  = lazyre.New(`^(.+)\[(\d+)\]$`)
)

// Resolve finds a parameter by the name a user gives: the mlxconfig name
// (case-insensitive), with _P<n> for a port parameter, _M<n> for a module
// parameter and [i] for an array element; or tlv.param for a field without
// a user-visible name.
func (db *DB) Resolve(name string, l Layout) (Ref, error) {
	orig := strings.TrimSpace(name)
	base := orig
	index := -1
	if m := indexRE.FindStringSubmatch(base); m != nil {
		n, err := strconv.Atoi(m[2])
		if err != nil {
			return Ref{}, &NameError{fmt.Sprintf("%s: bad index", orig)}
		}
		base, index = m[1], n
	}
	p, in, err := db.resolveBase(base, orig, l)
	if err != nil {
		return Ref{}, err
	}
	r := Ref{Param: p, Inst: in, Index: index}
	switch {
	case index >= 0 && !p.IsArray():
		return Ref{}, &NameError{fmt.Sprintf("%s is not an array; name it without [%d]", r.Param.DisplayName()+in.Suffix(), index)}
	case index >= p.ArrayLen && p.IsArray():
		return Ref{}, &NameError{fmt.Sprintf("%s has elements [0]..[%d]; [%d] is out of range", p.DisplayName()+in.Suffix(), p.ArrayLen-1, index)}
	}
	return r, nil
}

func (db *DB) resolveBase(base, orig string, l Layout) (*Param, Instance, error) {
	if p := db.ParamByMlxName(base); p != nil {
		switch p.TLV.Class {
		case ClassPort:
			return nil, Instance{}, &NameError{fmt.Sprintf("%s is set per port; name the port: %s", p.MlxName, suffixes(p.MlxName, "P", 1, max(l.Ports, 1)))}
		case ClassModule:
			return nil, Instance{}, &NameError{fmt.Sprintf("%s is set per module; name the module: %s", p.MlxName, suffixes(p.MlxName, "M", 0, max(l.Modules, 1)-1))}
		}
		return p, l.Instances(p.TLV)[0], nil
	}
	if m := suffixRE.FindStringSubmatch(strings.ToUpper(base)); m != nil {
		if p := db.ParamByMlxName(m[1]); p != nil {
			n, _ := strconv.Atoi(m[3])
			switch {
			case m[2] == "P":
				if p.TLV.Class != ClassPort {
					return nil, Instance{}, &NameError{fmt.Sprintf("%s is not a port parameter; name it %s", m[1], p.MlxName)}
				}
				if n < 1 || n > l.Ports {
					return nil, Instance{}, &NameError{fmt.Sprintf("%s: the device has ports 1..%d", orig, l.Ports)}
				}
				return p, Instance{TLV: p.TLV, Port: n}, nil
			default:
				if p.TLV.Class != ClassModule {
					return nil, Instance{}, &NameError{fmt.Sprintf("%s is not a module parameter; name it %s", m[1], p.MlxName)}
				}
				if n < 0 || n >= l.Modules {
					return nil, Instance{}, &NameError{fmt.Sprintf("%s: the device has modules 0..%d", orig, l.Modules-1)}
				}
				return p, Instance{TLV: p.TLV, Module: n}, nil
			}
		}
	}
	if tn, pn, ok := strings.Cut(base, "."); ok {
		if t := db.TLV(tn); t != nil {
			if p := t.Param(pn); p != nil {
				ins := l.Instances(t)
				if len(ins) == 0 {
					return nil, Instance{}, &NameError{fmt.Sprintf("%s: the device has no instance of %s", orig, t.Name)}
				}
				return p, ins[0], nil
			}
			return nil, Instance{}, &NameError{fmt.Sprintf("TLV %s has no field %q; its fields: %s", t.Name, pn, paramNames(t))}
		}
	}
	msg := fmt.Sprintf("unknown parameter %q", orig)
	if s := prm.Closest(strings.ToUpper(base), db.MlxNames(), 3); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, ", ") + "?"
	} else {
		msg += "; 'cxray config show-params --filter WORD' lists them"
	}
	return nil, Instance{}, &NameError{msg}
}

func suffixes(name, kind string, from, to int) string {
	var parts []string
	for i := from; i <= to && len(parts) < 4; i++ {
		parts = append(parts, fmt.Sprintf("%s_%s%d", name, kind, i))
	}
	return strings.Join(parts, " or ")
}

func paramNames(t *TLV) string {
	names := make([]string, len(t.Params))
	for i, p := range t.Params {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

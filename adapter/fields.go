package adapter

import (
	"strconv"
	"sync"

	"github.com/cxray/cxray/internal/lazyre"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

// Fields across PRM revisions. The adapter reads a handful of fields by
// their path in the built-in database (Rev 0.57). A user's --adb may be
// older or newer and spell some of them otherwise (lane0_module_mapping
// in Rev 0.56, a whole dword in 0.51, for 0.57's
// lane_module_mapping[0].module), or name no enum values (PAOS oper_status
// in 0.51). Fields do not move between revisions, so a field is found by
// name, then by the spellings older revisions use, then at the bits the
// built-in layout gives it; enum names come from the built-in database
// when the user's has none.

var reference = sync.OnceValues(builtin.Load)

// Reference is the built-in database, the layout firmware is expected to
// answer with (nil when it cannot be loaded, which a test of the package
// catches).
func Reference() *prm.DB {
	db, _ := reference()
	return db
}

var indexed = lazyre.New(`^([a-z]+)(_[a-z_]+)\[([0-9]+)\]$`)

// spellings lists the ways revisions write a path: as given, and with an
// array element folded into the name (lane_module_mapping[0] ->
// lane0_module_mapping).
func spellings(path string) []string {
	out := []string{path}
	segs := splitPath(path)
	for i, s := range segs {
		m := indexed.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		alt := append(append([]string{}, segs[:i]...), m[1]+m[3]+m[2])
		alt = append(alt, segs[i+1:]...)
		out = append(out, joinSegs(alt))
	}
	return out
}

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

func joinSegs(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += "."
		}
		out += x
	}
	return out
}

// fieldOf reads a field of a decoded register by its built-in path.
func fieldOf(d *prm.Decoded, reg, path string) (uint64, bool) {
	if v, ok := valueOf(d, reg, path); ok && (v.Kind() == prm.KindUint || v.Kind() == prm.KindJoined) {
		return v.Uint(), true
	}
	return 0, false
}

// textOf reads a text field (an ASCII array) by its built-in path.
func textOf(d *prm.Decoded, reg, path string) (string, bool) {
	if v, ok := valueOf(d, reg, path); ok && v.IsText() {
		return v.TextString(), true
	}
	return "", false
}

// valueOf finds a field by name and older spellings in the register's own
// decode, else in the same bytes decoded with the built-in layout.
func valueOf(d *prm.Decoded, reg, path string) (prm.Value, bool) {
	for _, p := range spellings(path) {
		if v, err := d.Get(p); err == nil {
			return v, true
		}
	}
	ref := Reference()
	if ref == nil || d.Plan == nil {
		return prm.Value{}, false
	}
	r, err := ref.Register(reg)
	if err != nil {
		return prm.Value{}, false
	}
	p, err := ref.RegisterPlan(r)
	if err != nil || p == d.Plan {
		return prm.Value{}, false
	}
	// Only the bytes the firmware sent count: a field beyond them is not
	// there, not zero.
	t, err := p.Resolve(path, p.NewBuffer())
	if err != nil || (t.Bit+t.Width+7)/8 > len(d.Raw) {
		return prm.Value{}, false
	}
	buf := make([]byte, max(len(d.Raw), p.Bytes))
	copy(buf, d.Raw)
	rd, err := p.Decode(buf)
	if err != nil {
		return prm.Value{}, false
	}
	v, err := rd.Get(path)
	return v, err == nil
}

// enumText is a field's enum name: the decoded register's own, else the
// built-in database's for the same value, else the number.
func enumText(d *prm.Decoded, reg, path string) string {
	v, ok := fieldOf(d, reg, path)
	if !ok {
		return ""
	}
	if x, ok := valueOf(d, reg, path); ok {
		if n, ok := x.EnumName(); ok {
			return n
		}
	}
	if ref := Reference(); ref != nil {
		if r, err := ref.Register(reg); err == nil {
			if p, err := ref.RegisterPlan(r); err == nil {
				if t, err := p.Resolve(path, p.NewBuffer()); err == nil && t.Step.Field != nil {
					for _, e := range t.Step.Field.Enum {
						if e.Value == v {
							return e.Name
						}
					}
				}
			}
		}
	}
	return strconv.FormatUint(v, 10)
}

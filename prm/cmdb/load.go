package cmdb

import (
	_ "embed"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/cxray/cxray/internal/lazyre"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/facts"
)

//go:generate go run ../../tools/gen/ifcgen -out ifc.facts

//go:embed ifc.facts
var ifcFacts string

//go:embed nvmf.facts
var nvmfFacts string

//go:embed fwctl.facts
var fwctlFacts string

// Source is how the built-in command database names itself.
const Source = "built-in"

// Origins of commands and layouts.
const (
	OriginKernel = "mlx5_ifc.h"
	OriginFwctl  = "fwctl driver"
	OriginOFED   = "OFED mlx5_ifc.h"
)

var load = sync.OnceValues(New)

// Load returns the built-in command database, parsed once and shared (a DB
// is safe for concurrent use).
func Load() (*DB, error) { return load() }

// New parses a private instance of the built-in database.
func New() (*DB, error) { return Build(Source, ifcFacts, nvmfFacts, fwctlFacts) }

// Facts returns the embedded generated facts, for reproducibility checks.
func Facts() string { return ifcFacts }

// Build makes a database from a generated facts file (what Generate writes)
// and the two hand-written ones (nvmf.facts, fwctl.facts syntax). source
// names the result in messages.
func Build(source, ifc, nvmf, fwctl string) (*DB, error) {
	b := &builder{db: &DB{Source: source, byName: map[string]*Command{}, byOpcode: map[uint16]*Command{}}}
	for _, l := range strings.Split(ifc, "\n") {
		if h, ok := strings.CutPrefix(l, "# "); ok {
			b.db.Header = append(b.db.Header, h)
		} else if l != "" && l[0] != '#' {
			break
		}
	}
	base, err := facts.ReadWith(source+" ifc.facts", ifc, b.generated)
	if err != nil {
		return nil, err
	}
	b.nodes = base.Nodes
	b.db.Revision = base.Revision
	if err := b.handwritten("fwctl.facts", fwctl, OriginFwctl); err != nil {
		return nil, err
	}
	if err := b.handwritten("nvmf.facts", nvmf, OriginOFED); err != nil {
		return nil, err
	}
	b.constEnums()
	layouts, err := prm.NewDB(source, b.db.Revision, b.nodes, nil)
	if err != nil {
		return nil, fmt.Errorf("cmdb: %w", err)
	}
	b.db.Layouts = layouts
	if err := b.check(); err != nil {
		return nil, err
	}
	sort.Slice(b.db.Commands, func(i, j int) bool { return b.db.Commands[i].Name < b.db.Commands[j].Name })
	sort.Slice(b.db.CapTypes, func(i, j int) bool { return b.db.CapTypes[i].Value < b.db.CapTypes[j].Value })
	sort.Slice(b.db.Statuses, func(i, j int) bool { return b.db.Statuses[i].Value < b.db.Statuses[j].Value })
	return b.db, nil
}

// untypedEnums are fields mlx5_ifc.h declares as plain bits whose values
// it names in a separate enum (include/linux/mlx5/device.h:
// MLX5_VPORT_ADMIN_STATE_*): their enum is those constants, so 'cxray
// cmd' decodes admin_state as esw does.
var untypedEnums = map[string]string{
	"query_vport_state_out.admin_state": "MLX5_VPORT_ADMIN_STATE_",
	"modify_vport_state_in.admin_state": "MLX5_VPORT_ADMIN_STATE_",
}

// constEnums gives the untypedEnums fields their constants as enum values
// (a field that already has an enum keeps it).
func (b *builder) constEnums() {
	for path, prefix := range untypedEnums {
		node, field, _ := strings.Cut(path, ".")
		n := b.nodes[node]
		if n == nil {
			continue
		}
		f := n.Field(field)
		if f == nil || len(f.Enum) > 0 {
			continue
		}
		for _, c := range b.db.Consts {
			if name, ok := strings.CutPrefix(c.Name, prefix); ok && c.Value >= 0 && c.Value < 1<<f.Size {
				f.Enum = append(f.Enum, prm.EnumValue{Name: name, Value: uint64(c.Value)})
			}
		}
	}
}

type builder struct {
	db    *DB
	nodes map[string]*prm.Node
	// written lists the hand-written fields, checked once every layout is
	// known (a field may name a layout defined further down).
	written []written
}

type written struct {
	file string
	line int
	node *prm.Node
	f    *prm.Field
}

// generated reads the records Generate adds to the layout facts.
func (b *builder) generated(cols []string) error {
	switch cols[0] {
	case "op":
		if len(cols) != 5 {
			return fmt.Errorf("op needs name, opcode, in and out")
		}
		op, err := strconv.ParseUint(cols[2], 0, 16)
		if err != nil {
			return fmt.Errorf("op %s: bad opcode %q", cols[1], cols[2])
		}
		return b.addCommand(cols[1], uint16(op), undash(cols[3]), undash(cols[4]), OriginKernel)
	case "cap":
		if len(cols) != 4 {
			return fmt.Errorf("cap needs name, value and layout")
		}
		v, err := strconv.ParseUint(cols[2], 0, 15)
		if err != nil {
			return fmt.Errorf("cap %s: bad value %q", cols[1], cols[2])
		}
		b.db.CapTypes = append(b.db.CapTypes, CapType{Name: cols[1], Value: uint16(v), Node: undash(cols[3])})
	case "stat":
		if len(cols) != 3 {
			return fmt.Errorf("stat needs name and value")
		}
		v, err := strconv.ParseUint(cols[2], 0, 8)
		if err != nil {
			return fmt.Errorf("stat %s: bad value %q", cols[1], cols[2])
		}
		b.db.Statuses = append(b.db.Statuses, Status{Name: cols[1], Value: uint8(v)})
	case "const":
		if len(cols) != 3 {
			return fmt.Errorf("const needs name and value")
		}
		v, err := strconv.ParseInt(cols[2], 0, 64)
		if err != nil {
			return fmt.Errorf("const %s: bad value %q", cols[1], cols[2])
		}
		b.db.Consts = append(b.db.Consts, Const{Name: cols[1], Value: v})
	default:
		return fmt.Errorf("unknown record %s", cols[0])
	}
	return nil
}

func undash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

// addCommand adds an opcode or, when a command of that name exists, fills
// in the layouts it lacks. The same name with another opcode is an error.
func (b *builder) addCommand(name string, op uint16, in, out, origin string) error {
	if c, ok := b.db.byName[cmdKey(name)]; ok {
		if c.Opcode != op {
			return fmt.Errorf("command %s is 0x%x here but 0x%x in %s", name, op, c.Opcode, c.Origin)
		}
		if c.In == "" {
			c.In = in
		}
		if c.Out == "" {
			c.Out = out
		}
		return nil
	}
	c := &Command{Name: name, Opcode: op, In: in, Out: out, Origin: origin}
	b.db.byName[cmdKey(name)] = c
	if _, dup := b.db.byOpcode[op]; !dup {
		b.db.byOpcode[op] = c
	}
	b.db.Commands = append(b.db.Commands, c)
	return nil
}

// posRE reads a field position: dwN[msb:lsb], dwN[bit] or 0xBYTE/BITS.
var posRE = lazyre.New(`^(?:dw(\d+)\[(\d+)(?::(\d+))?\]|0x([0-9a-fA-F]+)/(\d+))$`)

// parsePos returns the MSB-first bit offset and width of a position.
func parsePos(s string) (bit, width int, err error) {
	m := posRE.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, fmt.Errorf("position %q is not dwN[msb:lsb], dwN[bit] or 0xBYTE/BITS", s)
	}
	if m[1] != "" {
		dw, _ := strconv.Atoi(m[1])
		msb, _ := strconv.Atoi(m[2])
		lsb := msb
		if m[3] != "" {
			lsb, _ = strconv.Atoi(m[3])
		}
		if msb > 31 || lsb > msb {
			return 0, 0, fmt.Errorf("position %q: bits must be 31 >= msb >= lsb >= 0", s)
		}
		return dw*32 + 31 - msb, msb - lsb + 1, nil
	}
	byteOff, _ := strconv.ParseUint(m[4], 16, 32)
	width, _ = strconv.Atoi(m[5])
	if width == 0 || byteOff > 1<<20 || width > 1<<20 {
		return 0, 0, fmt.Errorf("position %q is out of range", s)
	}
	return int(byteOff) * 8, width, nil
}

// adbOffset turns an MSB-first position into the facts' ADB convention: a
// field narrower than a dword is given by its LSB inside its big-endian
// dword (prm's MSBOffset is the inverse).
func adbOffset(bit, width int) (int, error) {
	if width >= 32 {
		if bit%8 != 0 {
			return 0, fmt.Errorf("a %d-bit field must start on a byte", width)
		}
		return bit, nil
	}
	if bit%32+width > 32 {
		return 0, fmt.Errorf("%d bits at bit %d cross a dword", width, bit)
	}
	return bit&^31 + 32 - bit%32 - width, nil
}

// handwritten reads nvmf.facts / fwctl.facts syntax (described at the top
// of those files).
func (b *builder) handwritten(file, text, origin string) error {
	var cur *prm.Node
	for i, l := range strings.Split(text, "\n") {
		if l == "" || l[0] == '#' {
			continue
		}
		bad := func(format string, a ...any) error {
			return fmt.Errorf("cmdb: %s:%d: %s", file, i+1, fmt.Sprintf(format, a...))
		}
		cols := strings.Split(l, "\t")
		switch cols[0] {
		case "source":
		case "layout":
			if len(cols) != 3 {
				return bad("layout needs a name and a size in bits")
			}
			size, err := strconv.Atoi(cols[2])
			if err != nil || size <= 0 || size%32 != 0 {
				return bad("layout %s: size %q is not a positive number of dwords in bits", cols[1], cols[2])
			}
			if _, dup := b.nodes[cols[1]]; dup {
				return bad("layout %s already exists; use extend to add fields to it", cols[1])
			}
			cur = &prm.Node{Name: cols[1], Size: size, Line: i + 1}
			b.nodes[cur.Name] = cur
		case "extend":
			if len(cols) != 2 {
				return bad("extend needs a layout name")
			}
			n, ok := b.nodes[cols[1]]
			if !ok {
				return bad("extend %s: no such layout", cols[1])
			}
			cur = n
		case "f":
			if cur == nil || len(cols) < 3 {
				return bad("f needs a layout above it, a name and a position")
			}
			bit, width, err := parsePos(cols[2])
			if err != nil {
				return bad("%s.%s: %v", cur.Name, cols[1], err)
			}
			f := &prm.Field{Name: cols[1], Size: width, Line: i + 1}
			for _, kv := range cols[3:] {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "sub":
					f.Subnode = v
				case "var":
					f.IsArray, f.Variable = true, true
				case "enum":
					for _, e := range strings.Split(v, ",") {
						n, val, ok := strings.Cut(e, ":")
						u, err := strconv.ParseUint(val, 0, 64)
						if !ok || err != nil {
							return bad("%s.%s: bad enum entry %q", cur.Name, f.Name, e)
						}
						f.Enum = append(f.Enum, prm.EnumValue{Name: n, Value: u})
					}
				default:
					return bad("%s.%s: unknown key %q", cur.Name, f.Name, k)
				}
			}
			if f.Offset, err = adbOffset(bit, width); err != nil {
				return bad("%s.%s: %v", cur.Name, f.Name, err)
			}
			if cur.Field(f.Name) != nil {
				return bad("%s.%s is defined twice", cur.Name, f.Name)
			}
			end := bit + width
			if f.Variable {
				end = bit
			}
			if end > cur.Size {
				return bad("%s.%s ends at bit %d, past the layout's %d bits", cur.Name, f.Name, end, cur.Size)
			}
			cur.Fields = append(cur.Fields, f)
			b.written = append(b.written, written{file, i + 1, cur, f})
		case "op":
			if len(cols) != 5 {
				return bad("op needs name, opcode, in and out")
			}
			op, err := strconv.ParseUint(cols[2], 0, 16)
			if err != nil {
				return bad("op %s: bad opcode %q", cols[1], cols[2])
			}
			if err := b.addCommand(cols[1], uint16(op), undash(cols[3]), undash(cols[4]), origin); err != nil {
				return bad("%v", err)
			}
		case "cap":
			if len(cols) != 4 {
				return bad("cap needs name, value and layout")
			}
			v, err := strconv.ParseUint(cols[2], 0, 15)
			if err != nil {
				return bad("cap %s: bad value %q", cols[1], cols[2])
			}
			for _, c := range b.db.CapTypes {
				if c.Value == uint16(v) || c.Name == cols[1] {
					return bad("capability type %s (0x%x) clashes with %s (0x%x)", cols[1], v, c.Name, c.Value)
				}
			}
			b.db.CapTypes = append(b.db.CapTypes, CapType{Name: cols[1], Value: uint16(v), Node: undash(cols[3])})
		case "scope":
			if len(cols) != 5 {
				return bad("scope needs command, op_mod class, scope and kind")
			}
			c, ok := b.db.byName[cmdKey(cols[1])]
			if !ok {
				return bad("scope %s: no such command (add an op line)", cols[1])
			}
			var r Rule
			switch cols[2] {
			case "any":
				r.OpMod = OpModAny
			case "zero":
				r.OpMod = OpModZero
			case "nonzero":
				r.OpMod = OpModNonZero
			default:
				return bad("scope %s: op_mod class %q is not any, zero or nonzero", cols[1], cols[2])
			}
			s, err := ParseScope(cols[3])
			if err != nil {
				return bad("%v", err)
			}
			r.Scope = s
			switch cols[4] {
			case "query":
			case "modify":
				r.Modifies = true
			default:
				return bad("scope %s: kind %q is not query or modify", cols[1], cols[4])
			}
			c.Fwctl = append(c.Fwctl, r)
		default:
			return bad("unknown record %q", cols[0])
		}
	}
	return nil
}

// check verifies what a typo in a facts file would break: every command's
// layouts exist, and every capability page too.
func (b *builder) check() error {
	for _, w := range b.written {
		if w.f.Subnode == "" {
			continue
		}
		sub := b.nodes[w.f.Subnode]
		switch {
		case sub == nil:
			return fmt.Errorf("cmdb: %s:%d: %s.%s: layout %s is not defined", w.file, w.line, w.node.Name, w.f.Name, w.f.Subnode)
		case sub.Size != w.f.Size:
			return fmt.Errorf("cmdb: %s:%d: %s.%s is %d bits, but layout %s is %d", w.file, w.line, w.node.Name, w.f.Name, w.f.Size, sub.Name, sub.Size)
		}
	}
	for _, c := range b.db.Commands {
		for _, n := range []string{c.In, c.Out} {
			if n == "" {
				continue
			}
			if b.nodes[n] == nil {
				return fmt.Errorf("cmdb: command %s: layout %s is not defined", c.Name, n)
			}
			// A mailbox the codec cannot lay out is a broken database,
			// not something to find when the command is sent.
			if _, err := b.db.Layouts.Plan(n); err != nil {
				return fmt.Errorf("cmdb: command %s: layout %s: %w", c.Name, n, err)
			}
		}
	}
	for _, c := range b.db.CapTypes {
		if c.Node != "" && b.nodes[c.Node] == nil {
			return fmt.Errorf("cmdb: capability type %s: layout %s is not defined", c.Name, c.Node)
		}
	}
	return nil
}

var kernelLayouts = sync.OnceValues(func() (*prm.DB, error) {
	return facts.ReadWith(Source+" (mlx5_ifc.h)", ifcFacts, func([]string) error { return nil })
})

// KernelLayouts is the generated part of the database alone: the layouts
// exactly as the kernel header has them, without the NVMe-oF additions, for
// comparing with another kernel's header.
func KernelLayouts() (*prm.DB, error) { return kernelLayouts() }

// HeaderLayouts reads another kernel's mlx5_ifc.h (and device.h next to it)
// the way the built-in layouts were made, so the two compare field by
// field, enum values included.
func HeaderLayouts(headerPath string) (*prm.DB, error) {
	b, err := Generate(headerPath)
	if err != nil {
		return nil, err
	}
	return facts.ReadWith(headerPath, string(b), func([]string) error { return nil })
}

// Package facts writes and reads the facts-only form of a register database:
// names, IDs, offsets, widths, access kinds, enum names and values, array
// bounds, union selectors and the revision. No description text. It is the
// format of the database built into the binary.
//
// The format is line based and tab separated so that a regenerated file
// diffs well:
//
//	rev	Rev 0.57
//	node	NAME	SIZE_BITS	[u][c]
//	f	NAME	OFFSET_BITS	SIZE_BITS	ACCESS	[key=value]...
//	reg	NAME	ID	NODE	SIZE_BYTES
//
// Field keys: sub (subnode), enum (NAME:VALUE,...), arr (LOW:HIGH or
// LOW:VAR), dyn, fmt (text, bcd or signed: what the description says of
// the bits, prm.DetectFormat), szc (size condition), usel (union
// selector), sel (selected_by), cond (condition), valid (when the field
// means something: FIELD=N or FIELD!=0, prm.DetectValidity).
package facts

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/cxray/cxray/prm"
)

// Write writes db in the facts format; header lines are written first as
// comments.
func Write(w io.Writer, db *prm.DB, header []string) error {
	bw := bufio.NewWriter(w)
	for _, h := range header {
		fmt.Fprintf(bw, "# %s\n", h)
	}
	fmt.Fprintf(bw, "rev\t%s\n", db.Revision)
	names := make([]string, 0, len(db.Nodes))
	for n := range db.Nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		n := db.Nodes[name]
		flags := ""
		if n.Union {
			flags += "u"
		}
		if n.Conditional {
			flags += "c"
		}
		fmt.Fprintf(bw, "node\t%s\t%d\t%s\n", n.Name, n.Size, flags)
		for _, f := range n.Fields {
			fmt.Fprintf(bw, "f\t%s\t%d\t%d\t%s", f.Name, f.Offset, f.Size, f.Access)
			if f.Subnode != "" {
				fmt.Fprintf(bw, "\tsub=%s", f.Subnode)
			}
			if len(f.Enum) > 0 {
				parts := make([]string, len(f.Enum))
				for i, e := range f.Enum {
					parts[i] = e.Name + ":" + strconv.FormatUint(e.Value, 10)
				}
				fmt.Fprintf(bw, "\tenum=%s", strings.Join(parts, ","))
			}
			if f.IsArray {
				hi := strconv.Itoa(f.HighBound)
				if f.Variable {
					hi = "VAR"
				}
				fmt.Fprintf(bw, "\tarr=%d:%s", f.LowBound, hi)
			}
			if f.Dynamic {
				bw.WriteString("\tdyn=1")
			}
			if f.Format != prm.FormatNone {
				fmt.Fprintf(bw, "\tfmt=%s", f.Format)
			}
			if f.ValidWhen != nil {
				fmt.Fprintf(bw, "\tvalid=%s", f.ValidWhen)
			}
			for _, kv := range [][2]string{{"szc", f.SizeCondition}, {"usel", f.UnionSelector}, {"sel", f.SelectedBy}, {"cond", f.Condition}} {
				if kv[1] != "" {
					fmt.Fprintf(bw, "\t%s=%s", kv[0], clean(kv[1]))
				}
			}
			bw.WriteByte('\n')
		}
	}
	for _, r := range db.Registers {
		fmt.Fprintf(bw, "reg\t%s\t%d\t%s\t%d\n", r.Name, r.ID, r.Node, r.Size)
	}
	return bw.Flush()
}

// clean keeps expressions on one line and free of tabs.
func clean(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Read parses the facts format. source names the database in messages.
func Read(source string, data string) (*prm.DB, error) { return ReadWith(source, data, nil) }

// ReadWith is Read for formats that add records of their own (the command
// database's opcodes and capability types): extra is called, in file order,
// with the tab-separated columns of every record Read does not know, and an
// error it returns stops the read with the line number. A nil extra treats
// such records as errors, as Read does.
func ReadWith(source string, data string, extra func(cols []string) error) (*prm.DB, error) {
	nodes := map[string]*prm.Node{}
	var regs []*prm.Register
	var cur *prm.Node
	rev := ""
	line := 0
	for len(data) > 0 {
		var l string
		if i := strings.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, ""
		}
		line++
		if l == "" || l[0] == '#' {
			continue
		}
		cols := strings.Split(l, "\t")
		bad := func(msg string) error { return fmt.Errorf("%s:%d: %s", source, line, msg) }
		switch cols[0] {
		case "rev":
			if len(cols) > 1 {
				rev = cols[1]
			}
		case "node":
			if len(cols) < 3 {
				return nil, bad("node needs a name and a size")
			}
			size, err := strconv.Atoi(cols[2])
			if err != nil {
				return nil, bad("bad node size")
			}
			cur = &prm.Node{Name: cols[1], Size: size}
			if len(cols) > 3 {
				cur.Union = strings.Contains(cols[3], "u")
				cur.Conditional = strings.Contains(cols[3], "c")
			}
			nodes[cur.Name] = cur
		case "f":
			if cur == nil || len(cols) < 5 {
				return nil, bad("field outside a node or too short")
			}
			f := &prm.Field{Name: cols[1]}
			var err error
			if f.Offset, err = strconv.Atoi(cols[2]); err != nil {
				return nil, bad("bad field offset")
			}
			if f.Size, err = strconv.Atoi(cols[3]); err != nil || f.Size <= 0 {
				return nil, bad("bad field size")
			}
			if f.Access, err = prm.ParseAccess(cols[4]); err != nil {
				return nil, bad(err.Error())
			}
			for _, kv := range cols[5:] {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "sub":
					f.Subnode = v
				case "enum":
					for _, e := range strings.Split(v, ",") {
						n, val, ok := strings.Cut(e, ":")
						u, err := strconv.ParseUint(val, 10, 64)
						if !ok || err != nil {
							return nil, bad("bad enum entry " + e)
						}
						f.Enum = append(f.Enum, prm.EnumValue{Name: n, Value: u})
					}
				case "arr":
					lo, hi, _ := strings.Cut(v, ":")
					f.IsArray = true
					if f.LowBound, err = strconv.Atoi(lo); err != nil {
						return nil, bad("bad array bounds")
					}
					if hi == "VAR" {
						f.Variable = true
					} else if f.HighBound, err = strconv.Atoi(hi); err != nil || f.HighBound < f.LowBound {
						return nil, bad("bad array bounds")
					}
				case "dyn":
					f.Dynamic = v == "1"
				case "fmt":
					if f.Format, err = prm.ParseFormat(v); err != nil {
						return nil, bad(err.Error())
					}
				case "szc":
					f.SizeCondition = v
				case "usel":
					f.UnionSelector = v
				case "sel":
					f.SelectedBy = v
				case "cond":
					f.Condition = v
				case "valid":
					if f.ValidWhen, err = prm.ParseValidity(v); err != nil {
						return nil, bad(err.Error())
					}
				default:
					return nil, bad("unknown field key " + k)
				}
			}
			cur.Fields = append(cur.Fields, f)
		case "reg":
			if len(cols) < 5 {
				return nil, bad("reg needs name, id, node and size")
			}
			id, err1 := strconv.ParseUint(cols[2], 10, 32)
			size, err2 := strconv.Atoi(cols[4])
			if err1 != nil || err2 != nil {
				return nil, bad("bad register id or size")
			}
			regs = append(regs, &prm.Register{Name: cols[1], ID: uint32(id), Node: cols[3], Size: size})
		default:
			if extra == nil {
				return nil, bad("unknown record " + cols[0])
			}
			if err := extra(cols); err != nil {
				return nil, bad(err.Error())
			}
		}
	}
	db, err := prm.NewDB(source, rev, nodes, regs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return db, nil
}

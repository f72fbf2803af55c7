package prmcmd

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cxray/cxray/prm"
)

// A drawing of a register's dwords, bit 31 on the left as in the PRM:
//
//	        |31          24|23          16|15           8|7            0|
//	  0x00  |a|   |slot   |module         |       |admin  |       |oper   |
//
// Each bit is two columns. Names that do not fit get a letter, explained
// under the row. Fields of a dword or more are listed as one line.

type cell struct {
	name       string
	bit, width int // MSB-first, absolute
}

// writeDiagram draws the leaves outside unions, or, when the path prefix
// points inside a union member, that member's leaves.
func writeDiagram(w io.Writer, p *prm.Plan, leaves []prm.Leaf, prefix string) {
	scopes := map[string][]cell{}
	var order []string
	for _, l := range leaves {
		if l.Joined {
			continue
		}
		if _, ok := scopes[l.When]; !ok {
			order = append(order, l.When)
		}
		n := l.Count
		if n == 0 || l.Variable {
			n = 1
		}
		for i := 0; i < n; i++ {
			name := shortName(l.Path, prefix)
			if l.Count > 0 {
				name = fmt.Sprintf("%s[%d]", name, i)
			}
			scopes[l.When] = append(scopes[l.When], cell{name, l.Bit + i*l.Width, l.Width})
		}
	}
	unions := 0
	for _, sc := range order {
		if sc != "" && prefix == "" {
			unions++
			continue
		}
		if sc != "" {
			fmt.Fprintf(w, "when %s:\n", sc)
		}
		drawCells(w, scopes[sc])
	}
	if unions > 0 {
		fmt.Fprintf(w, "(%d union members not drawn; draw one with --path <union>.<member>)\n", unions)
	}
}

func shortName(path, prefix string) string {
	if prefix != "" {
		path = strings.TrimPrefix(strings.TrimPrefix(path, prefix), ".")
	}
	return path
}

func drawCells(w io.Writer, cells []cell) {
	if len(cells) == 0 {
		return
	}
	sort.SliceStable(cells, func(i, j int) bool { return cells[i].bit < cells[j].bit })
	fmt.Fprintln(w, "        |31          24|23          16|15           8|7            0|")
	byDword := map[int][]cell{}
	maxDw := 0
	for _, c := range cells {
		for dw := c.bit / 32; dw <= (c.bit+c.width-1)/32; dw++ {
			byDword[dw] = append(byDword[dw], c)
			maxDw = max(maxDw, dw)
		}
	}
	for dw := 0; dw <= maxDw; dw++ {
		cs := byDword[dw]
		if len(cs) == 0 {
			continue
		}
		// A field that covers this whole dword and more: one line for its run.
		if len(cs) == 1 && cs[0].width > 32 && cs[0].bit <= dw*32 && cs[0].bit+cs[0].width >= dw*32+32 {
			c := cs[0]
			last := (c.bit + c.width - 1) / 32
			for last > dw && len(byDword[last]) != 1 {
				last--
			}
			if dw == c.bit/32 || dw == last {
				fmt.Fprintf(w, "  0x%02x  %s\n", dw*4, wideLine(c, dw, last))
			} else if dw == c.bit/32+1 {
				fmt.Fprintf(w, "  ...   (%s continues to 0x%02x)\n", c.name, last*4)
			}
			continue
		}
		line, legend := dwordLine(cs, dw)
		fmt.Fprintf(w, "  0x%02x  %s\n", dw*4, line)
		if legend != "" {
			fmt.Fprintf(w, "        %s\n", legend)
		}
	}
}

func wideLine(c cell, from, to int) string {
	return fmt.Sprintf("|%s|  %s, %d bits at bytes 0x%02x..0x%02x", center("", 63), c.name, c.width, c.bit/8, (c.bit+c.width-1)/8)
}

func center(s string, n int) string {
	if len(s) >= n {
		return s[:n]
	}
	pad := n - len(s)
	return strings.Repeat(" ", pad/2) + s + strings.Repeat(" ", pad-pad/2)
}

// dwordLine draws one dword: cells clipped to it, gaps left blank.
func dwordLine(cs []cell, dw int) (string, string) {
	type span struct {
		name   string
		hi, lo int // bits 31..0 within the dword
	}
	var spans []span
	for _, c := range cs {
		start := max(c.bit, dw*32)
		end := min(c.bit+c.width, dw*32+32)
		spans = append(spans, span{c.name, 31 - (start - dw*32), 31 - (end - 1 - dw*32)})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].hi > spans[j].hi })
	var b strings.Builder
	var legend []string
	key := 'a'
	bit := 31
	emit := func(name string, hi, lo int) {
		room := 2*(hi-lo+1) - 1
		label := name[strings.LastIndexByte(name, '.')+1:]
		if len(label) > room {
			if name == "" {
				label = ""
			} else {
				label = string(key)
				legend = append(legend, fmt.Sprintf("%c=%s", key, name))
				if key == 'z' {
					key = 'A'
				} else {
					key++
				}
			}
		}
		b.WriteByte('|')
		b.WriteString(label)
		b.WriteString(strings.Repeat(" ", room-len(label)))
	}
	for _, s := range spans {
		if s.hi > bit { // overlapping fields (aliases): draw the first
			continue
		}
		if s.hi < bit {
			emit("", bit, s.hi+1)
		}
		emit(s.name, s.hi, s.lo)
		bit = s.lo - 1
	}
	if bit >= 0 {
		emit("", bit, 0)
	}
	b.WriteByte('|')
	return b.String(), strings.Join(legend, "  ")
}

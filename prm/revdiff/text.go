package revdiff

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// kindOrder is the order kinds are counted in the summary line.
var kindOrder = []string{Added, Removed, Renamed, Moved, Resized, Merged, Split, Retyped, Access, Enum}

// WriteText writes the report for people: a summary, the registers added and
// removed, then each changed register with one line per field change.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }

	p("PRM diff: %s → %s\n", orUnknown(r.OldRevision), orUnknown(r.NewRevision))
	p("  old: %s\n  new: %s\n", r.OldSource, r.NewSource)
	what := "registers"
	if len(r.Names) > 0 {
		what = "selected"
	}
	p("%s: %d added, %d removed, %d changed, %d unchanged\n", what, len(r.AddedRegisters), len(r.RemovedRegisters), len(r.Changed), r.Unchanged)
	counts := r.CountByKind()
	var parts []string
	for _, k := range kindOrder {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	if len(parts) > 0 {
		p("field changes: %s\n", strings.Join(parts, ", "))
	}

	refs := func(title string, rs []RegisterRef, hint string) {
		if len(rs) == 0 {
			return
		}
		p("\n%s (%d):\n", title, len(rs))
		for _, x := range rs {
			p("  %s\n", refLine(x, hint))
		}
	}
	refs("Added", r.AddedRegisters, "removed")
	refs("Removed", r.RemovedRegisters, "added")

	for _, c := range r.Changed {
		p("\n%s\n", changeHeader(c))
		if c.IDChanged {
			p("  register ID 0x%x → 0x%x\n", c.OldID, c.NewID)
		}
		if c.SizeChanged {
			p("  size %d → %d bytes\n", c.OldBytes, c.NewBytes)
		}
		width := 0
		for _, f := range c.Fields {
			width = max(width, len(f.Path))
		}
		width = min(width, 48)
		for _, f := range c.Fields {
			line := fmt.Sprintf("  %-8s %-*s  %s", f.Kind, width, f.Path, f.Detail)
			if f.OldPath != "" && f.Kind != Renamed {
				line += "  [was " + f.OldPath + "]"
			}
			if f.Repeat != nil {
				line += fmt.Sprintf("  (same in each of %s[%d..%d])", f.Repeat.Array, f.Repeat.First, f.Repeat.Last)
			}
			p("%s\n", strings.TrimRight(line, " "))
		}
	}
	if len(r.UnchangedNames) > 0 {
		p("\nunchanged: %s\n", strings.Join(r.UnchangedNames, ", "))
	}
	return bw.Flush()
}

func orUnknown(s string) string {
	if s == "" {
		return "(no revision)"
	}
	return s
}

func refLine(x RegisterRef, other string) string {
	var b strings.Builder
	if x.IsNode {
		fmt.Fprintf(&b, "%-12s node %s, %d bytes", x.Name, x.Node, x.Bytes)
	} else {
		fmt.Fprintf(&b, "%-12s 0x%04x  %d bytes  (%s)", x.Name, x.ID, x.Bytes, x.Node)
	}
	if x.SameIDAs != "" {
		fmt.Fprintf(&b, "  same ID as %s %s", other, x.SameIDAs)
	}
	return b.String()
}

func changeHeader(c RegisterChange) string {
	if c.IsNode {
		if c.OldNode == c.NewNode {
			return fmt.Sprintf("%s (node %s)", c.Name, c.NewNode)
		}
		return fmt.Sprintf("%s (node %s, was %s)", c.Name, c.NewNode, c.OldNode)
	}
	return fmt.Sprintf("%s 0x%04x (%s)", c.Name, c.NewID, c.NewNode)
}

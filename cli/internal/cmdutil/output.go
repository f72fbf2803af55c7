package cmdutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"
)

// WriteJSON prints one JSON document.
func (a *App) WriteJSON(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := a.Stdout.Write(buf.Bytes())
	return err
}

// Table writes aligned columns.
type Table struct {
	tw *tabwriter.Writer
}

// NewTable starts a table on standard output, with a header row when
// one is given.
func (a *App) NewTable(header ...string) *Table {
	t := &Table{tw: tabwriter.NewWriter(a.Stdout, 0, 0, 2, ' ', 0)}
	if len(header) > 0 {
		t.Row(header...)
	}
	return t
}

// Row adds one row.
func (t *Table) Row(cols ...string) {
	fmt.Fprintln(t.tw, strings.Join(cols, "\t"))
}

// Flush writes the table out.
func (t *Table) Flush() { t.tw.Flush() }

// Indent prefixes every line of s.
func Indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// WriteRows aligns rows; the last column is free text and a detail (a
// description) goes indented under its row. Rows of one cell are headings.
// Not text/tabwriter: it aligns each run of lines that share a column,
// and a heading or a detail line ends the run, so every section of a
// listing (prm fields, config params) would get widths of its own.
func WriteRows(w io.Writer, rows [][]string, details []string) {
	widths := []int{}
	for _, r := range rows {
		if len(r) == 1 {
			continue
		}
		for i, c := range r[:len(r)-1] {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len(c))
		}
	}
	for i, r := range rows {
		var b strings.Builder
		if len(r) == 1 {
			b.WriteString(r[0])
		}
		for j, c := range r {
			if len(r) == 1 {
				break
			}
			if j < len(r)-1 {
				fmt.Fprintf(&b, "%-*s  ", widths[j], c)
			} else {
				b.WriteString(c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		if i > 0 && i-1 < len(details) && details[i-1] != "" {
			fmt.Fprintln(w, Indent(details[i-1], "      "))
		}
	}
}

// Dash stands for an empty or zero cell.
func Dash(s string) string {
	if s == "" || s == "0" {
		return "-"
	}
	return s
}

// YesNo renders a flag for tables.
func YesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// NonNil makes an empty list marshal as [] rather than null.
func NonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// CompileFilter compiles --filter (case-insensitive); "" matches all.
func CompileFilter(f string) (*regexp.Regexp, error) {
	if f == "" {
		return nil, nil
	}
	re, err := regexp.Compile("(?i)" + f)
	if err != nil {
		return nil, UsageErr("--filter %q is not a regular expression: %v", f, err)
	}
	return re, nil
}

// ErrorDoc is what a command prints on standard output in JSON mode when
// it fails, so that a script parsing the output always gets a document.
type ErrorDoc struct {
	Error    string `json:"error"`
	ExitCode int    `json:"exit_code"`
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
)

// writeJSON prints one JSON document.
func (a *app) writeJSON(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := a.stdout.Write(buf.Bytes())
	return err
}

// table writes aligned columns.
type table struct {
	tw *tabwriter.Writer
}

func (a *app) newTable(header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)}
	if len(header) > 0 {
		t.row(header...)
	}
	return t
}

func (t *table) row(cols ...string) {
	fmt.Fprintln(t.tw, strings.Join(cols, "\t"))
}

func (t *table) flush() { t.tw.Flush() }

// indent prefixes every line of s.
func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

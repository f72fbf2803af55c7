// Package querytext reads the text of mlxconfig and mstconfig query
// outputs as people paste them: `mlxconfig -d DEV q` (with or without -e),
// several devices, a `| grep` fragment, mlxconfig set's confirmation table,
// with prompts, colour codes, elided rows and a cut-off last line. It
// reads the text only; naming the parameters through an NV database is
// nvconf's job (nvconf.ParseQueryText), so this package knows no database.
//
// The output's shape (mstflint's mlxconfig/mlxcfg_ui.cpp prints it):
// "Device #n:", the "Device type / Name / Description / Device" header,
// "Configurations:" with the column titles Default, Current, Next Boot (or
// only Next Boot), then one line per parameter, "*" in front when Next
// Boot differs; values as Label(n), plain numbers, or N/A.
package querytext

import (
	"fmt"
	"strings"

	"github.com/cxray/cxray/internal/lazyre"
)

// Table is one device's query output as printed.
type Table struct {
	DeviceType, Name, Description, Device string
	// Columns are the value columns, in order: ["Next Boot"], ["Current",
	// "Next Boot"] or ["Default", "Current", "Next Boot"]. SetTable
	// marks mlxconfig set's "Next Boot  New" table, read into the slots
	// Current (the old Next Boot) and Next Boot (New).
	Columns  []string
	SetTable bool
	Rows     []Row
	// Notes say what the reader assumed, in the text's order; After are
	// notes on lines after the last table, which a reader of the whole
	// paste adds after its own notes on this table.
	Notes, After []string
	// Fragment: no heading, every line a row (`mlxconfig q | grep X`),
	// read as the Next Boot column.
	Fragment bool
}

// Row is one parameter line: the name and values as printed.
type Row struct {
	Line   int // 1-based, in the text given
	Star   bool
	Name   string
	Values []string // one per column of its table
}

// Error is a query output that cannot be read, with its line (0: none).
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// Is says whether text looks like an mlxconfig/mstconfig query output (it
// has the "Configurations:" heading).
func Is(text string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "Configurations:") {
			return true
		}
	}
	return false
}

var headerKey = lazyre.New(`^(Device type|Name|Description|Device|PSID|FW Version|Part Number):\s*(.*)$`)

// Parse reads the query outputs in text, one Table per device. known says
// whether a parameter name is one an NV database knows (nil: every name);
// it decides only whether lines without a heading are a fragment of a
// query: at least one of their rows must name a known parameter.
//
// It notes what it assumed: a shell prompt and command line or other
// lines above the output (skipped), "(...)" lines where rows were elided,
// terminal colour codes (grep --color), a last row cut short, lines after
// the table (mlxconfig set's "Apply new Configuration?" prompt). Only a
// text with no parameter line at all, or a broken row inside the table, is
// refused, with its line. Callers bound the text's size.
func Parse(text string, known func(name string) bool) ([]Table, error) {
	lines := strings.Split(StripANSI(strings.TrimPrefix(text, "\ufeff")), "\n")
	last := len(lines)
	for last > 0 && strings.TrimSpace(lines[last-1]) == "" {
		last--
	}
	var out []Table
	var cur *Table
	var pending []string // notes before the device they belong to
	inConf, ended := false, false
	firstOdd, firstOddLine := "", 0 // the first table line not read as a row
	finish := func() {
		if cur != nil && cur.Columns != nil {
			cur.Notes = append(pending, cur.Notes...)
			pending = nil
			out = append(out, *cur)
		} else if cur != nil && cur.Columns == nil && len(out) > 0 {
			pending = append(pending, "a device header without its Configurations: table was left out (cut short?)")
		}
		cur, inConf, ended = nil, false, false
	}
	for i := 0; i < last; i++ {
		line := i + 1
		raw := strings.TrimRight(lines[i], "\r")
		l := strings.TrimSpace(raw)
		switch {
		case l == "" || strings.Trim(l, "-=") == "":
			continue
		case strings.HasPrefix(l, "Device #"):
			finish()
			cur = &Table{}
			continue
		case strings.HasPrefix(l, "-E-"):
			return nil, &Error{Line: line, Msg: "the output holds the tool's error instead of the configuration: " + strings.TrimSpace(l[3:])}
		case strings.HasPrefix(l, "-I-"), strings.HasPrefix(l, "-W-"), strings.HasPrefix(l, "The '*' shows"):
			continue
		case isElision(l):
			pending = append(pending, fmt.Sprintf("line %d: %q: rows were left out of the paste; only the parameters shown are read", line, l))
			continue
		case strings.HasPrefix(l, "Configurations:"):
			if cur == nil {
				cur = &Table{} // the "Device #1:" lines were cut off
			} else if cur.Columns != nil {
				finish()
				cur = &Table{}
			}
			heading := strings.TrimSpace(strings.TrimPrefix(l, "Configurations:"))
			cur.Columns = columnsOf(heading)
			if strings.Join(strings.Fields(heading), " ") == "Next Boot New" {
				// Read into the slots: the old Next Boot as Current, New
				// as Next Boot.
				cur.Columns, cur.SetTable = []string{"Current", "Next Boot"}, true
			}
			if cur.Columns == nil {
				return nil, &Error{Line: line, Msg: fmt.Sprintf("the Configurations: heading names columns %q; expected Next Boot, or Default Current Next Boot", strings.TrimPrefix(l, "Configurations:"))}
			}
			inConf = true
			continue
		}
		if !inConf || ended {
			if m := headerKey.FindStringSubmatch(l); m != nil && !ended {
				if cur == nil {
					cur = &Table{}
				}
				v := strings.TrimSpace(m[2])
				switch m[1] {
				case "Device type":
					cur.DeviceType = v
				case "Name":
					cur.Name = v
				case "Description":
					cur.Description = v
				case "Device":
					cur.Device = v
				}
				continue
			}
			pending = append(pending, fmt.Sprintf("line %d skipped: %q is not part of the query output", line, clip(l)))
			continue
		}
		r, err := parseRow(raw, len(cur.Columns))
		if err != nil {
			if firstOdd == "" {
				firstOdd, firstOddLine = err.Error(), line
			}
			switch {
			case line == last && looksLikeRow(raw):
				// The paste ends in the middle of a row.
				pending = append(pending, fmt.Sprintf("line %d: the paste ends inside a row (%s); it was left out", line, clip(l)))
				continue
			case !looksLikeRow(raw):
				// The table is over: mlxconfig set's prompt, a shell
				// prompt, prose.
				ended = true
				pending = append(pending, fmt.Sprintf("line %d skipped: %q follows the table", line, clip(l)))
				continue
			}
			return nil, &Error{Line: line, Msg: err.Error()}
		}
		r.Line = line
		cur.Rows = append(cur.Rows, r)
	}
	if cur != nil && cur.Columns == nil && len(out) == 0 {
		if q, ok := fragment(lines[:last], known); ok {
			return []Table{q}, nil
		}
		return nil, &Error{Line: last, Msg: "the output ends before its Configurations: table (cut short?)"}
	}
	finish()
	if len(out) == 0 {
		if q, ok := fragment(lines[:last], known); ok {
			return []Table{q}, nil
		}
		return nil, &Error{Msg: "no Configurations: table and no parameter lines; this is not the output of mlxconfig/mstconfig q"}
	}
	for i := range out {
		if len(out[i].Rows) == 0 {
			if firstOdd != "" {
				return nil, &Error{Line: firstOddLine, Msg: firstOdd + "; the Configurations: table has no parameter line that reads"}
			}
			return nil, &Error{Msg: fmt.Sprintf("device %d's Configurations: table has no parameter line", i+1)}
		}
	}
	if len(pending) > 0 {
		out[len(out)-1].After = pending
	}
	return out, nil
}

// fragment reads lines without a Configurations: heading — `mlxconfig q |
// grep X` — as parameter rows of the Next Boot column, when every line is
// a row or a command line and at least one row names a known parameter.
func fragment(lines []string, known func(string) bool) (Table, bool) {
	q := Table{Columns: []string{"Next Boot"}, Fragment: true}
	var skipped []string
	nknown := 0
	for i, raw := range lines {
		l := strings.TrimSpace(raw)
		if l == "" || isElision(l) || strings.HasPrefix(l, "-I-") || strings.HasPrefix(l, "-W-") {
			continue
		}
		if IsCommandLine(l) {
			skipped = append(skipped, fmt.Sprintf("line %d skipped: the command line %q", i+1, clip(l)))
			continue
		}
		r, err := parseRow(raw, 1)
		if err != nil {
			return q, false
		}
		if known == nil || known(r.Name) {
			nknown++
		}
		r.Line = i + 1
		q.Rows = append(q.Rows, r)
	}
	if len(q.Rows) == 0 || nknown == 0 {
		return q, false
	}
	q.Notes = append([]string{fmt.Sprintf("no header: read as the Next Boot column; a fragment of %d parameter(s)", len(q.Rows))}, skipped...)
	return q, true
}

// isElision says a line stands for rows left out: "(...)", "...", "[...]",
// "<snip>".
func isElision(l string) bool {
	t := strings.Trim(strings.TrimSpace(l), "()[]<> ")
	return t == "..." || t == "…" || strings.EqualFold(t, "snip") || strings.EqualFold(t, "snipped") || strings.EqualFold(t, "truncated")
}

// looksLikeRow says a line has a parameter row's shape: indented (or
// starred) and a parameter name first.
func looksLikeRow(raw string) bool {
	if raw == "" || (raw[0] != ' ' && raw[0] != '\t' && raw[0] != '*') {
		return false
	}
	t := strings.TrimLeft(strings.TrimLeft(raw, " \t"), "*")
	w := firstWord(t)
	return rowNameRE.MatchString(w) && (strings.ToUpper(w) == w || strings.Contains(w, "_"))
}

// rowNameRE is a parameter name as mstconfig prints it: upper case, a few
// with lower-case parts (EXP_ROM_UEFI_x86_ENABLE).
var rowNameRE = lazyre.New(`^[A-Z][A-Za-z0-9_]*(\[[0-9]+\])?$`)

func firstWord(s string) string {
	f := strings.Fields(strings.TrimLeft(s, "*"))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// ansiRE matches terminal colour and cursor sequences (ESC [ ... letter).
var ansiRE = lazyre.New("\x1b\\[[0-9;?]*[A-Za-z]")

// StripANSI removes terminal colour codes, which grep --color and ls put
// in what people paste.
func StripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	return ansiRE.ReplaceAllString(s, "")
}

// promptRE matches a shell prompt before a command: "$ ", "# ",
// "user@host:~$ ", "[root@host ~]# ", "PS C:\\> ", "C:\\>".
var promptRE = lazyre.New(`^(?:[\w.-]+@[\w.-]+(?::[^$#>]*)?[$#]\s*|\[[^\]]+\][$#]\s*|[$#>]\s+|PS [A-Za-z]:[^>]*>\s*|[A-Za-z]:\\[^>]*>\s*)`)

// IsCommandLine says a line is a shell prompt with a command, or a bare
// invocation of an NVIDIA tool (mlxconfig, mstconfig, flint, ...).
func IsCommandLine(l string) bool {
	l = strings.TrimSpace(l)
	if m := promptRE.FindString(l); m != "" && len(strings.TrimSpace(l[len(m):])) > 0 {
		return true
	}
	w := strings.ToLower(firstWord(strings.TrimPrefix(l, "sudo ")))
	for _, tool := range []string{"mlxconfig", "mstconfig", "mlxconfig.exe", "flint", "mstflint", "mlxup", "mlxfwmanager"} {
		if w == tool || strings.HasSuffix(w, "/"+tool) || strings.HasSuffix(w, "\\"+tool) {
			return true
		}
	}
	return false
}

// columnsOf reads the column titles.
func columnsOf(s string) []string {
	switch strings.Join(strings.Fields(s), " ") {
	case "Next Boot":
		return []string{"Next Boot"}
	case "Default Current Next Boot":
		return []string{"Default", "Current", "Next Boot"}
	case "Current Next Boot":
		return []string{"Current", "Next Boot"}
	}
	return nil
}

// parseRow reads "[*]        NAME   v1 [v2 v3]". Values hold no spaces in
// practice; a line with more words than columns is cut at mstconfig's
// fixed columns (name %-36s after 9 characters, values %-16s).
func parseRow(raw string, cols int) (Row, error) {
	r := Row{}
	t := strings.TrimLeft(raw, " \t")
	if strings.HasPrefix(t, "*") {
		r.Star = true
		t = strings.TrimLeft(t[1:], " \t")
	}
	f := strings.Fields(t)
	if len(f) == 0 {
		return r, fmt.Errorf("an empty parameter line")
	}
	r.Name = f[0]
	if !paramNameRE.MatchString(r.Name) {
		return r, fmt.Errorf("%q is not a parameter name", r.Name)
	}
	vals := f[1:]
	if len(vals) != cols && len(raw) > 45 {
		vals = nil
		rest := raw[45:]
		for i := 0; i < cols; i++ {
			end := len(rest)
			if i < cols-1 && len(rest) > 16 {
				end = 16
			}
			vals = append(vals, strings.TrimSpace(rest[:end]))
			rest = rest[end:]
		}
	}
	if len(vals) != cols {
		return r, fmt.Errorf("%s has %d value(s); the table has %d column(s) (a line cut short?)", r.Name, len(vals), cols)
	}
	r.Values = vals
	return r, nil
}

var paramNameRE = lazyre.New(`^[A-Za-z_][A-Za-z0-9_.]*(\[[0-9]+\])?$`)

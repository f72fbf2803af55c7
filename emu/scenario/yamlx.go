package scenario

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cxray/cxray/prm"
)

// Error is one problem in a scenario file, with its place.
type Error struct {
	File         string
	Line, Column int
	Msg          string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Errors are all the problems found in one file.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// maxErrors stops a badly broken file from producing pages of errors.
const maxErrors = 20

// walker reads a yaml.Node tree against the scenario schema, collecting
// every error with its line instead of stopping at the first.
type walker struct {
	file string
	errs Errors
}

func (w *walker) fail(n *yaml.Node, format string, args ...any) {
	if len(w.errs) >= maxErrors {
		return
	}
	e := &Error{File: w.file, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	w.errs = append(w.errs, e)
}

// field handles the value of one mapping key.
type field func(v *yaml.Node)

// mapping checks that n is a mapping, that every key is known and given
// once, and calls the handler of each key in file order.
func (w *walker) mapping(n *yaml.Node, what string, fields map[string]field) {
	if n.Kind != yaml.MappingNode {
		w.fail(n, "%s must be a mapping of key: value lines, not %s", what, kindName(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			w.fail(k, "%s: keys must be plain words", what)
			continue
		}
		if line, dup := seen[k.Value]; dup {
			w.fail(k, "%s: key %q is given twice (first on line %d); keep one", what, k.Value, line)
			continue
		}
		seen[k.Value] = k.Line
		h, ok := fields[k.Value]
		if !ok {
			w.fail(k, "unknown key %q in %s%s", k.Value, what, suggest(k.Value, keys(fields)))
			continue
		}
		if v.Kind == yaml.AliasNode || k.Value == "<<" {
			w.fail(v, "%s: anchors, aliases and merge keys are not supported; write the value out", what)
			continue
		}
		h(v)
	}
}

func keys(m map[string]field) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func suggest(got string, valid []string) string {
	if s := prm.Closest(got, valid, 1); len(s) > 0 {
		return fmt.Sprintf("; did you mean %q? (valid: %s)", s[0], strings.Join(valid, ", "))
	}
	return fmt.Sprintf(" (valid: %s)", strings.Join(valid, ", "))
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "empty"
		}
		return fmt.Sprintf("%q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "a document"
}

// list checks that n is a sequence of at most max items and calls each.
func (w *walker) list(n *yaml.Node, what string, max int, each func(i int, v *yaml.Node)) {
	if n.Kind != yaml.SequenceNode {
		w.fail(n, "%s must be a list (lines starting with \"- \" or [a, b]), not %s", what, kindName(n))
		return
	}
	if len(n.Content) > max {
		w.fail(n, "%s has %d entries; at most %d are allowed", what, len(n.Content), max)
		return
	}
	for i, v := range n.Content {
		if v.Kind == yaml.AliasNode {
			w.fail(v, "%s: aliases are not supported; write the value out", what)
			continue
		}
		each(i, v)
	}
}

func (w *walker) scalar(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		w.fail(n, "%s must be a single value, not %s", what, kindName(n))
		return "", false
	}
	return n.Value, true
}

func (w *walker) str(n *yaml.Node, what string, maxLen int, dst *string) {
	s, ok := w.scalar(n, what)
	if !ok {
		return
	}
	if len(s) > maxLen {
		w.fail(n, "%s is %d characters; at most %d are allowed", what, len(s), maxLen)
		return
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			w.fail(n, "%s must be printable ASCII (byte 0x%02x at %d is not)", what, s[i], i)
			return
		}
	}
	*dst = s
}

func (w *walker) uintv(n *yaml.Node, what string, max uint64, dst *uint64) {
	s, ok := w.scalar(n, what)
	if !ok {
		return
	}
	v, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 0, 64)
	if err != nil || v > max {
		w.fail(n, "%s must be a whole number 0..%d (decimal or 0x..), not %q", what, max, s)
		return
	}
	*dst = v
}

func (w *walker) intv(n *yaml.Node, what string, lo, hi int, dst *int) {
	s, ok := w.scalar(n, what)
	if !ok {
		return
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, 64)
	if err != nil || v < int64(lo) || v > int64(hi) {
		w.fail(n, "%s must be a whole number %d..%d, not %q", what, lo, hi, s)
		return
	}
	*dst = int(v)
}

func (w *walker) float(n *yaml.Node, what string, lo, hi float64, dst *float64) {
	s, ok := w.scalar(n, what)
	if !ok {
		return
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil || math.IsNaN(v) || v < lo || v > hi {
		w.fail(n, "%s must be a number %g..%g, not %q", what, lo, hi, s)
		return
	}
	*dst = v
}

func (w *walker) boolean(n *yaml.Node, what string, dst *bool) {
	s, ok := w.scalar(n, what)
	if !ok {
		return
	}
	switch strings.ToLower(s) {
	case "true", "yes", "on":
		*dst = true
	case "false", "no", "off":
		*dst = false
	default:
		w.fail(n, "%s must be true or false, not %q", what, s)
	}
}

func (w *walker) duration(n *yaml.Node, what string, max time.Duration, dst *time.Duration) {
	s, ok := w.scalar(n, what)
	if !ok {
		return
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > max {
		w.fail(n, "%s must be a duration such as 250ms, 30s or 5m (0..%v), not %q", what, max, s)
		return
	}
	*dst = d
}

func (w *walker) timestamp(n *yaml.Node, what string, dst *time.Time) {
	s, ok := w.scalar(n, what)
	if !ok {
		return
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Year() < 1970 || t.Year() > 9999 {
				break
			}
			*dst = t.UTC()
			return
		}
	}
	w.fail(n, "%s must be a time such as 2024-05-01T08:00:00Z (RFC 3339, years 1970..9999), not %q", what, s)
}

// parseHexID reads an identifier of n bytes written as colon, dash or
// dot separated hex groups (b8:3f:d2:..., b83f:d203:...) or as 0x....
func parseHexID(s string, n int) (uint64, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X") {
		v, err := strconv.ParseUint(t[2:], 16, 64)
		if err != nil || (n < 8 && v>>(8*n) != 0) {
			return 0, fmt.Errorf("%q is not a %d-byte hex number", s, n)
		}
		return v, nil
	}
	h := strings.NewReplacer(":", "", "-", "", ".", "").Replace(t)
	if len(h) != 2*n {
		return 0, fmt.Errorf("%q does not have %d hex bytes", s, n)
	}
	v, err := strconv.ParseUint(h, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not hex", s)
	}
	return v, nil
}

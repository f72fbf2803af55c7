package scenario

import (
	"fmt"
	"math"
	"reflect"
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

// shape checks n against t, a type of the file's schema (schema.go): a
// struct is a mapping of its yaml-tagged fields, a slice a list of at most
// its max tag, and yaml.Node a value its reader checks. It does what
// yaml.v3's KnownFields does, and more: every problem is collected, with
// its line, column and place in the file, an unknown key gets the nearest
// valid one, and anchors, aliases and keys given twice are refused.
func (w *walker) shape(n *yaml.Node, t reflect.Type, what string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nodeType {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		w.shapeMapping(n, t, what)
	case reflect.Slice:
		w.shapeList(n, t.Elem(), what, 0)
	}
}

var nodeType = reflect.TypeOf(yaml.Node{})

func (w *walker) shapeMapping(n *yaml.Node, t reflect.Type, what string) {
	if n.Kind != yaml.MappingNode {
		w.fail(n, "%s must be a mapping of key: value lines, not %s", what, kindName(n))
		return
	}
	fields := map[string]reflect.StructField{}
	var names []string
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			fields[name] = f
			names = append(names, name)
		}
	}
	sort.Strings(names)
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
		f, ok := fields[k.Value]
		if !ok {
			w.fail(k, "unknown key %q in %s%s", k.Value, what, suggest(k.Value, names))
			continue
		}
		if v.Kind == yaml.AliasNode {
			w.fail(v, "%s: anchors, aliases and merge keys are not supported; write the value out", what)
			continue
		}
		sub := k.Value
		if what != topWhat {
			sub = what + "." + k.Value
		}
		if f.Type.Kind() == reflect.Slice {
			max, _ := strconv.Atoi(f.Tag.Get("max"))
			w.shapeList(v, f.Type.Elem(), sub, max)
			continue
		}
		w.shape(v, f.Type, sub)
	}
}

// topWhat names the whole file in messages; its keys are named bare.
const topWhat = "the scenario"

// shapeList checks a list of at most max (0: any number) entries of elem.
func (w *walker) shapeList(n *yaml.Node, elem reflect.Type, what string, max int) {
	if n.Kind != yaml.SequenceNode {
		w.fail(n, "%s must be a list (lines starting with \"- \" or [a, b]), not %s", what, kindName(n))
		return
	}
	if max > 0 && len(n.Content) > max {
		w.fail(n, "%s has %d entries; at most %d are allowed", what, len(n.Content), max)
		return
	}
	for i, v := range n.Content {
		if v.Kind == yaml.AliasNode {
			w.fail(v, "%s: aliases are not supported; write the value out", what)
			continue
		}
		w.shape(v, elem, fmt.Sprintf("%s[%d]", what, i))
	}
}

// child is the value of key in mapping n, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
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

// scalar is n's value. An absent key (Kind 0) is no value and no error.
func (w *walker) scalar(n *yaml.Node, what string) (string, bool) {
	if n.Kind == 0 {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		w.fail(n, "%s must be a single value, not %s", what, kindName(n))
		return "", false
	}
	return n.Value, true
}

func (w *walker) str(n *yaml.Node, what string, maxLen int, dst *string) bool {
	s, ok := w.scalar(n, what)
	if !ok {
		return false
	}
	if len(s) > maxLen {
		w.fail(n, "%s is %d characters; at most %d are allowed", what, len(s), maxLen)
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			w.fail(n, "%s must be printable ASCII (byte 0x%02x at %d is not)", what, s[i], i)
			return false
		}
	}
	*dst = s
	return true
}

func (w *walker) uintv(n *yaml.Node, what string, max uint64, dst *uint64) bool {
	s, ok := w.scalar(n, what)
	if !ok {
		return false
	}
	v, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 0, 64)
	if err != nil || v > max {
		w.fail(n, "%s must be a whole number 0..%d (decimal or 0x..), not %q", what, max, s)
		return false
	}
	*dst = v
	return true
}

func (w *walker) intv(n *yaml.Node, what string, lo, hi int, dst *int) bool {
	s, ok := w.scalar(n, what)
	if !ok {
		return false
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, 64)
	if err != nil || v < int64(lo) || v > int64(hi) {
		w.fail(n, "%s must be a whole number %d..%d, not %q", what, lo, hi, s)
		return false
	}
	*dst = int(v)
	return true
}

func (w *walker) float(n *yaml.Node, what string, lo, hi float64, dst *float64) bool {
	s, ok := w.scalar(n, what)
	if !ok {
		return false
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil || math.IsNaN(v) || v < lo || v > hi {
		w.fail(n, "%s must be a number %g..%g, not %q", what, lo, hi, s)
		return false
	}
	*dst = v
	return true
}

func (w *walker) boolean(n *yaml.Node, what string, dst *bool) bool {
	s, ok := w.scalar(n, what)
	if !ok {
		return false
	}
	switch strings.ToLower(s) {
	case "true", "yes", "on":
		*dst = true
	case "false", "no", "off":
		*dst = false
	default:
		w.fail(n, "%s must be true or false, not %q", what, s)
		return false
	}
	return true
}

func (w *walker) duration(n *yaml.Node, what string, max time.Duration, dst *time.Duration) bool {
	s, ok := w.scalar(n, what)
	if !ok {
		return false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > max {
		w.fail(n, "%s must be a duration such as 250ms, 30s or 5m (0..%v), not %q", what, max, s)
		return false
	}
	*dst = d
	return true
}

func (w *walker) timestamp(n *yaml.Node, what string, dst *time.Time) bool {
	s, ok := w.scalar(n, what)
	if !ok {
		return false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Year() < 1970 || t.Year() > 9999 {
				break
			}
			*dst = t.UTC()
			return true
		}
	}
	w.fail(n, "%s must be a time such as 2024-05-01T08:00:00Z (RFC 3339, years 1970..9999), not %q", what, s)
	return false
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

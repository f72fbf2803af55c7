package cmdutiltest

import (
	"encoding"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The docs/ pages give each verb's JSON as a key sketch, such as
// {"device","changes":[{"name","tlv"}],"next":{"text","raw"},"in":"a|b"}:
// the keys of each object, the keys of the objects inside where the page
// spells them, and words or a value's spelling where it does not. Sketch
// checks such a sketch against the typed document the verb writes, so
// the page cannot drift from the output contract.

// keyTree is the keys of one JSON object; a key's subtree is nil where
// the value is no object (or the sketch does not spell it out), and any
// marks "{...}": an object like its neighbours, not spelled out.
type keyTree struct {
	keys map[string]*keyTree
	any  bool
}

// parseSketch reads a sketch object.
func parseSketch(s string) (*keyTree, error) {
	p := &sketchParser{s: s}
	t, err := p.object()
	if err != nil {
		return nil, err
	}
	if p.skipSpace(); p.i != len(p.s) {
		return nil, fmt.Errorf("text after the sketch at %d: %q", p.i, p.s[p.i:])
	}
	return t, nil
}

type sketchParser struct {
	s string
	i int
}

func (p *sketchParser) skipSpace() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *sketchParser) eat(c byte) bool {
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *sketchParser) object() (*keyTree, error) {
	if !p.eat('{') {
		return nil, fmt.Errorf("want { at %d in %q", p.i, p.s)
	}
	if strings.HasPrefix(p.s[p.i:], "...}") {
		p.i += 4
		return &keyTree{any: true}, nil
	}
	t := &keyTree{keys: map[string]*keyTree{}}
	for {
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := t.keys[k]; dup {
			return nil, fmt.Errorf("key %q twice", k)
		}
		t.keys[k] = nil
		if p.eat(':') {
			sub, err := p.value()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			t.keys[k] = sub
		}
		if p.eat('}') {
			return t, nil
		}
		if !p.eat(',') {
			return nil, fmt.Errorf("want , or } at %d in %q", p.i, p.s)
		}
	}
}

func (p *sketchParser) str() (string, error) {
	if !p.eat('"') {
		return "", fmt.Errorf("want a quoted key at %d in %q", p.i, p.s)
	}
	end := strings.IndexByte(p.s[p.i:], '"')
	if end < 0 {
		return "", fmt.Errorf("unterminated key at %d", p.i)
	}
	k := p.s[p.i : p.i+end]
	p.i += end + 1
	return k, nil
}

// value reads what follows a key: an object, a list (of objects, or of
// words such as [names]), a quoted spelling of the value or a bare word
// (N); only objects give a subtree.
func (p *sketchParser) value() (*keyTree, error) {
	p.skipSpace()
	switch {
	case p.i >= len(p.s):
		return nil, fmt.Errorf("sketch ends after a colon")
	case p.s[p.i] == '{':
		return p.object()
	case p.s[p.i] == '[':
		p.i++
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] == '{' {
			t, err := p.object()
			if err != nil {
				return nil, err
			}
			if !p.eat(']') {
				return nil, fmt.Errorf("want ] at %d", p.i)
			}
			return t, nil
		}
		end := strings.IndexByte(p.s[p.i:], ']')
		if end < 0 {
			return nil, fmt.Errorf("unterminated list at %d", p.i)
		}
		p.i += end + 1
		return nil, nil
	case p.s[p.i] == '"':
		_, err := p.str()
		return nil, err
	}
	// A bare word such as N: the value's kind, no keys.
	end := strings.IndexAny(p.s[p.i:], ",}")
	if end <= 0 {
		return nil, fmt.Errorf("unexpected %q at %d", p.s[p.i], p.i)
	}
	p.i += end
	return nil, nil
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// typeKeys is the key tree encoding/json gives a value of type t: nil
// for what is no object (or marshals itself).
func typeKeys(t reflect.Type) *keyTree {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		if t.Kind() == reflect.Pointer && (t.Implements(marshalerType) || t.Implements(textMarshalerType)) {
			return nil
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) ||
		t.Implements(textMarshalerType) {
		return nil
	}
	tree := &keyTree{keys: map[string]*keyTree{}}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || len(f.Index) > 1 && !embeddedPath(t, f.Index) {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			continue // its fields are visible fields of their own
		}
		if name == "" {
			name = f.Name
		}
		tree.keys[name] = typeKeys(f.Type)
	}
	return tree
}

// embeddedPath reports whether the field at index is reached through
// untagged embedded structs only (encoding/json promotes those).
func embeddedPath(t reflect.Type, index []int) bool {
	for _, i := range index[:len(index)-1] {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		f := t.Field(i)
		if !f.Anonymous || strings.Split(f.Tag.Get("json"), ",")[0] != "" {
			return false
		}
		t = f.Type
	}
	return true
}

// compare lists how the sketch departs from the type: a key on one side
// only, or keys spelled out for a value that is no object.
func compare(path string, sketch, typ *keyTree) []string {
	if sketch == nil || sketch.any {
		return nil
	}
	if typ == nil {
		return []string{fmt.Sprintf("%s: the page spells out keys, the document has no object here", path)}
	}
	var diffs []string
	for _, k := range sortedKeys(sketch.keys) {
		if _, ok := typ.keys[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s.%s: on the page, not in the document", path, k))
		}
	}
	for _, k := range sortedKeys(typ.keys) {
		sub, ok := sketch.keys[k]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s.%s: in the document, not on the page", path, k))
			continue
		}
		diffs = append(diffs, compare(path+"."+k, sub, typ.keys[k])...)
	}
	return diffs
}

func sortedKeys(m map[string]*keyTree) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// sketchLine finds "`<what> -o json`:" on a page: the sketch that
// follows it, on the same line or the next.
var sketchLine = regexp.MustCompile("(?s)`([^`]+?) -o json`:\\s*`(\\{[^`]*\\})`")

// Sketches reads the JSON sketches of a docs/ page, by the command they
// follow ("set", "query").
func Sketches(t testing.TB, page string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range sketchLine.FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = strings.ReplaceAll(m[2], "\n", " ")
	}
	return out
}

// SketchAfter is the first object sketch on a docs/ page after phrase
// (up to its matching brace), for a sketch that no "`<what> -o json`:"
// introduces or one inside another.
func SketchAfter(t testing.TB, page, phrase string) string {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), phrase)
	if !ok {
		t.Fatalf("%s does not say %q", page, phrase)
	}
	start := strings.IndexByte(rest, '{')
	if start < 0 {
		t.Fatalf("%s has no sketch after %q", page, phrase)
	}
	depth := 0
	for i := start; i < len(rest); i++ {
		switch rest[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return strings.ReplaceAll(rest[start:i+1], "\n", " ")
			}
		}
	}
	t.Fatalf("%s: the sketch after %q does not close", page, phrase)
	return ""
}

// Sketch fails t where sketch (a docs/ page's) and the JSON keys of doc's
// type differ.
func Sketch(t testing.TB, what, sketch string, doc any) {
	t.Helper()
	s, err := parseSketch(sketch)
	if err != nil {
		t.Errorf("%s: the page's sketch does not read: %v", what, err)
		return
	}
	for _, d := range compare(what, s, typeKeys(reflect.TypeOf(doc))) {
		t.Error(d)
	}
}

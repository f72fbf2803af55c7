package scenario

import (
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cxray/cxray/emu/fw"
)

// schemaKeys calls visit for every yaml-tagged field of the file's schema.
func schemaKeys(t reflect.Type, visit func(owner reflect.Type, f reflect.StructField, key string), seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == nodeType || seen[t] {
		return
	}
	seen[t] = true
	for _, f := range reflect.VisibleFields(t) {
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if key == "" || key == "-" {
			continue
		}
		visit(t, f, key)
		schemaKeys(f.Type, visit, seen)
	}
}

// Every key the schema accepts is documented in doc.go (the example, or
// the prose of a section), so a key added to schema.go without its
// documentation fails here.
func TestSchemaKeysDocumented(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	all := append([]reflect.Type{reflect.TypeOf(fileScenario{})}, reflect.TypeOf(fileFunction{}))
	for _, root := range all {
		schemaKeys(root, func(owner reflect.Type, f reflect.StructField, key string) {
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(key) + `\b`).Match(doc) {
				t.Errorf("%s.%s: key %q is not in doc.go", owner.Name(), f.Name, key)
			}
		}, map[reflect.Type]bool{})
	}
}

// The lengths the schema allows are the limits the package declares.
func TestSchemaLimits(t *testing.T) {
	want := map[string]int{
		"devices": MaxDevices, "ports": fw.MaxPorts, "modules": fw.MaxModules,
		"link_down": fw.MaxPorts, "xrqs": MaxXRQs, "namespaces": MaxNamespacesPerXRQ,
		"lane_ber": fw.MaxLanes,
	}
	found := map[string]bool{}
	schemaKeys(reflect.TypeOf(fileScenario{}), func(owner reflect.Type, f reflect.StructField, key string) {
		if f.Type.Kind() != reflect.Slice {
			return
		}
		max, err := strconv.Atoi(f.Tag.Get("max"))
		if err != nil || max <= 0 {
			t.Errorf("%s.%s: a list needs a max tag (got %q)", owner.Name(), f.Name, f.Tag.Get("max"))
			return
		}
		if w, ok := want[key]; ok {
			found[key] = true
			if max != w {
				t.Errorf("%s.%s: max %d, the package's limit is %d", owner.Name(), f.Name, max, w)
			}
		}
	}, map[reflect.Type]bool{})
	for k := range want {
		if !found[k] {
			t.Errorf("no list %q in the schema", k)
		}
	}
}

// Every example file decodes strictly (yaml.v3 KnownFields) into the schema:
// the shape check and yaml.v3 agree on what a valid file is.
func TestShapeAndStrictDecodeAgree(t *testing.T) {
	for _, f := range []string{"testdata/reference.yaml", "testdata/infiniband.yaml", "testdata/faults.yaml", "../../examples/gpu-node.yaml"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(data, f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	// An unknown key deep in the file: the shape names its place, line
	// and column; all such problems come at once.
	_, err := Parse([]byte("devices:\n  - ports:\n      - {port: 1, trafic: {}}\n    modules:\n      - {module: 0, tipe: x}\n"), "s.yaml")
	es, ok := err.(Errors)
	if !ok || len(es) != 2 {
		t.Fatalf("want two errors, got %v", err)
	}
	for i, w := range []struct {
		line, col int
		msg       string
	}{
		{3, 19, `unknown key "trafic" in devices[0].ports[0]; did you mean "traffic"?`},
		{5, 21, `unknown key "tipe" in devices[0].modules[0]; did you mean "type"?`},
	} {
		if es[i].Line != w.line || es[i].Column != w.col || !strings.HasPrefix(es[i].Msg, w.msg) {
			t.Errorf("error %d: %d:%d %q, want %d:%d %q", i, es[i].Line, es[i].Column, es[i].Msg, w.line, w.col, w.msg)
		}
	}
}

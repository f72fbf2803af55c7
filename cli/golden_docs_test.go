package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/linkcmd"
	"github.com/cxray/cxray/cli/internal/statuscmd"
	"github.com/cxray/cxray/feature/health"
	"github.com/cxray/cxray/feature/modules"
	"github.com/cxray/cxray/feature/pcielink"
)

// goldenDocuments are the typed documents of goldenCommands' JSON forms.
var goldenDocuments = map[string]any{
	"status -d {dev} -o json":       statuscmd.Document{},
	"health --all -d {dev} -o json": health.Document{},
	"module -d {dev} -o json":       modules.Document{},
	"link --all -d {dev} -o json":   linkcmd.Document{},
	"link --pcie -d {dev} -o json":  pcielink.Document{},
}

// The golden JSON outputs and the typed documents describe one contract:
// each output decodes into its verb's document with no key left over, and
// encodes back to the same bytes (no key the type would add or drop, no
// value it would spell differently). A command that failed printed the
// error document (one line) instead.
func TestGoldenJSONIsItsDocument(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	checked := map[string]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range strings.Split(string(b), "\n$ cxray ")[1:] {
			cmd, rest, _ := strings.Cut(block, "\n")
			doc, ok := goldenDocuments[cmd]
			if !ok {
				continue
			}
			out, _, _ := strings.Cut(rest, "[exit ")
			out, _, _ = strings.Cut(out, "[stderr]\n")
			indent, escapeHTML := "  ", false // cmdutil's WriteJSON
			if strings.HasPrefix(out, `{"error":`) {
				doc, indent, escapeHTML = cmdutil.ErrorDoc{}, "", true // json.Marshal in cli.go
			}
			v := reflect.New(reflect.TypeOf(doc))
			dec := json.NewDecoder(strings.NewReader(out))
			dec.DisallowUnknownFields()
			if err := dec.Decode(v.Interface()); err != nil {
				t.Errorf("%s, %s: does not decode into %T: %v", filepath.Base(f), cmd, doc, err)
				continue
			}
			var again bytes.Buffer
			enc := json.NewEncoder(&again)
			enc.SetIndent("", indent)
			enc.SetEscapeHTML(escapeHTML)
			if err := enc.Encode(v.Interface()); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(out, again.String()); d != "" {
				t.Errorf("%s, %s: %T does not write the golden bytes back (-golden +type):\n%s", filepath.Base(f), cmd, doc, d)
			}
			checked[cmd]++
		}
	}
	for cmd := range goldenDocuments {
		if checked[cmd] != len(files) {
			t.Errorf("%s: checked in %d of %d golden files", cmd, checked[cmd], len(files))
		}
	}
}

package regcmd

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The documents replaced maps, which encoding/json writes in key order:
// their fields must keep that order for the output to stay the same
// (listItem was a struct already and keeps its own order).
func TestDocumentsInKeyOrder(t *testing.T) {
	for _, doc := range []any{listDocument{}, rawDocument{}, readingDocument{}, setDocument{}, rawSetDocument{}, dryRunDocument{}} {
		typ := reflect.TypeOf(doc)
		var keys []string
		for i := 0; i < typ.NumField(); i++ {
			keys = append(keys, strings.Split(typ.Field(i).Tag.Get("json"), ",")[0])
		}
		sorted := append([]string(nil), keys...)
		sort.Strings(sorted)
		if d := cmp.Diff(sorted, keys); d != "" {
			t.Errorf("%s: fields out of key order (-want +got):\n%s", typ.Name(), d)
		}
	}
}

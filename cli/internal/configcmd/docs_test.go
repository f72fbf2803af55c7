package configcmd

import (
	"testing"

	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// The config documents that replaced maps write their keys in the order
// the maps did (scripts and golden files compare bytes).
func TestDocumentKeyOrder(t *testing.T) {
	cmdutiltest.KeyOrder(t, backupDoc{}, recoverDoc{}, recoverPendingDoc{}, diffDoc{}, settingsDiffDoc{}, checkDoc{}, paramsDoc{})
}

// docs/config.md gives each verb's JSON as a key sketch; the documents
// the verbs write have exactly those keys.
func TestDocsSketchTheDocuments(t *testing.T) {
	sk := cmdutiltest.Sketches(t, "../../../docs/config.md")
	for what, doc := range map[string]any{
		"query":       queryDoc{},
		"set":         setDoc{},
		"apply":       applyDoc{},
		"reset":       resetDoc{},
		"restore":     restoreDoc{},
		"diff":        diffDoc{},
		"show-params": paramsDoc{},
	} {
		s, ok := sk[what]
		if !ok {
			t.Errorf("docs/config.md has no sketch of %s -o json (has %v)", what, sk)
			continue
		}
		cmdutiltest.Sketch(t, what, s, doc)
	}
}

// The sketches no "<verb> -o json" introduces: diff by parameter and the
// policy check.
func TestDocsSketchTheOtherDocuments(t *testing.T) {
	const page = "../../../docs/config.md"
	cmdutiltest.Sketch(t, "diff by parameter", cmdutiltest.SketchAfter(t, page, "the diff is by parameter:"), settingsDiffDoc{})
	cmdutiltest.Sketch(t, "check", cmdutiltest.SketchAfter(t, page, "a device could not be read. `-o json` gives"), checkDoc{})
}

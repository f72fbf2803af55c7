package explaincmd

import (
	"testing"

	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
	"github.com/cxray/cxray/feature/explain"
)

// The documents replaced maps: their fields keep key order, so the
// output did not change.
func TestDocumentsInKeyOrder(t *testing.T) {
	cmdutiltest.KeyOrder(t, explain.Document{})
}

// docs/explain.md sketches explain -o json; the document has exactly
// those keys.
func TestDocsSketchTheDocument(t *testing.T) {
	const page = "../../../docs/explain.md"
	cmdutiltest.Sketch(t, "explain", cmdutiltest.SketchAfter(t, page, "and notes (what was assumed). `-o json`:"), explain.Document{})
}

package linkcmd

import (
	"strings"
	"testing"

	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/feature/linkeye"
	"github.com/cxray/cxray/feature/linkflap"
	"github.com/cxray/cxray/feature/pcielink"
)

// link's documents write their keys in the order the maps they replaced
// did.
func TestDocumentKeyOrder(t *testing.T) {
	cmdutiltest.KeyOrder(t, Document{}, pcielink.Document{}, dryRunDoc{}, clearedDoc{}, histogramDoc{}, cableDumpDoc{}, cableReadDoc{}, changeDoc{})
}

// docs/link.md sketches each JSON output; the documents link writes have
// exactly those keys.
func TestDocsSketchTheDocuments(t *testing.T) {
	const page = "../../../docs/link.md"
	for _, tc := range []struct {
		after string
		doc   any
	}{
		{"## JSON\n\n", Document{}},
		{"a ratio is\n", link.BER{}},
		{"JSON adds ", linkflap.Evidence{}},
		{"shows the write). JSON: ", histogramDoc{}},
		{"a lane the port does not have is\nexit 2. JSON: ", linkeye.Document{}},
		{"is refused as a database finding (exit 2). JSON: ", linkeye.MarginDocument{}},
	} {
		cmdutiltest.Sketch(t, strings.TrimSpace(tc.after), cmdutiltest.SketchAfter(t, page, tc.after), tc.doc)
	}
}

// docs/pcie.md sketches link --pcie -o json.
func TestDocsSketchThePCIeDocument(t *testing.T) {
	cmdutiltest.Sketch(t, "link --pcie", cmdutiltest.Sketches(t, "../../../docs/pcie.md")["link --pcie"], pcielink.Document{})
}

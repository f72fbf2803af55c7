package linkcmd

import (
	"testing"

	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// link's documents write their keys in the order the maps they replaced
// did.
func TestDocumentKeyOrder(t *testing.T) {
	cmdutiltest.KeyOrder(t, linkDoc{}, pcieDoc{}, dryRunDoc{}, clearedDoc{}, histogramDoc{}, cableDumpDoc{}, cableReadDoc{}, changeDoc{})
}

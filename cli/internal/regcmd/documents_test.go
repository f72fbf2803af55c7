package regcmd

import (
	"testing"

	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// The documents replaced maps: their fields keep key order, so the
// output did not change (listItem was a struct already).
func TestDocumentsInKeyOrder(t *testing.T) {
	cmdutiltest.KeyOrder(t, listDocument{}, rawDocument{}, readingDocument{}, setDocument{}, rawSetDocument{}, dryRunDocument{})
}

package plotcmd

import (
	"testing"

	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// The document replaced a map: its fields keep key order, so the output
// did not change.
func TestDocumentsInKeyOrder(t *testing.T) {
	cmdutiltest.KeyOrder(t, plotDocument{})
}

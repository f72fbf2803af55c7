package prmcmd

import (
	"testing"

	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// The documents replaced maps: their fields keep key order, so the
// output did not change.
func TestDocumentsInKeyOrder(t *testing.T) {
	cmdutiltest.KeyOrder(t, listDocument{}, searchDocument{})
}

package prmcmd

import (
	"testing"

	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// The prm documents that replaced maps write their keys in the order the
// maps did.
func TestDocumentKeyOrder(t *testing.T) {
	cmdutiltest.KeyOrder(t, commandShowDoc{}, crosscheckDoc{}, decodeDoc{}, encodeDoc{})
}

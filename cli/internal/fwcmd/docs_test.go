package fwcmd

import (
	"testing"

	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// cmd's and caps --diff's documents write their keys in the order the
// maps they replaced did.
func TestDocumentKeyOrder(t *testing.T) {
	cmdutiltest.KeyOrder(t, cmdDoc{}, capsDiffDoc{})
}

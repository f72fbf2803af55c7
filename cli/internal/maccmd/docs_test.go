package maccmd

import (
	"testing"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// mac's document, and the error document every verb prints in JSON mode,
// write their keys in the order the maps they replaced did.
func TestDocumentKeyOrder(t *testing.T) {
	cmdutiltest.KeyOrder(t, macDoc{}, cmdutil.ErrorDoc{})
}

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

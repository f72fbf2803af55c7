package nvtest_test

import (
	"testing"

	"github.com/cxray/cxray/nvconf/nvtest"
)

func TestNV(t *testing.T) {
	nv := nvtest.NV(t)
	if len(nv.TLVs) == 0 {
		t.Fatal("the built-in NV database has no TLVs")
	}
	if nv.ParamByMlxName("LOG_TX_PSN_WINDOW") == nil {
		t.Error("no LOG_TX_PSN_WINDOW")
	}
}

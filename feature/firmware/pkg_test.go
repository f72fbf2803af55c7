package firmware_test

import (
	"testing"

	"github.com/cxray/cxray/internal/fwimage/mfa2"
)

func buildPackage(t *testing.T, images ...[]byte) []byte {
	t.Helper()
	b, err := mfa2.Build(mfa2.Spec{Images: images})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

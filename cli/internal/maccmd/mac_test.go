package maccmd

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMacsFromQuery(t *testing.T) {
	got, err := macsFromQuery("Base MAC:   b83fd2a1b2c0   4\n")
	if d := cmp.Diff([]string{"b8:3f:d2:a1:b2:c0", "b8:3f:d2:a1:b2:c1", "b8:3f:d2:a1:b2:c2", "b8:3f:d2:a1:b2:c3"}, got); d != "" || err != nil {
		t.Errorf("%v (-want +got):\n%s", err, d)
	}
	for _, bad := range []string{"", "Base MAC: b83fd2a1b2c0 0", "Base MAC: b83fd2a1b2c0 999"} {
		if _, err := macsFromQuery(bad); err == nil {
			t.Errorf("%q was taken", bad)
		}
	}
}

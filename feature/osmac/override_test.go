package osmac

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOverridesFrom(t *testing.T) {
	got := overridesFrom(map[string][2]string{
		"0001": {"{AAAA-1}", "02AABBCCDDEE"},      // an override
		"0002": {"{bbbb-2}", ""},                  // none set
		"0003": {"{CCCC-3}", "02-AA-BB-CC-DD-EE"}, // not the registry's spelling: ignored
		"0004": {"", "02AABBCCDDEF"},              // no adapter GUID
		"0005": {"{dddd-4}", "02AABBCCDDZZ"},      // not hex
	})
	want := map[string]string{"{aaaa-1}": "02:aa:bb:cc:dd:ee"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("overrides (-want +got):\n%s", d)
	}
}

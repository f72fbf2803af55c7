package osmac

import (
	"context"
	"encoding/json"
	"os"
	"testing"
)

// EnvDump names a file TestSystemWindows writes the listing to, so the
// Wine smoke test (tools/winesmoke) can compare it with Linux's view of
// the same host.
const EnvDump = "CXRAY_OSMAC_DUMP"

func TestSystemWindows(t *testing.T) {
	l, err := System(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if l.Format != FormatWindows {
		t.Errorf("format %q", l.Format)
	}
	for _, in := range l.Interfaces {
		if mac, ok := NormalizeMAC(in.MAC); !ok || mac != in.MAC {
			t.Errorf("%s: MAC %q is not normalised", in.Name, in.MAC)
		}
		if in.PermanentMAC != "" {
			if mac, ok := NormalizeMAC(in.PermanentMAC); !ok || mac != in.PermanentMAC {
				t.Errorf("%s: permanent MAC %q is not normalised", in.Name, in.PermanentMAC)
			}
		}
		if in.Name == "" {
			t.Errorf("adapter %s has no name", in.MAC)
		}
	}
	if p := os.Getenv(EnvDump); p != "" {
		b, _ := json.Marshal(l)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

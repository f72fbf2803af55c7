package adb

import (
	"os"
	"strings"
	"testing"
)

// An ADB cut anywhere is refused, never half loaded: whatever the cut, the
// loader fails and says the file was cut short.
func TestCutDatabaseRefused(t *testing.T) {
	data, err := os.ReadFile(MstflintPath)
	if err != nil {
		t.Skipf("SKIP: %s is not installed (apt-get install -y mstflint): %v", MstflintPath, err)
	}
	s := string(data)
	// Cuts inside an element, right after a closing </node>, and just
	// before the root's end.
	cuts := []int{len(s) / 3, strings.Index(s[len(s)/2:], "</node>") + len(s)/2 + len("</node>"), strings.LastIndex(s, "</NodesDefinition>")}
	for off := 1000; off < len(s); off += len(s) / 16 {
		cuts = append(cuts, off)
	}
	for _, n := range cuts {
		db, err := Load("cut.adb", data[:n])
		if err == nil {
			t.Fatalf("cut at %d of %d bytes: loaded %d registers", n, len(data), len(db.Registers))
		}
		if !strings.Contains(err.Error(), "cut short") {
			t.Errorf("cut at %d: %v", n, err)
		}
	}
}

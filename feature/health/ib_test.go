package health_test

import (
	"strings"
	"testing"

	"github.com/cxray/cxray/feature/health"
)

// The ports check on InfiniBand ports (emu/scenario/testdata/
// infiniband.yaml): each port's logical state, speed, width and LID in its
// words, and what keeps it from carrying traffic at its best warned with
// the next step.
func TestPortsCheckInfiniBand(t *testing.T) {
	const file = "../../emu/scenario/testdata/infiniband.yaml"
	for _, c := range []struct {
		bdf     string
		status  health.Status
		summary string
		says    string
	}{
		{"0000:81:00.0", health.Warn, "port 1 INIT at 400G (4X NDR)", "no subnet manager"},
		{"0000:82:00.0", health.Warn, "port 1 ARMED at 400G (4X NDR), LID 0x40", "not activated"},
		{"0000:83:00.0", health.Warn, "port 1 ACTIVE at 200G (4X HDR), LID 0x3", "below the port's 400G"},
		{"0000:84:00.0", health.Warn, "port 1 ACTIVE at 100G (1X NDR), LID 0x4", "1X of its 4 lanes"},
		{"0000:86:00.1", health.OK, "port 1 ACTIVE at 400G (4X NDR), LID 0x6", ""},
	} {
		got := check(t, runExample(t, file, c.bdf), "ports")
		text := strings.Join(got.Details, "; ") + " " + got.Next
		if got.Status != c.status || got.Summary != c.summary || !strings.Contains(text, c.says) {
			t.Errorf("%s: %s %q (%q); want %s %q saying %q", c.bdf, got.Status, got.Summary, text, c.status, c.summary, c.says)
		}
	}
}

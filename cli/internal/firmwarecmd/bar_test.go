package firmwarecmd

import (
	"bytes"
	"strings"
	"testing"
)

// The progress bar writes nothing where standard error is not a terminal
// (a pipe, a log, a buffer); on one it redraws one line per change and
// ends it.
func TestBar(t *testing.T) {
	var buf bytes.Buffer
	b := newBar(&buf)
	b.update("download", 50, 100)
	b.done()
	if buf.Len() != 0 {
		t.Errorf("not a terminal, yet the bar wrote %q", buf.String())
	}
	b = &bar{w: &buf, on: true}
	for _, n := range []int{0, 50, 50, 100} {
		b.update("download", n, 100)
	}
	b.done()
	got := buf.String()
	if strings.Count(got, "\r") != 3 || !strings.Contains(got, " 50%") || !strings.HasSuffix(got, "100%\n") {
		t.Errorf("bar output %q: want three redraws (the repeated 50%% skipped) ending at 100%% and a newline", got)
	}
}

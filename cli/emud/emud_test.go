package emud

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cxray/cxray/internal/buildinfo"
)

// Run by hand, cxray-emu says its version, or what it is for: on standard
// output with exit 0 when asked, on standard error with exit 2 otherwise.
func TestRunByHand(t *testing.T) {
	for _, c := range []struct {
		args      []string
		code      int
		out, errs string
	}{
		{[]string{"version"}, 0, "cxray-emu " + buildinfo.Version + "\n", ""},
		{[]string{"--version"}, 0, "cxray-emu " + buildinfo.Version + "\n", ""},
		{[]string{"--help"}, 0, usage + "\n", ""},
		{nil, 2, "", usage + "\n"},
		{[]string{"run", "--", "true"}, 2, "", usage + "\n"},
	} {
		var out, errs bytes.Buffer
		code := Run(c.args, &out, &errs)
		if code != c.code || out.String() != c.out || errs.String() != c.errs {
			t.Errorf("cxray-emu %s: exit %d, stdout %q, stderr %q; want %d, %q, %q", strings.Join(c.args, " "), code, out.String(), errs.String(), c.code, c.out, c.errs)
		}
	}
}

package cli

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
)

// TestLinkChangeRevisions: every change of the link's active side works
// through each PRM revision's layout (Rev 0.51's PAOS and PPLR name no
// values; later revisions add PPLM index fields): each is written and
// verified, the link reaches the state asked for, and --undo restores
// it, on an Ethernet port (link-trouble's FEC mismatch) and an
// InfiniBand one (gpu-node), in both output modes.
func TestLinkChangeRevisions(t *testing.T) {
	eth := "emu:../examples/link-trouble.yaml@0000:04:00.1"
	ib := "emu:../examples/gpu-node.yaml@0000:18:00.0"
	steps := []struct {
		dev  string
		args []string
	}{
		{eth, []string{"--port_state", "DN"}},
		{eth, []string{"--undo"}},
		{eth, []string{"--fec", "NF", "--fec_speed", "100g"}},       // the partner's FEC: the link comes up
		{eth, []string{"--speeds", "100G_4X", "--link_mode_force"}}, // 100G_2X would run RS(544,514), which the partner refuses
		{eth, []string{"--undo"}},
		{eth, []string{"--loopback", "PH"}},
		{eth, []string{"--loopback", "NO"}},
		{ib, []string{"--port_state", "TG"}},
		{ib, []string{"--speeds", "HDR"}},
		{ib, []string{"--undo"}},
		{ib, []string{"--loopback", "PH"}},
		{ib, []string{"--undo"}},
	}
	for _, f := range prmhistorytest.Files(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			for i, s := range steps {
				mode := []string{"table", "json"}[i%2]
				args := append([]string{"--adb", f, "-o", mode, "link", "-d", s.dev, "--yes"}, s.args...)
				out, errs, code := cli(t, "", args...)
				if code != 0 {
					t.Fatalf("%v: exit %d\n%s%s", s.args, code, out, errs)
				}
				if mode == "json" {
					var d struct {
						Written  bool     `json:"written"`
						Verified []string `json:"verified"`
					}
					if err := json.Unmarshal([]byte(out), &d); err != nil || !d.Written || len(d.Verified) == 0 {
						t.Errorf("%v: %v %+v", s.args, err, d)
					}
				}
			}
		})
	}
}

package emucmd

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
	"github.com/cxray/cxray/emu/ctl"
	"github.com/cxray/cxray/emu/scenario"
)

// Each emu verb's flags land in its options and its arguments (the
// command emu run starts) reach the run function.
func TestVerbWiring(t *testing.T) {
	a := &app{cmdutiltest.New(t, "table").App}
	opt := cmp.AllowUnexported(emuRunOptions{}, emuServeOptions{}, emuCtlOptions{}, emuImageOptions{}, emuStatusOptions{}, emuResetOptions{}, emuProfilesOptions{})
	check := func(name string, want, got any, wantArgs, gotArgs []string) {
		t.Helper()
		if d := cmp.Diff(want, got, opt); d != "" {
			t.Errorf("%s options (-want +got):\n%s", name, d)
		}
		if d := cmp.Diff(wantArgs, gotArgs); d != "" {
			t.Errorf("%s args (-want +got):\n%s", name, d)
		}
	}
	r, args := cmdutiltest.Wire(t, a.newEmuRunCmd, "--scenario", "s.yaml", "--", "mstflint", "-d", "03:00.0", "q")
	check("run", &emuRunOptions{scenarioFile: "s.yaml"}, r, []string{"mstflint", "-d", "03:00.0", "q"}, args)
	s, args := cmdutiltest.Wire(t, a.newEmuServeCmd, "--profile", "cx7-2p400g")
	check("serve", &emuServeOptions{profile: "cx7-2p400g", socket: ctl.DefaultSocket}, s, []string{}, args)
	c, args := cmdutiltest.Wire(t, a.newEmuCtlCmd, "fault", "module_absent", "--socket", "/s", "--bdf", "0000:03:00.1")
	check("ctl", &emuCtlOptions{socket: "/s", bdf: "0000:03:00.1"}, c, []string{"fault", "module_absent"}, args)
	i, args := cmdutiltest.Wire(t, a.newEmuImageCmd, "--version", "28.40.1000", "--out", "f.bin", "--signature", "bad", "--size", "32768", "--mfa2")
	check("image", &emuImageOptions{profile: scenario.DefaultProfile, version: "28.40.1000", out: "f.bin", signature: "bad", size: 32768, mfa2: true}, i, []string{}, args)
	st, args := cmdutiltest.Wire(t, a.newEmuStatusCmd)
	check("status", &emuStatusOptions{}, st, []string{}, args)
	rs, args := cmdutiltest.Wire(t, a.newEmuResetCmd, "cx6dx-2p100g")
	check("reset", &emuResetOptions{}, rs, []string{"cx6dx-2p100g"}, args)
	p, args := cmdutiltest.Wire(t, a.newEmuProfilesCmd)
	check("profiles", &emuProfilesOptions{}, p, []string{}, args)
}

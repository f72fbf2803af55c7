package emucmd

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/emu/state"
)

// emu runs `cxray emu ARGS` in a, under a root named cxray as in package
// cli (messages quote the command path).
func emu(a *cmdutiltest.App, args ...string) error {
	a.Reset()
	root := &cobra.Command{Use: "cxray"}
	root.AddCommand(New(a.App))
	return a.Run(root, append([]string{"emu"}, args...)...)
}

// Usage errors of run and ctl are exit 2, found before a namespace is made
// or the socket is dialled.
func TestEmuUsage(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	noSocket := filepath.Join(t.TempDir(), "no.sock")
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"run", "--scenario", "x.yaml", "--profile", "cx7-2p400g", "--", "true"}, "give --scenario or --profile, not both"},
		{[]string{"run", "--profile", "no-such-profile", "--", "true"}, "no-such-profile"},
		{[]string{"run", "--scenario", filepath.Join(t.TempDir(), "missing.yaml"), "--", "true"}, "missing.yaml"},
		{[]string{"run", "-d", "emu", "true"}, "the command to run and its flags go after '--': cxray emu run -- mstflint"},
		{[]string{"ctl", "--socket", noSocket, "status", "extra"}, "status takes no arguments"},
		{[]string{"ctl", "--socket", noSocket, "fault"}, "fault needs NAME=VALUE settings: "},
		{[]string{"ctl", "--socket", noSocket, "fault", "removed"}, "\"removed\" is not NAME=VALUE"},
		{[]string{"ctl", "--socket", noSocket, "module"}, "module needs a cage number"},
		{[]string{"ctl", "--socket", noSocket, "module", "one", "i2c_hang"}, "module \"one\": give the cage number"},
		{[]string{"ctl", "--socket", noSocket, "plug", "0"}, "plug needs a cage number and a module"},
		{[]string{"ctl", "--socket", noSocket, "plug", "x", "empty"}, "plug \"x\": give the cage number"},
		{[]string{"ctl", "--socket", noSocket, "nv", "no_access"}, "\"no_access\" is not NAME=VALUE"},
		{[]string{"ctl", "--socket", noSocket, "advance"}, "advance needs one duration"},
		{[]string{"ctl", "--socket", noSocket, "explode"}, "unknown ctl command \"explode\"; use status, fault, clear, module, plug, nv or advance"},
		{[]string{"reset", "no-such-profile"}, "no-such-profile"},
	} {
		err := emu(a, c.args...)
		if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%v: exit %d %v; want exit 2 saying %q", c.args, code, err, c.words)
		}
		if a.Out.Len() != 0 {
			t.Errorf("%v: a usage error printed %.200q", c.args, a.Out)
		}
	}
	// A well-formed request to an emulator that is not running is a
	// device error.
	if err := emu(a, "ctl", "--socket", noSocket, "status"); cmdutiltest.Code(err) != cmdutil.ExitDevice {
		t.Errorf("ctl without an emulator: %v, want exit 3", err)
	}
}

// profiles lists every profile with what it emulates, in both modes.
func TestEmuProfiles(t *testing.T) {
	a := cmdutiltest.New(t, "json")
	if err := emu(a, "profiles"); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Profiles []struct {
			Name, Firmware, PSID string
			Ports                int
		} `json:"profiles"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &r)
	var names []string
	for _, p := range r.Profiles {
		names = append(names, p.Name)
		prof, err := scenario.LookupProfile(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Firmware == "" || p.PSID == "" || p.Ports != len(prof.Spec.Ports) {
			t.Errorf("%s: firmware %q PSID %q ports %d", p.Name, p.Firmware, p.PSID, p.Ports)
		}
	}
	if diff := cmp.Diff(scenario.Profiles(), names); diff != "" {
		t.Errorf("profiles (-want +got):\n%s", diff)
	}
	a.Output = "table"
	if err := emu(a, "profiles"); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimRight(a.Out.String(), "\n"), "\n"); len(lines) != len(names)+1 || !strings.HasPrefix(lines[0], "PROFILE") {
		t.Errorf("table:\n%s", a.Out)
	}
}

// openOnce opens and closes -d name, which keeps its state.
func openOnce(t *testing.T, a *cmdutiltest.App, name string) {
	t.Helper()
	db, err := a.DB()
	if err != nil {
		t.Fatal(err)
	}
	ad, err := a.Open(context.Background(), name, db)
	if err != nil {
		t.Fatal(err)
	}
	ad.Close()
}

func states(t *testing.T, a *cmdutiltest.App) []string {
	t.Helper()
	saved := a.Output
	a.Output = "json"
	defer func() { a.Output = saved }()
	if err := emu(a, "status"); err != nil {
		t.Fatal(err)
	}
	var r struct {
		KeepsState bool         `json:"keeps_state"`
		States     []state.Info `json:"states"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &r)
	if !r.KeepsState {
		t.Fatal("keeps_state false with a state directory")
	}
	names := []string{}
	for _, s := range r.States {
		names = append(names, s.Name)
	}
	return names
}

// A profile used once has a kept state; status lists it, reset of that
// profile removes it and leaves the others; reset of all removes the rest.
func TestEmuStatusReset(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	if diff := cmp.Diff([]string{}, states(t, a)); diff != "" {
		t.Errorf("fresh state directory (-want +got):\n%s", diff)
	}
	if err := emu(a, "status"); err != nil || !strings.Contains(a.Out.String(), "None yet: the first command on -d emu") {
		t.Errorf("empty status: %v\n%s", err, a.Out)
	}
	openOnce(t, a, "emu:cx6dx-2p100g")
	openOnce(t, a, "emu:cx7-2p400g")
	got := states(t, a)
	if len(got) != 2 {
		t.Fatalf("states %v, want one per profile used", got)
	}
	if err := emu(a, "status"); err != nil || !strings.Contains(a.Out.String(), "SCENARIO") {
		t.Errorf("status table: %v\n%s", err, a.Out)
	}

	a.Output = "json"
	if err := emu(a, "reset", "cx6dx-2p100g"); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Removed []string `json:"removed"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &r)
	if len(r.Removed) == 0 {
		t.Errorf("reset cx6dx-2p100g removed nothing")
	}
	if left := states(t, a); len(left) != 1 || strings.Contains(left[0], "cx6dx") {
		t.Errorf("after resetting cx6dx-2p100g: %v", left)
	}
	a.Output = "table"
	if err := emu(a, "reset"); err != nil || !strings.HasPrefix(a.Out.String(), "Removed ") {
		t.Errorf("reset all: %v\n%s", err, a.Out)
	}
	if left := states(t, a); len(left) != 0 {
		t.Errorf("after reset all: %v", left)
	}
	if err := emu(a, "reset"); err != nil || a.Out.String() != "No kept state to reset.\n" {
		t.Errorf("reset of nothing: %v %q", err, a.Out)
	}
}

// CXRAY_EMU_STATE=off: nothing is kept, and status and reset say so.
func TestEmuStateOff(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	t.Setenv(state.EnvDir, state.Off)
	if err := emu(a, "status"); err != nil || !strings.HasPrefix(a.Out.String(), "The emulator keeps no state (CXRAY_EMU_STATE=off)") {
		t.Errorf("status: %v %q", err, a.Out)
	}
	if err := emu(a, "reset"); err != nil || !strings.Contains(a.Out.String(), "nothing to reset") {
		t.Errorf("reset: %v %q", err, a.Out)
	}
	a.Output = "json"
	if err := emu(a, "status"); err != nil {
		t.Fatal(err)
	}
	var r struct {
		KeepsState bool              `json:"keeps_state"`
		States     []json.RawMessage `json:"states"`
	}
	cmdutiltest.JSON(t, a.Out.String(), &r)
	if r.KeepsState || r.States == nil || len(r.States) != 0 {
		t.Errorf("%+v, want keeps_state false and states []", r)
	}
}

func TestAge(t *testing.T) {
	now := time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		ago  time.Duration
		want string
	}{{-time.Second, "0s"}, {0, "0s"}, {59 * time.Second, "59s"}, {time.Minute, "1m"}, {59 * time.Minute, "59m"}, {time.Hour, "1h"}, {47 * time.Hour, "47h"}, {48 * time.Hour, "2d"}, {30 * 24 * time.Hour, "30d"}} {
		if got := age(now, now.Add(-c.ago)); got != c.want {
			t.Errorf("age of %v: %q, want %q", c.ago, got, c.want)
		}
	}
}

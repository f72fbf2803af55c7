// Package cmdiftest opens emulated functions through the command interface
// for the tests of feature packages: a dev.Device whose commands and
// registers go through the fwctl client over the emulator's endpoint (the
// whole client path but the ioctl), on a manual clock.
package cmdiftest

import (
	"testing"
	"time"

	"github.com/cxray/cxray/access/fwctl"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/emu/cmdif"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm/builtin"
)

// Rig is a built emulation and its functions opened over fwctl.
type Rig struct {
	Emulation *scenario.Emulation
	Clock     *clock.Manual
	Devices   []*dev.Device // one per function, in scenario order
	Endpoints []*cmdif.Endpoint
}

// Start is the manual clock's start.
var Start = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// Profile builds one function of a profile.
func Profile(t testing.TB, profile string) *Rig {
	t.Helper()
	sc, err := scenario.FromProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	return Build(t, sc)
}

// YAML builds a scenario given as text.
func YAML(t testing.TB, text string) *Rig {
	t.Helper()
	sc, err := scenario.Parse([]byte(text), t.Name()+".yaml")
	if err != nil {
		t.Fatal(err)
	}
	return Build(t, sc)
}

// Build powers a scenario on and opens every function over fwctl.
func Build(t testing.TB, sc *scenario.Scenario) *Rig {
	t.Helper()
	clk := clock.NewManual(Start)
	e, err := scenario.Build(sc, scenario.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	r := &Rig{Emulation: e, Clock: clk}
	for _, f := range e.Functions() {
		ep, err := cmdif.New(e, f, cmdif.Options{})
		if err != nil {
			t.Fatalf("%s: %v", f.BDF, err)
		}
		c, err := fwctl.NewClient(ep, fwctl.Options{Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		d := dev.New("emu@"+f.BDF, f.BDF, dev.BackendFwctl, db, fwctl.NewRegisters(c), nil)
		d.AttachCommander(c)
		r.Devices = append(r.Devices, d)
		r.Endpoints = append(r.Endpoints, ep)
	}
	return r
}

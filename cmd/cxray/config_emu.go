package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/emu/nvstore"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/prm"
)

// The NV configuration of an emulated adapter. The scenario builder does
// not install the NV store yet, so `config` installs it on every adapter of
// the emulation it opens (nvstore.Install is idempotent: once the scenario
// installs it, this finds that store and leaves it alone).
//
// `-d emu` builds a fresh adapter per command. So that a sequence of
// commands (set, then apply, then query) works on one adapter, the NV state
// can live in a file: CXRAY_EMU_NV_STATE=FILE loads it before the command
// and saves it after.

// EnvEmuNVState names the file an emulated adapter's NV state persists in.
const EnvEmuNVState = "CXRAY_EMU_NV_STATE"

// emuNVStates is the state file: "profile/adapter" -> store state (the
// profile in the key keeps emu:cx7-2p400g and emu:cx6dx-2p100g apart).
type emuNVStates map[string]nvstore.State

// installNV gives every adapter of the emulation its NV store (profile
// defaults) and loads the saved state when CXRAY_EMU_NV_STATE names a file.
// It returns a function that saves the state back.
func installNV(e *scenario.Emulation) (func() error, error) {
	stores := map[string]*nvstore.Store{}
	for _, ad := range e.Adapters {
		s, err := nvstore.InstallProfile(ad.Firmware, ad.Profile)
		if err != nil {
			return nil, fmt.Errorf("emulated adapter %s: %w", ad.Name, err)
		}
		stores[ad.Profile+"/"+ad.Name] = s
	}
	path := os.Getenv(EnvEmuNVState)
	if path == "" {
		return func() error { return nil }, nil
	}
	saved := emuNVStates{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &saved); err != nil {
			return nil, fmt.Errorf("%s=%s: not an NV state file (%v); delete it to start from the profile's defaults", EnvEmuNVState, path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", EnvEmuNVState, err)
	}
	for name, st := range saved {
		s := stores[name]
		if s == nil {
			continue // an adapter of another scenario
		}
		if err := s.SetState(st); err != nil {
			return nil, fmt.Errorf("%s=%s, adapter %s: %w; delete the file to start from the profile's defaults", EnvEmuNVState, path, name, err)
		}
	}
	return func() error {
		for name, s := range stores {
			saved[name] = s.State()
		}
		b, err := json.MarshalIndent(saved, "", "  ")
		if err != nil {
			return err
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("save the emulated NV state: %w", err)
		}
		return os.Rename(tmp, filepath.Clean(path))
	}, nil
}

// openConfigDevice opens -d for the config commands: like openDevice, and
// for the emulator with the NV store installed.
func (a *app) openConfigDevice(ctx context.Context, given string, db *prm.DB) (*opened, error) {
	if !scenario.IsEmulatorName(given) {
		return a.openDevice(ctx, given, db)
	}
	n, err := sys.Parse(given)
	if err != nil {
		return nil, usageWrap(err)
	}
	if n.Kind != devname.Emu {
		return a.openDevice(ctx, given, db)
	}
	e, fn, err := a.buildEmulation(n, db)
	if err != nil {
		return nil, err
	}
	save, err := installNV(e)
	if err != nil {
		return nil, usageWrap(err)
	}
	f := e.Functions()[0]
	if fn != "" {
		if f, err = e.Function(fn); err != nil {
			return nil, usageWrap(err)
		}
	}
	d, _, err := dev.OpenConfigSpace(ctx, n.Given, f.BDF, "emulator", db, f.Device, emuStackOptions)
	if err != nil {
		return nil, deviceErr(err)
	}
	o := &opened{dev: d, name: n, emu: e}
	o.closeFn = func() {
		if err := save(); err != nil {
			fmt.Fprintf(a.stderr, "cxray: warning: %v\n", err)
		}
	}
	return o, nil
}

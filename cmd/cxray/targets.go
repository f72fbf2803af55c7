package main

import (
	"context"
	"fmt"
	"time"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/prm"
)

// openTargets opens the devices a multi-device command works on: the one
// -d names, or with all every function (of the machine, or of the emulated
// scenario -d names).
func (a *app) openTargets(ctx context.Context, given string, all bool, db *prm.DB) ([]*opened, error) {
	if !all {
		o, err := a.openDevice(ctx, given, db)
		if err != nil {
			return nil, err
		}
		return []*opened{o}, nil
	}
	if given != "" {
		n, err := sys.Parse(given)
		if err != nil {
			return nil, deviceErr(err)
		}
		if n.Kind == devname.Emu {
			e, _, err := a.buildEmulation(n, db)
			if err != nil {
				return nil, err
			}
			var out []*opened
			for _, f := range e.Functions() {
				d, _, err := dev.OpenConfigSpace(ctx, n.Given+"@"+f.BDF, f.BDF, "emulator", db, f.Device, emuStackOptions)
				if err != nil {
					return nil, deviceErr(err)
				}
				out = append(out, &opened{dev: d, name: n, emu: e})
			}
			return out, nil
		}
		return nil, usageErr("--all with -d works for emulated scenarios (emu:FILE.yaml); for a machine's adapters leave out -d")
	}
	fs, err := sys.List()
	if err != nil {
		return nil, deviceErr(err)
	}
	if len(fs) == 0 {
		return nil, deviceErr(fmt.Errorf("no ConnectX adapters found on this machine; use -d emu for the emulator"))
	}
	var out []*opened
	for _, f := range fs {
		if f.VF {
			continue
		}
		o, err := a.openDevice(ctx, f.BDF, db)
		if err != nil {
			closeAll(out)
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

func closeAll(os []*opened) {
	for _, o := range os {
		o.Close()
	}
}

// sleeper waits between samples: on an emulator whose clock is manual it
// advances the emulated clock instead of waiting, so samples of a
// scenario are instant and reproducible.
func sleeper(e *scenario.Emulation) func(ctx context.Context, d time.Duration) error {
	if e == nil || e.Manual == nil {
		return nil
	}
	return func(ctx context.Context, d time.Duration) error {
		e.Manual.Advance(d)
		return ctx.Err()
	}
}

// nowOf is the clock sample times come from: the emulator's when emulated.
func nowOf(e *scenario.Emulation) func() time.Time {
	if e == nil {
		return time.Now
	}
	return e.Clock.Now
}

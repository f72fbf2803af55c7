package firmware_test

import (
	"context"
	"testing"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/firmware"
	"github.com/cxray/cxray/internal/fwimage"
)

// Every example scenario, every function: query answers; an update
// through one function of each adapter is seen pending through every
// function of that adapter and no other (the flash is the adapter's), and
// the running firmware stays. A scenario whose faults keep the registers
// from answering (a held semaphore, lockdown) gives an error, never a
// reading.
func TestEveryScenarioAndFunction(t *testing.T) {
	emutest.EachScenario(t, devtest.DB(t), func(t *testing.T, em *scenario.Emulation, ads []*adapter.Adapter) {
		ctx := context.Background()
		funcs := em.Functions()
		before := map[string]*firmware.DeviceInfo{}
		for i, ad := range ads {
			info, err := firmware.Query(ctx, ad)
			if err != nil {
				t.Logf("%s: %v (faulted scenario: no reading)", funcs[i].BDF, err)
				continue
			}
			if info.Running.Version == "" || info.Stored == nil || len(info.Components) == 0 {
				t.Errorf("%s: %+v", funcs[i].BDF, info)
			}
			before[funcs[i].BDF] = info
		}
		updated := map[*scenario.Adapter]string{}
		for i, ad := range ads {
			a := funcs[i].Adapter
			if _, done := updated[a]; done || before[funcs[i].BDF] == nil {
				continue
			}
			s := a.Firmware.Spec()
			v := fwimage.Version{Major: s.FW.Major, Minor: 99, SubMinor: uint16(100 + len(updated))}
			b, err := fwimage.Build(fwimage.Spec{Version: v, PSID: s.PSID, HWID: uint32(s.HWDevID), PCIDeviceID: s.PCIDeviceID})
			if err != nil {
				t.Fatal(err)
			}
			f, err := firmware.ReadFile("img.bin", b)
			if err != nil {
				t.Fatal(err)
			}
			p, err := firmware.Prepare(ctx, ad, f, firmware.Options{})
			if err == nil {
				err = firmware.Update(ctx, ad, p, firmware.Options{})
			}
			if err != nil {
				t.Errorf("%s: update: %v", funcs[i].BDF, err)
				continue
			}
			updated[a] = v.String()
		}
		for i, ad := range ads {
			b := before[funcs[i].BDF]
			if b == nil {
				continue
			}
			info, err := firmware.Query(ctx, ad)
			if err != nil {
				t.Errorf("%s: query after the updates: %v", funcs[i].BDF, err)
				continue
			}
			want := updated[funcs[i].Adapter]
			got := ""
			if info.Pending != nil {
				got = info.Pending.Version
			}
			if got != want || info.Running.Version != b.Running.Version {
				t.Errorf("%s: running %s pending %q; want running %s pending %q", funcs[i].BDF, info.Running.Version, got, b.Running.Version, want)
			}
		}
		if len(before) > 0 && len(updated) == 0 {
			t.Error("no adapter was updated")
		}
	})
}

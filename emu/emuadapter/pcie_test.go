package emuadapter

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/pcie"
)

// An emulated function's PCIe link as the adapter reads it: config space,
// sysfs (function and slot) and MPEIN tell the same story.
func TestAdapterPCIe(t *testing.T) {
	private(t)
	file := filepath.Join(t.TempDir(), "x8.yaml")
	if err := os.WriteFile(file, []byte("devices:\n  - profile: cx7-2p400g\n    pcie: {width: 8, slot_width: 16}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ad := openOne(t, &Emulator{Fresh: true}, "emu:"+file)
	p, err := ad.PCIe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for what, e := range map[string]error{"config": p.ConfigErr, "sysfs": p.HostErr, "MPEIN": p.FirmwareErr, "MPCNT": p.CountersErr} {
		if e != nil {
			t.Errorf("%s: %v", what, e)
		}
	}
	x8, x16 := pcie.Link{Speed: pcie.Gen5, Width: 8}, pcie.Link{Speed: pcie.Gen5, Width: 16}
	type view struct{ Current, Capable pcie.Link }
	got := map[string]view{
		"config": {p.Config.Express.Current, p.Config.Express.Capable},
		"sysfs":  {p.Host.Current, p.Host.Max},
		"mpein":  {p.Firmware.Active, p.Firmware.Enabled},
		"slot":   {p.Bridge.Current, p.Bridge.Max},
	}
	want := map[string]view{"config": {x8, x16}, "sysfs": {x8, x16}, "mpein": {x8, x16}, "slot": {x8, x16}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the three sources (-want +got):\n%s", d)
	}
	if p.Firmware.PeerMax != pcie.Gen5 || p.Counters["crc_error_tlp"] != 0 || p.Host.Correctable == nil {
		t.Errorf("MPEIN peer %v, MPCNT %v, AER %+v", p.Firmware.PeerMax, p.Counters, p.Host.Correctable)
	}
	// The default profile has no slot: no bridge, the rest the same.
	p, err = openOne(t, &Emulator{Fresh: true}, "emu").PCIe(context.Background())
	if err != nil || p.Bridge != nil || p.Host.Current != x16 || p.Config.Express.Current != x16 {
		t.Errorf("default profile: %+v, %v", p, err)
	}
}

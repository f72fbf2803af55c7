package snapshot_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter/adaptertest"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/snapshot"
	"github.com/cxray/cxray/kernel/kerneltest"
	"github.com/cxray/cxray/pcie"
)

// A card that trains narrower between two snapshots is a static change;
// AER errors are counters.
func TestPCIeInSnapshots(t *testing.T) {
	sc, err := scenario.Parse([]byte("devices:\n  - profile: cx7-2p400g\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	em := emutest.Build(t, sc)
	a := emutest.Open(t, em, "emu:t.yaml", nil)[0]
	ctx := context.Background()
	take := func() *snapshot.File {
		d, err := snapshot.Take(ctx, a, profile(t, "minimal"), snapshot.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return &snapshot.File{Devices: []snapshot.Device{*d}}
	}
	base := take()
	if d := cmp.Diff(&snapshot.PCIeView{Current: "Gen5 x16", Capable: "Gen5 x16", Slot: "Gen5 x?",
		AER: map[string]uint64{"correctable": 0, "nonfatal": 0, "fatal": 0}}, base.Devices[0].PCIe); d != "" {
		t.Errorf("recorded (-want +got):\n%s", d)
	}
	if dh := base.Devices[0].DriverHealth; dh == nil || dh.Note == "" {
		t.Errorf("the emulator has no kernel driver: %+v", dh)
	}
	if err := em.Adapters[0].Link.Retrain(pcie.Link{Width: 8}); err != nil {
		t.Fatal(err)
	}
	em.Adapters[0].Link.Inject(0, "BadTLP", 4)
	r := snapshot.Diff(base, take(), nil)
	var static, counters []string
	for _, c := range r.Static {
		static = append(static, c.Register+"."+c.Path+": "+c.OldText+" -> "+c.NewText)
	}
	for _, c := range r.Counters {
		if c.Register == "PCIe[aer]" {
			counters = append(counters, c.Path+": "+c.OldText+" -> "+c.NewText)
		}
	}
	if d := cmp.Diff([]string{"PCIe.current: Gen5 x16 -> Gen5 x8"}, static); d != "" {
		t.Errorf("static (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"correctable: 0 -> 4"}, counters); d != "" {
		t.Errorf("counters (-want +got):\n%s", d)
	}
	if !r.Problems() {
		t.Error("a link trained narrower is no problem to the diff")
	}
}

// The driver's health on the kernel's view: a reporter gone to error is a
// static change; its counts and the statistics are counters.
func TestDriverInSnapshots(t *testing.T) {
	var k *kerneltest.Kernel
	f := devtest.New(devtest.DB(t))
	f.Put("MGIR", "hw_info.num_ports=1", "fw_info.extended_major=28", "fw_info.extended_minor=39", "fw_info.extended_sub_minor=1002")
	f.Put("PMLP", "local_port=1", "width=4")
	a := adaptertest.Direct(t, f, func(_ string, kk *kerneltest.Kernel) { k = kk })
	ctx := context.Background()
	take := func() *snapshot.File {
		d, err := snapshot.Take(ctx, a, profile(t, "minimal"), snapshot.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return &snapshot.File{Devices: []snapshot.Device{*d}}
	}
	base := take()
	dh := base.Devices[0].DriverHealth
	if dh == nil || len(dh.Reporters) != 5 || dh.Stats["ens1f0np0.rx_discards_phy"] != 12 {
		t.Fatalf("recorded: %+v", dh)
	}
	k.Health["pci/0000:c1:00.0"][1].State, k.Health["pci/0000:c1:00.0"][1].Errors = 1, 1
	k.Step = map[string]map[string]uint64{"ens1f0np0": {"rx_discards_phy": 5}}
	r := snapshot.Diff(base, take(), nil)
	var got []string
	for _, c := range append(append([]snapshot.Change{}, r.Static...), r.Counters...) {
		if c.Register == "devlink_health[fw_fatal]" || c.Register == "driver_stats" {
			got = append(got, c.Class+" "+c.Register+"."+c.Path+": "+c.OldText+" -> "+c.NewText)
		}
	}
	want := []string{"static devlink_health[fw_fatal].state: healthy -> error", "counter devlink_health[fw_fatal].errors: 0 -> 1",
		"counter driver_stats.ens1f0np0.rx_discards_phy: 12 -> 17"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("changes (-want +got):\n%s", d)
	}
}

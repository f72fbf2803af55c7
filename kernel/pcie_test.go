package kernel

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/pcie"
)

func TestPCIe(t *testing.T) {
	f := newFixture(t)
	d := f.open(t, "mlx5_0")
	fn, bridge, err := d.PCIe(ctx5(t))
	if err != nil {
		t.Fatal(err)
	}
	gen5x16 := pcie.Link{Speed: pcie.Gen5, Width: 16}
	if fn.BDF != "0000:c1:00.0" || fn.Current != gen5x16 || fn.Max != gen5x16 || len(fn.Missing)+len(fn.Problems) != 0 {
		t.Errorf("function: %+v", fn)
	}
	if fn.Correctable == nil || fn.Correctable.Total != 3 || fn.Correctable.Counts["BadTLP"] != 2 || fn.Fatal == nil || fn.Fatal.Total != 0 {
		t.Errorf("AER: %+v %+v", fn.Correctable, fn.Fatal)
	}
	want := &pcie.HostView{BDF: "0000:c0:01.1", Current: gen5x16, Max: gen5x16,
		Missing: []string{pcie.AttrAERCor, pcie.AttrAERNonFatal, pcie.AttrAERFatal}}
	if d := cmp.Diff(want, bridge); d != "" {
		t.Errorf("bridge (-want +got):\n%s", d)
	}
	// An x8 slot, a link trained x8, an older kernel's speed text, no AER.
	dir := filepath.Join(f.root, fn0)
	write := func(p, s string) {
		os.Remove(p)
		if err := os.WriteFile(p, []byte(s), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "current_link_width"), "8\n")
	write(filepath.Join(dir, "current_link_speed"), "32 GT/s\n")
	write(filepath.Join(filepath.Dir(dir), "max_link_width"), "8\n")
	os.Remove(filepath.Join(dir, "aer_dev_fatal"))
	fn, bridge, err = ReadPCIe(context.Background(), f.root, "0000:c1:00.0")
	if err != nil {
		t.Fatal(err)
	}
	if fn.Current != (pcie.Link{Speed: pcie.Gen5, Width: 8}) || bridge.Max.Width != 8 || fn.Fatal != nil {
		t.Errorf("x8: function %+v, bridge %+v", fn, bridge)
	}
	if d := cmp.Diff([]string{pcie.AttrAERFatal}, fn.Missing); d != "" {
		t.Errorf("missing: %s", d)
	}
	if _, _, err := ReadPCIe(context.Background(), f.root, "0000:99:00.0"); err == nil {
		t.Error("a function that is not there read")
	}
	// A function on a root bus has no bridge above it.
	if _, b, err := ReadPCIe(context.Background(), f.root, "0000:00:03.0"); err != nil || b != nil {
		t.Errorf("virtio on the root bus: bridge %+v, %v", b, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := ReadPCIe(ctx, f.root, "0000:c1:00.0"); err == nil {
		t.Error("read with a cancelled context")
	}
}

package adaptertest

import (
	"context"
	"testing"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/kernel/kerneltest"
)

// Each function of the fixture opens by its RDMA name, with its own PCI
// address; a change made by mod is what the adapter sees.
func TestKernel(t *testing.T) {
	for name, bdf := range map[string]string{"kernel:mlx5_0": "0000:c1:00.0", "kernel:mlx5_1": "0000:c1:00.1"} {
		if a := Kernel(t, name, nil); a.BDF() != bdf || a.HasRegisters() {
			t.Errorf("%s: BDF %q, registers %v", name, a.BDF(), a.HasRegisters())
		}
	}
	a := Kernel(t, "kernel:mlx5_1", func(_ string, k *kerneltest.Kernel) { k.NoDevlink = true })
	id, err := a.Identity(context.Background())
	if id == nil || id.FirmwarePending != "" || !adapter.IsPartial(err) {
		t.Errorf("without devlink: %+v %v (want no pending firmware, a partial identity)", id, err)
	}
	if id, _ := Kernel(t, "kernel:mlx5_1", nil).Identity(context.Background()); id == nil || id.FirmwarePending == "" {
		t.Errorf("with devlink: %+v (want the pending firmware)", id)
	}
}

package exporter

import (
	"testing"

	"github.com/cxray/cxray/adapter/adaptertest"
	"github.com/cxray/cxray/kernel/kerneltest"
)

// The kernellog collector counts the device's own decoded events by class
// and severity, each once across scrapes while the log grows; the other
// function's events and informational lines are not counted.
func TestKernelLogCollector(t *testing.T) {
	var k *kerneltest.Kernel
	a := adaptertest.Kernel(t, "kernel:mlx5_0", func(_ string, kk *kerneltest.Kernel) {
		k = kk
		k.KernelLog = kerneltest.CX7Log +
			"[  812.100000] mlx5_core 0000:c1:00.0: mlx5_cmd_out_err:838:(pid 4117): CREATE_MKEY(0x200) op_mod(0x0) failed, status bad parameter(0x3), syndrome (0x1b3a4f), err(-22)\n" +
			"[  900.200000] mlx5_core 0000:c1:00.1: Port module event[error]: module 1, Cable error, Bus stuck (I2C or data shorted)\n" +
			"[  950.300000] mlx5_core 0000:c1:00.0 ens1f0np0: Link down\n"
	})
	e, err := New([]Source{FromAdapter(a)}, Options{NoRuntimeMetrics: true, Collectors: []string{"kernellog"}})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string, want map[[2]string]float64) {
		t.Helper()
		s, _ := scrape(t, e.Handler(), "")
		got := map[[2]string]float64{}
		for _, smp := range s.Find("cxray_kernel_events_total", "device", "0000:c1:00.0") {
			got[[2]string{smp.Labels["class"], smp.Labels["severity"]}] = smp.Value
		}
		if len(got) != len(want) {
			t.Errorf("%s: %v, want %v", when, got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %v = %v, want %v", when, k, got[k], v)
			}
		}
	}
	check("first scrape", map[[2]string]float64{{"command", "problem"}: 1, {"port", "warning"}: 1})
	check("same log", map[[2]string]float64{{"command", "problem"}: 1, {"port", "warning"}: 1})
	k.KernelLog += "[ 1000.000000] mlx5_core 0000:c1:00.0: mlx5_cmd_out_err:838:(pid 4117): CREATE_CQ(0x400) op_mod(0x0) failed, status limits exceeded(0x8), syndrome (0x11), err(-12)\n"
	check("grown log", map[[2]string]float64{{"command", "problem"}: 2, {"port", "warning"}: 1})
}

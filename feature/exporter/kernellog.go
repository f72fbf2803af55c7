package exporter

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/feature/explain"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/prm/cmdb"
)

// The kernellog collector: the device's mlx5, PCIe and AER events in the
// kernel log, decoded as cxray explain decodes them, counted by class
// (command, cqe, health, probe, module, port, pcie, temperature, queue) and
// severity (problem, warning). The log is one for the machine: each device
// counts the events that name its PCI address or RDMA device. Events are
// counted once: each scrape counts those later than the last one it saw
// (by their time stamp), so the counters only grow while the ring buffer
// forgets old lines. Devices without the kernel's view (the emulator)
// leave the collector out. Self-contained: it registers itself.

func init() {
	allCollectors = append(allCollectors, collector{"kernellog", "mlx5, PCIe and AER kernel log events of the device, by class and severity, decoded as cxray explain does", collectKernelLog})
}

var famKernelEvents = counter("cxray_kernel_events_total",
	"mlx5, PCIe and AER events of the device in the kernel log since the exporter started reading it, by class and severity (cxray explain decodes them).",
	"device", "class", "severity")

// kernelDevice is a Source that has the kernel's view of its function.
type kernelDevice interface {
	Kernel() *kernel.Device
}

// Kernel gives a lazily opened source's kernel view.
func (l *lazySource) Kernel() *kernel.Device {
	l.mu.Lock()
	src := l.src
	l.mu.Unlock()
	if k, ok := src.(kernelDevice); ok {
		return k.Kernel()
	}
	return nil
}

// klogState is what one device's counters have seen.
type klogState struct {
	mu     sync.Mutex
	seen   bool
	last   float64 // time stamp (seconds since boot) of the newest event counted
	totals map[[2]string]float64
}

var klogStates sync.Map // device name → *klogState

func collectKernelLog(ctx context.Context, s *sink, src Source) error {
	kd, ok := src.(kernelDevice)
	var k *kernel.Device
	if ok {
		k = kd.Kernel()
	}
	if k == nil {
		return &adapter.UnsupportedError{What: "kernel log events", Backend: dev.Backend(src.Backend()), Why: "the device has no kernel view"}
	}
	b, err := k.Log(ctx)
	if err != nil {
		return err
	}
	var dbs explain.Databases
	if c, err := cmdb.Load(); err == nil {
		dbs.Commands = c
	}
	names := map[string]bool{src.Name(): true, k.BDF: true}
	if k.RDMA != "" {
		names[k.RDMA] = true
	}
	v, _ := klogStates.LoadOrStore(src.Name(), &klogState{totals: map[[2]string]float64{}})
	st := v.(*klogState)
	st.mu.Lock()
	defer st.mu.Unlock()
	newest := st.last
	for _, e := range explain.KernelEvents(string(b), dbs) {
		if e.Severity == explain.SevInfo || !names[e.Device] {
			continue
		}
		t, err := strconv.ParseFloat(strings.TrimSpace(e.Time), 64)
		if err != nil || (st.seen && t <= st.last) {
			continue
		}
		st.totals[[2]string{e.Class, e.Severity}]++
		newest = max(newest, t)
	}
	st.last, st.seen = newest, true
	for key, n := range st.totals {
		s.add(famKernelEvents, n, key[0], key[1])
	}
	return nil
}

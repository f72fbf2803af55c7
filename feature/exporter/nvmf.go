package exporter

import (
	"context"
	"fmt"
	"strconv"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/feature/nvmf"
)

// The nvmf collector: NVMe-oF target-offload namespace counters read
// through the command interface (package nvmf: QUERY_NVMF_NAMESPACE_CONTEXT
// per front-end namespace of an offload XRQ). A device without a command
// interface (the kernel backend, a host without fwctl) leaves the
// collector out; a function without the offload reports
// cxray_nvmf_offload 0 and no namespaces.
//
// nvmf.Read probes the XRQ and namespace numbers on every scrape (the
// firmware cannot list them): one capability query on a function without
// the offload, about a hundred commands on one with it, within the
// scrape's deadline. Rates are Prometheus' to compute (rate()).

// NVMFSource is a Source that reads NVMe-oF offload namespaces. Sources
// made by FromAdapter are; others are left out of the collector.
type NVMFSource interface {
	NVMF(ctx context.Context) (*nvmf.Report, error)
}

var (
	famNVMFOffload = gauge("cxray_nvmf_offload",
		"1 when the function has NVMe-oF target offload (cmd_hca_cap.nvmf_target_offload), 0 when it does not.",
		"device")
	famNVMFNamespaces = gauge("cxray_nvmf_namespaces",
		"Front-end namespaces of offload XRQs found on the function (probed: the firmware has no command that lists them).",
		"device")
)

// nvmfCounters are the per-namespace counter families, in the order of
// nvmf.Counters.
var nvmfCounters = []struct {
	f   family
	get func(*nvmf.Counters) uint64
}{
	{counter("cxray_nvmf_read_commands_total", "NVMe read commands the offload completed for the namespace.", "device", "xrq", "nsid"),
		func(c *nvmf.Counters) uint64 { return c.ReadCmds }},
	{counter("cxray_nvmf_read_blocks_total", "Logical blocks read through the offload for the namespace.", "device", "xrq", "nsid"),
		func(c *nvmf.Counters) uint64 { return c.ReadBlocks }},
	{counter("cxray_nvmf_write_commands_total", "NVMe write commands the offload completed for the namespace.", "device", "xrq", "nsid"),
		func(c *nvmf.Counters) uint64 { return c.WriteCmds }},
	{counter("cxray_nvmf_write_blocks_total", "Logical blocks written through the offload for the namespace.", "device", "xrq", "nsid"),
		func(c *nvmf.Counters) uint64 { return c.WriteBlocks }},
	{counter("cxray_nvmf_inline_write_commands_total", "Write commands whose data came in the command capsule (in-capsule data).", "device", "xrq", "nsid"),
		func(c *nvmf.Counters) uint64 { return c.InlineWrites }},
	{counter("cxray_nvmf_flush_commands_total", "NVMe flush commands the offload completed for the namespace.", "device", "xrq", "nsid"),
		func(c *nvmf.Counters) uint64 { return c.Flushes }},
	{counter("cxray_nvmf_error_commands_total", "Commands for the namespace completed with an error status.", "device", "xrq", "nsid"),
		func(c *nvmf.Counters) uint64 { return c.Errors }},
	{counter("cxray_nvmf_backend_error_commands_total", "Commands for the namespace that failed at the back-end NVMe device.", "device", "xrq", "nsid"),
		func(c *nvmf.Counters) uint64 { return c.BackendErrors }},
}

func collectNVMF(ctx context.Context, s *sink, src Source) error {
	ns, ok := src.(NVMFSource)
	if !ok {
		return &adapter.UnsupportedError{What: "NVMe-oF offload counters", Backend: dev.Backend(src.Backend()), Why: "the source reads no commands"}
	}
	rep, err := ns.NVMF(ctx)
	if err != nil {
		return err
	}
	s.add(famNVMFOffload, boolf(rep.Offload))
	if !rep.Offload {
		return nil
	}
	s.add(famNVMFNamespaces, float64(len(rep.Namespaces)))
	for _, n := range rep.Namespaces {
		xrq, nsid := strconv.FormatUint(uint64(n.XRQN), 10), strconv.FormatUint(uint64(n.NSID), 10)
		for _, c := range nvmfCounters {
			s.add(c.f, float64(c.get(&n.Totals)), xrq, nsid)
		}
	}
	return nil
}

// NVMF reads the adapter's namespaces through its command interface.
func (s adapterSource) NVMF(ctx context.Context) (*nvmf.Report, error) {
	d, err := s.Registers(ctx)
	if err != nil {
		return nil, err
	}
	if d.Commander() == nil {
		return nil, &adapter.UnsupportedError{What: "the command interface", Backend: s.Adapter.Backend(),
			Why: fmt.Sprintf("no fwctl device for %s (Linux 6.15+ with mlx5_fwctl) and no emulated one", s.Name())}
	}
	return nvmf.Read(ctx, d, nvmf.Options{Clock: s.Clock()})
}

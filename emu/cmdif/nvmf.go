package cmdif

import (
	"math"

	"github.com/cxray/cxray/emu/scenario"
)

// queryNVMFNamespace answers QUERY_NVMF_NAMESPACE_CONTEXT: the counters of
// a front-end namespace on one of the function's offload XRQs. They grow
// with the emulated clock from power-on at the scenario's rates (a count
// is its rate times the time since boot, rounded down), so they are exact
// for a given time and never go backwards. The OFED 25.10 fields (queue
// depth, last latencies) stay 0: the emulated nvmf_cap does not offer them.
func (c *call) queryNVMFNamespace() {
	if !c.ep.nvmf.Offload {
		c.fail(statusBadOp, syndNoOffload)
		return
	}
	xrqn, nsid := uint32(c.get("xrqn")), uint32(c.get("frontend_namespace"))
	var ns *scenario.NamespaceSpec
	found := false
	for i := range c.ep.nvmf.XRQs {
		x := &c.ep.nvmf.XRQs[i]
		if x.XRQN != xrqn {
			continue
		}
		found = true
		for j := range x.Namespaces {
			if x.Namespaces[j].NSID == nsid {
				ns = &x.Namespaces[j]
			}
		}
	}
	switch {
	case !found:
		c.fail(statusBadParam, syndNoXRQ)
		return
	case ns == nil:
		c.fail(statusBadParam, syndNoNamespace)
		return
	}
	t := max(c.now.Sub(c.ep.a.Firmware.Boot()).Seconds(), 0)
	count := func(rate float64) uint64 { return uint64(math.Floor(rate * t)) }
	c.set(
		kv("ns_ctx.num_read_cmd", count(ns.ReadIOPS)),
		kv("ns_ctx.num_read_blocks", count(ns.ReadIOPS*ns.ReadBlocks)),
		kv("ns_ctx.num_write_cmd", count(ns.WriteIOPS)),
		kv("ns_ctx.num_write_blocks", count(ns.WriteIOPS*ns.WriteBlocks)),
		kv("ns_ctx.num_write_inline_cmd", count(ns.WriteIOPS*ns.InlineShare)),
		kv("ns_ctx.num_flush_cmd", count(ns.FlushPerSec)),
		kv("ns_ctx.num_error_cmd", count(ns.ErrorPerSec)),
		kv("ns_ctx.num_backend_error_cmd", count(ns.BackendErrorPerSec)),
	)
}

// queryXRQ answers QUERY_XRQ for the function's NVMe-oF offload XRQs: the
// XRQ context with the NVMe-oF offload type (MLX5_XRQC_OFFLOAD_NVMF, OFED)
// and its offload context, sized as the emulated nvmf_cap allows.
func (c *call) queryXRQ() {
	xrqn := uint32(c.get("xrqn"))
	for _, x := range c.ep.nvmf.XRQs {
		if x.XRQN != xrqn {
			continue
		}
		c.set(kv("xrq_context.state", "GOOD"), kv("xrq_context.offload", xrqOffloadNVMF), kv("xrq_context.user_index", xrqn),
			kv("xrq_context.cqn", 0x400+xrqn),
			kv("xrq_context.nvme_offload_context.nvmf_offload_type", 0xf), // write, read, read-write, read-write-flush
			kv("xrq_context.nvme_offload_context.log_max_namespace", 5),
			kv("xrq_context.nvme_offload_context.ioccsz", 4),
			kv("xrq_context.nvme_offload_context.log_max_io_size", 17),
			kv("xrq_context.nvme_offload_context.nvme_memory_log_page_size", 0),
			kv("xrq_context.nvme_offload_context.nvme_queue_size", 1024))
		return
	}
	c.fail(statusBadParam, syndNoXRQ)
}

// xrqOffloadNVMF is xrqc.offload for an NVMe-oF XRQ (OFED
// MLX5_XRQC_OFFLOAD_NVMF in MLNX_OFED's include/linux/mlx5/mlx5_ifc.h).
const xrqOffloadNVMF = 2

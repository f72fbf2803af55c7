package monitor

import (
	"context"
	"fmt"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/feature/nvmf"
)

// nvmfCollector reads the NVMe-oF target-offload namespaces through the
// command interface, with the reader `cxray nvmf` and the exporter use
// (package nvmf): per namespace xrq<X>.ns<N>.nvmf.<counter> (read_cmds,
// read_blocks, write_cmds, write_blocks, inline_writes, flushes, errors,
// backend_errors; counters, so the table shows their rates), and
// nvmf.offload (1 or 0).
type nvmfCollector struct{}

func (nvmfCollector) Name() string { return "nvmf" }

func (nvmfCollector) Moves(string) bool { return false }

// NVMFKey is the value key of one namespace counter.
func NVMFKey(xrq, nsid uint32, counter string) string {
	return fmt.Sprintf("xrq%d.ns%d.nvmf.%s", xrq, nsid, counter)
}

func (nvmfCollector) Collect(ctx context.Context, a *adapter.Adapter, out map[string]float64) []string {
	d, err := a.Registers(ctx)
	if err != nil {
		return []string{"nvmf: " + err.Error()}
	}
	if d.Commander() == nil {
		return []string{"nvmf: no command interface on this device (fwctl needs Linux 6.15+ with mlx5_fwctl)"}
	}
	rep, err := nvmf.Read(ctx, d, nvmf.Options{Clock: a.Clock()})
	if err != nil {
		return []string{"nvmf: " + err.Error()}
	}
	if !rep.Offload {
		out["nvmf.offload"] = 0
		return []string{"nvmf: " + rep.Reason}
	}
	out["nvmf.offload"] = 1
	for _, ns := range rep.Namespaces {
		c := ns.Totals
		for name, v := range map[string]uint64{
			"read_cmds": c.ReadCmds, "read_blocks": c.ReadBlocks, "write_cmds": c.WriteCmds, "write_blocks": c.WriteBlocks,
			"inline_writes": c.InlineWrites, "flushes": c.Flushes, "errors": c.Errors, "backend_errors": c.BackendErrors,
		} {
			out[NVMFKey(ns.XRQN, ns.NSID, name)] = float64(v)
		}
	}
	if len(rep.Namespaces) == 0 {
		return []string{"nvmf: " + rep.Reason}
	}
	return nil
}

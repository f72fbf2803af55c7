// Package nvmf reads the NVMe-oF target-offload counters of a function
// through the command interface: per front-end namespace of an offload XRQ,
// read and write commands and blocks, writes with in-capsule data, flushes,
// commands completed with an error, and back-end (NVMe device) errors
// (QUERY_NVMF_NAMESPACE_CONTEXT, 0x728; layouts in prm/cmdb nvmf.facts),
// as totals and, over an interval, as rates.
//
// A function without the offload (cmd_hca_cap.nvmf_target_offload is 0) is
// reported as such, not as an error. The firmware has no command that lists
// XRQs or namespaces: without explicit numbers, Read probes XRQ numbers
// 1..ProbeXRQs with QUERY_XRQ (keeping those whose offload type is NVMe-oF)
// and namespace IDs 1..ProbeNamespaces on each.
package nvmf

import (
	"context"
	"fmt"
	"time"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/cmdb"
)

// xrqOffloadNVMF is xrqc.offload of an NVMe-oF XRQ (OFED
// MLX5_XRQC_OFFLOAD_NVMF in MLNX_OFED's include/linux/mlx5/mlx5_ifc.h).
const xrqOffloadNVMF = 2

// Probe bounds.
const (
	DefaultProbeXRQs       = 64
	DefaultProbeNamespaces = 32
)

// Options tune Read.
type Options struct {
	// XRQs and Namespaces name what to read; nil probes (see the package
	// comment).
	XRQs       []uint32
	Namespaces []uint32
	// ProbeXRQs and ProbeNamespaces bound the probe (0: the defaults).
	ProbeXRQs, ProbeNamespaces int
	// Interval, when positive, reads twice that far apart and reports
	// rates.
	Interval time.Duration
	// Clock waits the interval (nil: the wall clock); tests pass the
	// emulator's manual clock.
	Clock clock.Clock
}

// Report is a function's NVMe-oF offload.
type Report struct {
	Device string `json:"device"`
	// Offload is the capability; Reason says why nothing is listed.
	Offload bool   `json:"offload"`
	Reason  string `json:"reason,omitempty"`
	// Probed says what was probed when no numbers were given.
	Probed          string      `json:"probed,omitempty"`
	IntervalSeconds float64     `json:"interval_seconds"`
	Namespaces      []Namespace `json:"namespaces"`
}

// Namespace is one front-end namespace.
type Namespace struct {
	XRQN   uint32   `json:"xrqn"`
	NSID   uint32   `json:"nsid"`
	Totals Counters `json:"totals"`
	// Rates are per second over the interval (nil without one).
	Rates *Rates `json:"rates,omitempty"`
}

// Counters are a namespace's counts since the offload started.
type Counters struct {
	ReadCmds      uint64 `json:"read_cmds"`
	ReadBlocks    uint64 `json:"read_blocks"`
	WriteCmds     uint64 `json:"write_cmds"`
	WriteBlocks   uint64 `json:"write_blocks"`
	InlineWrites  uint64 `json:"inline_writes"`
	Flushes       uint64 `json:"flushes"`
	Errors        uint64 `json:"errors"`
	BackendErrors uint64 `json:"backend_errors"`
}

// Rates are counts per second; Reset says a counter went backwards (the
// namespace was detached and attached again), so the rates are zero.
type Rates struct {
	ReadCmds      float64 `json:"read_cmds"`
	ReadBlocks    float64 `json:"read_blocks"`
	WriteCmds     float64 `json:"write_cmds"`
	WriteBlocks   float64 `json:"write_blocks"`
	InlineWrites  float64 `json:"inline_writes"`
	Flushes       float64 `json:"flushes"`
	Errors        float64 `json:"errors"`
	BackendErrors float64 `json:"backend_errors"`
	Reset         bool    `json:"reset,omitempty"`
}

// counterFields pairs each counter with its joined field of
// nvmf_frontend_namespace_context (its _high and _low dwords).
var counterFields = []struct {
	path string
	get  func(*Counters) *uint64
}{
	{"num_read_cmd", func(c *Counters) *uint64 { return &c.ReadCmds }},
	{"num_read_blocks", func(c *Counters) *uint64 { return &c.ReadBlocks }},
	{"num_write_cmd", func(c *Counters) *uint64 { return &c.WriteCmds }},
	{"num_write_blocks", func(c *Counters) *uint64 { return &c.WriteBlocks }},
	{"num_write_inline_cmd", func(c *Counters) *uint64 { return &c.InlineWrites }},
	{"num_flush_cmd", func(c *Counters) *uint64 { return &c.Flushes }},
	{"num_error_cmd", func(c *Counters) *uint64 { return &c.Errors }},
	{"num_backend_error_cmd", func(c *Counters) *uint64 { return &c.BackendErrors }},
}

// NotFoundError is an XRQ and namespace the user named that the firmware
// does not know: the numbers to check, not a device fault.
type NotFoundError struct {
	XRQN, NSID uint32
	Err        error
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("XRQ %d namespace %d: the firmware knows no such namespace (%v); leave out --xrq and --ns to list those there are", e.XRQN, e.NSID, e.Err)
}

func (e *NotFoundError) Unwrap() error { return e.Err }

// Read reports the namespaces.
func Read(ctx context.Context, d *dev.Device, o Options) (*Report, error) {
	rep := &Report{Device: d.Name, Namespaces: []Namespace{}}
	offload, err := offloadCap(ctx, d)
	if err != nil {
		return nil, err
	}
	if !offload {
		rep.Reason = "this function has no NVMe-oF target offload (cmd_hca_cap.nvmf_target_offload is 0)"
		return rep, nil
	}
	rep.Offload = true
	targets, probed, err := find(ctx, d, o)
	if err != nil {
		return nil, err
	}
	rep.Probed = probed
	if len(targets) == 0 {
		rep.Reason = "no offload namespace found"
		if probed != "" {
			rep.Reason += " (" + probed + "); give the XRQ and namespace numbers to read others"
		}
		return rep, nil
	}
	first := make([]Counters, len(targets))
	for i, t := range targets {
		if first[i], err = counters(ctx, d, t[0], t[1]); err != nil {
			if dev.IsNoSuchObject(err) {
				return nil, &NotFoundError{XRQN: t[0], NSID: t[1], Err: err}
			}
			return nil, err
		}
	}
	if o.Interval > 0 {
		clk := o.Clock
		if clk == nil {
			clk = clock.Real{}
		}
		rep.IntervalSeconds = o.Interval.Seconds()
		if err := clk.Sleep(ctx, o.Interval); err != nil {
			return nil, err
		}
	}
	for i, t := range targets {
		ns := Namespace{XRQN: t[0], NSID: t[1], Totals: first[i]}
		if o.Interval > 0 {
			second, err := counters(ctx, d, t[0], t[1])
			if err != nil {
				return nil, err
			}
			ns.Totals, ns.Rates = second, rates(first[i], second, o.Interval)
		}
		rep.Namespaces = append(rep.Namespaces, ns)
	}
	return rep, nil
}

func rates(a, b Counters, iv time.Duration) *Rates {
	r := &Rates{}
	out := []*float64{&r.ReadCmds, &r.ReadBlocks, &r.WriteCmds, &r.WriteBlocks, &r.InlineWrites, &r.Flushes, &r.Errors, &r.BackendErrors}
	for i, f := range counterFields {
		x, y := *f.get(&a), *f.get(&b)
		if y < x {
			*r = Rates{Reset: true}
			return r
		}
		*out[i] = float64(y-x) / iv.Seconds()
	}
	return r
}

func offloadCap(ctx context.Context, d *dev.Device) (bool, error) {
	db, err := cmdb.Load()
	if err != nil {
		return false, err
	}
	ct, err := db.CapType("general")
	if err != nil {
		return false, err
	}
	out, err := d.Command(ctx, "QUERY_HCA_CAP", []prm.Assignment{{Path: "op_mod", Value: fmt.Sprint(int(ct.Value)<<1 | 1)}})
	if err != nil {
		return false, err
	}
	v, err := out.Get("capability.cmd_hca_cap.nvmf_target_offload")
	if err != nil {
		return false, err
	}
	return v.Uint() == 1, nil
}

// find lists the (xrqn, nsid) pairs to read.
func find(ctx context.Context, d *dev.Device, o Options) ([][2]uint32, string, error) {
	xrqs, probed := o.XRQs, ""
	if xrqs == nil {
		n := o.ProbeXRQs
		if n <= 0 {
			n = DefaultProbeXRQs
		}
		probed = fmt.Sprintf("XRQ numbers 1..%d", n)
		for x := 1; x <= n; x++ {
			if err := ctx.Err(); err != nil {
				return nil, "", err
			}
			out, err := d.Command(ctx, "QUERY_XRQ", []prm.Assignment{{Path: "xrqn", Value: fmt.Sprint(x)}})
			if dev.IsCommandStatus(err) {
				continue // no such XRQ
			}
			if err != nil {
				return nil, "", err
			}
			if v, err := out.Get("xrq_context.offload"); err == nil && v.Uint() == xrqOffloadNVMF {
				xrqs = append(xrqs, uint32(x))
			}
		}
	}
	var out [][2]uint32
	if o.Namespaces == nil && len(xrqs) > 0 {
		if probed != "" {
			probed += ", "
		}
		probed += fmt.Sprintf("namespace IDs 1..%d", probeNamespaces(o))
	}
	for _, x := range xrqs {
		nss := o.Namespaces
		if nss == nil {
			for ns := 1; ns <= probeNamespaces(o); ns++ {
				if _, err := counters(ctx, d, x, uint32(ns)); err == nil {
					nss = append(nss, uint32(ns))
				} else if !dev.IsCommandStatus(err) {
					return nil, "", err
				}
			}
		}
		for _, ns := range nss {
			out = append(out, [2]uint32{x, ns})
		}
	}
	return out, probed, nil
}

func probeNamespaces(o Options) int {
	if o.ProbeNamespaces > 0 {
		return o.ProbeNamespaces
	}
	return DefaultProbeNamespaces
}

func counters(ctx context.Context, d *dev.Device, xrqn, nsid uint32) (Counters, error) {
	out, err := d.Command(ctx, "QUERY_NVMF_NAMESPACE_CONTEXT", []prm.Assignment{
		{Path: "xrqn", Value: fmt.Sprint(xrqn)}, {Path: "frontend_namespace", Value: fmt.Sprint(nsid)}})
	if err != nil {
		return Counters{}, err
	}
	var c Counters
	for _, f := range counterFields {
		v, err := out.Get("ns_ctx." + f.path)
		if err != nil {
			return Counters{}, err
		}
		*f.get(&c) = v.Uint()
	}
	return c, nil
}

// Rows lays the report out as a table: one row per namespace, totals, and
// rates when an interval was given.
func (r *Report) Rows() [][]string {
	head := []string{"XRQ", "NS", "READS", "READ BLOCKS", "WRITES", "WRITE BLOCKS", "INLINE WRITES", "FLUSHES", "ERRORS", "BACKEND ERRORS"}
	rows := [][]string{head}
	for _, ns := range r.Namespaces {
		c := ns.Totals
		row := []string{fmt.Sprint(ns.XRQN), fmt.Sprint(ns.NSID)}
		vals := []uint64{c.ReadCmds, c.ReadBlocks, c.WriteCmds, c.WriteBlocks, c.InlineWrites, c.Flushes, c.Errors, c.BackendErrors}
		for i, v := range vals {
			cell := fmt.Sprint(v)
			if ns.Rates != nil && !ns.Rates.Reset {
				rs := []float64{ns.Rates.ReadCmds, ns.Rates.ReadBlocks, ns.Rates.WriteCmds, ns.Rates.WriteBlocks, ns.Rates.InlineWrites, ns.Rates.Flushes, ns.Rates.Errors, ns.Rates.BackendErrors}
				cell += fmt.Sprintf(" (%.4g/s)", rs[i])
			} else if ns.Rates != nil {
				cell += " (reset)"
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	return rows
}

package scenario

import (
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"
)

// NVMFSpec is an adapter's NVMe-oF target offload: the capability (the
// nvmf_target_offload bit and the NVMe-oF capability page) and the offload
// objects its first PCI function has (the target software's XRQs with their
// front-end namespaces), whose counters emu/cmdif derives from the rates
// here and the emulated clock.
type NVMFSpec struct {
	Offload bool
	XRQs    []XRQSpec
}

// XRQSpec is one NVMe-oF offload XRQ (an SRQ serving one NVMe-oF subsystem
// controller set) and the namespaces attached to it.
type XRQSpec struct {
	XRQN       uint32
	Namespaces []NamespaceSpec
}

// NamespaceSpec is one front-end namespace and the I/O it sees.
type NamespaceSpec struct {
	NSID uint32
	// ReadIOPS and WriteIOPS are commands per second; ReadBlocks and
	// WriteBlocks blocks per command.
	ReadIOPS, WriteIOPS     float64
	ReadBlocks, WriteBlocks float64
	// InlineShare is the share of writes whose data came in the capsule.
	InlineShare float64
	// Flushes, errors (commands completed with an error) and back-end
	// (NVMe device) errors per second.
	FlushPerSec, ErrorPerSec, BackendErrorPerSec float64
}

// Limits of the NVMe-oF keys (the emulated nvmf_cap says the same:
// log_max_namespace_per_xrq 5).
const (
	MaxXRQs             = 16
	MaxNamespacesPerXRQ = 32
)

// NVMFDefaults is a profile's NVMe-oF offload: the ConnectX-7 profile has it
// enabled with one XRQ and two busy namespaces; the ConnectX-6 Dx profile
// leaves it off, so tools see a function without offload.
func NVMFDefaults(profile string) NVMFSpec {
	if profile != "cx7-2p400g" {
		return NVMFSpec{}
	}
	return NVMFSpec{Offload: true, XRQs: []XRQSpec{{XRQN: 1, Namespaces: []NamespaceSpec{
		{NSID: 1, ReadIOPS: 120000, ReadBlocks: 8, WriteIOPS: 40000, WriteBlocks: 8, InlineShare: 0.3, FlushPerSec: 20},
		{NSID: 2, ReadIOPS: 30000, ReadBlocks: 16, WriteIOPS: 60000, WriteBlocks: 32, InlineShare: 0.1, FlushPerSec: 5,
			ErrorPerSec: 0.5, BackendErrorPerSec: 0.1},
	}}}}
}

func (s NVMFSpec) clone() NVMFSpec {
	out := NVMFSpec{Offload: s.Offload}
	for _, x := range s.XRQs {
		out.XRQs = append(out.XRQs, XRQSpec{XRQN: x.XRQN, Namespaces: slices.Clone(x.Namespaces)})
	}
	return out
}

// nvmf reads a device's nvmf key over the profile's defaults: offload
// switches the capability, xrqs (when given) replaces the objects.
func (p *parser) nvmf(n *yaml.Node, f *fileNVMF, where string, d *DeviceSpec) {
	p.boolean(&f.Offload, where+".offload", &d.NVMF.Offload)
	xrqNode := child(n, "xrqs")
	if xrqNode == nil {
		if !d.NVMF.Offload {
			d.NVMF.XRQs = nil // no capability, no objects
		}
		return
	}
	xrqs := []XRQSpec{}
	for i, xf := range f.XRQs {
		e, w := xrqNode.Content[i], fmt.Sprintf("%s.xrqs[%d]", where, i)
		var x XRQSpec
		if xf.XRQN.Kind == 0 {
			p.fail(e, "%s needs xrqn: (the XRQ number, 1..0xffffff)", w)
		}
		var u uint64
		if p.uintv(&xf.XRQN, w+".xrqn", 0xFFFFFF, &u) {
			x.XRQN = uint32(u)
		}
		for j, nf := range xf.Namespaces {
			x.Namespaces = append(x.Namespaces, p.namespace(child(e, "namespaces").Content[j], nf, fmt.Sprintf("%s.namespaces[%d]", w, j)))
		}
		xrqs = append(xrqs, x)
	}
	if !d.NVMF.Offload && len(xrqs) > 0 {
		p.fail(xrqNode, "%s: xrqs need offload: true (a function without NVMe-oF offload has no XRQs)", where)
		return
	}
	seen := map[uint32]bool{}
	for i, x := range xrqs {
		if x.XRQN == 0 {
			p.fail(xrqNode, "%s.xrqs[%d]: xrqn 0 is not a valid XRQ number; use 1..0xffffff", where, i)
		}
		if seen[x.XRQN] {
			p.fail(xrqNode, "%s.xrqs: xrqn %d is given twice", where, x.XRQN)
		}
		seen[x.XRQN] = true
		ns := map[uint32]bool{}
		for _, s := range x.Namespaces {
			if ns[s.NSID] {
				p.fail(xrqNode, "%s.xrqs[%d]: namespace %d is given twice", where, i, s.NSID)
			}
			ns[s.NSID] = true
		}
	}
	d.NVMF.XRQs = xrqs
}

func (p *parser) namespace(n *yaml.Node, f *fileNamespace, w string) NamespaceSpec {
	s := NamespaceSpec{ReadBlocks: 8, WriteBlocks: 8}
	rate := func(v *yaml.Node, key string, dst *float64) { p.float(v, w+"."+key, 0, 1e9, dst) }
	blocks := func(v *yaml.Node, key string, dst *float64) { p.float(v, w+"."+key, 1, 65536, dst) }
	if f.NSID.Kind == 0 {
		p.fail(n, "%s needs nsid: (the front-end namespace ID)", w)
	}
	var u uint64
	if p.uintv(&f.NSID, w+".nsid", 0xFFFFFFFE, &u) && u == 0 {
		p.fail(&f.NSID, "%s.nsid 0 is not a namespace ID; use 1..0xfffffffe", w)
	}
	s.NSID = uint32(u)
	rate(&f.ReadIOPS, "read_iops", &s.ReadIOPS)
	rate(&f.WriteIOPS, "write_iops", &s.WriteIOPS)
	blocks(&f.ReadBlocks, "read_blocks", &s.ReadBlocks)
	blocks(&f.WriteBlocks, "write_blocks", &s.WriteBlocks)
	p.float(&f.InlineShare, w+".inline_share", 0, 1, &s.InlineShare)
	rate(&f.FlushPerSec, "flush_per_sec", &s.FlushPerSec)
	rate(&f.ErrorPerSec, "error_per_sec", &s.ErrorPerSec)
	rate(&f.BackendErrorPerSec, "backend_error_per_sec", &s.BackendErrorPerSec)
	return s
}

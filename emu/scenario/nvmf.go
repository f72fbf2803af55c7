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
func (p *parser) nvmf(n *yaml.Node, where string, d *DeviceSpec) {
	var xrqNode *yaml.Node
	var xrqs []XRQSpec
	p.mapping(n, where, map[string]field{
		"offload": func(v *yaml.Node) { p.boolean(v, where+".offload", &d.NVMF.Offload) },
		"xrqs": func(v *yaml.Node) {
			xrqNode = v
			xrqs = []XRQSpec{}
			p.list(v, where+".xrqs", MaxXRQs, func(i int, e *yaml.Node) {
				w := fmt.Sprintf("%s.xrqs[%d]", where, i)
				var x XRQSpec
				p.mapping(e, w, map[string]field{
					"xrqn": func(v *yaml.Node) {
						var u uint64
						p.uintv(v, w+".xrqn", 0xFFFFFF, &u)
						x.XRQN = uint32(u)
					},
					"namespaces": func(v *yaml.Node) {
						p.list(v, w+".namespaces", MaxNamespacesPerXRQ, func(j int, ne *yaml.Node) {
							x.Namespaces = append(x.Namespaces, p.namespace(ne, fmt.Sprintf("%s.namespaces[%d]", w, j)))
						})
					},
				})
				if e.Kind == yaml.MappingNode && !p.hasKey(e, "xrqn") {
					p.fail(e, "%s needs xrqn: (the XRQ number, 1..0xffffff)", w)
				}
				xrqs = append(xrqs, x)
			})
		},
	})
	if xrqNode == nil {
		if !d.NVMF.Offload {
			d.NVMF.XRQs = nil // no capability, no objects
		}
		return
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

func (p *parser) namespace(n *yaml.Node, w string) NamespaceSpec {
	s := NamespaceSpec{ReadBlocks: 8, WriteBlocks: 8}
	rate := func(dst *float64, key string) field {
		return func(v *yaml.Node) { p.float(v, w+"."+key, 0, 1e9, dst) }
	}
	blocks := func(dst *float64, key string) field {
		return func(v *yaml.Node) { p.float(v, w+"."+key, 1, 65536, dst) }
	}
	p.mapping(n, w, map[string]field{
		"nsid": func(v *yaml.Node) {
			var u uint64
			p.uintv(v, w+".nsid", 0xFFFFFFFE, &u)
			if u == 0 {
				p.fail(v, "%s.nsid 0 is not a namespace ID; use 1..0xfffffffe", w)
			}
			s.NSID = uint32(u)
		},
		"read_iops":             rate(&s.ReadIOPS, "read_iops"),
		"write_iops":            rate(&s.WriteIOPS, "write_iops"),
		"read_blocks":           blocks(&s.ReadBlocks, "read_blocks"),
		"write_blocks":          blocks(&s.WriteBlocks, "write_blocks"),
		"inline_share":          func(v *yaml.Node) { p.float(v, w+".inline_share", 0, 1, &s.InlineShare) },
		"flush_per_sec":         rate(&s.FlushPerSec, "flush_per_sec"),
		"error_per_sec":         rate(&s.ErrorPerSec, "error_per_sec"),
		"backend_error_per_sec": rate(&s.BackendErrorPerSec, "backend_error_per_sec"),
	})
	if n.Kind == yaml.MappingNode && !p.hasKey(n, "nsid") {
		p.fail(n, "%s needs nsid: (the front-end namespace ID)", w)
	}
	return s
}

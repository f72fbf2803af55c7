package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/hostlink"
	"github.com/cxray/cxray/emu/nvstore"
	emuoptics "github.com/cxray/cxray/emu/optics"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
	"github.com/cxray/cxray/prm/source"
)

// Limits on what a scenario may ask for.
const (
	MaxFileSize  = 1 << 20
	MaxDevices   = 16
	MaxFunctions = 8 // PCI functions per device
)

// DefaultStart is the clock start of a manual clock when the file gives none,
// so manual-clock runs are reproducible.
var DefaultStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// Scenario is a parsed scenario: the devices to build and the clock they share.
type Scenario struct {
	// Source names where it came from (a file, or "profile cx7-2p400g").
	Source  string
	Seed    uint64
	Clock   Clock
	Devices []*DeviceSpec
	// PRM is the register database file the emulated firmware answers
	// from (the scenario's `prm:` key, made absolute); "" is the built-in
	// one. A newer database gives the emulator the registers it adds
	// (MROQ from Rev 0.61).
	PRM string
	// DB is PRM loaded (nil for the built-in database).
	DB *prm.DB
}

// Clock says how emulated time runs.
type Clock struct {
	// Start is the emulated time at power-on. Zero: the wall time when the
	// devices are built (real clock) or DefaultStart (manual clock).
	Start time.Time
	// Manual stops time: it moves only when a test or a control socket
	// advances it. Otherwise it runs with the wall clock from Start.
	Manual bool
}

// DeviceSpec is one adapter of a scenario, with everything resolved: the
// profile's identity and firmware spec with the file's overrides applied.
type DeviceSpec struct {
	Name     string
	Profile  string
	Identity emu.Identity
	Spec     fw.Spec
	// Functions are the adapter's PCI functions (one per port on a
	// dual-port card, or just one).
	Functions []FunctionSpec
	// ModuleErrors are module errors present at power-on (module index ->
	// PMAOS error_type name).
	ModuleErrors map[int]string
	// Optics says which catalog module each cage holds and its faults (one
	// entry per Spec.Modules entry; see emu/optics).
	Optics []emuoptics.Config
	// DeviceFaults are the device-level faults of every function
	// (RegisterStatus is filled from RegisterStatus when the device is built).
	DeviceFaults emu.Faults
	// RegisterStatus makes registers (by name) answer a status at the
	// device level, before the firmware sees them.
	RegisterStatus map[string]uint8
	// RDMA is the path of the adapter's RoCE traffic, PortRDMA per-port
	// overrides (by local port): what the emulated RDMA counters follow.
	RDMA     RDMASpec
	PortRDMA map[int]RDMASpec
	// NV is the NV configuration over the profile's defaults; NVFaults
	// its faults.
	NV       nvstore.Defaults
	NVFaults nvstore.Faults
	// FirmwareFaults are switched on at power-on.
	FirmwareFaults fw.Faults
	// NVMF is the NVMe-oF target offload (nvmf.go), over the profile's.
	NVMF NVMFSpec
	// Lockdown says the host kernel is in lockdown: its functions' config
	// spaces refuse writes with EPERM (Function.Config).
	Lockdown bool
	// NUMANode is the host NUMA node the adapter's slot hangs off (nil:
	// not given; the views then say what they said before the key existed).
	NUMANode *int
	// PCIe is the card's link to the host (pcie.go): capable, slot and
	// trained speed and width, steady AER errors.
	PCIe hostlink.Spec
	// Line is where the device is defined in the file (0 when built in).
	Line int
}

// RDMASpec is a RoCE path: packet loss probability, round trip, the log2
// PSN window (0: the NV setting in effect), the RoCE share of the port's
// frames and its priority (0: defaults). emu/rdma documents the model.
type RDMASpec struct {
	Loss      float64
	RTT       time.Duration
	LogWindow int
	Share     float64
	Priority  int
}

// FunctionSpec is one PCI function of an adapter.
type FunctionSpec struct {
	BDF    string // canonical, 0000:03:00.0
	Port   int    // the local port (1-based) this function's netdev drives
	Netdev string // network interface name, for the sysfs view
	RDMA   string // RDMA device name, for the sysfs view
	// MAC is the address the OS gives the netdev when it is not the
	// permanent one (an administrator's override: MAC drift); 0: permanent.
	MAC uint64
}

// Load reads and parses a scenario file.
func Load(path string) (*Scenario, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	if fi.Size() > MaxFileSize {
		return nil, fmt.Errorf("scenario: %s is %d bytes; a scenario file is at most %d", path, fi.Size(), MaxFileSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	return Parse(data, path)
}

// Parse reads a scenario from YAML. Unknown keys, bad values and facts a
// device cannot have are errors (an Errors list, each with its line).
func Parse(data []byte, file string) (*Scenario, error) {
	if file == "" {
		file = "scenario"
	}
	if len(data) > MaxFileSize {
		return nil, Errors{{File: file, Msg: fmt.Sprintf("%d bytes; a scenario file is at most %d", len(data), MaxFileSize)}}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, Errors{{File: file, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, Errors{{File: file, Line: extra.Line, Column: extra.Column, Msg: "a second YAML document (---); put everything in one"}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, Errors{{File: file, Msg: "empty file; a scenario needs at least `devices: [{profile: cx7-2p400g}]`"}}
	}
	db, err := builtin.Load()
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	p := &parser{walker: walker{file: file}, db: db, sc: &Scenario{Source: file, Seed: 1}}
	p.top(doc.Content[0])
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return p.sc, nil
}

type parser struct {
	walker
	db *prm.DB
	sc *Scenario
	// ibKeys are the ports of the device being read that have an ib: key
	// (port index -> the key's value), checked against their link type.
	ibKeys map[int]*yaml.Node
}

func (p *parser) top(n *yaml.Node) {
	var devNode *yaml.Node
	p.mapping(n, "the scenario", map[string]field{
		"seed":  func(v *yaml.Node) { p.uintv(v, "seed", 1<<63, &p.sc.Seed) },
		"clock": func(v *yaml.Node) { p.clock(v) },
		"prm":   func(v *yaml.Node) { p.prm(v) },
		"devices": func(v *yaml.Node) {
			devNode = v
		},
	})
	if devNode == nil {
		if n.Kind == yaml.MappingNode {
			p.fail(n, "no devices: add `devices:` with at least one `- profile: %s`", DefaultProfile)
		}
		return
	}
	// Devices are read after seed so their default seeds derive from it.
	p.list(devNode, "devices", MaxDevices, func(i int, v *yaml.Node) { p.device(i, v) })
	if devNode.Kind == yaml.SequenceNode && len(devNode.Content) == 0 {
		p.fail(devNode, "devices is empty; add at least one `- profile: %s`", DefaultProfile)
	}
	p.checkUnique()
	p.numberLIDs()
}

// prm reads the `prm:` key: an ADB file, relative to the scenario file,
// or "builtin".
func (p *parser) prm(n *yaml.Node) {
	var path string
	p.str(n, "prm", 4096, &path)
	if path == "" || strings.EqualFold(path, "builtin") {
		return
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(p.file), path)
	}
	// Only a regular file: a scenario must not make the emulator read a
	// device or a pipe.
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		p.fail(n, "prm: %s is not a file; name an ADB file (a register database such as mstflint's register_access_table.adb) or builtin", path)
		return
	}
	db, err := source.Open(path)
	if err != nil {
		p.fail(n, "prm: %v; name an ADB file (a register database such as mstflint's register_access_table.adb) or builtin", err)
		return
	}
	p.sc.PRM, p.sc.DB = path, db
}

func (p *parser) clock(n *yaml.Node) {
	p.mapping(n, "clock", map[string]field{
		"start": func(v *yaml.Node) { p.timestamp(v, "clock.start", &p.sc.Clock.Start) },
		"mode": func(v *yaml.Node) {
			s, ok := p.scalar(v, "clock.mode")
			switch {
			case !ok:
			case s == "manual":
				p.sc.Clock.Manual = true
			case s == "real":
				p.sc.Clock.Manual = false
			default:
				p.fail(v, "clock.mode must be real (runs with the wall clock) or manual (moves only when advanced), not %q", s)
			}
		},
	})
}

// device reads one entry of devices. The profile is applied first, so the
// other keys override it whatever order they come in.
func (p *parser) device(i int, n *yaml.Node) {
	where := fmt.Sprintf("devices[%d]", i)
	if n.Kind != yaml.MappingNode {
		p.fail(n, "%s must be a mapping such as `- profile: %s`", where, DefaultProfile)
		return
	}
	profName := DefaultProfile
	for j := 0; j+1 < len(n.Content); j += 2 {
		if n.Content[j].Value == "profile" {
			if s, ok := p.scalar(n.Content[j+1], where+".profile"); ok {
				profName = s
			}
		}
	}
	prof, err := LookupProfile(profName)
	if err != nil {
		p.fail(n, "%s: %v", where, err)
		return
	}
	d := &DeviceSpec{Name: fmt.Sprintf("nic%d", i), Profile: prof.Name, Identity: prof.Identity, Spec: prof.Spec,
		ModuleErrors: map[int]string{}, RegisterStatus: map[string]uint8{}, Line: n.Line,
		NVMF: NVMFDefaults(prof.Name).clone(), PCIe: hostlink.Spec{Card: prof.PCIe}}
	d.Spec.Seed = p.sc.Seed*1000 + uint64(i)
	d.Optics = make([]emuoptics.Config, len(d.Spec.Modules))
	for j := range d.Optics {
		if j < len(prof.ModuleKinds) {
			d.Optics[j].Kind = prof.ModuleKinds[j]
		}
	}
	p.ibKeys = map[int]*yaml.Node{}
	var bdf string
	var bdfNode, funcNode *yaml.Node
	var mac, guid string
	var macNode, guidNode *yaml.Node
	p.mapping(n, where, map[string]field{
		"name":      func(v *yaml.Node) { p.str(v, where+".name", 64, &d.Name) },
		"profile":   func(*yaml.Node) {}, // read above
		"seed":      func(v *yaml.Node) { p.uintv(v, where+".seed", 1<<63, &d.Spec.Seed) },
		"bdf":       func(v *yaml.Node) { bdfNode = v; p.str(v, where+".bdf", 64, &bdf) },
		"functions": func(v *yaml.Node) { funcNode = v },
		"firmware":  func(v *yaml.Node) { p.firmware(v, where+".firmware", d) },
		"serial_number": func(v *yaml.Node) {
			p.str(v, where+".serial_number", 64, &d.Spec.SerialNumber)
		},
		"part_number": func(v *yaml.Node) { p.str(v, where+".part_number", 64, &d.Spec.PartNumber) },
		"description": func(v *yaml.Node) { p.str(v, where+".description", 512, &d.Spec.Description) },
		"image_vsd":   func(v *yaml.Node) { p.str(v, where+".image_vsd", 208, &d.Spec.ImageVSD) },
		"device_vsd":  func(v *yaml.Node) { p.str(v, where+".device_vsd", 208, &d.Spec.DeviceVSD) },
		"base_mac":    func(v *yaml.Node) { macNode = v; p.str(v, where+".base_mac", 64, &mac) },
		"base_guid":   func(v *yaml.Node) { guidNode = v; p.str(v, where+".base_guid", 64, &guid) },
		"ports": func(v *yaml.Node) {
			p.list(v, where+".ports", fw.MaxPorts, func(j int, e *yaml.Node) { p.port(e, fmt.Sprintf("%s.ports[%d]", where, j), d) })
		},
		"modules": func(v *yaml.Node) {
			p.list(v, where+".modules", fw.MaxModules, func(j int, e *yaml.Node) { p.module(e, fmt.Sprintf("%s.modules[%d]", where, j), d) })
		},
		"asic_temperature": func(v *yaml.Node) { p.thermal(v, where+".asic_temperature", &d.Spec.ASIC) },
		"roce": func(v *yaml.Node) {
			p.mapping(v, where+".roce", map[string]field{
				"supported": func(e *yaml.Node) { p.roce(e, where+".roce.supported", &d.Spec.RoCE.Supported) },
				"enabled":   func(e *yaml.Node) { p.roce(e, where+".roce.enabled", &d.Spec.RoCE.Enabled) },
			})
			supported := map[string]bool{}
			for _, n := range d.Spec.RoCE.Supported {
				supported[n] = true
			}
			for _, n := range d.Spec.RoCE.Enabled {
				if !supported[n] {
					p.fail(v, "%s.roce: %q is enabled but not supported; add it to supported", where, n)
				}
			}
		},
		"faults": func(v *yaml.Node) { p.faults(v, where+".faults", d) },
		"nv":     func(v *yaml.Node) { p.nv(v, where+".nv", d) },
		"rdma":   func(v *yaml.Node) { p.rdma(v, where+".rdma", &d.RDMA) },
		"nvmf":   func(v *yaml.Node) { p.nvmf(v, where+".nvmf", d) },
		"lockdown": func(v *yaml.Node) {
			p.boolean(v, where+".lockdown", &d.Lockdown)
		},
		"numa_node": func(v *yaml.Node) {
			var n int
			before := len(p.errs)
			p.intv(v, where+".numa_node", 0, 63, &n)
			if len(p.errs) == before {
				d.NUMANode = &n
			}
		},
		"pcie": func(v *yaml.Node) { p.pcie(v, where+".pcie", &d.PCIe) },
	})
	p.linkTypes(d, p.ibKeys, where)
	if macNode != nil && mac != "" {
		v, err := parseHexID(mac, 6)
		if err != nil {
			p.fail(macNode, "%s.base_mac: %v; write it as b8:3f:d2:a1:b2:c0", where, err)
		}
		d.Spec.BaseMAC = v
	} else {
		d.Spec.BaseMAC = 0xb83fd2<<24 | mix(d.Spec.Seed, 0x3AC)&0xFFFFF8
	}
	if guidNode != nil && guid != "" {
		v, err := parseHexID(guid, 8)
		if err != nil {
			p.fail(guidNode, "%s.base_guid: %v; write it as b83f:d203:00a1:b2c0 or b8:3f:d2:03:00:a1:b2:c0", where, err)
		}
		d.Spec.BaseGUID = v
	} else {
		// The usual ConnectX pattern: the MAC's OUI, 03:00, the MAC's low half.
		d.Spec.BaseGUID = d.Spec.BaseMAC>>24<<40 | 0x0300<<24 | d.Spec.BaseMAC&0xFFFFFF
	}
	if d.Spec.SerialNumber == "" {
		t := d.Spec.FWBuildTime
		_, week := t.ISOWeek()
		d.Spec.SerialNumber = fmt.Sprintf("MT%02d%02dX%05d", t.Year()%100, week, mix(d.Spec.Seed, 0x5E)%100000)
	}
	p.functions(i, d, bdf, bdfNode, funcNode, where)
	if err := d.Spec.Validate(); err != nil {
		for _, e := range splitJoined(err) {
			p.fail(n, "%s: %v", where, e)
		}
	}
	p.sc.Devices = append(p.sc.Devices, d)
}

// rdma reads the path RoCE traffic takes (the emu/rdma model of the RDMA
// retransmission counters).
func (p *parser) rdma(n *yaml.Node, where string, r *RDMASpec) {
	p.mapping(n, where, map[string]field{
		"loss":       func(v *yaml.Node) { p.float(v, where+".loss", 0, 0.5, &r.Loss) },
		"rtt":        func(v *yaml.Node) { p.duration(v, where+".rtt", time.Second, &r.RTT) },
		"log_window": func(v *yaml.Node) { p.intv(v, where+".log_window", 1, 15, &r.LogWindow) },
		"share":      func(v *yaml.Node) { p.float(v, where+".share", 0, 1, &r.Share) },
		"priority":   func(v *yaml.Node) { p.intv(v, where+".priority", 0, 7, &r.Priority) },
	})
}

// nv reads the NV configuration the adapter powers on with: factory,
// configured (Next Boot and Current) and pending (Next Boot only) values by
// mlxconfig name, and unsupported TLVs.
func (p *parser) nv(n *yaml.Node, where string, d *DeviceSpec) {
	strMap := func(v *yaml.Node, what string, dst *map[string]string) {
		if v.Kind != yaml.MappingNode {
			p.fail(v, "%s must map parameter names to values, such as `SRIOV_EN: True`", what)
			return
		}
		*dst = map[string]string{}
		for j := 0; j+1 < len(v.Content) && j < 2*1024; j += 2 {
			k, ok1 := p.scalar(v.Content[j], what)
			val, ok2 := p.scalar(v.Content[j+1], what+"."+v.Content[j].Value)
			if ok1 && ok2 {
				(*dst)[k] = val
			}
		}
	}
	p.mapping(n, where, map[string]field{
		"factory":    func(v *yaml.Node) { strMap(v, where+".factory", &d.NV.Factory) },
		"configured": func(v *yaml.Node) { strMap(v, where+".configured", &d.NV.Configured) },
		"pending":    func(v *yaml.Node) { strMap(v, where+".pending", &d.NV.Pending) },
		"unsupported": func(v *yaml.Node) {
			p.list(v, where+".unsupported", 1024, func(i int, e *yaml.Node) {
				if s, ok := p.scalar(e, fmt.Sprintf("%s.unsupported[%d]", where, i)); ok {
					d.NV.Unsupported = append(d.NV.Unsupported, s)
				}
			})
		},
		"no_access":      func(v *yaml.Node) { p.boolean(v, where+".no_access", &d.NVFaults.NoAccess) },
		"erase_exceeded": func(v *yaml.Node) { p.boolean(v, where+".erase_exceeded", &d.NVFaults.EraseExceeded) },
		"erase_budget":   func(v *yaml.Node) { p.intv(v, where+".erase_budget", 0, 1_000_000, &d.NVFaults.EraseBudget) },
		"reject_writes": func(v *yaml.Node) {
			p.list(v, where+".reject_writes", 1024, func(i int, e *yaml.Node) {
				if s, ok := p.scalar(e, fmt.Sprintf("%s.reject_writes[%d]", where, i)); ok {
					d.NVFaults.RejectWrites = append(d.NVFaults.RejectWrites, s)
				}
			})
		},
	})
}

func splitJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func (p *parser) firmware(n *yaml.Node, where string, d *DeviceSpec) {
	version := func(v *yaml.Node, what string, dst *fw.Version) {
		s, ok := p.scalar(v, what)
		if !ok {
			return
		}
		ver, err := fw.ParseVersion(s)
		if err != nil {
			p.fail(v, "%s: %v", what, err)
			return
		}
		*dst = ver
	}
	p.mapping(n, where, map[string]field{
		"version": func(v *yaml.Node) { version(v, where+".version", &d.Spec.FW) },
		"pending_version": func(v *yaml.Node) {
			var ver fw.Version
			before := len(p.errs)
			version(v, where+".pending_version", &ver)
			if len(p.errs) == before {
				d.Spec.PendingFW = &ver
			}
		},
		"build_time": func(v *yaml.Node) { p.timestamp(v, where+".build_time", &d.Spec.FWBuildTime) },
		"build_id": func(v *yaml.Node) {
			var id uint64
			p.uintv(v, where+".build_id", 0xFFFFFFFF, &id)
			d.Spec.FWBuildID = uint32(id)
		},
		"psid": func(v *yaml.Node) { p.str(v, where+".psid", 16, &d.Spec.PSID) },
		"secure": func(v *yaml.Node) {
			p.boolean(v, where+".secure", &d.Spec.Secure)
		},
	})
}

func (p *parser) port(n *yaml.Node, where string, d *DeviceSpec) {
	idx := -1
	if n.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == "port" {
				var v int
				before := len(p.errs)
				p.intv(n.Content[j+1], where+".port", 1, len(d.Spec.Ports), &v)
				if len(p.errs) == before {
					idx = v - 1
				}
			}
		}
		if idx < 0 && !p.hasKey(n, "port") {
			p.fail(n, "%s: say which port with `port: N` (1..%d)", where, len(d.Spec.Ports))
		}
	}
	var ps fw.PortSpec
	if idx >= 0 {
		ps = d.Spec.Ports[idx]
	}
	p.mapping(n, where, map[string]field{
		"port": func(*yaml.Node) {},
		"admin": func(v *yaml.Node) {
			s, ok := p.scalar(v, where+".admin")
			switch {
			case !ok:
			case s == "up":
				ps.AdminDown = false
			case s == "down":
				ps.AdminDown = true
			default:
				p.fail(v, "%s.admin must be up or down, not %q", where, s)
			}
		},
		"lanes":     func(v *yaml.Node) { p.intv(v, where+".lanes", 1, 8, &ps.Lanes) },
		"protocols": func(v *yaml.Node) { p.protocols(v, where+".protocols", &ps.Protocols) },
		"traffic":   func(v *yaml.Node) { p.traffic(v, where+".traffic", &ps.Traffic) },
		"link":      func(v *yaml.Node) { p.link(v, where+".link", &ps.Link) },
		"ib": func(v *yaml.Node) {
			p.ib(v, where+".ib", &ps.IB)
			if idx >= 0 {
				p.ibKeys[idx] = v
			}
		},
		"rdma": func(v *yaml.Node) {
			var r RDMASpec
			p.rdma(v, where+".rdma", &r)
			if idx >= 0 {
				if d.PortRDMA == nil {
					d.PortRDMA = map[int]RDMASpec{}
				}
				d.PortRDMA[idx+1] = r
			}
		},
	})
	if idx >= 0 {
		d.Spec.Ports[idx] = ps
	}
}

func (p *parser) hasKey(n *yaml.Node, key string) bool {
	for j := 0; j+1 < len(n.Content); j += 2 {
		if n.Content[j].Value == key {
			return true
		}
	}
	return false
}

func (p *parser) protocols(n *yaml.Node, what string, dst *[]string) {
	var names []string
	p.list(n, what, 32, func(i int, v *yaml.Node) {
		s, ok := p.scalar(v, fmt.Sprintf("%s[%d]", what, i))
		if !ok {
			return
		}
		proto, err := fw.LookupEthProtocol(s)
		if err != nil {
			p.fail(v, "%s: %v", what, err)
			return
		}
		names = append(names, proto.Name)
	})
	*dst = names
}

func (p *parser) traffic(n *yaml.Node, where string, t *fw.Traffic) {
	rate := func(dst *float64, name string) field {
		return func(v *yaml.Node) { p.float(v, where+"."+name, 0, 1e12, dst) }
	}
	shareOf := func(dst *float64, name string) field {
		return func(v *yaml.Node) { p.float(v, where+"."+name, 0, 1, dst) }
	}
	p.mapping(n, where, map[string]field{
		"tx_frames_per_sec":         rate(&t.TxFramesPerSec, "tx_frames_per_sec"),
		"rx_frames_per_sec":         rate(&t.RxFramesPerSec, "rx_frames_per_sec"),
		"frame_bytes":               func(v *yaml.Node) { p.float(v, where+".frame_bytes", 0, 16384, &t.FrameBytes) },
		"multicast_share":           shareOf(&t.MulticastShare, "multicast_share"),
		"broadcast_share":           shareOf(&t.BroadcastShare, "broadcast_share"),
		"rx_errors_per_sec":         rate(&t.RxErrorsPerSec, "rx_errors_per_sec"),
		"rx_discards_per_sec":       rate(&t.RxDiscardsPerSec, "rx_discards_per_sec"),
		"symbol_errors_per_sec":     rate(&t.SymbolErrorsPerSec, "symbol_errors_per_sec"),
		"fec_corrected_per_sec":     rate(&t.FECCorrectedPerSec, "fec_corrected_per_sec"),
		"fec_uncorrectable_per_sec": rate(&t.FECUncorrPerSec, "fec_uncorrectable_per_sec"),
		"priority_share": func(v *yaml.Node) {
			var shares [8]float64
			p.list(v, where+".priority_share", 8, func(i int, e *yaml.Node) {
				p.float(e, fmt.Sprintf("%s.priority_share[%d]", where, i), 0, 1, &shares[i])
			})
			t.PriorityShare = shares
		},
	})
}

func (p *parser) thermal(n *yaml.Node, where string, t *fw.Thermal) {
	deg := func(dst *float64, name string) field {
		return func(v *yaml.Node) { p.float(v, where+"."+name, -60, 200, dst) }
	}
	p.mapping(n, where, map[string]field{
		"idle":   deg(&t.IdleC, "idle"),
		"load":   deg(&t.LoadC, "load"),
		"wander": deg(&t.WanderC, "wander"),
		"high":   deg(&t.HighC, "high"),
		"low":    deg(&t.LowC, "low"),
		"warmup": func(v *yaml.Node) { p.duration(v, where+".warmup", 24*time.Hour, &t.Warmup) },
		"period": func(v *yaml.Node) { p.duration(v, where+".period", 24*time.Hour, &t.Period) },
	})
}

func (p *parser) module(n *yaml.Node, where string, d *DeviceSpec) {
	idx := -1
	if n.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == "module" {
				var v int
				before := len(p.errs)
				p.intv(n.Content[j+1], where+".module", 0, len(d.Spec.Modules)-1, &v)
				if len(p.errs) == before {
					idx = v
				}
			}
		}
		if idx < 0 && !p.hasKey(n, "module") {
			p.fail(n, "%s: say which cage with `module: N` (0..%d)", where, len(d.Spec.Modules)-1)
		}
	}
	var ms fw.ModuleSpec
	if idx >= 0 {
		ms = d.Spec.Modules[idx]
	}
	var errName string
	var errNode *yaml.Node
	// The optics keys: which catalog module the cage holds and its faults.
	var kind string
	var kindNode, mediaNode, pluggedNode, faultsNode *yaml.Node
	var faults []string
	protosGiven := false
	p.mapping(n, where, map[string]field{
		"module": func(*yaml.Node) {},
		"plugged": func(v *yaml.Node) {
			pluggedNode = v
			plugged := !ms.Absent
			p.boolean(v, where+".plugged", &plugged)
			ms.Absent = !plugged
		},
		"media": func(v *yaml.Node) {
			s, ok := p.scalar(v, where+".media")
			if ok && s != "optical" && s != "copper" {
				p.fail(v, "%s.media must be optical or copper, not %q", where, s)
				return
			}
			mediaNode = v
			ms.Media = s
		},
		"type": func(v *yaml.Node) {
			s, ok := p.scalar(v, where+".type")
			if !ok {
				return
			}
			if _, err := emuoptics.LookupKind(s); err != nil {
				p.fail(v, "%s.type: %v", where, err)
				return
			}
			kind, kindNode = s, v
		},
		"faults": func(v *yaml.Node) {
			faultsNode = v
			p.list(v, where+".faults", 16, func(i int, e *yaml.Node) {
				s, ok := p.scalar(e, fmt.Sprintf("%s.faults[%d]", where, i))
				if !ok {
					return
				}
				if _, err := emuoptics.ParseFaults([]string{s}); err != nil {
					p.fail(e, "%s.faults: %v", where, err)
					return
				}
				faults = append(faults, s)
			})
		},
		"error":       func(v *yaml.Node) { errNode = v; p.str(v, where+".error", 64, &errName) },
		"protocols":   func(v *yaml.Node) { protosGiven = true; p.protocols(v, where+".protocols", &ms.Protocols) },
		"temperature": func(v *yaml.Node) { p.thermal(v, where+".temperature", &ms.Thermal) },
	})
	if idx < 0 {
		return
	}
	p.moduleKind(d, idx, &ms, where, kind, kindNode, mediaNode, pluggedNode, protosGiven)
	if faultsNode != nil {
		if ms.Absent && len(faults) > 0 {
			p.fail(faultsNode, "%s: an empty cage has no module to have faults", where)
		}
		d.Optics[idx].Faults = faults
	}
	d.Spec.Modules[idx] = ms
	if errNode != nil && errName != "" {
		if ms.Absent {
			p.fail(errNode, "%s: an empty cage (plugged: false) cannot have a module error", where)
			return
		}
		if !p.enumHas("PMAOS", "error_type", errName) {
			p.fail(errNode, "%s.error %q is not a PMAOS error_type; use one of %s", where, errName, p.enumList("PMAOS", "error_type"))
			return
		}
		d.ModuleErrors[idx] = errName
	}
}

// moduleKind settles what cage idx holds: the catalog type given, or (when
// only the media changes) the default module of that media; the type also
// sets the cage's media and protocols unless the file gives them.
func (p *parser) moduleKind(d *DeviceSpec, idx int, ms *fw.ModuleSpec, where, kind string, kindNode, mediaNode, pluggedNode *yaml.Node, protosGiven bool) {
	cur := &d.Optics[idx]
	switch {
	case kindNode != nil && kind == emuoptics.Empty:
		if pluggedNode != nil && !ms.Absent {
			p.fail(kindNode, "%s: type empty contradicts plugged: true", where)
			return
		}
		ms.Absent = true
		cur.Kind = kind
	case kindNode != nil:
		k, _ := emuoptics.LookupKind(kind)
		if pluggedNode != nil && ms.Absent {
			p.fail(kindNode, "%s: a cage with plugged: false holds no module; drop type or plugged", where)
			return
		}
		if mediaNode != nil && ms.Media != k.Media {
			p.fail(mediaNode, "%s: media %s contradicts type %s, which is %s", where, ms.Media, k.Name, k.Media)
			return
		}
		ms.Absent = false
		ms.Media = k.Media
		if !protosGiven {
			ms.Protocols = append([]string(nil), k.Protocols...)
		}
		cur.Kind = k.Name
	case mediaNode != nil:
		if k, err := emuoptics.LookupKind(cur.Kind); err != nil || k.Media != ms.Media {
			cur.Kind = emuoptics.DefaultKind(ms.Media)
		}
	}
}

// roce reads a list of ROCE_ACCL feature names: the fields of the register
// that have a "_field_select" partner, without that suffix.
func (p *parser) roce(n *yaml.Node, what string, dst *[]string) {
	known := map[string]bool{}
	var names []string
	if r, err := p.db.Register("ROCE_ACCL"); err == nil {
		if pl, err := p.db.RegisterPlan(r); err == nil {
			for _, l := range pl.Leaves() {
				if base, ok := strings.CutSuffix(l.Path, "_field_select"); ok {
					known[base] = true
					names = append(names, base)
				}
			}
		}
	}
	var out []string
	p.list(n, what, 32, func(i int, v *yaml.Node) {
		s, ok := p.scalar(v, fmt.Sprintf("%s[%d]", what, i))
		if !ok {
			return
		}
		if !known[s] {
			p.fail(v, "%s: %q is not a ROCE_ACCL feature%s", what, s, suggest(s, names))
			return
		}
		out = append(out, s)
	})
	*dst = out
}

func (p *parser) enumField(register, path string) *prm.Field {
	r, err := p.db.Register(register)
	if err != nil {
		return nil
	}
	pl, err := p.db.RegisterPlan(r)
	if err != nil {
		return nil
	}
	t, err := pl.Resolve(path, pl.NewBuffer())
	if err != nil {
		return nil
	}
	return t.Step.Field
}

func (p *parser) enumHas(register, path, name string) bool {
	f := p.enumField(register, path)
	if f == nil {
		return false
	}
	for _, e := range f.Enum {
		if e.Name == name {
			return true
		}
	}
	return false
}

func (p *parser) enumList(register, path string) string {
	f := p.enumField(register, path)
	if f == nil {
		return "(none)"
	}
	names := make([]string, len(f.Enum))
	for i, e := range f.Enum {
		names[i] = e.Name
	}
	return strings.Join(names, ", ")
}

func (p *parser) register(n *yaml.Node, what string) (string, bool) {
	s, ok := p.scalar(n, what)
	if !ok {
		return "", false
	}
	r, err := p.db.Register(s)
	if err != nil {
		p.fail(n, "%s: %v", what, err)
		return "", false
	}
	return r.Name, true
}

func (p *parser) status(n *yaml.Node, what string) (uint8, bool) {
	s, ok := p.scalar(n, what)
	if !ok {
		return 0, false
	}
	st, err := fw.ParseStatus(s)
	if err != nil {
		p.fail(n, "%s: %v", what, err)
		return 0, false
	}
	return st, true
}

func (p *parser) faults(n *yaml.Node, where string, d *DeviceSpec) {
	df, ff := &d.DeviceFaults, &d.FirmwareFaults
	p.mapping(n, where, map[string]field{
		// Device level (emu.Faults).
		"gateway_semaphore_held": func(v *yaml.Node) { p.boolean(v, where+".gateway_semaphore_held", &df.GatewaySemaphoreHeld) },
		"icmd_semaphore_held":    func(v *yaml.Node) { p.boolean(v, where+".icmd_semaphore_held", &df.ICMDSemaphoreHeld) },
		"icmd_stuck_busy":        func(v *yaml.Node) { p.boolean(v, where+".icmd_stuck_busy", &df.ICMDStuckBusy) },
		"slow_icmd_polls":        func(v *yaml.Node) { p.intv(v, where+".slow_icmd_polls", 0, 1_000_000, &df.SlowICMDPolls) },
		"slow_icmd":              func(v *yaml.Node) { p.duration(v, where+".slow_icmd", time.Hour, &df.SlowICMD) },
		"removed":                func(v *yaml.Node) { p.boolean(v, where+".removed", &df.Removed) },
		"register_status": func(v *yaml.Node) {
			if v.Kind != yaml.MappingNode {
				p.fail(v, "%s.register_status must map register names to statuses, such as `PAOS: bad_param`", where)
				return
			}
			for j := 0; j+1 < len(v.Content) && j < 2*256; j += 2 {
				name, ok := p.register(v.Content[j], where+".register_status")
				st, ok2 := p.status(v.Content[j+1], where+".register_status."+v.Content[j].Value)
				if ok && ok2 {
					if _, dup := d.RegisterStatus[name]; dup {
						p.fail(v.Content[j], "%s.register_status: %s is given twice", where, name)
					}
					d.RegisterStatus[name] = st
				}
			}
		},
		// Firmware level (fw.Faults).
		"unsupported": func(v *yaml.Node) {
			p.list(v, where+".unsupported", 256, func(i int, e *yaml.Node) {
				if name, ok := p.register(e, fmt.Sprintf("%s.unsupported[%d]", where, i)); ok {
					ff.Unsupported = append(ff.Unsupported, name)
				}
			})
		},
		"status": func(v *yaml.Node) {
			p.list(v, where+".status", 256, func(i int, e *yaml.Node) {
				sf := fw.StatusFault{}
				okR, okS := false, false
				w := fmt.Sprintf("%s.status[%d]", where, i)
				p.mapping(e, w, map[string]field{
					"register": func(x *yaml.Node) { sf.Register, okR = p.register(x, w+".register") },
					"status":   func(x *yaml.Node) { sf.Status, okS = p.status(x, w+".status") },
					"method": func(x *yaml.Node) {
						s, _ := p.scalar(x, w+".method")
						switch strings.ToLower(s) {
						case "get":
							sf.Method = emu.MethodGet
						case "set":
							sf.Method = emu.MethodSet
						case "any":
						default:
							p.fail(x, "%s.method must be get, set or any, not %q", w, s)
						}
					},
				})
				if e.Kind == yaml.MappingNode && (!p.hasKey(e, "register") || !p.hasKey(e, "status")) {
					p.fail(e, "%s needs register: and status:", w)
					return
				}
				if okR && okS {
					ff.Status = append(ff.Status, sf)
				}
			})
		},
		"busy":                func(v *yaml.Node) { p.intv(v, where+".busy", 0, 1_000_000, &ff.Busy) },
		"freeze_temperatures": func(v *yaml.Node) { p.boolean(v, where+".freeze_temperatures", &ff.FreezeTemperatures) },
		"asic_temperature_offset": func(v *yaml.Node) {
			p.float(v, where+".asic_temperature_offset", -100, 200, &ff.ASICTemperatureOffsetC)
		},
		"link_down": func(v *yaml.Node) {
			p.list(v, where+".link_down", fw.MaxPorts, func(i int, e *yaml.Node) {
				var port int
				before := len(p.errs)
				p.intv(e, fmt.Sprintf("%s.link_down[%d]", where, i), 1, len(d.Spec.Ports), &port)
				if len(p.errs) == before {
					ff.LinkDown = append(ff.LinkDown, port)
				}
			})
		},
	})
}

// functions lays out the device's PCI functions: given as a count or a
// list, at the device's BDF and the functions after it.
func (p *parser) functions(i int, d *DeviceSpec, bdf string, bdfNode, n *yaml.Node, where string) {
	base := BDF{Bus: uint8(0x03 + i)}
	if bdfNode != nil && bdf != "" {
		b, err := ParseBDF(bdf)
		if err != nil {
			p.fail(bdfNode, "%s.bdf: %v", where, err)
		} else {
			base = b
		}
	}
	count := 1
	var entries []*yaml.Node
	if n != nil {
		switch n.Kind {
		case yaml.ScalarNode:
			p.intv(n, where+".functions", 1, MaxFunctions, &count)
		case yaml.SequenceNode:
			p.list(n, where+".functions", MaxFunctions, func(_ int, e *yaml.Node) { entries = append(entries, e) })
			count = max(len(entries), 1)
			if len(n.Content) == 0 {
				p.fail(n, "%s.functions is empty; give a count (functions: 2) or at least one entry", where)
			}
		default:
			p.fail(n, "%s.functions must be a count (functions: 2) or a list of {bdf, port, netdev, rdma}", where)
		}
	}
	if int(base.Function)+count > MaxFunctions {
		p.fail(bdfNode, "%s: %d functions from %s run past function 7; start at a lower function number", where, count, base)
		return
	}
	for j := 0; j < count; j++ {
		b := base
		b.Function += uint8(j)
		f := FunctionSpec{BDF: b.String(), Port: min(j+1, len(d.Spec.Ports))}
		if j < len(entries) {
			e, w := entries[j], fmt.Sprintf("%s.functions[%d]", where, j)
			var s string
			p.mapping(e, w, map[string]field{
				"bdf": func(v *yaml.Node) {
					p.str(v, w+".bdf", 64, &s)
					if nb, err := ParseBDF(s); err != nil {
						p.fail(v, "%s.bdf: %v", w, err)
					} else {
						f.BDF = nb.String()
					}
				},
				"port":   func(v *yaml.Node) { p.intv(v, w+".port", 1, len(d.Spec.Ports), &f.Port) },
				"netdev": func(v *yaml.Node) { p.ifname(v, w+".netdev", &f.Netdev) },
				"rdma":   func(v *yaml.Node) { p.ifname(v, w+".rdma", &f.RDMA) },
				"mac": func(v *yaml.Node) {
					var m string
					p.str(v, w+".mac", 64, &m)
					if mv, err := parseHexID(m, 6); err != nil {
						p.fail(v, "%s.mac: %v; write it as b8:3f:d2:a1:b2:c0", w, err)
					} else {
						f.MAC = mv
					}
				},
			})
		}
		ib := f.Port >= 1 && f.Port <= len(d.Spec.Ports) && d.Spec.Ports[f.Port-1].LinkType == fw.LinkInfiniBand
		if ib && f.MAC != 0 && j < len(entries) {
			p.fail(entries[j], "%s.functions[%d].mac: port %d runs InfiniBand, whose IPoIB interface has no MAC to set", where, j, f.Port)
		}
		if f.Netdev == "" {
			f.Netdev = fmt.Sprintf("ens%df%dnp%d", i+1, b.Function, f.Port-1)
			if ib {
				// An IPoIB interface, named by its PCI path as udev names
				// them (ibp<bus>s<slot>, f<function> on a multi-function card).
				f.Netdev = fmt.Sprintf("ibp%ds%d", b.Bus, b.Device)
				if count > 1 || b.Function > 0 {
					f.Netdev += fmt.Sprintf("f%d", b.Function)
				}
			}
		}
		d.Functions = append(d.Functions, f)
	}
}

// ifname checks a Linux interface-style name: 1..15 characters, no slash
// or space (it becomes a sysfs directory name).
func (p *parser) ifname(n *yaml.Node, what string, dst *string) {
	var s string
	before := len(p.errs)
	p.str(n, what, 15, &s)
	if len(p.errs) > before {
		return
	}
	if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/ :") {
		p.fail(n, "%s %q must be 1..15 characters without '/', ':' or spaces", what, s)
		return
	}
	*dst = s
}

// checkUnique numbers RDMA devices and rejects BDFs and names used twice.
func (p *parser) checkUnique() {
	bdfs, names, devs := map[string]string{}, map[string]string{}, map[string]bool{}
	rdma := 0
	for _, d := range p.sc.Devices {
		at := &yaml.Node{Line: d.Line, Column: 1}
		if devs[d.Name] {
			p.fail(at, "device name %q is used twice; give each device its own name", d.Name)
		}
		devs[d.Name] = true
		for k := range d.Functions {
			f := &d.Functions[k]
			if f.RDMA == "" {
				f.RDMA = fmt.Sprintf("mlx5_%d", rdma)
			}
			rdma++
			if other, dup := bdfs[f.BDF]; dup {
				p.fail(at, "BDF %s is used by %s and %s; give each function its own bus:device.function", f.BDF, other, d.Name)
			}
			bdfs[f.BDF] = d.Name
			for _, nm := range []string{"netdev " + f.Netdev, "rdma " + f.RDMA} {
				if other, dup := names[nm]; dup {
					p.fail(at, "%s is used by %s and %s; names must be unique", nm, other, d.Name)
				}
				names[nm] = d.Name
			}
		}
	}
}

// FromProfile is the scenario of one device of a profile with one PCI
// function at 0000:03:00.0 (what "emu" and "emu:PROFILE" build).
func FromProfile(name string) (*Scenario, error) {
	if _, err := LookupProfile(name); err != nil {
		return nil, err
	}
	p, err := Parse([]byte(fmt.Sprintf("devices:\n  - profile: %q\n", name)), "profile "+name)
	if err != nil {
		var es Errors
		if errors.As(err, &es) && len(es) == 1 {
			return nil, errors.New(strings.TrimPrefix(es[0].Msg, "devices[0]: "))
		}
		return nil, err
	}
	return p, nil
}

// mix is splitmix64 of seed and k, for defaults drawn from the seed.
func mix(seed, k uint64) uint64 {
	z := seed + 0x9E3779B97F4A7C15*(k+1)
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/hostlink"
	emuoptics "github.com/cxray/cxray/emu/optics"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/source"
)

// The readers turn a decoded file (schema.go) into a Scenario. Each takes
// the decoded part and, where an error is about a mapping or a list rather
// than one value, its node, for the line.

// top reads the whole file (n is its mapping, f the same decoded).
func (p *parser) top(n *yaml.Node, f *fileScenario) {
	p.uintv(&f.Seed, "seed", 1<<63, &p.sc.Seed)
	if f.Clock != nil {
		p.clock(f.Clock)
	}
	p.prm(&f.PRM)
	devNode := child(n, "devices")
	if devNode == nil {
		p.fail(n, "no devices: add `devices:` with at least one `- profile: %s`", DefaultProfile)
		return
	}
	if len(f.Devices) == 0 {
		p.fail(devNode, "devices is empty; add at least one `- profile: %s`", DefaultProfile)
		return
	}
	// Devices are read after seed so their default seeds derive from it.
	for i, d := range f.Devices {
		p.device(i, devNode.Content[i], d)
	}
	p.checkUnique()
	p.numberLIDs()
}

// prm reads the `prm:` key: an ADB file, relative to the scenario file,
// or "builtin".
func (p *parser) prm(n *yaml.Node) {
	var path string
	if !p.str(n, "prm", 4096, &path) || path == "" || strings.EqualFold(path, "builtin") {
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

func (p *parser) clock(f *fileClock) {
	p.timestamp(&f.Start, "clock.start", &p.sc.Clock.Start)
	s, ok := p.scalar(&f.Mode, "clock.mode")
	switch {
	case !ok:
	case s == "manual":
		p.sc.Clock.Manual = true
	case s == "real":
		p.sc.Clock.Manual = false
	default:
		p.fail(&f.Mode, "clock.mode must be real (runs with the wall clock) or manual (moves only when advanced), not %q", s)
	}
}

// device reads one entry of devices (n its mapping, f the same decoded).
// The profile is applied first, so the other keys override it.
func (p *parser) device(i int, n *yaml.Node, f *fileDevice) {
	where := fmt.Sprintf("devices[%d]", i)
	profName := DefaultProfile
	if s, ok := p.scalar(&f.Profile, where+".profile"); ok {
		profName = s
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
	p.str(&f.Name, where+".name", 64, &d.Name)
	p.uintv(&f.Seed, where+".seed", 1<<63, &d.Spec.Seed)
	var bdf, mac, guid string
	p.str(&f.BDF, where+".bdf", 64, &bdf)
	if f.Firmware != nil {
		p.firmware(f.Firmware, where+".firmware", d)
	}
	p.str(&f.SerialNumber, where+".serial_number", 64, &d.Spec.SerialNumber)
	p.str(&f.PartNumber, where+".part_number", 64, &d.Spec.PartNumber)
	p.str(&f.Description, where+".description", 512, &d.Spec.Description)
	p.str(&f.ImageVSD, where+".image_vsd", 208, &d.Spec.ImageVSD)
	p.str(&f.DeviceVSD, where+".device_vsd", 208, &d.Spec.DeviceVSD)
	p.str(&f.BaseMAC, where+".base_mac", 64, &mac)
	p.str(&f.BaseGUID, where+".base_guid", 64, &guid)
	p.ibKeys = map[int]*yaml.Node{}
	for j, pf := range f.Ports {
		p.port(child(n, "ports").Content[j], pf, fmt.Sprintf("%s.ports[%d]", where, j), d)
	}
	for j, mf := range f.Modules {
		p.module(child(n, "modules").Content[j], mf, fmt.Sprintf("%s.modules[%d]", where, j), d)
	}
	if f.ASICTemperature != nil {
		p.thermal(f.ASICTemperature, where+".asic_temperature", &d.Spec.ASIC)
	}
	if f.RoCE != nil {
		p.roceKey(child(n, "roce"), f.RoCE, where+".roce", d)
	}
	if f.Faults != nil {
		p.faults(child(n, "faults"), f.Faults, where+".faults", d)
	}
	if f.NV != nil {
		p.nv(f.NV, where+".nv", d)
	}
	if f.RDMA != nil {
		p.rdma(f.RDMA, where+".rdma", &d.RDMA)
	}
	if f.NVMF != nil {
		p.nvmf(child(n, "nvmf"), f.NVMF, where+".nvmf", d)
	}
	p.boolean(&f.Lockdown, where+".lockdown", &d.Lockdown)
	var numa int
	if p.intv(&f.NUMANode, where+".numa_node", 0, 63, &numa) {
		d.NUMANode = &numa
	}
	if f.PCIe != nil {
		p.pcie(child(n, "pcie"), f.PCIe, where+".pcie", &d.PCIe)
	}
	p.linkTypes(d, p.ibKeys, where)
	if mac != "" {
		v, err := parseHexID(mac, 6)
		if err != nil {
			p.fail(&f.BaseMAC, "%s.base_mac: %v; write it as b8:3f:d2:a1:b2:c0", where, err)
		}
		d.Spec.BaseMAC = v
	} else {
		d.Spec.BaseMAC = 0xb83fd2<<24 | mix(d.Spec.Seed, 0x3AC)&0xFFFFF8
	}
	if guid != "" {
		v, err := parseHexID(guid, 8)
		if err != nil {
			p.fail(&f.BaseGUID, "%s.base_guid: %v; write it as b83f:d203:00a1:b2c0 or b8:3f:d2:03:00:a1:b2:c0", where, err)
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
	p.functions(i, d, bdf, &f.BDF, &f.Functions, where)
	if err := d.Spec.Validate(); err != nil {
		for _, e := range splitJoined(err) {
			p.fail(n, "%s: %v", where, e)
		}
	}
	p.sc.Devices = append(p.sc.Devices, d)
}

// rdma reads the path RoCE traffic takes (the emu/rdma model of the RDMA
// retransmission counters).
func (p *parser) rdma(f *fileRDMA, where string, r *RDMASpec) {
	p.float(&f.Loss, where+".loss", 0, 0.5, &r.Loss)
	p.duration(&f.RTT, where+".rtt", time.Second, &r.RTT)
	p.intv(&f.LogWindow, where+".log_window", 1, 15, &r.LogWindow)
	p.float(&f.Share, where+".share", 0, 1, &r.Share)
	p.intv(&f.Priority, where+".priority", 0, 7, &r.Priority)
}

// nv reads the NV configuration the adapter powers on with: factory,
// configured (Next Boot and Current) and pending (Next Boot only) values by
// mlxconfig name, and unsupported TLVs.
func (p *parser) nv(f *fileNV, where string, d *DeviceSpec) {
	strMap := func(v *yaml.Node, what string, dst *map[string]string) {
		if v.Kind == 0 {
			return
		}
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
	strMap(&f.Factory, where+".factory", &d.NV.Factory)
	strMap(&f.Configured, where+".configured", &d.NV.Configured)
	strMap(&f.Pending, where+".pending", &d.NV.Pending)
	for i := range f.Unsupported {
		if s, ok := p.scalar(&f.Unsupported[i], fmt.Sprintf("%s.unsupported[%d]", where, i)); ok {
			d.NV.Unsupported = append(d.NV.Unsupported, s)
		}
	}
	p.boolean(&f.NoAccess, where+".no_access", &d.NVFaults.NoAccess)
	p.boolean(&f.EraseExceeded, where+".erase_exceeded", &d.NVFaults.EraseExceeded)
	p.intv(&f.EraseBudget, where+".erase_budget", 0, 1_000_000, &d.NVFaults.EraseBudget)
	for i := range f.RejectWrites {
		if s, ok := p.scalar(&f.RejectWrites[i], fmt.Sprintf("%s.reject_writes[%d]", where, i)); ok {
			d.NVFaults.RejectWrites = append(d.NVFaults.RejectWrites, s)
		}
	}
}

func (p *parser) firmware(f *fileFirmware, where string, d *DeviceSpec) {
	version := func(v *yaml.Node, what string, dst *fw.Version) bool {
		s, ok := p.scalar(v, what)
		if !ok {
			return false
		}
		ver, err := fw.ParseVersion(s)
		if err != nil {
			p.fail(v, "%s: %v", what, err)
			return false
		}
		*dst = ver
		return true
	}
	version(&f.Version, where+".version", &d.Spec.FW)
	var pending fw.Version
	if version(&f.PendingVersion, where+".pending_version", &pending) {
		d.Spec.PendingFW = &pending
	}
	p.timestamp(&f.BuildTime, where+".build_time", &d.Spec.FWBuildTime)
	var id uint64
	if p.uintv(&f.BuildID, where+".build_id", 0xFFFFFFFF, &id) {
		d.Spec.FWBuildID = uint32(id)
	}
	p.str(&f.PSID, where+".psid", 16, &d.Spec.PSID)
	p.boolean(&f.Secure, where+".secure", &d.Spec.Secure)
}

// port reads one entry of ports (n its mapping, f the same decoded).
func (p *parser) port(n *yaml.Node, f *filePort, where string, d *DeviceSpec) {
	idx := -1
	var num int
	if f.Port.Kind == 0 {
		p.fail(n, "%s: say which port with `port: N` (1..%d)", where, len(d.Spec.Ports))
	} else if p.intv(&f.Port, where+".port", 1, len(d.Spec.Ports), &num) {
		idx = num - 1
	}
	var ps fw.PortSpec
	if idx >= 0 {
		ps = d.Spec.Ports[idx]
	}
	s, ok := p.scalar(&f.Admin, where+".admin")
	switch {
	case !ok:
	case s == "up":
		ps.AdminDown = false
	case s == "down":
		ps.AdminDown = true
	default:
		p.fail(&f.Admin, "%s.admin must be up or down, not %q", where, s)
	}
	p.intv(&f.Lanes, where+".lanes", 1, 8, &ps.Lanes)
	if p.hasKey(n, "protocols") {
		p.protocols(f.Protocols, where+".protocols", &ps.Protocols)
	}
	if f.Traffic != nil {
		p.traffic(n, f.Traffic, where+".traffic", &ps.Traffic)
	}
	if f.Link != nil {
		p.link(child(n, "link"), f.Link, where+".link", &ps.Link)
	}
	if f.IB != nil {
		p.ib(f.IB, where+".ib", &ps.IB)
		if idx >= 0 {
			p.ibKeys[idx] = child(n, "ib")
		}
	}
	if f.RDMA != nil {
		var r RDMASpec
		p.rdma(f.RDMA, where+".rdma", &r)
		if idx >= 0 {
			if d.PortRDMA == nil {
				d.PortRDMA = map[int]RDMASpec{}
			}
			d.PortRDMA[idx+1] = r
		}
	}
	if idx >= 0 {
		d.Spec.Ports[idx] = ps
	}
}

func (p *parser) protocols(list []yaml.Node, what string, dst *[]string) {
	var names []string
	for i := range list {
		v := &list[i]
		s, ok := p.scalar(v, fmt.Sprintf("%s[%d]", what, i))
		if !ok {
			continue
		}
		proto, err := fw.LookupEthProtocol(s)
		if err != nil {
			p.fail(v, "%s: %v", what, err)
			continue
		}
		names = append(names, proto.Name)
	}
	*dst = names
}

// traffic reads a port's traffic (portNode is the port's mapping).
func (p *parser) traffic(portNode *yaml.Node, f *fileTraffic, where string, t *fw.Traffic) {
	rate := func(v *yaml.Node, name string, dst *float64) { p.float(v, where+"."+name, 0, 1e12, dst) }
	share := func(v *yaml.Node, name string, dst *float64) { p.float(v, where+"."+name, 0, 1, dst) }
	rate(&f.TxFramesPerSec, "tx_frames_per_sec", &t.TxFramesPerSec)
	rate(&f.RxFramesPerSec, "rx_frames_per_sec", &t.RxFramesPerSec)
	p.float(&f.FrameBytes, where+".frame_bytes", 0, 16384, &t.FrameBytes)
	share(&f.MulticastShare, "multicast_share", &t.MulticastShare)
	share(&f.BroadcastShare, "broadcast_share", &t.BroadcastShare)
	rate(&f.RxErrorsPerSec, "rx_errors_per_sec", &t.RxErrorsPerSec)
	rate(&f.RxDiscardsPerSec, "rx_discards_per_sec", &t.RxDiscardsPerSec)
	rate(&f.SymbolErrorsPerSec, "symbol_errors_per_sec", &t.SymbolErrorsPerSec)
	rate(&f.FECCorrectedPerSec, "fec_corrected_per_sec", &t.FECCorrectedPerSec)
	rate(&f.FECUncorrectablePerSec, "fec_uncorrectable_per_sec", &t.FECUncorrPerSec)
	if p.hasKey(child(portNode, "traffic"), "priority_share") {
		var shares [8]float64
		for i := range f.PriorityShare {
			p.float(&f.PriorityShare[i], fmt.Sprintf("%s.priority_share[%d]", where, i), 0, 1, &shares[i])
		}
		t.PriorityShare = shares
	}
}

func (p *parser) thermal(f *fileThermal, where string, t *fw.Thermal) {
	deg := func(v *yaml.Node, name string, dst *float64) { p.float(v, where+"."+name, -60, 200, dst) }
	deg(&f.Idle, "idle", &t.IdleC)
	deg(&f.Load, "load", &t.LoadC)
	deg(&f.Wander, "wander", &t.WanderC)
	deg(&f.High, "high", &t.HighC)
	deg(&f.Low, "low", &t.LowC)
	p.duration(&f.Warmup, where+".warmup", 24*time.Hour, &t.Warmup)
	p.duration(&f.Period, where+".period", 24*time.Hour, &t.Period)
}

// module reads one entry of modules (n its mapping, f the same decoded).
func (p *parser) module(n *yaml.Node, f *fileModule, where string, d *DeviceSpec) {
	idx := -1
	var num int
	if f.Module.Kind == 0 {
		p.fail(n, "%s: say which cage with `module: N` (0..%d)", where, len(d.Spec.Modules)-1)
	} else if p.intv(&f.Module, where+".module", 0, len(d.Spec.Modules)-1, &num) {
		idx = num
	}
	var ms fw.ModuleSpec
	if idx >= 0 {
		ms = d.Spec.Modules[idx]
	}
	// The optics keys: which catalog module the cage holds and its faults.
	var kind string
	var kindNode, mediaNode, pluggedNode *yaml.Node
	if f.Plugged.Kind != 0 {
		pluggedNode = &f.Plugged
		plugged := !ms.Absent
		p.boolean(&f.Plugged, where+".plugged", &plugged)
		ms.Absent = !plugged
	}
	if s, ok := p.scalar(&f.Media, where+".media"); ok {
		if s != "optical" && s != "copper" {
			p.fail(&f.Media, "%s.media must be optical or copper, not %q", where, s)
		} else {
			mediaNode, ms.Media = &f.Media, s
		}
	}
	if s, ok := p.scalar(&f.Type, where+".type"); ok {
		if _, err := emuoptics.LookupKind(s); err != nil {
			p.fail(&f.Type, "%s.type: %v", where, err)
		} else {
			kind, kindNode = s, &f.Type
		}
	}
	var faults []string
	for i := range f.Faults {
		e := &f.Faults[i]
		s, ok := p.scalar(e, fmt.Sprintf("%s.faults[%d]", where, i))
		if !ok {
			continue
		}
		if _, err := emuoptics.ParseFaults([]string{s}); err != nil {
			p.fail(e, "%s.faults: %v", where, err)
			continue
		}
		faults = append(faults, s)
	}
	var errName string
	p.str(&f.Error, where+".error", 64, &errName)
	protosGiven := p.hasKey(n, "protocols")
	if protosGiven {
		p.protocols(f.Protocols, where+".protocols", &ms.Protocols)
	}
	if f.Temperature != nil {
		p.thermal(f.Temperature, where+".temperature", &ms.Thermal)
	}
	if idx < 0 {
		return
	}
	p.moduleKind(d, idx, &ms, where, kind, kindNode, mediaNode, pluggedNode, protosGiven)
	if faultsNode := child(n, "faults"); faultsNode != nil {
		if ms.Absent && len(faults) > 0 {
			p.fail(faultsNode, "%s: an empty cage has no module to have faults", where)
		}
		d.Optics[idx].Faults = faults
	}
	d.Spec.Modules[idx] = ms
	if errName != "" {
		if ms.Absent {
			p.fail(&f.Error, "%s: an empty cage (plugged: false) cannot have a module error", where)
			return
		}
		if !p.enumHas("PMAOS", "error_type", errName) {
			p.fail(&f.Error, "%s.error %q is not a PMAOS error_type; use one of %s", where, errName, p.enumList("PMAOS", "error_type"))
			return
		}
		d.ModuleErrors[idx] = errName
	}
}

// roceKey reads a device's roce: key (n its mapping): the ROCE_ACCL
// features the device supports and those enabled at power-on.
func (p *parser) roceKey(n *yaml.Node, f *fileRoCE, where string, d *DeviceSpec) {
	if p.hasKey(n, "supported") {
		p.roce(f.Supported, where+".supported", &d.Spec.RoCE.Supported)
	}
	if p.hasKey(n, "enabled") {
		p.roce(f.Enabled, where+".enabled", &d.Spec.RoCE.Enabled)
	}
	supported := map[string]bool{}
	for _, name := range d.Spec.RoCE.Supported {
		supported[name] = true
	}
	for _, name := range d.Spec.RoCE.Enabled {
		if !supported[name] {
			p.fail(n, "%s: %q is enabled but not supported; add it to supported", where, name)
		}
	}
}

// roce reads a list of ROCE_ACCL feature names: the fields of the register
// that have a "_field_select" partner, without that suffix.
func (p *parser) roce(list []yaml.Node, what string, dst *[]string) {
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
	for i := range list {
		v := &list[i]
		s, ok := p.scalar(v, fmt.Sprintf("%s[%d]", what, i))
		if !ok {
			continue
		}
		if !known[s] {
			p.fail(v, "%s: %q is not a ROCE_ACCL feature%s", what, s, suggest(s, names))
			continue
		}
		out = append(out, s)
	}
	*dst = out
}

// faults reads a device's faults: key (n its mapping, f the same decoded).
func (p *parser) faults(n *yaml.Node, f *fileFaults, where string, d *DeviceSpec) {
	df, ff := &d.DeviceFaults, &d.FirmwareFaults
	// Device level (emu.Faults).
	p.boolean(&f.GatewaySemaphoreHeld, where+".gateway_semaphore_held", &df.GatewaySemaphoreHeld)
	p.boolean(&f.ICMDSemaphoreHeld, where+".icmd_semaphore_held", &df.ICMDSemaphoreHeld)
	p.boolean(&f.ICMDStuckBusy, where+".icmd_stuck_busy", &df.ICMDStuckBusy)
	p.intv(&f.SlowICMDPolls, where+".slow_icmd_polls", 0, 1_000_000, &df.SlowICMDPolls)
	p.duration(&f.SlowICMD, where+".slow_icmd", time.Hour, &df.SlowICMD)
	p.boolean(&f.Removed, where+".removed", &df.Removed)
	if v := &f.RegisterStatus; v.Kind == yaml.MappingNode {
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
	} else if v.Kind != 0 {
		p.fail(v, "%s.register_status must map register names to statuses, such as `PAOS: bad_param`", where)
	}
	// Firmware level (fw.Faults).
	for i := range f.Unsupported {
		if name, ok := p.register(&f.Unsupported[i], fmt.Sprintf("%s.unsupported[%d]", where, i)); ok {
			ff.Unsupported = append(ff.Unsupported, name)
		}
	}
	for i, sf := range f.Status {
		if fault, ok := p.statusFault(child(n, "status").Content[i], sf, fmt.Sprintf("%s.status[%d]", where, i)); ok {
			ff.Status = append(ff.Status, fault)
		}
	}
	p.intv(&f.Busy, where+".busy", 0, 1_000_000, &ff.Busy)
	p.boolean(&f.FreezeTemperatures, where+".freeze_temperatures", &ff.FreezeTemperatures)
	p.float(&f.ASICTemperatureOffset, where+".asic_temperature_offset", -100, 200, &ff.ASICTemperatureOffsetC)
	for i := range f.LinkDown {
		var port int
		if p.intv(&f.LinkDown[i], fmt.Sprintf("%s.link_down[%d]", where, i), 1, len(d.Spec.Ports), &port) {
			ff.LinkDown = append(ff.LinkDown, port)
		}
	}
}

// statusFault reads one entry of faults.status (n its mapping).
func (p *parser) statusFault(n *yaml.Node, f *fileStatusFault, w string) (fw.StatusFault, bool) {
	sf := fw.StatusFault{}
	if f.Register.Kind == 0 || f.Status.Kind == 0 {
		p.fail(n, "%s needs register: and status:", w)
		return sf, false
	}
	var okR, okS bool
	sf.Register, okR = p.register(&f.Register, w+".register")
	sf.Status, okS = p.status(&f.Status, w+".status")
	if s, ok := p.scalar(&f.Method, w+".method"); ok {
		switch strings.ToLower(s) {
		case "get":
			sf.Method = emu.MethodGet
		case "set":
			sf.Method = emu.MethodSet
		case "any":
		default:
			p.fail(&f.Method, "%s.method must be get, set or any, not %q", w, s)
		}
	}
	return sf, okR && okS
}

// functions lays out the device's PCI functions: given as a count or a
// list, at the device's BDF and the functions after it.
func (p *parser) functions(i int, d *DeviceSpec, bdf string, bdfNode, n *yaml.Node, where string) {
	base := BDF{Bus: uint8(0x03 + i)}
	if bdf != "" {
		b, err := ParseBDF(bdf)
		if err != nil {
			p.fail(bdfNode, "%s.bdf: %v", where, err)
		} else {
			base = b
		}
	}
	count := 1
	var entries []*yaml.Node
	var files []fileFunction
	switch n.Kind {
	case 0:
	case yaml.ScalarNode:
		p.intv(n, where+".functions", 1, MaxFunctions, &count)
	case yaml.SequenceNode:
		before := len(p.errs)
		p.shapeList(n, reflect.TypeOf(fileFunction{}), where+".functions", MaxFunctions)
		if len(p.errs) > before {
			return
		}
		if len(n.Content) == 0 {
			p.fail(n, "%s.functions is empty; give a count (functions: 2) or at least one entry", where)
			return
		}
		entries = n.Content
		files = make([]fileFunction, len(entries))
		for j, e := range entries {
			if err := e.Decode(&files[j]); err != nil { // shapeList checked it: a bug
				p.fail(e, "%s.functions[%d]: %v", where, j, err)
				return
			}
		}
		count = len(entries)
	default:
		p.fail(n, "%s.functions must be a count (functions: 2) or a list of {bdf, port, netdev, rdma}", where)
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
			p.function(&files[j], fmt.Sprintf("%s.functions[%d]", where, j), d, &f)
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

// function reads one entry of a functions list over its defaults in fn.
func (p *parser) function(f *fileFunction, w string, d *DeviceSpec, fn *FunctionSpec) {
	var s string
	if p.str(&f.BDF, w+".bdf", 64, &s) {
		if nb, err := ParseBDF(s); err != nil {
			p.fail(&f.BDF, "%s.bdf: %v", w, err)
		} else {
			fn.BDF = nb.String()
		}
	}
	p.intv(&f.Port, w+".port", 1, len(d.Spec.Ports), &fn.Port)
	p.ifname(&f.Netdev, w+".netdev", &fn.Netdev)
	p.ifname(&f.RDMA, w+".rdma", &fn.RDMA)
	var m string
	if p.str(&f.MAC, w+".mac", 64, &m) {
		if mv, err := parseHexID(m, 6); err != nil {
			p.fail(&f.MAC, "%s.mac: %v; write it as b8:3f:d2:a1:b2:c0", w, err)
		} else {
			fn.MAC = mv
		}
	}
}

func splitJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func (p *parser) hasKey(n *yaml.Node, key string) bool {
	return child(n, key) != nil
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

// ifname checks a Linux interface-style name: 1..15 characters, no slash
// or space (it becomes a sysfs directory name).
func (p *parser) ifname(n *yaml.Node, what string, dst *string) {
	var s string
	if !p.str(n, what, 15, &s) {
		return
	}
	if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/ :") {
		p.fail(n, "%s %q must be 1..15 characters without '/', ':' or spaces", what, s)
		return
	}
	*dst = s
}

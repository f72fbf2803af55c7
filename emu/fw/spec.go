package fw

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Spec is everything the firmware model is built from: what a profile and a
// scenario say about one adapter. The zero value of every optional field has
// a sensible meaning; Validate says what is wrong with the rest.
type Spec struct {
	// Name names the adapter in messages (the profile name).
	Name string

	// PCIDeviceID is MGIR hw_info.device_id (0x1021 for ConnectX-7);
	// HWDevID is hw_info.hw_dev_id, the hardware ID also in CR space
	// (0x218); HWRevision is hw_info.device_hw_revision.
	PCIDeviceID, HWDevID, HWRevision uint16

	// FW is the running firmware version; PendingFW, when set, is a newer
	// image already written to flash and waiting for a reset (MCQI reports it
	// for the pending component).
	FW        Version
	PendingFW *Version
	// FWBuildTime is the firmware build time (MGIR and MCQI report it).
	FWBuildTime time.Time
	// FWBuildID is MGIR fw_info.build_id.
	FWBuildID uint32
	// INIFileVersion is MGIR fw_info.ini_file_version.
	INIFileVersion uint32
	// Secure sets the signed/secured firmware bits of MGIR.
	Secure bool

	// PSID is the board's parameter-set ID, up to 16 ASCII characters.
	PSID string
	// PartNumber and Description are what MQIS reports as the model name
	// and description; ImageVSD and DeviceVSD its vendor-specific strings.
	PartNumber, Description, ImageVSD, DeviceVSD string
	// SerialNumber is kept for the sysfs/VPD views built on the same spec.
	SerialNumber string

	// BaseMAC is the manufacturing base MAC (48 bits); BaseGUID the base
	// node GUID (kept for the NV and sysfs views).
	BaseMAC  uint64
	BaseGUID uint64

	// Boot is the power-on time, the origin of MGIR uptime and of every
	// clock-driven value. Zero: the clock's time when the firmware is built.
	Boot time.Time
	// Seed makes the model's noise (temperatures, rate jitter) reproducible.
	Seed uint64

	// Ports are the network ports, local_port 1 first.
	Ports []PortSpec
	// Modules are the cages (module 0 first); ports refer to them by index.
	Modules []ModuleSpec
	// ASIC is the thermal behaviour of sensor 0.
	ASIC Thermal
	// RoCE lists ROCE_ACCL features (the field names without
	// "_field_select", e.g. "roce_adp_retrans") the device supports, and
	// those enabled at power-on.
	RoCE RoCESpec
	// Unsupported lists registers this firmware does not implement: they
	// answer status 4 and MCAM does not advertise them.
	Unsupported []string
	// Flash is the flash's timing and limits (flash.go).
	Flash FlashSpec
}

// NodeGUID is the node GUID of the PF that owns adapter port port
// (1-based): the base GUID for the first, then one more per port, as the
// PFs' MACs follow the base MAC. The PF's one port is integral to its
// node, so its port GUID is the same number (the InfiniBand NodeInfo
// rule, and what mlx5 devices report); the base GUID itself is the
// system image GUID every PF shares. 0 when the spec has no base GUID.
func (s Spec) NodeGUID(port int) uint64 {
	if s.BaseGUID == 0 || port < 1 {
		return 0
	}
	return s.BaseGUID + uint64(port-1)
}

// Version is a firmware version major.minor.sub_minor.
type Version struct{ Major, Minor, SubMinor uint16 }

func (v Version) String() string { return fmt.Sprintf("%d.%d.%04d", v.Major, v.Minor, v.SubMinor) }

// ParseVersion reads "28.39.1010".
func ParseVersion(s string) (Version, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) != 3 {
		return Version{}, fmt.Errorf("firmware version %q is not major.minor.sub_minor (for example 28.39.1010)", s)
	}
	var n [3]uint16
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return Version{}, fmt.Errorf("firmware version %q: part %q is not a number 0..65535", s, p)
		}
		n[i] = uint16(v)
	}
	return Version{n[0], n[1], n[2]}, nil
}

// PortSpec is one network port.
type PortSpec struct {
	// Module is the cage the port's lanes go to (index into Spec.Modules).
	Module int
	// Lanes is the port width (PMLP width): 1, 2, 4 or 8 (MaxLanes).
	Lanes int
	// Protocols are the Ethernet protocols the port supports (names from
	// EthProtocols); the PTYS capability.
	Protocols []string
	// AdminDown starts the port administratively down.
	AdminDown bool
	// Traffic sets how fast the counters grow while the link is up.
	Traffic Traffic
	// Link is the link's quality and its partner (link.go).
	Link LinkSpec
	// LinkType is the protocol the port runs: LinkEthernet ("" too) or
	// LinkInfiniBand, as the NV configuration's LINK_TYPE_P<n> sets it on
	// a VPI adapter at power-on. Protocols stay the Ethernet protocols
	// the port could run; IB describes its InfiniBand side (ib.go).
	LinkType string
	IB       IBSpec
}

// Link types of PortSpec.LinkType (the kernel's link_layer words).
const (
	LinkEthernet   = "Ethernet"
	LinkInfiniBand = "InfiniBand"
)

// Traffic is a port's steady load, in events per second while the link is
// up. Rates are applied with a small per-port jitter drawn from the seed.
type Traffic struct {
	TxFramesPerSec, RxFramesPerSec float64
	// FrameBytes is the mean frame size (octet counters = frames × size).
	FrameBytes float64
	// MulticastShare and BroadcastShare are the parts of the frames sent to
	// multicast and broadcast addresses (0..1).
	MulticastShare, BroadcastShare float64
	// Error and correction rates.
	RxErrorsPerSec, RxDiscardsPerSec    float64
	SymbolErrorsPerSec                  float64
	FECCorrectedPerSec, FECUncorrPerSec float64
	// PriorityShare splits the traffic over the eight priorities (PPCNT
	// per-priority group); all zero puts everything on priority 0.
	PriorityShare [8]float64
}

// ModuleSpec is one cage and what is plugged into it.
type ModuleSpec struct {
	// Absent leaves the cage empty at power-on.
	Absent bool
	// Media is "optical" (default) or "copper" (PTYS connector_type).
	Media string
	// Protocols the module supports; empty means every protocol of the
	// ports using it.
	Protocols []string
	// Thermal is the module's temperature behaviour (sensor 64+index).
	Thermal Thermal
}

// Thermal is a sensor's behaviour: it warms from IdleC by LoadC over Warmup
// after power-on, then wanders smoothly by up to ±WanderC, changing course
// every Period. Thresholds are the MTMP high/low alarm thresholds.
type Thermal struct {
	IdleC, LoadC, WanderC float64
	Warmup, Period        time.Duration
	HighC, LowC           float64
}

// RoCESpec lists ROCE_ACCL features by base name.
type RoCESpec struct {
	Supported, Enabled []string
}

// clone copies every slice and pointer, so the firmware never shares state
// with its caller.
func (s Spec) clone() Spec {
	if s.PendingFW != nil {
		v := *s.PendingFW
		s.PendingFW = &v
	}
	s.Ports = slices.Clone(s.Ports)
	for i := range s.Ports {
		s.Ports[i].Protocols = slices.Clone(s.Ports[i].Protocols)
		s.Ports[i].Link = s.Ports[i].Link.clone()
		s.Ports[i].IB = s.Ports[i].IB.clone()
	}
	s.Modules = slices.Clone(s.Modules)
	for i := range s.Modules {
		s.Modules[i].Protocols = slices.Clone(s.Modules[i].Protocols)
	}
	s.RoCE.Supported = slices.Clone(s.RoCE.Supported)
	s.RoCE.Enabled = slices.Clone(s.RoCE.Enabled)
	s.Unsupported = slices.Clone(s.Unsupported)
	return s
}

// Limits keep a spec (often from a file) from asking for absurd sizes.
const (
	MaxPorts   = 16
	MaxModules = 16
)

// Validate checks the spec and says what to change.
func (s *Spec) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(s.PSID) > 16 || !printable(s.PSID) {
		bad("psid %q must be at most 16 printable ASCII characters", s.PSID)
	}
	for _, f := range []struct{ name, v string }{{"part number", s.PartNumber}, {"description", s.Description},
		{"image VSD", s.ImageVSD}, {"device VSD", s.DeviceVSD}, {"serial number", s.SerialNumber}} {
		if !printable(f.v) || len(f.v) > 1024 {
			bad("%s %q must be printable ASCII of at most 1024 characters", f.name, f.v)
		}
	}
	if s.BaseMAC>>48 != 0 {
		bad("base MAC 0x%x has more than 48 bits", s.BaseMAC)
	}
	if len(s.Ports) == 0 || len(s.Ports) > MaxPorts {
		bad("an adapter needs 1..%d ports, the spec has %d", MaxPorts, len(s.Ports))
	}
	if len(s.Modules) > MaxModules {
		bad("at most %d modules, the spec has %d", MaxModules, len(s.Modules))
	}
	for i, p := range s.Ports {
		where := fmt.Sprintf("port %d", i+1)
		if p.Module < 0 || p.Module >= len(s.Modules) {
			bad("%s: module %d does not exist (modules 0..%d)", where, p.Module, len(s.Modules)-1)
		}
		switch p.Lanes {
		case 1, 2, 4, MaxLanes:
		default:
			bad("%s: %d lanes; use 1, 2, 4 or 8", where, p.Lanes)
		}
		if len(p.Protocols) == 0 {
			bad("%s: no Ethernet protocols; list at least one of the names EthProtocols gives", where)
		}
		for _, n := range p.Protocols {
			proto, err := LookupEthProtocol(n)
			if err != nil {
				bad("%s: %v", where, err)
			} else if proto.Lanes > p.Lanes {
				bad("%s: %s needs %d lanes, the port has %d", where, proto.Name, proto.Lanes, p.Lanes)
			}
		}
		if err := p.Traffic.validate(); err != nil {
			bad("%s: %v", where, err)
		}
		if err := p.Link.Validate(p.Lanes); err != nil {
			bad("%s: link: %v", where, err)
		}
		switch p.LinkType {
		case "", LinkEthernet:
		case LinkInfiniBand:
			if err := p.IB.Validate(p.Lanes); err != nil {
				bad("%s: InfiniBand: %v", where, err)
			}
		default:
			bad("%s: link type %q; use %s or %s", where, p.LinkType, LinkEthernet, LinkInfiniBand)
		}
	}
	for i, m := range s.Modules {
		switch m.Media {
		case "", "optical", "copper":
		default:
			bad("module %d: media %q; use optical or copper", i, m.Media)
		}
		for _, n := range m.Protocols {
			if _, err := LookupEthProtocol(n); err != nil {
				bad("module %d: %v", i, err)
			}
		}
		if err := m.Thermal.validate(); err != nil {
			bad("module %d: %v", i, err)
		}
	}
	if err := s.ASIC.validate(); err != nil {
		bad("ASIC sensor: %v", err)
	}
	if err := s.Flash.validate(); err != nil {
		bad("%v", err)
	}
	return errors.Join(errs...)
}

func (t Traffic) validate() error {
	for _, r := range []float64{t.TxFramesPerSec, t.RxFramesPerSec, t.FrameBytes, t.RxErrorsPerSec, t.RxDiscardsPerSec,
		t.SymbolErrorsPerSec, t.FECCorrectedPerSec, t.FECUncorrPerSec} {
		if !(r >= 0 && r <= 1e12) { // also rejects NaN
			return fmt.Errorf("traffic rate %v is out of range 0..1e12 per second", r)
		}
	}
	if t.FrameBytes > 16384 {
		return fmt.Errorf("frame size %v is larger than 16384 bytes", t.FrameBytes)
	}
	if !(t.MulticastShare >= 0 && t.BroadcastShare >= 0 && t.MulticastShare+t.BroadcastShare <= 1) {
		return fmt.Errorf("multicast (%v) and broadcast (%v) shares must be 0..1 and add up to at most 1", t.MulticastShare, t.BroadcastShare)
	}
	for i, s := range t.PriorityShare {
		if !(s >= 0 && s <= 1) {
			return fmt.Errorf("priority %d share %v must be 0..1", i, s)
		}
	}
	return nil
}

func (t Thermal) validate() error {
	for _, c := range []float64{t.IdleC, t.LoadC, t.WanderC, t.HighC, t.LowC} {
		if !(c >= -60 && c <= 200) {
			return fmt.Errorf("temperature %v °C is out of range -60..200", c)
		}
	}
	if t.Warmup < 0 || t.Period < 0 || t.Warmup > 24*time.Hour || t.Period > 24*time.Hour {
		return fmt.Errorf("warm-up (%v) and period (%v) must be 0..24h", t.Warmup, t.Period)
	}
	return nil
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

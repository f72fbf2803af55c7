package adapter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/pcie"
	"github.com/cxray/cxray/prm/regpath"
)

// PCIeHost is the host's side of a function's PCI Express link: its
// config space, read only, and sysfs's view of the function and of its
// upstream bridge (the slot's port). Open gives functions of this machine
// their sysfs (sysPCIe); the emulator injects its own (Config.PCIe); an
// adapter built without one has no host view.
type PCIeHost interface {
	// Config reads what pcie.DecodeConfig needs of the function's config
	// space (pcie.ReadConfig).
	Config(ctx context.Context) ([]byte, error)
	// Sysfs reads the link attributes and AER counters of the function
	// and its bridge (bridge nil when sysfs shows none).
	Sysfs(ctx context.Context) (fn, bridge *pcie.HostView, err error)
}

// sysPCIe is a function of this machine: its sysfs config file opened
// read-only (the whole space as root, the 64-byte header otherwise) and
// its sysfs attributes. The kernel backend reads no config space (noConfig).
type sysPCIe struct {
	root, bdf string
	noConfig  bool
}

func (s sysPCIe) Config(ctx context.Context) ([]byte, error) {
	if s.noConfig {
		return nil, &UnsupportedError{What: "config space", Backend: dev.BackendKernel,
			Why: fmt.Sprintf("it reads sysfs and netlink only; direct access (-d %s as root) reads the PCI Express and AER capabilities", s.bdf)}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(s.root, "bus/pci/devices", s.bdf, "config"))
	if err != nil {
		return nil, fmt.Errorf("reading the config space of %s: %w", s.bdf, err)
	}
	defer f.Close()
	return pcie.ReadConfig(f)
}

func (s sysPCIe) Sysfs(ctx context.Context) (*pcie.HostView, *pcie.HostView, error) {
	return kernel.ReadPCIe(ctx, s.root, s.bdf)
}

// PCIe is a function's PCI Express link from every source the backend
// has. A source that could not be read has its reason in its Err field.
type PCIe struct {
	// Config is the function's config space decoded: the PCI Express
	// capability's link and device registers, and AER.
	Config    *pcie.ConfigView `json:"config,omitempty"`
	ConfigErr error            `json:"-"`
	// Host is sysfs's view of the function, Bridge of its slot's port.
	Host    *pcie.HostView `json:"sysfs,omitempty"`
	Bridge  *pcie.HostView `json:"bridge,omitempty"`
	HostErr error          `json:"-"`
	// Firmware is MPEIN, the firmware's own view of the link.
	Firmware    *PCIeFirmware `json:"mpein,omitempty"`
	FirmwareErr error         `json:"-"`
	// Counters are MPCNT's PCIe performance counters (group 0) by their
	// PRM names (rx_errors, crc_error_tlp, ...).
	Counters    map[string]uint64 `json:"mpcnt,omitempty"`
	CountersErr error             `json:"-"`
}

// PCIeFirmware is what MPEIN says of the link.
type PCIeFirmware struct {
	// Enabled is the fastest speed and the width the port enables (what
	// it can train), Active what it trained.
	Enabled pcie.Link `json:"enabled"`
	Active  pcie.Link `json:"active"`
	// PeerMax is the link partner's (the slot's port's) fastest speed;
	// unknown on databases before Rev 0.56.
	PeerMax pcie.Speed `json:"peer_max_speed,omitempty"`
	// DeviceStatus mirrors the PCI Express Device Status register.
	DeviceStatus uint16 `json:"device_status"`
	// PowerStatus: "sufficient", "insufficient" or "" when unknown.
	PowerStatus string `json:"power_status,omitempty"`
	// MaxPayload and MaxReadRequest in bytes (0 unknown).
	MaxPayload     int `json:"max_payload_bytes,omitempty"`
	MaxReadRequest int `json:"max_read_request_bytes,omitempty"`
}

// MPCNTCounters are the MPCNT group 0 fields read (PRM "PCIe Performance
// Counters"): rx_errors and tx_errors count transitions to link Recovery,
// the CRC counters bad DLLPs and TLPs, the outbound_stalled ones the
// percentage of the last second writes or reads waited for credits.
var MPCNTCounters = []string{"rx_errors", "tx_errors", "crc_error_dllp", "crc_error_tlp",
	"outbound_stalled_reads", "outbound_stalled_writes", "outbound_stalled_reads_events", "outbound_stalled_writes_events"}

// PCIe reads the function's PCI Express link from config space, sysfs and
// the MPEIN and MPCNT registers, each where the backend reaches it. Only a
// dead context fails the call; every source that failed says why.
func (a *Adapter) PCIe(ctx context.Context) (*PCIe, error) {
	p := &PCIe{}
	h := a.pcieHost()
	if h == nil {
		why := &UnsupportedError{What: "the host's view of the PCIe link", Backend: a.c.Backend, Why: "no sysfs view of this function"}
		p.ConfigErr, p.HostErr = why, why
	} else {
		if img, err := h.Config(ctx); err != nil {
			p.ConfigErr = err
		} else {
			p.Config = pcie.DecodeConfig(img)
		}
		p.Host, p.Bridge, p.HostErr = h.Sysfs(ctx)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !a.HasRegisters() {
		why := &UnsupportedError{What: "MPEIN and MPCNT", Backend: a.c.Backend, Why: "they are registers; use direct access for them"}
		p.FirmwareErr, p.CountersErr = why, why
		return p, nil
	}
	p.Firmware, p.FirmwareErr = a.mpein(ctx)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.Counters, p.CountersErr = a.mpcnt(ctx)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

func (a *Adapter) pcieHost() PCIeHost { return a.c.PCIe }

func (a *Adapter) mpein(ctx context.Context) (*PCIeFirmware, error) {
	r, err := a.get(ctx, "MPEIN", nil)
	if err != nil {
		return nil, err
	}
	d := r.Decoded
	num := func(path string) uint64 { v, _ := fieldOf(d, "MPEIN", path); return v }
	f := &PCIeFirmware{
		Enabled:      pcie.Link{Speed: pcie.SpeedOfMPEIN(num(regpath.MPEINLinkSpeedEnabled)), Width: pcie.WidthOfMPEIN(num(regpath.MPEINLinkWidthEnabled))},
		Active:       pcie.Link{Speed: pcie.SpeedOfMPEIN(num(regpath.MPEINLinkSpeedActive)), Width: pcie.WidthOfMPEIN(num(regpath.MPEINLinkWidthActive))},
		DeviceStatus: uint16(num(regpath.MPEINDeviceStatus)),
	}
	if v, ok := fieldOf(d, "MPEIN", regpath.MPEINLinkPeerMaxSpeed); ok {
		f.PeerMax = pcie.SpeedOfMPEIN(v)
	}
	// pwr_status: 1 sufficient, 2 insufficient power reported (0 not
	// read); payload sizes 128 << code (the MPEIN field descriptions).
	switch num(regpath.MPEINPwrStatus) {
	case 1:
		f.PowerStatus = "sufficient"
	case 2:
		f.PowerStatus = "insufficient"
	}
	if v := num(regpath.MPEINMaxPayloadSize); v <= 5 {
		f.MaxPayload = 128 << v
	}
	if v := num(regpath.MPEINMaxReadRequestSize); v <= 5 {
		f.MaxReadRequest = 128 << v
	}
	return f, nil
}

func (a *Adapter) mpcnt(ctx context.Context) (map[string]uint64, error) {
	r, err := a.get(ctx, "MPCNT", Index{}.Group(0))
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, n := range MPCNTCounters {
		if v, ok := fieldOf(r.Decoded, "MPCNT", "counter_set.pcie_perf_counters_ext."+n); ok {
			out[n] = v
		}
	}
	if len(out) == 0 {
		return nil, errors.New("MPCNT answered without its performance counters")
	}
	return out, nil
}

// SysfsPCIe is the host view of a function of a sysfs tree at root (what
// Open gives functions of this machine), for adapters built from parts.
func SysfsPCIe(root, bdf string) PCIeHost { return sysPCIe{root: root, bdf: bdf} }

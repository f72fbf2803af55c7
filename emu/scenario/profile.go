package scenario

import (
	"fmt"
	"github.com/cxray/cxray/pcie"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
)

// DefaultProfile is what the device name "emu" builds.
const DefaultProfile = "cx7-2p400g"

// Profile is a kind of adapter: its PCI identity and its firmware model.
type Profile struct {
	Name    string
	Summary string
	// Identity is the PCI/ICMD identity; its firmware fields are overwritten
	// from Spec when a device is built, so the two always agree.
	Identity emu.Identity
	Spec     fw.Spec
	// ModuleKinds are the emu/optics catalog modules in the cages at
	// power-on (one per Spec.Modules entry).
	ModuleKinds []string
	// PCIe is the card's PCI Express link: what it can train.
	PCIe pcie.Link
}

// Protocol lists per port type (names from fw.EthProtocols).
var (
	qsfp112Protocols = []string{"400GAUI-4", "200GAUI-4", "200GAUI-2", "100GAUI-2", "100GAUI-1", "CAUI-4",
		"50GAUI-1", "50GAUI-2", "40GBASE-R4", "25GAUI-1", "10GBASE-R", "1000BASE-X"}
	qsfp56Protocols = []string{"100GAUI-2", "CAUI-4", "50GAUI-1", "50GAUI-2", "40GBASE-R4", "25GAUI-1",
		"10GBASE-R", "1000BASE-X"}
)

func profiles() map[string]Profile {
	cx7 := emu.ConnectX7()
	cx6 := emu.ConnectX7()
	cx6.DeviceID, cx6.SubsystemID, cx6.HardwareID = 0x101d, 0x0016, 0x212

	traffic := func(fecPerSec float64) fw.Traffic {
		return fw.Traffic{
			TxFramesPerSec: 2e6, RxFramesPerSec: 1.8e6, FrameBytes: 1024,
			MulticastShare: 0.002, BroadcastShare: 0.0002,
			FECCorrectedPerSec: fecPerSec,
			// RoCE on priority 3, everything else on 0: the usual lossless setup.
			PriorityShare: [8]float64{0.7, 0, 0, 0.3},
		}
	}
	twoPorts := func(lanes int, protos []string, t fw.Traffic) []fw.PortSpec {
		return []fw.PortSpec{
			{Module: 0, Lanes: lanes, Protocols: protos, Traffic: t},
			{Module: 1, Lanes: lanes, Protocols: protos, Traffic: t},
		}
	}
	// MCDD (0x905C) would tell mstflint to move firmware images by DMA,
	// which the emulator does not model; like firmware without it, the
	// profiles leave it out so flint stays on the MCC/MCDA path.
	unsupported := []string{"MCDD"}
	roceAll := []string{"adaptive_routing_forced_en", "min_ack_timeout_limit_disabled", "roce_adp_retrans",
		"roce_slow_restart", "roce_slow_restart_idle", "roce_tx_window", "selective_repeat_forced_en"}

	// A single-port ConnectX-7 for an InfiniBand fabric, as GPU servers
	// carry one per GPU: VPI, InfiniBand by default (its NV defaults say
	// LINK_TYPE=IB, emu/nvstore), an OSFP cage with a 400G SR4 module (4
	// lanes of 100G: NDR).
	ndrTraffic := traffic(40)
	ndrTraffic.FrameBytes, ndrTraffic.PriorityShare = 4096, [8]float64{1}
	ndr := fw.Spec{
		PCIDeviceID: 0x1021, HWDevID: 0x218,
		FW:          fw.Version{Major: 28, Minor: 39, SubMinor: 1010},
		FWBuildTime: time.Date(2023, 10, 5, 12, 34, 56, 0, time.UTC), FWBuildID: 0x5f3a_0c21,
		Secure: true, PSID: "MT_0000000838",
		PartNumber:  "EMU-CX7-1PNDR",
		Description: "Emulated NVIDIA ConnectX-7 adapter card; NDR InfiniBand (default) and 400GbE; single-port OSFP; PCIe 5.0 x16 (cxray)",
		Ports:       []fw.PortSpec{{Module: 0, Lanes: 4, Protocols: qsfp112Protocols, Traffic: ndrTraffic}},
		Modules:     []fw.ModuleSpec{{Media: "optical"}},
		RoCE:        fw.RoCESpec{Supported: roceAll, Enabled: []string{"roce_adp_retrans", "roce_tx_window", "roce_slow_restart"}},
		Unsupported: unsupported,
	}

	return map[string]Profile{
		"cx7-1p-ndr": {
			Name:        "cx7-1p-ndr",
			Summary:     "ConnectX-7 (PCI 0x1021, HW 0x218), 1 port InfiniBand NDR 400Gb/s OSFP (VPI: LINK_TYPE_P1=IB)",
			Identity:    cx7,
			Spec:        ndr,
			ModuleKinds: []string{"osfp-400g-sr4"},
		},
		"cx7-2p400g": {
			Name:     "cx7-2p400g",
			Summary:  "ConnectX-7 (PCI 0x1021, HW 0x218), 2 ports 400GbE QSFP112 (4 x 100G PAM4 lanes)",
			Identity: cx7,
			Spec: fw.Spec{
				PCIDeviceID: 0x1021, HWDevID: 0x218,
				FW:          fw.Version{Major: 28, Minor: 39, SubMinor: 1010},
				FWBuildTime: time.Date(2023, 10, 5, 12, 34, 56, 0, time.UTC), FWBuildID: 0x5f3a_0c21,
				Secure: true, PSID: "MT_0000000834",
				PartNumber:  "EMU-CX7-2P400G",
				Description: "Emulated NVIDIA ConnectX-7 adapter card; 400GbE; dual-port QSFP112; PCIe 5.0 x16 (cxray)",
				Ports:       twoPorts(4, qsfp112Protocols, traffic(40)),
				Modules:     []fw.ModuleSpec{{Media: "optical"}, {Media: "optical"}},
				RoCE:        fw.RoCESpec{Supported: roceAll, Enabled: []string{"roce_adp_retrans", "roce_tx_window", "roce_slow_restart"}},
				Unsupported: unsupported,
			},
			ModuleKinds: []string{"qsfp112-400g-dr4", "qsfp112-400g-sr4"},
			PCIe:        pcie.Link{Speed: pcie.Gen5, Width: 16},
		},
		"cx6dx-2p100g": {
			Name:     "cx6dx-2p100g",
			Summary:  "ConnectX-6 Dx (PCI 0x101d, HW 0x212), 2 ports 100GbE QSFP56 (4 x 25G NRZ or 2 x 50G PAM4 lanes)",
			Identity: cx6,
			Spec: fw.Spec{
				PCIDeviceID: 0x101d, HWDevID: 0x212,
				FW:          fw.Version{Major: 22, Minor: 39, SubMinor: 1002},
				FWBuildTime: time.Date(2023, 11, 20, 9, 15, 0, 0, time.UTC), FWBuildID: 0x4e21_7a03,
				Secure: true, PSID: "MT_0000000359",
				PartNumber:  "EMU-CX6DX-2P100G",
				Description: "Emulated NVIDIA ConnectX-6 Dx adapter card; 100GbE; dual-port QSFP56; PCIe 4.0 x16 (cxray)",
				Ports:       twoPorts(4, qsfp56Protocols, traffic(4)),
				Modules:     []fw.ModuleSpec{{Media: "copper"}, {Media: "copper"}},
				ASIC:        fw.Thermal{IdleC: 45, LoadC: 10, WanderC: 2.5},
				RoCE: fw.RoCESpec{
					Supported: []string{"min_ack_timeout_limit_disabled", "roce_adp_retrans", "roce_slow_restart", "roce_slow_restart_idle", "roce_tx_window"},
					Enabled:   []string{"roce_adp_retrans", "roce_slow_restart"},
				},
				Unsupported: unsupported,
			},
			ModuleKinds: []string{"qsfp28-100g-dac", "qsfp28-100g-dac"},
			PCIe:        pcie.Link{Speed: pcie.Gen4, Width: 16},
		},
	}
}

// Profiles lists the profile names, sorted.
func Profiles() []string {
	var names []string
	for n := range profiles() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LookupProfile returns a copy of a named profile.
func LookupProfile(name string) (Profile, error) {
	p, ok := profiles()[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return Profile{}, fmt.Errorf("unknown emulator profile %q; profiles: %s", name, strings.Join(Profiles(), ", "))
	}
	p.Spec.Name = p.Name
	p.Spec.Ports = slices.Clone(p.Spec.Ports)
	p.Spec.Modules = slices.Clone(p.Spec.Modules)
	p.Spec.Unsupported = slices.Clone(p.Spec.Unsupported)
	p.ModuleKinds = slices.Clone(p.ModuleKinds)
	return p, nil
}

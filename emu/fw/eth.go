package fw

import (
	"fmt"
	"strings"
)

// EthProtocol is one Ethernet protocol of PTYS: its bit in the extended
// masks (ext_eth_proto_*), the bits of the legacy masks (eth_proto_*) that
// mean the same speed and lane count, its speed and its lanes.
//
// The bit numbers are the PRM's (the same numbers name the link modes in
// Linux's include/linux/mlx5/port.h); the names are ours, after the IEEE
// electrical interface each bit stands for.
type EthProtocol struct {
	Name       string
	ExtBit     int
	LegacyBits []int
	// LegacyCR and LegacySR are the legacy bits an active link reports on
	// a direct-attach copper cable and on optics (meaningful only when
	// LegacyBits is not empty).
	LegacyCR, LegacySR int
	Gbps               int
	Lanes              int
	// FEC is the PDDR fec_mode_active the link runs with at this speed:
	// 0 none, 2 RS(528,514) for 25G NRZ lanes, 7 RS(544,514) for PAM4 lanes.
	FEC uint16
}

// FEC modes (PDDR fec_mode_active).
const (
	fecNone    = 0
	fecRS528   = 2
	fecRS544   = 7
	maxEthBits = 32
)

var ethProtocols = []EthProtocol{
	{Name: "1000BASE-X", ExtBit: 1, LegacyBits: []int{0, 1}, LegacyCR: 0, LegacySR: 0, Gbps: 1, Lanes: 1, FEC: fecNone},
	{Name: "10GBASE-R", ExtBit: 4, LegacyBits: []int{4, 12, 13, 14}, LegacyCR: 12, LegacySR: 13, Gbps: 10, Lanes: 1, FEC: fecNone},
	{Name: "40GBASE-R4", ExtBit: 5, LegacyBits: []int{6, 7, 15, 16}, LegacyCR: 6, LegacySR: 15, Gbps: 40, Lanes: 4, FEC: fecNone},
	{Name: "25GAUI-1", ExtBit: 6, LegacyBits: []int{27, 28, 29}, LegacyCR: 27, LegacySR: 29, Gbps: 25, Lanes: 1, FEC: fecRS528},
	{Name: "50GAUI-2", ExtBit: 7, LegacyBits: []int{18, 30, 31}, LegacyCR: 30, LegacySR: 18, Gbps: 50, Lanes: 2, FEC: fecRS528},
	{Name: "50GAUI-1", ExtBit: 8, Gbps: 50, Lanes: 1, FEC: fecRS544},
	{Name: "CAUI-4", ExtBit: 9, LegacyBits: []int{20, 21, 22, 23}, LegacyCR: 20, LegacySR: 21, Gbps: 100, Lanes: 4, FEC: fecRS528},
	{Name: "100GAUI-2", ExtBit: 10, Gbps: 100, Lanes: 2, FEC: fecRS544},
	{Name: "100GAUI-1", ExtBit: 11, Gbps: 100, Lanes: 1, FEC: fecRS544},
	{Name: "200GAUI-4", ExtBit: 12, Gbps: 200, Lanes: 4, FEC: fecRS544},
	{Name: "200GAUI-2", ExtBit: 13, Gbps: 200, Lanes: 2, FEC: fecRS544},
	{Name: "400GAUI-8", ExtBit: 15, Gbps: 400, Lanes: 8, FEC: fecRS544},
	{Name: "400GAUI-4", ExtBit: 16, Gbps: 400, Lanes: 4, FEC: fecRS544},
}

// LookupEthProtocol finds a protocol by name (case and punctuation ignored:
// "400gaui4" works).
func LookupEthProtocol(name string) (EthProtocol, error) {
	key := normName(name)
	for _, p := range ethProtocols {
		if normName(p.Name) == key {
			return p, nil
		}
	}
	names := make([]string, len(ethProtocols))
	for i, p := range ethProtocols {
		names[i] = p.Name
	}
	return EthProtocol{}, fmt.Errorf("unknown Ethernet protocol %q; known: %s", name, strings.Join(names, ", "))
}

// extMask and legacyMask turn protocol indexes into PTYS masks.
func extMask(ps []int) uint32 {
	var m uint32
	for _, i := range ps {
		m |= 1 << ethProtocols[i].ExtBit
	}
	return m
}

func legacyMask(ps []int) uint32 {
	var m uint32
	for _, i := range ps {
		for _, b := range ethProtocols[i].LegacyBits {
			m |= 1 << b
		}
	}
	return m
}

// protocolsOfExt lists the protocols whose extended bit is in m.
func protocolsOfExt(m uint32) []int {
	var out []int
	for i, p := range ethProtocols {
		if m&(1<<p.ExtBit) != 0 {
			out = append(out, i)
		}
	}
	return out
}

// protocolsOfLegacy lists the protocols any of whose legacy bits is in m.
func protocolsOfLegacy(m uint32) []int {
	var out []int
	for i, p := range ethProtocols {
		for _, b := range p.LegacyBits {
			if m&(1<<b) != 0 {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// bestProtocol picks the protocol a link comes up with from the common mask:
// the fastest, preferring one that uses every lane of the port (the module
// then runs at its native lane rate). lowest picks the slowest instead (PAOS
// up_lowest_rate). Returns -1 when nothing is common.
func bestProtocol(common uint32, width int, lowest bool) int {
	best := -1
	for _, i := range protocolsOfExt(common) {
		p := ethProtocols[i]
		if p.Lanes > width {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := ethProtocols[best]
		switch {
		case lowest && p.Gbps < b.Gbps, !lowest && p.Gbps > b.Gbps:
			best = i
		case p.Gbps == b.Gbps && p.Lanes == width && b.Lanes != width:
			best = i
		}
	}
	return best
}

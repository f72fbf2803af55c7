package scenario

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/nvstore"
)

// InfiniBand ports. A port runs InfiniBand when the adapter's NV
// configuration says so at power-on: LINK_TYPE_P<n> (or LINK_TYPE for every
// port) is IB in the profile's defaults (cx7-1p-ndr) or in the file's nv:
// configured values. Its fabric side is the port's ib: key (fw.IBSpec):
//
//	ports:
//	  - port: 1
//	    ib:
//	      speeds: [NDR, HDR, EDR]     # what the port supports; default every speed its lanes reach
//	      partner_speeds: [HDR]       # what the switch enables: a speed mismatch
//	      width: 2x                   # the link trains to 2 lanes of 4: a degraded width
//	      state: active               # what the subnet manager makes of it: active,
//	                                  #   armed, or init (no subnet manager: no LID)
//	      lid: 0x2a                   # default: the scenario's IB ports numbered from 2
//	      sm_lid: 0x1                 # default 1
//	      link_recoveries_per_hour: 4 # PPCNT link_error_recovery_counter

// ib reads a port's ib: key.
func (p *parser) ib(f *fileIB, where string, s *fw.IBSpec) {
	speeds := func(list []yaml.Node, what string, dst *[]string) {
		var names []string
		for i := range list {
			e := &list[i]
			str, ok := p.scalar(e, fmt.Sprintf("%s[%d]", what, i))
			if !ok {
				continue
			}
			sp, err := fw.LookupIBSpeed(str)
			if err != nil {
				p.fail(e, "%s: %v", what, err)
				continue
			}
			names = append(names, sp.Name)
		}
		*dst = names
	}
	lid := func(v *yaml.Node, what string, dst *uint16) {
		var x uint64
		if !p.uintv(v, what, 0xBFFF, &x) {
			return
		}
		if x == 0 {
			p.fail(v, "%s: LID 0 is no LID; give 1..0xbfff, or leave the key out", what)
		}
		*dst = uint16(x)
	}
	if f.Speeds != nil {
		speeds(f.Speeds, where+".speeds", &s.Speeds)
	}
	if f.PartnerSpeeds != nil {
		speeds(f.PartnerSpeeds, where+".partner_speeds", &s.PartnerSpeeds)
	}
	if str, ok := p.scalar(&f.Width, where+".width"); ok {
		w, err := strconv.Atoi(strings.TrimSuffix(strings.ToLower(str), "x"))
		if err != nil || (w != 1 && w != 2 && w != 4) {
			p.fail(&f.Width, "%s.width must be 1x, 2x or 4x, not %q", where, str)
		} else {
			s.Width = w
		}
	}
	str, ok := p.scalar(&f.State, where+".state")
	switch {
	case !ok:
	case str == fw.IBStateActive, str == fw.IBStateArmed, str == fw.IBStateInit:
		s.State = str
	default:
		p.fail(&f.State, "%s.state must be %s, %s or %s (no subnet manager), not %q", where, fw.IBStateActive, fw.IBStateArmed, fw.IBStateInit, str)
	}
	lid(&f.LID, where+".lid", &s.LID)
	lid(&f.SMLID, where+".sm_lid", &s.SMLID)
	p.float(&f.LinkRecoveriesPerHour, where+".link_recoveries_per_hour", 0, 1e6, &s.LinkRecoveriesPerHour)
}

// linkTypes sets each port's link type from the NV configuration the
// adapter powers on with (the profile's defaults under the file's), and
// refuses ib: keys on ports that run Ethernet.
func (p *parser) linkTypes(d *DeviceSpec, ibKeys map[int]*yaml.Node, where string) {
	nv, _ := nvstore.ProfileDefaults(d.Profile)
	nv = nv.Merge(d.NV)
	for i := range d.Spec.Ports {
		port := &d.Spec.Ports[i]
		param := fmt.Sprintf("LINK_TYPE_P%d", i+1)
		port.LinkType = fw.LinkEthernet
		if LinkTypeIsIB(nvValue(nv, param, "LINK_TYPE")) {
			port.LinkType = fw.LinkInfiniBand
		}
		if n := ibKeys[i]; n != nil && port.LinkType != fw.LinkInfiniBand {
			p.fail(n, "%s.ports: port %d runs Ethernet (%s=ETH), so it has no InfiniBand side; add `nv: {configured: {%s: IB}}` to the device", where, i+1, param, param)
		}
	}
}

// nvValue is a parameter's value in effect at power-on: configured, else
// factory, by its per-port name and then by the name for every port.
func nvValue(d nvstore.Defaults, names ...string) string {
	for _, src := range []map[string]string{d.Configured, d.Factory} {
		for _, n := range names {
			if v, ok := src[n]; ok {
				return v
			}
		}
	}
	return ""
}

// LinkTypeIsIB says whether a LINK_TYPE value (IB, IB(1), 1) selects
// InfiniBand (the mlxconfig database's nv_vpi_link_type: IB 1, ETH 2).
func LinkTypeIsIB(v string) bool {
	v = strings.ToUpper(strings.TrimSpace(v))
	return v == "IB" || v == "IB(1)" || v == "1"
}

// numberLIDs gives every InfiniBand port without a LID the next free one
// from 2 (1 is the subnet manager's), in scenario order, and refuses a LID
// given twice.
func (p *parser) numberLIDs() {
	used := map[uint16]string{}
	for _, d := range p.sc.Devices {
		for i, port := range d.Spec.Ports {
			if port.LinkType == fw.LinkInfiniBand && port.IB.LID != 0 {
				if other, dup := used[port.IB.LID]; dup {
					p.fail(&yaml.Node{Line: d.Line, Column: 1}, "LID 0x%x is given to %s and %s port %d; LIDs are unique in a subnet", port.IB.LID, other, d.Name, i+1)
				}
				used[port.IB.LID] = fmt.Sprintf("%s port %d", d.Name, i+1)
			}
		}
	}
	next := uint16(2)
	for _, d := range p.sc.Devices {
		for i := range d.Spec.Ports {
			port := &d.Spec.Ports[i]
			if port.LinkType != fw.LinkInfiniBand || port.IB.LID != 0 {
				continue
			}
			for used[next] != "" {
				next++
			}
			port.IB.LID = next
			used[next] = d.Name
		}
	}
}

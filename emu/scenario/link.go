package scenario

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cxray/cxray/emu/fw"
)

// link reads a port's link: key (fw.LinkSpec): its quality and partner.
//
//	link:
//	  raw_ber: 1e-8           # pre-FEC bit error ratio of every lane
//	  lane_ber: [0, 0, 3e-5]  # per lane; 0 takes raw_ber (a degraded lane 2)
//	  effective_ber: 0        # bits in blocks FEC could not correct
//	  partner_protocols: [CAUI-4]  # what the link partner enables (speed mismatch)
//	  partner_fec: none       # a FEC the partner forces: none, firecode, rs528, rs544
func (p *parser) link(n *yaml.Node, where string, l *fw.LinkSpec) {
	p.mapping(n, where, map[string]field{
		"raw_ber":       func(v *yaml.Node) { p.float(v, where+".raw_ber", 0, 0.5, &l.RawBER) },
		"effective_ber": func(v *yaml.Node) { p.float(v, where+".effective_ber", 0, 0.5, &l.EffectiveBER) },
		"lane_ber": func(v *yaml.Node) {
			var bers []float64
			p.list(v, where+".lane_ber", 8, func(i int, e *yaml.Node) {
				var b float64
				p.float(e, fmt.Sprintf("%s.lane_ber[%d]", where, i), 0, 0.5, &b)
				bers = append(bers, b)
			})
			l.LaneBER = bers
		},
		"partner_protocols": func(v *yaml.Node) { p.protocols(v, where+".partner_protocols", &l.PartnerProtocols) },
		"partner_fec": func(v *yaml.Node) {
			s, ok := p.scalar(v, where+".partner_fec")
			if !ok {
				return
			}
			if !slices.Contains(fw.PartnerFECNames(), s) {
				p.fail(v, "%s.partner_fec must be one of %s, not %q", where, strings.Join(fw.PartnerFECNames(), ", "), s)
				return
			}
			l.PartnerFEC = s
		},
	})
}

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
func (p *parser) link(n *yaml.Node, f *fileLink, where string, l *fw.LinkSpec) {
	p.float(&f.RawBER, where+".raw_ber", 0, 0.5, &l.RawBER)
	p.float(&f.EffectiveBER, where+".effective_ber", 0, 0.5, &l.EffectiveBER)
	if p.hasKey(n, "lane_ber") {
		var bers []float64
		for i := range f.LaneBER {
			var b float64
			p.float(&f.LaneBER[i], fmt.Sprintf("%s.lane_ber[%d]", where, i), 0, 0.5, &b)
			bers = append(bers, b)
		}
		l.LaneBER = bers
	}
	if p.hasKey(n, "partner_protocols") {
		p.protocols(f.PartnerProtocols, where+".partner_protocols", &l.PartnerProtocols)
	}
	if s, ok := p.scalar(&f.PartnerFEC, where+".partner_fec"); ok {
		if !slices.Contains(fw.PartnerFECNames(), s) {
			p.fail(&f.PartnerFEC, "%s.partner_fec must be one of %s, not %q", where, strings.Join(fw.PartnerFECNames(), ", "), s)
		} else {
			l.PartnerFEC = s
		}
	}
}

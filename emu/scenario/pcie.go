package scenario

import (
	"gopkg.in/yaml.v3"

	"github.com/cxray/cxray/emu/hostlink"
	"github.com/cxray/cxray/pcie"
)

// pcie reads a device's pcie: key (hostlink.Spec): the card's link to the
// host. Speeds are generations (gen4) or rates (16, "16 GT/s"), widths
// lane counts.
//
//	pcie:
//	  speed: gen5          # what the link trained (default: the lower of card and slot)
//	  width: 8
//	  max_speed: gen5      # what the card can train (default: the profile's)
//	  max_width: 16
//	  slot_speed: gen5     # what the slot's port can train (default: as the card)
//	  slot_width: 16
//	  target_speed: gen5   # the card's Link Control 2 target (default: its max)
//	  correctable_per_sec: {BadTLP: 0.5}   # steady AER correctable errors
func (p *parser) pcie(n *yaml.Node, where string, s *hostlink.Spec) {
	speed := func(key string, dst *pcie.Speed) field {
		return func(v *yaml.Node) {
			t, ok := p.scalar(v, where+"."+key)
			if !ok {
				return
			}
			sp, err := pcie.ParseSpeed(t)
			if err == nil && !sp.Known() {
				p.fail(v, "%s.%s: give a generation (gen1..gen6) or a rate in GT/s, not %q", where, key, t)
				return
			}
			if err != nil {
				p.fail(v, "%s.%s: %v", where, key, err)
				return
			}
			*dst = sp
		}
	}
	width := func(key string, dst *int) field {
		return func(v *yaml.Node) {
			var w int
			before := len(p.errs)
			p.intv(v, where+"."+key, 1, 16, &w)
			if len(p.errs) > before {
				return
			}
			if !pcie.ValidWidth(w) {
				p.fail(v, "%s.%s: %d lanes is no PCI Express width; give 1, 2, 4, 8, 12 or 16", where, key, w)
				return
			}
			*dst = w
		}
	}
	p.mapping(n, where, map[string]field{
		"speed":        speed("speed", &s.Trained.Speed),
		"width":        width("width", &s.Trained.Width),
		"max_speed":    speed("max_speed", &s.Card.Speed),
		"max_width":    width("max_width", &s.Card.Width),
		"slot_speed":   speed("slot_speed", &s.Slot.Speed),
		"slot_width":   width("slot_width", &s.Slot.Width),
		"target_speed": speed("target_speed", &s.Target),
		"correctable_per_sec": func(v *yaml.Node) {
			if v.Kind != yaml.MappingNode {
				p.fail(v, "%s.correctable_per_sec must map AER names to rates, such as `BadTLP: 0.5`", where)
				return
			}
			s.CorrectablePerSec = map[string]float64{}
			for j := 0; j+1 < len(v.Content) && j < 64; j += 2 {
				name, ok := p.scalar(v.Content[j], where+".correctable_per_sec")
				var r float64
				before := len(p.errs)
				p.float(v.Content[j+1], where+".correctable_per_sec."+name, 0, 1e6, &r)
				if ok && len(p.errs) == before {
					s.CorrectablePerSec[name] = r
				}
			}
		},
	})
	if _, err := s.Resolve(); err != nil {
		for _, e := range splitJoined(err) {
			p.fail(n, "%s: %v", where, e)
		}
	}
}

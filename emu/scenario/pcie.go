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
func (p *parser) pcie(n *yaml.Node, f *filePCIe, where string, s *hostlink.Spec) {
	speed := func(v *yaml.Node, key string, dst *pcie.Speed) {
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
	width := func(v *yaml.Node, key string, dst *int) {
		var w int
		if !p.intv(v, where+"."+key, 1, 16, &w) {
			return
		}
		if !pcie.ValidWidth(w) {
			p.fail(v, "%s.%s: %d lanes is no PCI Express width; give 1, 2, 4, 8, 12 or 16", where, key, w)
			return
		}
		*dst = w
	}
	speed(&f.Speed, "speed", &s.Trained.Speed)
	width(&f.Width, "width", &s.Trained.Width)
	speed(&f.MaxSpeed, "max_speed", &s.Card.Speed)
	width(&f.MaxWidth, "max_width", &s.Card.Width)
	speed(&f.SlotSpeed, "slot_speed", &s.Slot.Speed)
	width(&f.SlotWidth, "slot_width", &s.Slot.Width)
	speed(&f.TargetSpeed, "target_speed", &s.Target)
	if v := &f.CorrectablePerSec; v.Kind == yaml.MappingNode {
		s.CorrectablePerSec = map[string]float64{}
		for j := 0; j+1 < len(v.Content) && j < 64; j += 2 {
			name, ok := p.scalar(v.Content[j], where+".correctable_per_sec")
			var r float64
			if p.float(v.Content[j+1], where+".correctable_per_sec."+name, 0, 1e6, &r) && ok {
				s.CorrectablePerSec[name] = r
			}
		}
	} else if v.Kind != 0 {
		p.fail(v, "%s.correctable_per_sec must map AER names to rates, such as `BadTLP: 0.5`", where)
	}
	if _, err := s.Resolve(); err != nil {
		for _, e := range splitJoined(err) {
			p.fail(n, "%s: %v", where, e)
		}
	}
}

package ctl

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
)

// Link faults act on the link of a function's own port (fw.LinkSpec):
//
//	link.raw_ber=1e-6              every lane's pre-FEC BER
//	link.lane_ber=0,0,3e-5,0       per lane (0 takes raw_ber): a degraded lane
//	link.effective_ber=1e-12       errors FEC could not correct
//	link.partner=absent|present    the link partner is gone (or back)
//	link.partner_protocols=CAUI-4  what the partner enables (none: everything)
//	link.partner_fec=none          a FEC the partner forces (auto: negotiated)
//	link.reset=true                a clean link with a present partner
//	link.flap=Hi_SER_or_Hi_BER     the link goes down for that reason (a
//	                               PDDR local_reason_opcode name) and
//	                               retrains at once: one link-down event
const linkPrefix = "link."

// LinkFaultNames lists the link settings fault accepts.
func LinkFaultNames() []string {
	return []string{"link.raw_ber", "link.lane_ber", "link.effective_ber", "link.partner", "link.partner_protocols", "link.partner_fec", "link.reset", "link.flap"}
}

// splitLink takes the link settings out of a fault request.
func splitLink(set map[string]string) (link, rest map[string]string) {
	link, rest = map[string]string{}, map[string]string{}
	for k, v := range set {
		if strings.HasPrefix(k, linkPrefix) {
			link[strings.TrimPrefix(k, linkPrefix)] = v
		} else {
			rest[k] = v
		}
	}
	return link, rest
}

// applyLink changes the link of each function's own port. Every
// function's new spec is worked out and checked against its port first,
// so a request that one port cannot take changes none.
func applyLink(fns []*scenario.Function, set map[string]string) error {
	flap, doFlap := set["flap"]
	if doFlap {
		set = maps.Clone(set)
		delete(set, "flap")
	}
	type change struct {
		f    *scenario.Function
		spec fw.LinkSpec
		down bool
	}
	changes := make([]change, 0, len(fns))
	for _, f := range fns {
		if f.Adapter == nil || f.Adapter.Firmware == nil {
			return fmt.Errorf("function %s has no firmware model", f.BDF)
		}
		fwm := f.Adapter.Firmware
		spec, err := fwm.Link(f.Port)
		if err != nil {
			return err
		}
		down := slices.Contains(fwm.Faults().LinkDown, f.Port)
		if err := linkSetting(&spec, &down, set); err != nil {
			return err
		}
		if ports := fwm.Ports(); f.Port >= 1 && f.Port <= len(ports) {
			if err := spec.Validate(ports[f.Port-1].Lanes); err != nil {
				return fmt.Errorf("function %s port %d: %w", f.BDF, f.Port, err)
			}
		}
		changes = append(changes, change{f, spec, down})
	}
	for _, c := range changes {
		fwm := c.f.Adapter.Firmware
		if err := fwm.SetLink(c.f.Port, c.spec); err != nil {
			return err
		}
		faults := fwm.Faults()
		if c.down != slices.Contains(faults.LinkDown, c.f.Port) {
			faults.LinkDown = slices.DeleteFunc(faults.LinkDown, func(p int) bool { return p == c.f.Port })
			if c.down {
				faults.LinkDown = append(faults.LinkDown, c.f.Port)
			}
			if err := fwm.SetFaults(faults); err != nil {
				return err
			}
		}
		if doFlap {
			if err := fwm.Flap(c.f.Port, flap); err != nil {
				return err
			}
		}
	}
	return nil
}

// linkSetting applies settings to a spec (reset first, the rest in a
// fixed order so that a request means the same whatever its map order);
// on an error neither spec nor down changes.
func linkSetting(dst *fw.LinkSpec, dstDown *bool, set map[string]string) error {
	spec, down := new(fw.LinkSpec), new(bool)
	*spec, *down = *dst, *dstDown
	if err := applySettings(spec, down, set); err != nil {
		return err
	}
	*dst, *dstDown = *spec, *down
	return nil
}

func applySettings(spec *fw.LinkSpec, down *bool, set map[string]string) error {
	ratio := func(k, v string) (float64, error) {
		b, err := strconv.ParseFloat(v, 64)
		if err != nil || !(b >= 0 && b <= 0.5) {
			return 0, fmt.Errorf("link.%s=%s: give a bit error ratio 0..0.5 (1e-8)", k, v)
		}
		return b, nil
	}
	if v, ok := set["reset"]; ok {
		if on, err := strconv.ParseBool(v); err != nil || !on {
			return fmt.Errorf("link.reset=%s: give true", v)
		}
		*spec, *down = fw.LinkSpec{}, false
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := set[k]
		var err error
		switch k {
		case "reset":
		case "raw_ber":
			spec.RawBER, err = ratio(k, v)
		case "effective_ber":
			spec.EffectiveBER, err = ratio(k, v)
		case "lane_ber":
			var bers []float64
			parts := strings.Split(v, ",")
			if len(parts) > fw.MaxLanes {
				// Checked here as well as in SetLink so that a request
				// that can fit no port is refused before any function
				// of it changes.
				return fmt.Errorf("link.lane_ber=%s: %d lanes; a port has at most %d", v, len(parts), fw.MaxLanes)
			}
			for _, s := range parts {
				b, e := ratio(k, strings.TrimSpace(s))
				if e != nil {
					return e
				}
				bers = append(bers, b)
			}
			spec.LaneBER = bers
		case "partner":
			switch v {
			case "absent":
				*down = true
			case "present":
				*down = false
			default:
				return fmt.Errorf("link.partner=%s: give absent or present", v)
			}
		case "partner_protocols":
			spec.PartnerProtocols = nil
			if v != "none" && v != "" {
				for _, n := range strings.Split(v, ",") {
					p, e := fw.LookupEthProtocol(strings.TrimSpace(n))
					if e != nil {
						return fmt.Errorf("link.partner_protocols: %w", e)
					}
					spec.PartnerProtocols = append(spec.PartnerProtocols, p.Name)
				}
			}
		case "partner_fec":
			if v == "auto" {
				spec.PartnerFEC = ""
			} else if slices.Contains(fw.PartnerFECNames(), v) {
				spec.PartnerFEC = v
			} else {
				return fmt.Errorf("link.partner_fec=%s: give auto or one of %s", v, strings.Join(fw.PartnerFECNames(), ", "))
			}
		default:
			return fmt.Errorf("unknown link fault %q; known: %s", linkPrefix+k, strings.Join(LinkFaultNames(), ", "))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

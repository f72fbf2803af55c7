package ctl

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/cxray/cxray/emu/hostlink"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/pcie"
)

// PCIe faults act on the PCI Express link of the functions' adapter
// (emu/hostlink):
//
//	pcie.aer=BadTLP:5,CmpltTO      inject AER errors (kernel names; NAME or NAME:COUNT)
//	                               on the selected functions (every one without --bdf)
//	pcie.clear=true                clear the AER status bits (the counts stay)
//	pcie.speed=gen4                retrain the link at this speed (max: as capable)
//	pcie.width=8                   retrain the link at this width (max: as capable)
//	pcie.correctable_per_sec=BadTLP:0.5   steady correctable errors per second (none: stop)
//	pcie.reset=true                the link as the scenario trained it, status cleared
//
// A request is checked whole before anything changes.
const pciePrefix = "pcie."

// PCIeFaultNames lists the PCIe settings fault accepts.
func PCIeFaultNames() []string {
	return []string{"pcie.aer", "pcie.clear", "pcie.speed", "pcie.width", "pcie.correctable_per_sec", "pcie.reset"}
}

// splitPCIe takes the PCIe settings out of a fault request.
func splitPCIe(set map[string]string) (p, rest map[string]string) {
	p, rest = map[string]string{}, map[string]string{}
	for k, v := range set {
		if strings.HasPrefix(k, pciePrefix) {
			p[strings.TrimPrefix(k, pciePrefix)] = v
		} else {
			rest[k] = v
		}
	}
	return p, rest
}

// pcieChange is a checked PCIe request.
type pcieChange struct {
	inject  map[string]uint64
	clear   bool
	reset   bool
	retrain bool
	// speedGiven and widthGiven: the request retrains to speed and
	// width (0: max).
	speedGiven, widthGiven bool
	speed                  pcie.Speed
	width                  int
	rates                  map[string]float64
	ratesOK                bool
}

func parsePCIe(set map[string]string) (*pcieChange, error) {
	c := &pcieChange{}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	boolean := func(k, v string) (bool, error) {
		on, err := strconv.ParseBool(v)
		if err != nil || !on {
			return false, fmt.Errorf("pcie.%s=%s: give true", k, v)
		}
		return true, nil
	}
	for _, k := range keys {
		v := set[k]
		var err error
		switch k {
		case "aer":
			c.inject, err = hostlink.ParseInjection(v)
		case "clear":
			c.clear, err = boolean(k, v)
		case "reset":
			c.reset, err = boolean(k, v)
		case "speed":
			c.retrain, c.speedGiven = true, true
			if v != "max" {
				c.speed, err = pcie.ParseSpeed(v)
				if err == nil && !c.speed.Known() {
					err = fmt.Errorf("give a generation")
				}
				if err != nil {
					err = fmt.Errorf("pcie.speed=%s: %v; give gen1..gen6, a rate in GT/s, or max", v, err)
				}
			}
		case "width":
			c.retrain, c.widthGiven = true, true
			if v != "max" {
				c.width, err = pcie.ParseWidth(v)
				if err == nil && c.width == 0 {
					err = fmt.Errorf("a link that trained has lanes")
				}
				if err != nil {
					err = fmt.Errorf("pcie.width=%s: %v; give 1, 2, 4, 8 or 16, or max", v, err)
				}
			}
		case "correctable_per_sec":
			c.rates, c.ratesOK = map[string]float64{}, true
			if v != "none" && v != "" {
				for _, part := range strings.Split(v, ",") {
					name, rate, ok := strings.Cut(strings.TrimSpace(part), ":")
					r, e := strconv.ParseFloat(strings.TrimSpace(rate), 64)
					if !ok || e != nil || !(r >= 0 && r <= 1e6) || pcie.BitOf(name, true) < 0 {
						return nil, fmt.Errorf("pcie.correctable_per_sec=%s: give NAME:RATE of correctable errors (%s), or none", v, strings.Join(hostlink.CorrectableNames(), ", "))
					}
					c.rates[name] = r
				}
			}
		default:
			return nil, fmt.Errorf("unknown PCIe fault %q; known: %s", pciePrefix+k, strings.Join(PCIeFaultNames(), ", "))
		}
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

// applyPCIe checks a request against every adapter first (a link that
// cannot train is refused before anything changes), then applies it.
func applyPCIe(fns []*scenario.Function, set map[string]string) error {
	c, err := parsePCIe(set)
	if err != nil {
		return err
	}
	ads := adapters(fns)
	for _, a := range ads {
		if a.Link == nil {
			return fmt.Errorf("adapter %s has no PCIe link model", a.Name)
		}
		if c.retrain || c.reset {
			s := a.Link.Spec()
			s.Trained = trained(c, a)
			if _, err := s.Resolve(); err != nil {
				return fmt.Errorf("adapter %s: %w", a.Name, err)
			}
		}
		if c.ratesOK {
			s := a.Link.Spec()
			s.CorrectablePerSec = c.rates
			if _, err := s.Resolve(); err != nil {
				return fmt.Errorf("adapter %s: %w", a.Name, err)
			}
		}
	}
	for _, a := range ads {
		if c.retrain || c.reset {
			if err := a.Link.Retrain(trained(c, a)); err != nil {
				return err
			}
		}
		if c.ratesOK {
			if err := a.Link.SetRates(c.rates); err != nil {
				return err
			}
		}
	}
	names := make([]string, 0, len(c.inject))
	for n := range c.inject {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, f := range fns {
		i := functionIndex(f)
		if c.clear || c.reset {
			if err := f.Adapter.Link.Clear(i); err != nil {
				return err
			}
		}
		for _, n := range names {
			if err := f.Adapter.Link.Inject(i, n, c.inject[n]); err != nil {
				return err
			}
		}
	}
	return nil
}

// trained is the link a request asks for: the scenario's on reset, else
// the current one, with the speed or width given (0, for max: as the
// ends allow).
func trained(c *pcieChange, a *scenario.Adapter) pcie.Link {
	l := a.Link.Spec().Trained
	if c.reset {
		l = a.Spec.PCIe.Trained
	}
	if c.speedGiven {
		l.Speed = c.speed
	}
	if c.widthGiven {
		l.Width = c.width
	}
	return l
}

// functionIndex is a function's place in its adapter.
func functionIndex(f *scenario.Function) int {
	for i, g := range f.Adapter.Functions {
		if g == f {
			return i
		}
	}
	return -1
}

package monitor

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/cxray/cxray/adapter"
)

// keySpace is a collector that can name the keys it may write for an
// adapter, also those it has no reading for now (an empty cage, a module
// whose I2C hangs): an alert on such a key is valid and waits for the
// value.
type keySpace interface {
	possibleKeys(ctx context.Context, a *adapter.Adapter) []string
}

// maxModuleLanes bounds the lanes of a module (OSFP and QSFP-DD: 8).
const maxModuleLanes = 8

// moduleQuantities are the per-module values and their thresholds.
var (
	moduleQuantities = []string{"temperature_c", "voltage_v"}
	laneQuantities   = []string{"tx_bias_ma", "tx_power_mw", "rx_power_mw"}
	thresholdLimits  = []string{"high_alarm", "high_warning", "low_warning", "low_alarm"}
)

func (moduleCollector) possibleKeys(ctx context.Context, a *adapter.Adapter) []string {
	ps, err := a.Ports(ctx)
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range ps {
		pfx := fmt.Sprintf("port%d.module.", p.Local)
		out = append(out, pfx+"temperature_c", pfx+"voltage_v")
		lanes := p.Lanes
		if lanes <= 0 || lanes > maxModuleLanes {
			lanes = maxModuleLanes
		}
		for l := 1; l <= lanes; l++ {
			for _, q := range laneQuantities {
				out = append(out, fmt.Sprintf("%slane%d.%s", pfx, l, q))
			}
		}
		for _, q := range append(append([]string{}, moduleQuantities...), laneQuantities...) {
			for _, lim := range thresholdLimits {
				out = append(out, pfx+"threshold."+q+"."+lim)
			}
		}
	}
	return out
}

func (tempCollector) possibleKeys(ctx context.Context, a *adapter.Adapter) []string {
	out := []string{"temp.asic_c", "temp.asic_threshold_hi_c"}
	ps, err := a.Ports(ctx)
	if err != nil {
		return out
	}
	for _, p := range ps {
		if p.Module >= 0 {
			k := fmt.Sprintf("temp.module%d_c", p.Module)
			out = append(out, k, strings.TrimSuffix(k, "_c")+"_threshold_hi_c")
		}
	}
	return out
}

// CheckAlerts refuses an alert that can never match on these targets:
// its key matches none of the values the first samples read, nor any key
// the collectors could write for the targets' ports, modules and lanes (an
// unknown group or field, a port another function owns). An alert whose
// key is valid but has no value now (an empty cage) is accepted; Sample
// reports the value as missing until it comes.
func (m *Monitor) CheckAlerts(ctx context.Context, targets []*Target, first []Sample) error {
	if len(m.Alerts) == 0 {
		return nil
	}
	read := map[string]bool{}
	for _, s := range first {
		for k := range s.Values {
			read[k] = true
		}
	}
	if len(read) == 0 {
		return nil // no device answered: nothing to judge by
	}
	known := map[string]bool{}
	for k := range read {
		known[k] = true
	}
	for _, t := range targets {
		for _, c := range m.Collectors {
			if ks, ok := c.(keySpace); ok {
				for _, k := range ks.possibleKeys(ctx, t.Adapter) {
					known[k] = true
				}
			}
		}
	}
	for _, al := range m.Alerts {
		if matchesAny(al, known) {
			continue
		}
		keys := make([]string, 0, len(read))
		for k := range read {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		more := ""
		if len(keys) > 8 {
			keys, more = keys[:8], ", ..."
		}
		return fmt.Errorf("--alert %q matches none of the values this monitor reads or could read on these devices (%s%s); a key matches exactly, as a suffix after a dot, or with * wildcards",
			al.Text, strings.Join(keys, ", "), more)
	}
	return nil
}

// Package driverhealth is the kernel driver's view of a function's
// health: mlx5's devlink health reporters (fw, fw_fatal, vnic, tx, rx:
// their state, errors and recoveries, the firmware syndrome the fw
// reporter names) and the driver statistics that say where packets were
// lost or slowed down (ethtool -S: discards, out-of-buffer, per-priority
// pause, PCIe signal integrity and stalls). A reading judged once gives
// the reporters' verdicts; two readings an interval apart give the
// statistics as rates.
package driverhealth

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/internal/lazyre"
	"github.com/cxray/cxray/kernel"
)

// Kinds of watched statistics: what a growing one means.
const (
	KindDiscard = "discard" // the NIC dropped packets it received or had to send
	KindPause   = "pause"   // flow control: the link partner or this port paused traffic
	KindPCIe    = "pcie"    // PCIe link recoveries and stalls seen by the NIC
	KindLink    = "link"    // errors on the wire
)

// watched are the driver statistics read and judged, by mlx5's names
// (drivers/net/ethernet/mellanox/mlx5/core/en_stats.c).
var watched = []struct {
	re   *lazyre.Regexp
	kind string
}{
	{lazyre.New(`^(rx|tx)_discards_phy$`), KindDiscard},
	{lazyre.New(`^rx_out_of_buffer$`), KindDiscard},
	{lazyre.New(`^rx_prio[0-7]_(buf|cong)_discard$`), KindDiscard},
	{lazyre.New(`^rx_buffer_passed_thres_phy$`), KindDiscard},
	{lazyre.New(`^(rx|tx)_prio[0-7]_pause$`), KindPause},
	{lazyre.New(`^(rx|tx)_pause_ctrl_phy$`), KindPause},
	{lazyre.New(`^(rx|tx)_pci_signal_integrity$`), KindPCIe},
	{lazyre.New(`^outbound_pci_buffer_overflow$`), KindPCIe},
	{lazyre.New(`^outbound_pci_stalled_(rd|wr)_events$`), KindPCIe},
	{lazyre.New(`^rx_(crc_errors|symbol_err)_phy$`), KindLink},
	{lazyre.New(`^link_down_events_phy$`), KindLink},
}

// KindOf is the kind of a watched statistic, "" for the others.
func KindOf(name string) string {
	for _, w := range watched {
		if w.re.MatchString(name) {
			return w.kind
		}
	}
	return ""
}

// Finding is one verdict.
type Finding struct {
	Code     string   `json:"code"`
	Severity string   `json:"severity"` // warn, fail
	Summary  string   `json:"summary"`
	Evidence []string `json:"evidence,omitempty"`
	NextStep string   `json:"next_step"`
}

// Report is the kernel driver's health of one function.
type Report struct {
	Reporters []kernel.HealthReporter `json:"health_reporters"`
	// Stats are the watched statistics, "IFACE.name".
	Stats map[string]uint64 `json:"driver_stats"`
	// Rates are how fast they grew over IntervalS, per second ("IFACE.name").
	IntervalS   float64            `json:"interval_s,omitempty"`
	Rates       map[string]float64 `json:"rates_per_s,omitempty"`
	Unavailable []string           `json:"unavailable,omitempty"`
	Findings    []Finding          `json:"findings"`
}

// Read reads the driver's health, twice interval apart when interval is
// positive (on the adapter's clock).
func Read(ctx context.Context, a *adapter.Adapter, interval time.Duration) (*Report, error) {
	first, err := a.Driver(ctx, true)
	if err != nil {
		return nil, err
	}
	var second *adapter.Driver
	if interval > 0 {
		if err := a.Sleep(ctx, interval); err != nil {
			return nil, err
		}
		if second, err = a.Driver(ctx, false); err != nil {
			return nil, err
		}
		// The diagnose is the first read's.
		for i := range second.Reporters {
			for _, r := range first.Reporters {
				if r.Name == second.Reporters[i].Name && samePort(r, second.Reporters[i]) {
					second.Reporters[i].Diagnose, second.Reporters[i].DiagnoseErr = r.Diagnose, r.DiagnoseErr
				}
			}
		}
	}
	return Build(first, second, interval), nil
}

func samePort(a, b kernel.HealthReporter) bool {
	return (a.Port == nil) == (b.Port == nil) && (a.Port == nil || *a.Port == *b.Port)
}

// Build judges one reading, or two interval apart.
func Build(first, second *adapter.Driver, interval time.Duration) *Report {
	last := first
	if second != nil {
		last = second
	}
	r := &Report{Reporters: last.Reporters, Stats: watchedStats(last), Findings: []Finding{}}
	if r.Reporters == nil {
		r.Reporters = []kernel.HealthReporter{}
	}
	if last.ReportersErr != nil {
		r.Unavailable = append(r.Unavailable, "devlink health: "+last.ReportersErr.Error())
	}
	if last.StatsErr != nil {
		r.Unavailable = append(r.Unavailable, "driver statistics: "+last.StatsErr.Error())
	}
	if second != nil && interval > 0 {
		r.IntervalS = interval.Seconds()
		r.Rates = map[string]float64{}
		before := watchedStats(first)
		for k, v := range r.Stats {
			if b, ok := before[k]; ok && v >= b {
				r.Rates[k] = float64(v-b) / interval.Seconds()
			}
		}
	}
	r.Findings = judge(r, first)
	return r
}

func watchedStats(d *adapter.Driver) map[string]uint64 {
	out := map[string]uint64{}
	for nd, s := range d.Stats {
		for name, v := range s {
			if KindOf(name) != "" {
				out[nd+"."+name] = v
			}
		}
	}
	return out
}

func judge(r *Report, first *adapter.Driver) []Finding {
	out := []Finding{}
	earlier := map[string]kernel.HealthReporter{}
	for _, rep := range first.Reporters {
		earlier[reporterKey(rep)] = rep
	}
	for _, rep := range r.Reporters {
		name := reporterKey(rep)
		ev := []string{fmt.Sprintf("%s: state %s, %d error(s), %d recovered, grace period %s", name, rep.State, rep.Errors, rep.Recoveries, rep.GracePeriod)}
		if !rep.LastDump.IsZero() {
			ev = append(ev, fmt.Sprintf("%s: last dump %s", name, rep.LastDump.Format(time.RFC3339)))
		}
		if s, desc, ok := rep.Syndrome(); ok && s != 0 {
			what := fmt.Sprintf("the firmware reports syndrome 0x%x", s)
			if desc != "" {
				what += " (" + desc + ")"
			}
			out = append(out, Finding{Code: "firmware_syndrome", Severity: "fail",
				Summary:  "devlink health reporter " + name + ": " + what,
				Evidence: ev,
				NextStep: "the firmware hit an internal error: save 'devlink health dump show pci/BDF reporter fw' and the kernel log (dmesg | grep mlx5), then reset the firmware (mlxfwreset, or a reboot); report it to NVIDIA support with the dump if it repeats"})
		}
		switch {
		case rep.State == "error":
			out = append(out, Finding{Code: "reporter_error", Severity: "fail",
				Summary:  fmt.Sprintf("devlink health reporter %s is in error: the driver did not recover from its last error", name),
				Evidence: ev,
				NextStep: "see why in the kernel log (dmesg | grep mlx5) and 'devlink health diagnose'; recover it with 'devlink health recover pci/BDF reporter " + rep.Name + "', or reload the driver"})
		case rep.Errors > earlier[name].Errors && r.IntervalS > 0:
			out = append(out, Finding{Code: "reporter_errors_growing", Severity: "warn",
				Summary:  fmt.Sprintf("devlink health reporter %s reported %d error(s) while watched", name, rep.Errors-earlier[name].Errors),
				Evidence: ev,
				NextStep: "the driver is recovering from errors as they come (" + reporterMeaning(rep.Name) + "): see them in the kernel log (dmesg | grep mlx5)"})
		case rep.Errors > rep.Recoveries:
			out = append(out, Finding{Code: "reporter_unrecovered", Severity: "warn",
				Summary:  fmt.Sprintf("devlink health reporter %s counted %d error(s) and %d recoveries since the driver loaded", name, rep.Errors, rep.Recoveries),
				Evidence: ev,
				NextStep: "an error the driver did not recover (grace period, or auto recover off): see 'devlink health show' and the kernel log"})
		}
	}
	byKind := map[string][]string{}
	for _, k := range sortedKeys(r.Rates) {
		if r.Rates[k] <= 0 {
			continue
		}
		kind := KindOf(k[strings.IndexByte(k, '.')+1:])
		byKind[kind] = append(byKind[kind], fmt.Sprintf("%s %.3g/s", k, r.Rates[k]))
	}
	if len(byKind[KindDiscard]) > 0 {
		out = append(out, Finding{Code: "driver_discards", Severity: "warn",
			Summary:  "the NIC is dropping packets: " + strings.Join(byKind[KindDiscard], ", "),
			NextStep: "rx_out_of_buffer: the host does not post receive buffers fast enough (raise the ring size with ethtool -G, spread interrupts, check CPU load); *_discards_phy and per-priority buffer discards: the port's buffers overflow (enable PFC for lossless traffic, or check congestion)"})
	}
	if len(byKind[KindPCIe]) > 0 {
		out = append(out, Finding{Code: "driver_pcie", Severity: "warn",
			Summary:  "the NIC sees its PCIe link struggle: " + strings.Join(byKind[KindPCIe], ", "),
			NextStep: "pci_signal_integrity counts PCIe link recoveries, outbound stalls a host that does not give the NIC credits in time: check the PCIe link ('cxray link --pcie'), and the host's PCIe settings (max read request, relaxed ordering, IOMMU)"})
	}
	if len(byKind[KindLink]) > 0 {
		out = append(out, Finding{Code: "driver_link_errors", Severity: "warn",
			Summary:  "errors on the wire: " + strings.Join(byKind[KindLink], ", "),
			NextStep: "check the cable or module and the link ('cxray link', 'cxray module --verify')"})
	}
	return out
}

// Pausing reports the pause statistics that grew, for the half-bandwidth
// explanation: pause is flow control at work, not an error by itself.
func Pausing(r *Report) []string {
	var out []string
	for _, k := range sortedKeys(r.Rates) {
		if r.Rates[k] > 0 && KindOf(k[strings.IndexByte(k, '.')+1:]) == KindPause {
			out = append(out, fmt.Sprintf("%s %.3g/s", k, r.Rates[k]))
		}
	}
	return out
}

// Discarding reports the discard statistics that grew.
func Discarding(r *Report) []string {
	var out []string
	for _, k := range sortedKeys(r.Rates) {
		if r.Rates[k] > 0 && KindOf(k[strings.IndexByte(k, '.')+1:]) == KindDiscard {
			out = append(out, fmt.Sprintf("%s %.3g/s", k, r.Rates[k]))
		}
	}
	return out
}

func reporterKey(r kernel.HealthReporter) string {
	if r.Port != nil {
		return fmt.Sprintf("%s (port %d)", r.Name, *r.Port)
	}
	return r.Name
}

// reporterMeaning says what a reporter's errors are (mlx5's devlink health
// reporters: drivers/net/ethernet/mellanox/mlx5/core/health.c for fw and
// fw_fatal, en/reporter_tx.c and en/reporter_rx.c for tx and rx).
func reporterMeaning(name string) string {
	switch name {
	case "fw":
		return "firmware syndromes in the health buffer"
	case "fw_fatal":
		return "fatal firmware errors: the driver resets the device"
	case "tx":
		return "send queues with error completions or timeouts"
	case "rx":
		return "receive queues with error completions or timeouts"
	case "vnic":
		return "vNIC error counters"
	}
	return "the reporter's errors"
}

func sortedKeys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

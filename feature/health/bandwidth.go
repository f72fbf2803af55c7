package health

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cxray/cxray/feature/driverhealth"
	"github.com/cxray/cxray/feature/pcielink"
	"github.com/cxray/cxray/feature/throughput"
)

// bandwidthCheck answers "why only half of line rate?" with the causes
// the evidence read supports (package throughput): the PCIe link below
// the port, link errors and retransmissions, pause frames and discards.
// It warns when one is supported; the PSN window needs the fabric's RTT,
// which health does not know: it is named as unjudged.
func bandwidthCheck(p *pcielink.Report, drv *driverhealth.Report, a, b *sample, interval time.Duration) Check {
	c := Check{Name: "bandwidth", Status: OK}
	e := throughput.Evidence{PCIe: p, WindowWhy: "it needs the fabric's round-trip time: 'cxray roce status --rtt 8us' judges it"}
	if p != nil {
		e.PortGbps = p.PortGbps
	}
	if a != nil && b != nil {
		secs := interval.Seconds()
		grew := func(x, y map[string]uint64, each func(k string, d uint64)) {
			keys := make([]string, 0, len(y))
			for k := range y {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if old, ok := x[k]; ok && y[k] > old {
					each(k, y[k]-old)
				}
			}
		}
		grew(a.values, b.values, func(k string, d uint64) {
			s := fmt.Sprintf("%s %.3g/s", k, float64(d)/secs)
			if strings.Contains(k, "discard") {
				e.Discards = append(e.Discards, s)
			} else {
				e.Errors = append(e.Errors, s)
			}
		})
		grew(a.rdma, b.rdma, func(k string, d uint64) {
			e.Retransmissions = append(e.Retransmissions, fmt.Sprintf("%s %.3g/s", k, float64(d)/secs))
		})
		grew(a.pause, b.pause, func(k string, d uint64) { e.Pause = append(e.Pause, fmt.Sprintf("%s %.3g/s", k, float64(d)/secs)) })
	} else {
		e.Unread = append(e.Unread, "the port counters (errors, discards, pause): not read")
	}
	if drv != nil {
		e.Pause = append(e.Pause, driverhealth.Pausing(drv)...)
		e.Discards = append(e.Discards, driverhealth.Discarding(drv)...)
	}
	causes := throughput.Explain(e)
	for _, k := range causes {
		c.Status = Warn
		c.Details = append(c.Details, k.Summary)
		if c.Next == "" {
			c.Next = k.NextStep
		}
	}
	for _, u := range throughput.Unjudged(e) {
		c.Details = append(c.Details, "not judged: "+u)
	}
	if len(causes) == 0 {
		c.Summary = fmt.Sprintf("nothing read limits throughput in %s: the PCIe link carries the port, no error, retransmission, pause or discard moved", interval)
	} else {
		var names []string
		for _, k := range causes {
			names = append(names, throughput.Short(k.Code))
		}
		c.Summary = "throughput short of line rate: " + strings.Join(names, "; ")
	}
	return c
}

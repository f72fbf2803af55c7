package exporter

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// NFD writes a Node Feature Discovery feature file (its "local" source reads
// name=value lines from /etc/kubernetes/node-feature-discovery/features.d/
// and labels the node feature.node.kubernetes.io/NAME=VALUE) from what a
// read found: the adapters' firmware, PSID and link type, so workloads and
// the exporter's DaemonSet can select nodes by them. A name whose devices
// disagree is labelled "mixed"; one nothing reported is left out.
func NFD(mfs []*dto.MetricFamily) []byte {
	values := map[string]map[string]bool{}
	add := func(name, v string) {
		if v == "" {
			return
		}
		if values[name] == nil {
			values[name] = map[string]bool{}
		}
		values[name][v] = true
	}
	up := 0
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			switch mf.GetName() {
			case famFirmware.name:
				add("cxray-firmware", l["firmware_version"])
				add("cxray-psid", l["psid"])
			case famPortInfo.name:
				add("cxray-link-type", l["link_layer"])
			case famUp.name:
				if m.GetGauge().GetValue() == 1 {
					up++
				}
			}
		}
	}
	var b strings.Builder
	b.WriteString("# cxray-exporter --once --once.format nfd: this node's ConnectX adapters\n")
	fmt.Fprintf(&b, "cxray-adapters=%d\n", up)
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v := "mixed"
		if len(values[n]) == 1 {
			for x := range values[n] {
				v = labelValue(x)
			}
		}
		if v != "" {
			fmt.Fprintf(&b, "%s=%s\n", n, v)
		}
	}
	return []byte(b.String())
}

var notLabel = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// labelValue makes v a Kubernetes label value: 63 characters at most of
// letters, digits, '-', '_' and '.', starting and ending with a letter or
// digit ("" when nothing is left).
func labelValue(v string) string {
	v = notLabel.ReplaceAllString(v, "_")
	if len(v) > 63 {
		v = v[:63]
	}
	return strings.Trim(v, "._-")
}

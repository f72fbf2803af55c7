package exporter

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cxray/cxray/feature/policy"
	"github.com/cxray/cxray/nvconf"
)

// Fleet are the options that make one host's metrics join and compare
// with the rest of a fleet's (docs/exporter.md, "Joining" and "Drift").
type Fleet struct {
	// DeviceLabel is what the device label holds: DevicePCI (the
	// default), DeviceRDMA (mlx5_0, as node_exporter's infiniband
	// collector) or DeviceNetdev (as its netclass and ethtool collectors).
	// A device whose name of that kind is not known (yet) keeps its PCI
	// address; cxray_device_info maps every name to the others.
	DeviceLabel string
	// Host, when set, is the host label of every device's series: the
	// node's name from the downward API, or the hostname.
	Host string
	// NV is the parameter database the nvconfig collector reads with;
	// without it that collector is left out.
	NV *nvconf.DB
	// NVInclude keeps the parameters whose names match (nil: all);
	// NVMaxParams bounds the parameters per device (0: DefaultNVMaxParams);
	// NVInterval is how long a read of the configuration is served
	// before it is read again (0: DefaultNVInterval).
	NVInclude   *regexp.Regexp
	NVMaxParams int
	NVInterval  time.Duration
	// Policy is what the policy collector checks; without it that
	// collector is left out.
	Policy *policy.Set
}

// The device label's kinds.
const (
	DevicePCI    = "pci"
	DeviceRDMA   = "rdma"
	DeviceNetdev = "netdev"
)

// DefaultNVMaxParams bounds the nvconfig collector's parameters per device:
// a ConnectX-7 shows about 110 through mstflint's database, so the bound
// is only met by a database that grew, and then the cut is counted
// (cxray_nvconfig_parameters_dropped).
const DefaultNVMaxParams = 512

// DefaultNVInterval: NV configuration changes with an administrator's
// write and a reset, not between scrapes, and a read is a few hundred
// register accesses.
const DefaultNVInterval = 5 * time.Minute

func (f *Fleet) check() error {
	switch f.DeviceLabel {
	case "", DevicePCI, DeviceRDMA, DeviceNetdev:
	default:
		return fmt.Errorf("exporter: device label %q: give pci, rdma or netdev", f.DeviceLabel)
	}
	if f.NVMaxParams < 0 || f.NVInterval < 0 {
		return fmt.Errorf("exporter: the NV parameter bound and interval must not be negative")
	}
	return nil
}

// constLabels are the labels every device's series carries.
func (e *Exporter) constLabels() prometheus.Labels {
	if e.opts.Host == "" {
		return nil
	}
	return prometheus.Labels{"host": e.opts.Host}
}

// labels hands out device label values, each to one device only (two
// functions must never share a series because of a name clash).
type labels struct {
	mu    sync.Mutex
	taken map[string]string // value -> the source's name
}

func (l *labels) claim(value, owner string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.taken == nil {
		l.taken = map[string]string{}
	}
	if o, ok := l.taken[value]; ok && o != owner {
		return false
	}
	l.taken[value] = owner
	return true
}

// deviceLabel is d's device label value, resolving the kind asked for on
// first use (and again on later reads until the backend tells).
func (e *Exporter) deviceLabel(ctx context.Context, d *device) string {
	if v := e.knownLabel(d); v != d.src.Name() || e.opts.DeviceLabel == "" || e.opts.DeviceLabel == DevicePCI {
		return v
	}
	os, err := d.src.OS(ctx)
	if err != nil || os == nil {
		return d.src.Name()
	}
	v := ""
	switch e.opts.DeviceLabel {
	case DeviceRDMA:
		if len(os.RDMA) > 0 {
			v = os.RDMA[0]
		}
	case DeviceNetdev:
		for _, n := range os.Netdevs {
			if !n.Representor {
				v = n.Name
				break
			}
		}
	}
	if v == "" || !e.labels.claim(v, d.src.Name()) {
		return d.src.Name()
	}
	d.mu.Lock()
	d.label = v
	d.mu.Unlock()
	return v
}

// knownLabel is d's label as resolved so far (its PCI address until then).
func (e *Exporter) knownLabel(d *device) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.label != "" {
		return d.label
	}
	return d.src.Name()
}

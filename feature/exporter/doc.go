// Package exporter is cxray's Prometheus exporter: it reads ConnectX
// functions through one of cxray's backends and serves what it read as
// Prometheus metrics, one scrape at a time. `cxray exporter` wires it to the
// command line; docs/exporter.md lists every metric.
//
// # Shape
//
// A Source is one device as the exporter sees it, whatever the backend:
// RegisterSource reads PRM registers through a dev.Device (direct access
// to a PCI function as root, or the in-process emulator), KernelSource reads
// what the mlx5 drivers expose (sysfs, hwmon, devlink, ethtool netlink; no
// root needed but CAP_NET_ADMIN for module EEPROM). Both hand back the same
// plain values (Info, Temperature, Port, Module, CounterSet), so one set of
// collectors turns either into metrics.
//
// A collector is one concern (identity, temperature, port, module,
// counters, rdma, nvmf, link, pcie, driver) and owns its metric families. Collectors can be switched
// off by name, and metric families filtered by regular expressions, to
// keep the number of series in check.
//
// # Series
//
// Series follow Prometheus' naming practice, checked by promtool in the
// tests: a lane is a label, never part of a metric name (PPCNT's
// rs_fec_corrected_symbols_lane3 is
// cxray_ppcnt_rs_fec_corrected_symbols_per_lane_total{lane="3"}); no name
// ends in _total_total; a label the backend cannot tell is left out of
// the sample rather than exported empty (sink.add); info metrics keep
// their label values whatever the source of the data (the module
// identifier by its SFF-8024 name, from the EEPROM or the firmware).
//
// # Scrapes
//
// Every scrape has a deadline (the flag, or what Prometheus says in
// X-Prometheus-Scrape-Timeout-Seconds, whichever is shorter). Each device
// is read by its own goroutine under that deadline, collector after
// collector; what a device has not delivered by then is left out and
// reported as a timeout, so a slow or failing device never holds up the
// others. There is at most one read of a device at a time: a scrape that
// finds one under way (two Prometheus servers, an operator's curl) waits
// for it within its own deadline and serves its result, so concurrency of
// our own never makes a device look down, and a stuck device cannot pile
// up goroutines (a read that outlives the scrape that joined it is
// reported busy). A device that disappears is
// reported by cxray_device_up 0 and the error counters, and is re-opened
// on the next scrape.
//
// # Read-only
//
// The exporter never changes a device: RegisterSource reads registers
// with Get only, through an accessor that refuses every other method
// (ReadOnlyAccessor), and the kernel backend sends only GET requests and
// writes no file. The HTTP side serves GET and HEAD only.
package exporter

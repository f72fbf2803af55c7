package exporter

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/adapter/adaptertest"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/feature/exporter/exportertest"
	"github.com/cxray/cxray/optics"
	"github.com/cxray/cxray/prm/builtin"
)

// moduleSource is fakeSource with the modules a test gives.
type moduleSource struct {
	fakeSource
	modules    []*adapter.ModuleReading
	modulesErr error
}

func (m *moduleSource) Modules(context.Context) ([]*adapter.ModuleReading, error) {
	return m.modules, m.modulesErr
}

func scrapeOne(t *testing.T, src Source, o Options) *exportertest.Scrape {
	t.Helper()
	o.NoRuntimeMetrics = true
	e, err := New([]Source{src}, o)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := scrape(t, e.Handler(), "")
	return s
}

func pw(mw float64) *optics.Power { return &optics.Power{MW: mw, DBm: optics.ToDBm(mw)} }
func yes() *bool                  { b := true; return &b }
func no() *bool                   { b := false; return &b }

// Every module reading becomes its family: lanes, signals, flags and the
// module's own thresholds, in base units.
func TestModuleMetrics(t *testing.T) {
	m := &optics.Module{Source: optics.SourceEEPROM, Standard: "CMIS", Identifier: optics.Code{Name: "QSFP-DD"},
		Vendor: optics.Vendor{Name: "NVIDIA", PN: "MMA4Z00", SN: "S1", Rev: "A1"}, Media: optics.Media{Type: "optical-smf"}, DDM: true,
		Temperature: &optics.Temperature{C: 41.5}, Voltage: &optics.Voltage{V: 3.3},
		Lanes: []optics.Lane{{Lane: 1, TxBias: &optics.Current{MA: 8}, TxPower: pw(1), RxPower: pw(0.5),
			TxFault: no(), RxLOS: yes(), Flags: &optics.LaneFlags{RxPower: &optics.Flags{LowWarning: true}}}},
		Flags: &optics.ModuleFlags{Temperature: optics.Flags{HighAlarm: true}},
		Thresholds: &optics.Thresholds{
			Temperature: &optics.Limits[optics.Temperature]{HighAlarm: &optics.Temperature{C: 75}, LowAlarm: &optics.Temperature{C: -5}},
			Voltage:     &optics.Limits[optics.Voltage]{HighWarning: &optics.Voltage{V: 3.46}},
			TxBias:      &optics.Limits[optics.Current]{HighAlarm: &optics.Current{MA: 12}},
			TxPower:     &optics.Limits[optics.Power]{LowAlarm: pw(0.1)},
			RxPower:     &optics.Limits[optics.Power]{HighAlarm: pw(2), LowWarning: pw(0.05)},
		}}
	src := &moduleSource{fakeSource: fakeSource{name: "d"}, modules: []*adapter.ModuleReading{{Port: 1, Module: 3, Present: yes(), EEPROM: m}}}
	s := scrapeOne(t, src, Options{Collectors: []string{"module"}})
	p := []string{"device", "d", "port", "1"}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"cxray_module_present", nil, 1},
		{"cxray_module_info", []string{"module", "3", "source", "eeprom", "standard", "CMIS", "identifier", "QSFP-DD", "vendor", "NVIDIA",
			"part_number", "MMA4Z00", "serial_number", "S1", "revision", "A1", "media", "optical-smf"}, 1},
		{"cxray_module_ddm", nil, 1},
		{"cxray_module_temperature_celsius", nil, 41.5},
		{"cxray_module_voltage_volts", nil, 3.3},
		{"cxray_module_tx_bias_amperes", []string{"lane", "1"}, 0.008},
		{"cxray_module_tx_power_watts", []string{"lane", "1"}, 0.001},
		{"cxray_module_rx_power_watts", []string{"lane", "1"}, 0.0005},
		{"cxray_module_rx_power_dbm", []string{"lane", "1"}, float64(optics.ToDBm(0.5))},
		{"cxray_module_lane_signal", []string{"lane", "1", "signal", "tx_fault"}, 0},
		{"cxray_module_lane_signal", []string{"lane", "1", "signal", "rx_los"}, 1},
		{"cxray_module_lane_warning", []string{"lane", "1", "quantity", "rx_power", "direction", "low"}, 1},
		{"cxray_module_lane_alarm", []string{"lane", "1", "quantity", "rx_power", "direction", "low"}, 0},
		{"cxray_module_alarm", []string{"quantity", "temperature", "direction", "high"}, 1},
		{"cxray_module_alarm", []string{"quantity", "voltage", "direction", "low"}, 0},
		{"cxray_module_temperature_threshold_celsius", []string{"threshold", "high_alarm"}, 75},
		{"cxray_module_temperature_threshold_celsius", []string{"threshold", "low_alarm"}, -5},
		{"cxray_module_voltage_threshold_volts", []string{"threshold", "high_warning"}, 3.46},
		{"cxray_module_tx_bias_threshold_amperes", []string{"threshold", "high_alarm"}, 0.012},
		{"cxray_module_tx_power_threshold_watts", []string{"threshold", "low_alarm"}, 0.0001},
		{"cxray_module_tx_power_threshold_dbm", []string{"threshold", "low_alarm"}, -10},
		{"cxray_module_rx_power_threshold_watts", []string{"threshold", "high_alarm"}, 0.002},
		{"cxray_module_rx_power_threshold_dbm", []string{"threshold", "low_warning"}, float64(optics.ToDBm(0.05))},
		{"cxray_scrape_collector_success", []string{"collector", "module"}, 1},
	} {
		labels := append(append([]string{}, p...), c.labels...)
		if c.name == "cxray_scrape_collector_success" {
			labels = append([]string{"device", "d"}, c.labels...)
		}
		if got := value(t, s, c.name, labels...); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// Thresholds the module does not give are not invented.
	if n := len(s.Find("cxray_module_voltage_threshold_volts")); n != 1 {
		t.Errorf("%d voltage thresholds", n)
	}
	if n := len(s.Find("cxray_module_lane_signal")); n != 2 {
		t.Errorf("%d lane signals, want tx_fault and rx_los", n)
	}
}

// A cable without diagnostics: info and ddm 0, nothing else. An empty
// cage: present 0, no error. A module with no usable reading: the
// collector fails with the reason.
func TestModuleStates(t *testing.T) {
	dac := &optics.Module{Source: optics.SourceEEPROM, Media: optics.Media{Type: "passive-copper"}, Temperature: &optics.Temperature{C: 1}}
	logs := &bytes.Buffer{}
	src := &moduleSource{fakeSource: fakeSource{name: "d"}, modules: []*adapter.ModuleReading{
		{Port: 1, Module: 0, Present: yes(), EEPROM: dac},
		{Port: 2, Module: 1, Present: no()},
	}}
	s := scrapeOne(t, src, Options{Collectors: []string{"module"}, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if v := value(t, s, "cxray_module_ddm", "port", "1"); v != 0 {
		t.Errorf("ddm %v", v)
	}
	if n := len(s.Find("cxray_module_temperature_celsius")); n != 0 {
		t.Errorf("a temperature of a module without diagnostics")
	}
	if v := value(t, s, "cxray_module_present", "port", "2"); v != 0 || value(t, s, "cxray_scrape_collector_success", "collector", "module") != 1 {
		t.Errorf("empty cage: present %v", v)
	}
	src.modules = []*adapter.ModuleReading{{Port: 1, Module: 0, Present: yes(), EEPROMErr: errors.New("I2C error"), FirmwareErr: errors.New("no PDDR")}}
	s = scrapeOne(t, src, Options{Collectors: []string{"module"}, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if v := value(t, s, "cxray_scrape_collector_success", "collector", "module"); v != 0 {
		t.Errorf("unreadable module: success %v", v)
	}
	if !strings.Contains(logs.String(), "port 1 module: EEPROM: I2C error; the firmware's view: no PDDR") {
		t.Errorf("log: %s", logs)
	}
}

// A function whose register path did not open when the exporter started
// (held by mstflint) is served as down and opened again on the next
// scrape, through the adapter's own deferred open (adapter.TryOpen and
// Config.Reopen): once it opens it is up, and it is opened once.
func TestDeferredOpenServedDownThenUp(t *testing.T) {
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	f := devtest.New(db)
	f.Put("MGIR", "hw_info.num_ports=1", "hw_info.device_id=0x1021", "fw_info.psid=MT_0000000838")
	f.Put("PAOS", "local_port=1", "admin_status=up", "oper_status=up")
	var opens atomic.Int32
	var fail atomic.Bool
	fail.Store(true)
	open := func(context.Context) (*dev.Device, error) {
		opens.Add(1)
		if fail.Load() {
			return nil, errors.New("held by mstflint")
		}
		return f.Device("t", "0000:03:00.0", dev.BackendDirect), nil
	}
	d, err := adapter.TryOpen(context.Background(), open)
	if err == nil || d != nil {
		t.Fatalf("the first try opened: %v", err)
	}
	a := adapter.New(adapter.Config{Name: "t", BDF: "0000:03:00.0", Backend: dev.BackendDirect, DB: db, Reopen: open})
	e, err := New([]Source{FromAdapter(a)}, Options{NoRuntimeMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, _ := scrape(t, e.Handler(), "")
	if v := value(t, s, "cxray_device_up", "device", "0000:03:00.0", "backend", "direct"); v != 0 {
		t.Errorf("a device whose path does not open is up: %v", v)
	}
	n := opens.Load()
	fail.Store(false)
	s, _ = scrape(t, e.Handler(), "")
	if v := value(t, s, "cxray_device_up", "device", "0000:03:00.0", "backend", "direct"); v != 1 {
		t.Errorf("the device is not up once its path opened: %v", v)
	}
	scrape(t, e.Handler(), "")
	if got := opens.Load() - n; got != 1 {
		t.Errorf("%d opens after the path opened, want 1", got)
	}
}

// An adapter as a Source, over the register side: the device label is
// the PCI address; RDMA counters the backend lacks are left out.
func TestFromAdapterRegisters(t *testing.T) {
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	f := devtest.New(db)
	f.Put("MGIR", "hw_info.num_ports=1", "hw_info.device_id=0x1021", "fw_info.extended_major=28", "fw_info.extended_minor=39",
		"fw_info.extended_sub_minor=1002", "fw_info.psid=MT_0000000838")
	f.Put("PAOS", "local_port=1", "admin_status=up", "oper_status=up")
	f.Put("PMAOS", "module=0", "oper_status=unplugged")
	f.Put("MTMP", "sensor_index=0", "temperature=400")
	a := adapter.New(adapter.Config{Name: "t", BDF: "0000:03:00.0", Backend: dev.BackendDirect, DB: db, Registers: f.Device("t", "0000:03:00.0", dev.BackendDirect)})
	src := FromAdapter(a)
	if src.Name() != "0000:03:00.0" || src.Backend() != "direct" {
		t.Errorf("%s %s", src.Name(), src.Backend())
	}
	s := scrapeOne(t, src, Options{})
	d := []string{"device", "0000:03:00.0"}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"cxray_device_up", []string{"backend", "direct"}, 1},
		{"cxray_device_info", []string{"model", "ConnectX-7", "device_id", "0x1021", "hca_type", "MT4129", "psid", "MT_0000000838", "firmware_version", "28.39.1002"}, 1},
		{"cxray_temperature_celsius", []string{"sensor", "sensor0", "kind", "asic"}, 50},
		{"cxray_port_up", []string{"port", "1"}, 1},
		{"cxray_port_admin_up", []string{"port", "1"}, 1},
		{"cxray_module_present", []string{"port", "1"}, 0},
		{"cxray_scrape_collector_success", []string{"collector", "identity"}, 1},
		{"cxray_scrape_collector_success", []string{"collector", "counters"}, 0},
	} {
		if got := value(t, s, c.name, append(d, c.labels...)...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// No OS view: no RDMA counters, and the rdma collector is left out
	// rather than reported as failing.
	if n := len(s.Find("cxray_scrape_collector_success", "collector", "rdma")); n != 0 {
		t.Errorf("rdma collector reported on a backend without it")
	}
	// Without a PCI address the label is the name given.
	if n := FromAdapter(adapter.New(adapter.Config{Name: "emu:x", DB: db})).Name(); n != "emu:x" {
		t.Errorf("name %q", n)
	}
}

// The exporter on the kernel backend: what sysfs, hwmon, devlink and
// ethtool give.
func TestFromAdapterKernel(t *testing.T) {
	a := adaptertest.Kernel(t, "kernel:mlx5_1", nil)
	s := scrapeOne(t, FromAdapter(a), Options{})
	d := []string{"device", "0000:c1:00.1"}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"cxray_device_up", []string{"backend", "kernel"}, 1},
		{"cxray_device_info", []string{"firmware_stored_version", "28.41.1000", "rdma", "mlx5_1", "node_desc", "gpu-node-07 mlx5_1"}, 1},
		{"cxray_device_firmware_pending", nil, 1},
		{"cxray_port_info", []string{"port", "1", "link_layer", "InfiniBand", "netdev", "ibp193s0f1", "module", ""}, 1},
		{"cxray_port_state", []string{"port", "1"}, 4},
		{"cxray_port_phys_state", []string{"port", "1"}, 5},
		{"cxray_temperature_celsius", []string{"sensor", "asic"}, 60.875},
	} {
		if got := value(t, s, c.name, append(d, c.labels...)...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// IB port counters and RDMA counters have families of their own.
	if len(s.Find("cxray_ib_symbol_error_total", d...)) != 1 || len(s.Find("cxray_rdma_rx_write_requests_total", d...)) != 1 {
		t.Errorf("families %v", s.Families())
	}
}

func TestExporterHousekeeping(t *testing.T) {
	closed := errors.New("close failed")
	a, b := &closingSource{fakeSource{name: "a"}, nil}, &closingSource{fakeSource{name: "b"}, closed}
	e, err := New([]Source{a, b}, Options{NoRuntimeMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a", "b"}, e.Devices()); d != "" {
		t.Errorf("devices (-want +got):\n%s", d)
	}
	if err := e.Close(); !errors.Is(err, closed) {
		t.Errorf("close: %v", err)
	}
	help := CollectorHelp()
	for _, n := range CollectorNames() {
		if help[n] == "" {
			t.Errorf("collector %s has no help", n)
		}
	}
	if _, err := New([]Source{a, a}, Options{}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("twice: %v", err)
	}
}

type closingSource struct {
	fakeSource
	err error
}

func (c *closingSource) Close() error { return c.err }

// A label value Prometheus cannot carry (invalid UTF-8) is reported by
// the HTTP handler to the log; the other metrics are still served.
func TestInvalidLabelIsLogged(t *testing.T) {
	logs := &bytes.Buffer{}
	src := &badLabel{fakeSource{name: "d"}}
	s := scrapeOne(t, src, Options{Collectors: []string{"identity", "temperature"}, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if !strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("log: %s", logs)
	}
	if len(s.Find("cxray_temperature_celsius", "device", "d")) != 1 {
		t.Errorf("the other metrics are not served: %v", s.Families())
	}
}

type badLabel struct{ fakeSource }

func (b *badLabel) Identity(ctx context.Context) (*adapter.Identity, error) {
	return &adapter.Identity{PSID: "MT_\xff"}, nil
}

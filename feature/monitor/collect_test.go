package monitor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/adapter/adaptertest"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/feature/monitor"
	"github.com/cxray/cxray/internal/clock"
)

var start = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// rdma is an OS view with RDMA counters the test moves.
type rdma struct{ values map[string]uint64 }

func (r *rdma) OS(context.Context) (*adapter.OS, error) { return &adapter.OS{}, nil }
func (r *rdma) RDMACounters(context.Context, int) (map[string]uint64, error) {
	if r.values == nil {
		return nil, errors.New("no RDMA device")
	}
	out := map[string]uint64{}
	for k, v := range r.values {
		out[k] = v
	}
	return out, nil
}

// function is a one-port function over dev/devtest with an ASIC and a
// module sensor and two PPCNT groups.
func function(t *testing.T) (*adapter.Adapter, *devtest.Fake, *rdma, *clock.Manual) {
	db := devtest.DB(t)
	f := devtest.New(db)
	f.Put("MGIR", "hw_info.num_ports=1")
	f.Put("PMLP", "local_port=1", "width=4", "lane_module_mapping[0].module=0")
	f.Put("MTCAP", "sensor_map=0x1")
	f.Put("MTMP", "sensor_index=0", "temperature=400", "temperature_threshold_hi=840")
	f.Put("MTMP", "sensor_index=64", "temperature=320")
	f.Put("PPCNT", "local_port=1", "grp=18", "counter_set.phys_layer_cntrs_ext.symbol_errors=5")
	r := &rdma{values: map[string]uint64{"out_of_sequence": 9}}
	clk := clock.NewManual(start)
	a := adapter.New(adapter.Config{Name: "t", BDF: "0000:03:00.0", Backend: dev.BackendDirect, DB: db,
		Registers: f.Device("t", "0000:03:00.0", dev.BackendDirect), OSView: r, Clock: clk})
	return a, f, r, clk
}

// advance moves the test's clock and the fake device's own clock with it
// (MGIR uptime), as time passes on a device.
func advance(clk *clock.Manual, f *devtest.Fake, d time.Duration) {
	clk.Advance(d)
	f.Put("MGIR", "hw_info.num_ports=1", fmt.Sprintf("hw_info.uptime=%d", clk.Now().Sub(start)/time.Second))
}

func collectors(t *testing.T, what ...string) []monitor.Collector {
	t.Helper()
	cs, err := monitor.Collectors(what, devtest.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func collect(t *testing.T, a *adapter.Adapter, what ...string) (map[string]float64, []string) {
	t.Helper()
	out := map[string]float64{}
	var errs []string
	for _, c := range collectors(t, what...) {
		errs = append(errs, c.Collect(context.Background(), a, out)...)
	}
	return out, errs
}

// The keys each group writes.
func TestCollectorKeys(t *testing.T) {
	a, _, _, _ := function(t)
	got, errs := collect(t, a, "temp", "rdma")
	want := map[string]float64{"temp.asic_c": 50, "temp.asic_threshold_hi_c": 105, "temp.module0_c": 40, "port1.rdma.out_of_sequence": 9}
	if d := cmp.Diff(want, got); d != "" || len(errs) != 0 {
		t.Errorf("values (-want +got):\n%s\nerrors %v", d, errs)
	}
	got, errs = collect(t, a, "counters")
	if got["port1.ppcnt.symbol_errors"] != 5 || len(errs) != 1 || !strings.Contains(errs[0], "counters: port 1 PPCNT group 0") {
		t.Errorf("counters %v %v", got, errs)
	}
	names := []string{}
	for _, c := range collectors(t, "temp", "counters", " module ", "rdma", "", "MTMP[sensor_index=0]") {
		names = append(names, c.Name())
	}
	if d := cmp.Diff([]string{"temp", "counters", "module", "rdma", "MTMP"}, names); d != "" {
		t.Errorf("collector names (-want +got):\n%s", d)
	}
}

// A sentinel reading is left out and said why; it never becomes 0 °C or
// -4096 °C.
func TestTempNoReading(t *testing.T) {
	a, f, _, _ := function(t)
	f.Put("MTMP", "sensor_index=64", "temperature=0")
	f.Put("MTMP", "sensor_index=0", "temperature=0x8000")
	got, errs := collect(t, a, "temp")
	if len(got) != 0 {
		t.Errorf("values from sentinels: %v", got)
	}
	want := []string{"temp.asic_c: no reading (the sensor reads 0x8000, the pattern of no reading)",
		"temp.module0_c: no reading (the module sensor reads 0: an empty cage, or a module without a temperature monitor)"}
	if d := cmp.Diff(want, errs); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
}

func TestTempKey(t *testing.T) {
	for _, c := range []struct {
		t    adapter.Temperature
		want string
	}{
		{adapter.Temperature{Kind: "asic", Index: 0}, "temp.asic_c"},
		{adapter.Temperature{Kind: "asic", Index: -1, Sensor: "asic"}, "temp.asic_c"},
		{adapter.Temperature{Kind: "asic", Index: 2}, "temp.sensor2_c"},
		{adapter.Temperature{Kind: "module", Module: 3, Index: 67}, "temp.module3_c"},
		{adapter.Temperature{Kind: "module", Module: -1, Index: -1, Sensor: "Module Temp"}, "temp.module_temp_c"},
	} {
		if got := monitor.TempKey(c.t); got != c.want {
			t.Errorf("%+v: %s, want %s", c.t, got, c.want)
		}
	}
}

// Register collectors read any register instance in units; a typo in
// --what is refused at start, not a reading that never comes.
func TestRegisterCollector(t *testing.T) {
	a, _, _, _ := function(t)
	got, errs := collect(t, a, "MTMP[sensor_index=0]")
	if len(errs) != 0 || got["mtmp.sensor_index_0.temperature"] != 50 || got["mtmp.sensor_index_0.temperature_threshold_hi"] != 105 {
		t.Errorf("%v %v", got, errs)
	}
	if _, ok := got["mtmp.sensor_index_0.sensor_name"]; ok {
		t.Error("a text field is a value")
	}
	rc, err := monitor.ParseRegister("pddr[page_select=0,local_port=1]")
	if err != nil || rc.Register != "PDDR" || rc.Key() != "pddr.page_select_0.local_port_1" || len(rc.Index) != 2 {
		t.Errorf("%+v %v", rc, err)
	}
	// A register the firmware does not have: an error of the sample.
	_, errs = collect(t, a, "PDDR[page_select=0]")
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "PDDR: ") {
		t.Errorf("PDDR: %v", errs)
	}
	db := devtest.DB(t)
	for what, want := range map[string]string{
		"tmep":                "--what TMEP: not a group (" + strings.Join(monitor.Groups, ", ") + ") and",
		"MTMP[nosuch=1]":      "--what MTMP: ",
		"PMAOS":               "needs index field(s) module",
		"MTMP[sensor_index=0": "write REG[field=value,...]",
		"MTMP[a]b]":           "write REG[field=value,...]",
		"MTMP[x]":             "--what MTMP[x]: ",
		"a.b":                 "not a group (" + strings.Join(monitor.Groups, ", ") + ") or a register name",
		"":                    "nothing to monitor",
	} {
		if _, err := monitor.Collectors([]string{what}, db); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--what %q: %v, want %q", what, err, want)
		}
	}
	// Without a database the names are not checked.
	if _, err := monitor.Collectors([]string{"NOSUCH"}, nil); err != nil {
		t.Errorf("unchecked: %v", err)
	}
}

// monitor -d kernel: every group reads what the kernel offers.
func TestCollectorsOnKernelBackend(t *testing.T) {
	a := adaptertest.Kernel(t, "kernel:mlx5_0", nil)
	got, errs := collect(t, a, "temp", "counters", "rdma", "module")
	for k, want := range map[string]float64{
		"temp.asic_c": 61.25, "temp.asic_threshold_hi_c": 105, "temp.module0_c": 44,
		"port1.ib.symbol_error": 3992, "port1.rdma.np_cnp_sent": 5000000123,
	} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
	// The module through ethtool: its voltage, lanes and thresholds (the
	// fixture's test pattern has no plausible temperature).
	for _, k := range []string{"port1.module.voltage_v", "port1.module.lane1.tx_bias_ma",
		"port1.module.lane8.rx_power_mw", "port1.module.threshold.voltage_v.high_alarm", "port1.module.threshold.rx_power_mw.low_warning"} {
		if _, ok := got[k]; !ok {
			t.Errorf("no %s", k)
		}
	}
	if len(errs) != 0 {
		t.Errorf("errors %v", errs)
	}
	_, errs = collect(t, a, "MGIR")
	if len(errs) != 1 || !strings.Contains(errs[0], "MGIR: register access is not available on the kernel backend") {
		t.Errorf("register on the kernel backend: %v", errs)
	}
}

// The module collector over the emulator: every module value, its
// thresholds, and which keys are expected to move.
func TestModuleCollector(t *testing.T) {
	ads, _ := emutest.OpenYAML(t, "clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n    modules:\n      - {module: 1, plugged: false}\n")
	got, errs := collect(t, ads[0], "module")
	if len(errs) != 0 {
		t.Errorf("an empty cage is an error: %v", errs)
	}
	var keys []string
	for k := range got {
		if strings.HasPrefix(k, "port2.") {
			t.Errorf("a value of the empty cage: %s", k)
		}
		keys = append(keys, k)
	}
	// A 4-lane CMIS module: temperature, voltage, 3 readings a lane, and
	// 4 limits of 5 quantities.
	if len(keys) != 2+4*3+5*4 {
		t.Errorf("%d keys: %v", len(keys), keys)
	}
	mc := collectors(t, "module")[0]
	for k, want := range map[string]bool{
		"port1.module.temperature_c": true, "port1.module.voltage_v": true, "port1.module.lane2.tx_bias_ma": true,
		"port1.module.lane2.rx_power_mw": true, "port1.module.lane2.tx_power_mw": true,
		"port1.module.threshold.temperature_c.high_alarm": false, "temp.asic_c": false,
	} {
		if _, ok := got[k]; !ok && !strings.Contains(k, "temp.") {
			t.Errorf("no %s", k)
		}
		if mc.Moves(k) != want {
			t.Errorf("Moves(%s) = %v", k, !want)
		}
	}
	tc := collectors(t, "temp")[0]
	for k, want := range map[string]bool{"temp.asic_c": true, "temp.module0_c": true, "temp.asic_threshold_hi_c": false, "port1.module.temperature_c": false} {
		if tc.Moves(k) != want {
			t.Errorf("temp Moves(%s) = %v", k, !want)
		}
	}
	for _, c := range collectors(t, "counters", "rdma", "MGIR") {
		if c.Moves("port1.ppcnt.symbol_errors") {
			t.Errorf("%s: counters are not checked for freezing", c.Name())
		}
	}
}

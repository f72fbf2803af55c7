package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/exportercmd"
	"github.com/cxray/cxray/cli/internal/regcmd"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/emu/rdma"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/exporter"
	"github.com/cxray/cxray/feature/exporter/exportertest"
	"github.com/cxray/cxray/feature/modules"
	"github.com/cxray/cxray/optics"
	"github.com/cxray/cxray/prm"
)

// fleetFile is the 16-adapter scenario the exporter is tested on.
func fleetFile(t testing.TB) string {
	p, err := filepath.Abs("../examples/fleet-16.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runningExporter is `cxray exporter` started in-process with real flags,
// listening on a loopback port.
type runningExporter struct {
	url    string
	cancel context.CancelFunc
	done   chan error
	stderr *syncBuffer
	once   sync.Once
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startExporter(t testing.TB, args ...string) *runningExporter {
	t.Helper()
	return startExporterWith(t, exportercmd.Timeouts{}, args...)
}

// startExporterWith runs `cxray exporter` in this process on a free
// loopback port, with the HTTP server's timeouts t (zero: the defaults),
// until the test ends.
func startExporterWith(t testing.TB, timeouts exportercmd.Timeouts, args ...string) *runningExporter {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	r := &runningExporter{cancel: cancel, done: make(chan error, 1), stderr: &syncBuffer{}}
	a := newApp(context.Background(), strings.NewReader(""), &bytes.Buffer{}, r.stderr)
	root := rootCmd(a)
	replaceCommand(root, exportercmd.NewWithHooks(a, exportercmd.Hooks{
		Context:  func(context.Context) (context.Context, context.CancelFunc) { return ctx, func() {} },
		Ready:    func(a net.Addr) { addrc <- a },
		Timeouts: timeouts,
	}))
	root.SetArgs(append([]string{"exporter", "--listen", "127.0.0.1:0"}, args...))
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	go func() { r.done <- root.Execute() }()
	t.Cleanup(func() {
		r.stop()
	})
	select {
	case addr := <-addrc:
		r.url = "http://" + addr.String()
	case err := <-r.done:
		t.Fatalf("exporter %v: %v\n%s", args, err, r.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("exporter %v did not start", args)
	}
	return r
}

// replaceCommand puts c in the place of root's subcommand of its name.
func replaceCommand(root, c *cobra.Command) {
	for _, old := range root.Commands() {
		if old.Name() == c.Name() {
			root.RemoveCommand(old)
		}
	}
	root.AddCommand(c)
}

func (r *runningExporter) stop() {
	r.once.Do(func() {
		r.cancel()
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
		}
	})
}

func fetch(t testing.TB, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

func scrapeURL(t testing.TB, url string) (*exportertest.Scrape, string) {
	t.Helper()
	text := fetch(t, url+"/metrics")
	s, err := exportertest.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return s, text
}

// cliJSON runs a cxray command in-process and returns its JSON output.
func cliJSON(t testing.TB, args ...string) []byte {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append(args, "-o", "json"), strings.NewReader(""), &out, &errb)
	if code != cmdutil.ExitOK && code != cmdutil.ExitProblem {
		t.Fatalf("cxray %v: exit %d: %s", args, code, errb.String())
	}
	return out.Bytes()
}

// moduleOutput is the part of `cxray module -o json` compared.
type moduleOutput struct {
	Modules []struct {
		Port          int            `json:"port"`
		Module        int            `json:"module"`
		OperStatus    string         `json:"oper_status"`
		EEPROM        *optics.Module `json:"eeprom"`
		EEPROMError   string         `json:"eeprom_error"`
		Firmware      *optics.Module `json:"firmware"`
		FirmwareError string         `json:"firmware_error"`
	} `json:"modules"`
}

// regOutput is `cxray reg get -o json`.
type regOutput struct {
	Fields map[string]any `json:"fields"`
	Units  map[string]struct {
		Value float64 `json:"value"`
	} `json:"units"`
}

// checker compares a scrape with what the CLI reports for one device.
type checker struct {
	t      *testing.T
	s      *exportertest.Scrape
	device string
	n      int // values compared
}

func (c *checker) eq(what string, want float64, name string, labels ...string) {
	c.t.Helper()
	got, ok := c.s.Value(name, append([]string{"device", c.device}, labels...)...)
	if !ok {
		c.t.Errorf("%s %s: no single sample of %s%v", c.device, what, name, labels)
		return
	}
	c.n++
	if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
		c.t.Errorf("%s %s: exporter %s%v = %v, cxray says %v", c.device, what, name, labels, got, want)
	}
}

func (c *checker) label(what, want, name, label string, labels ...string) {
	c.t.Helper()
	f := c.s.Find(name, append([]string{"device", c.device}, labels...)...)
	if len(f) != 1 {
		c.t.Errorf("%s %s: %d samples of %s%v", c.device, what, len(f), name, labels)
		return
	}
	c.n++
	if got := f[0].Labels[label]; got != want {
		c.t.Errorf("%s %s: exporter %s{%s} = %q, cxray says %q", c.device, what, name, label, got, want)
	}
}

// modules compares the module metrics with `cxray module --all -o json`.
func (c *checker) modules(out []byte) {
	c.t.Helper()
	var mo moduleOutput
	if err := json.Unmarshal(out, &mo); err != nil || len(mo.Modules) == 0 {
		c.t.Fatalf("%s: module output: %v %s", c.device, err, out)
	}
	for _, r := range mo.Modules {
		port := strconv.Itoa(r.Port)
		if r.OperStatus == "unplugged" {
			c.eq("module present", 0, "cxray_module_present", "port", port)
			continue
		}
		c.eq("module present", 1, "cxray_module_present", "port", port)
		m, src := r.EEPROM, "eeprom"
		if m == nil || r.EEPROMError != "" {
			m, src = r.Firmware, "firmware"
		}
		if m == nil {
			c.t.Errorf("%s port %d: no module reading in the CLI output", c.device, r.Port)
			continue
		}
		c.label("module source", src, "cxray_module_info", "source", "port", port)
		c.label("module vendor", m.Vendor.Name, "cxray_module_info", "vendor", "port", port)
		c.label("module part number", m.Vendor.PN, "cxray_module_info", "part_number", "port", port)
		c.label("module serial number", m.Vendor.SN, "cxray_module_info", "serial_number", "port", port)
		if r.Module >= 0 {
			c.label("module cage", strconv.Itoa(r.Module), "cxray_module_info", "module", "port", port)
		}
		c.eq("module ddm", boolf(m.DDM), "cxray_module_ddm", "port", port)
		if !m.DDM {
			if len(c.s.Find("cxray_module_tx_power_watts", "device", c.device, "port", port)) != 0 {
				c.t.Errorf("%s: lane values without DDM", c.device)
			}
			continue
		}
		if m.Temperature != nil {
			c.eq("module temperature", m.Temperature.C, "cxray_module_temperature_celsius", "port", port)
		}
		if m.Voltage != nil {
			c.eq("module voltage", m.Voltage.V, "cxray_module_voltage_volts", "port", port)
		}
		for _, l := range m.Lanes {
			lane := strconv.Itoa(l.Lane)
			if l.TxBias != nil {
				c.eq("tx bias", l.TxBias.MA/1000, "cxray_module_tx_bias_amperes", "port", port, "lane", lane)
			}
			if l.TxPower != nil {
				c.eq("tx power W", l.TxPower.MW/1000, "cxray_module_tx_power_watts", "port", port, "lane", lane)
				c.eq("tx power dBm", float64(l.TxPower.DBm), "cxray_module_tx_power_dbm", "port", port, "lane", lane)
			}
			if l.RxPower != nil {
				c.eq("rx power W", l.RxPower.MW/1000, "cxray_module_rx_power_watts", "port", port, "lane", lane)
				c.eq("rx power dBm", float64(l.RxPower.DBm), "cxray_module_rx_power_dbm", "port", port, "lane", lane)
			}
			for _, sig := range []struct {
				name string
				on   *bool
			}{{"tx_fault", l.TxFault}, {"tx_los", l.TxLOS}, {"rx_los", l.RxLOS}, {"tx_cdr_lol", l.TxLOL}, {"rx_cdr_lol", l.RxLOL}} {
				if sig.on != nil {
					c.eq(sig.name, boolf(*sig.on), "cxray_module_lane_signal", "port", port, "lane", lane, "signal", sig.name)
				}
			}
			if f := l.Flags; f != nil {
				for _, q := range []struct {
					name string
					f    *optics.Flags
				}{{"tx_bias", f.TxBias}, {"tx_power", f.TxPower}, {"rx_power", f.RxPower}} {
					if q.f != nil {
						c.eq(q.name+" high alarm", boolf(q.f.HighAlarm), "cxray_module_lane_alarm", "port", port, "lane", lane, "quantity", q.name, "direction", "high")
						c.eq(q.name+" low warning", boolf(q.f.LowWarning), "cxray_module_lane_warning", "port", port, "lane", lane, "quantity", q.name, "direction", "low")
					}
				}
			}
		}
		if f := m.Flags; f != nil {
			c.eq("temperature high alarm", boolf(f.Temperature.HighAlarm), "cxray_module_alarm", "port", port, "quantity", "temperature", "direction", "high")
			c.eq("voltage low warning", boolf(f.Voltage.LowWarning), "cxray_module_warning", "port", port, "quantity", "voltage", "direction", "low")
		}
		if th := m.Thresholds; th != nil {
			names := [4]string{"high_alarm", "high_warning", "low_warning", "low_alarm"}
			if l := th.Temperature; l != nil {
				for i, v := range [4]*optics.Temperature{l.HighAlarm, l.HighWarning, l.LowWarning, l.LowAlarm} {
					if v != nil {
						c.eq("temperature threshold", v.C, "cxray_module_temperature_threshold_celsius", "port", port, "threshold", names[i])
					}
				}
			}
			if l := th.Voltage; l != nil {
				for i, v := range [4]*optics.Voltage{l.HighAlarm, l.HighWarning, l.LowWarning, l.LowAlarm} {
					if v != nil {
						c.eq("voltage threshold", v.V, "cxray_module_voltage_threshold_volts", "port", port, "threshold", names[i])
					}
				}
			}
			if l := th.TxBias; l != nil {
				for i, v := range [4]*optics.Current{l.HighAlarm, l.HighWarning, l.LowWarning, l.LowAlarm} {
					if v != nil {
						c.eq("bias threshold", v.MA*0.001, "cxray_module_tx_bias_threshold_amperes", "port", port, "threshold", names[i])
					}
				}
			}
			for _, p := range []struct {
				l      *optics.Limits[optics.Power]
				w, dbm string
			}{{th.TxPower, "cxray_module_tx_power_threshold_watts", "cxray_module_tx_power_threshold_dbm"},
				{th.RxPower, "cxray_module_rx_power_threshold_watts", "cxray_module_rx_power_threshold_dbm"}} {
				if p.l == nil {
					continue
				}
				for i, v := range [4]*optics.Power{p.l.HighAlarm, p.l.HighWarning, p.l.LowWarning, p.l.LowAlarm} {
					if v != nil {
						c.eq("power threshold", v.MW/1000, p.w, "port", port, "threshold", names[i])
						c.eq("power threshold dBm", float64(v.DBm), p.dbm, "port", port, "threshold", names[i])
					}
				}
			}
		}
	}
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// register compares the metrics of one register reading with `cxray reg
// get -o json`.
func (c *checker) register(reg string, index map[string]string, out []byte) {
	c.t.Helper()
	var r regOutput
	if err := json.Unmarshal(out, &r); err != nil {
		c.t.Fatalf("%s %s: %v %s", c.device, reg, err, out)
	}
	switch reg {
	case "MGIR":
		fw := r.Fields["fw_info"].(map[string]any)
		ver := fmt.Sprintf("%v.%v.%04v", fw["extended_major"], fw["extended_minor"], fw["extended_sub_minor"])
		c.label("firmware", ver, "cxray_device_info", "firmware_version")
		c.label("PSID", fmt.Sprint(fw["psid"]), "cxray_device_info", "psid")
	case "MQIS":
		// Only the first chunk is in one reading; the exporter joins them.
		s := fmt.Sprint(r.Fields["info_string"])
		f := c.s.Find("cxray_device_info", "device", c.device)
		if len(f) != 1 || !strings.HasPrefix(f[0].Labels["part_number"], s) {
			c.t.Errorf("%s part number: %v, MQIS starts %q", c.device, f, s)
		}
		c.n++
	case "MTMP":
		sensor := "sensor" + index["sensor_index"]
		if n, ok := r.Fields["sensor_name"].(string); ok && strings.TrimSpace(n) != "" {
			sensor = strings.TrimSpace(n)
		}
		if idx, _ := strconv.Atoi(index["sensor_index"]); idx >= 64 && r.Units["temperature"].Value == 0 {
			// A module sensor reading 0 is an empty cage: no reading,
			// so no sample (the sentinel is never a value).
			if len(c.s.Find("cxray_temperature_celsius", "device", c.device, "sensor", sensor)) != 0 {
				c.t.Errorf("%s %s: a reading of 0 (empty cage) was published", c.device, sensor)
			}
		} else {
			c.eq(sensor+" temperature", r.Units["temperature"].Value, "cxray_temperature_celsius", "sensor", sensor)
			c.eq(sensor+" highest", r.Units["max_temperature"].Value, "cxray_temperature_highest_celsius", "sensor", sensor)
		}
		c.eq(sensor+" high threshold", r.Units["temperature_threshold_hi"].Value, "cxray_temperature_threshold_celsius", "sensor", sensor, "threshold", "high")
	case "PAOS":
		port := index["local_port"]
		c.eq("port up", boolf(r.Fields["oper_status"] == "up"), "cxray_port_up", "port", port)
		c.eq("port admin up", boolf(r.Fields["admin_status"] == "up"), "cxray_port_admin_up", "port", port)
	case "PTYS":
		c.eq("port speed", r.Units["data_rate_oper"].Value*1e9/8, "cxray_port_speed_bytes_per_second", "port", index["local_port"])
	case "PPCNT":
		port := index["local_port"]
		cs := r.Fields["counter_set"].(map[string]any)
		for _, layout := range cs {
			for k, v := range layout.(map[string]any) {
				if strings.HasSuffix(k, "_high") || strings.HasSuffix(k, "_low") {
					continue
				}
				x, err := strconv.ParseFloat(fmt.Sprint(v), 64)
				if err != nil {
					c.t.Fatalf("%s PPCNT %s = %v", c.device, k, v)
				}
				name := "cxray_ppcnt_" + strings.TrimSuffix(k, "_total") + "_total"
				labels := []string{"port", port}
				switch {
				case k == "time_since_last_clear":
					name, x = "cxray_ppcnt_time_since_last_clear_seconds", x/1000
				case strings.Contains(k, "octets"):
					name = "cxray_ppcnt_" + k + "_bytes_total"
				}
				// A lane's counter is a lane-labelled sample of the
				// field's per-lane family.
				if i := strings.LastIndex(k, "_lane"); i > 0 {
					if _, err := strconv.Atoi(k[i+5:]); err == nil {
						name = "cxray_ppcnt_" + k[:i] + "_per_lane_total"
						labels = append(labels, "lane", k[i+5:])
					}
				}
				c.eq("PPCNT "+k, x, name, labels...)
			}
		}
	}
}

// regQueries are the `cxray reg get` readings compared for a device with
// ports 1..n whose modules are mods.
func regQueries(ports int, mods []int) []struct {
	reg   string
	index map[string]string
} {
	type q = struct {
		reg   string
		index map[string]string
	}
	out := []q{{"MGIR", nil}, {"MQIS", map[string]string{"info_type": "MODEL_NAME", "read_offset": "0"}},
		{"MTMP", map[string]string{"sensor_index": "0"}}}
	for _, m := range mods {
		out = append(out, q{"MTMP", map[string]string{"sensor_index": strconv.Itoa(64 + m)}})
	}
	for p := 1; p <= ports; p++ {
		lp := strconv.Itoa(p)
		out = append(out, q{"PAOS", map[string]string{"local_port": lp}}, q{"PTYS", map[string]string{"local_port": lp, "proto_mask": "Ethernet"}})
		for _, g := range []string{"0", "1", "18"} {
			out = append(out, q{"PPCNT", map[string]string{"local_port": lp, "grp": g}})
		}
	}
	return out
}

func indexArgs(index map[string]string) []string {
	var kv []string
	for k, v := range index {
		kv = append(kv, k+"="+v)
	}
	if len(kv) == 0 {
		return nil
	}
	return []string{"--index", strings.Join(kv, ",")}
}

// everyFamily is every metric family the issue asks for; each must appear
// in a scrape of the fleet.
var everyFamily = []string{
	"cxray_device_info", "cxray_device_up", "cxray_netdev_info",
	"cxray_temperature_celsius", "cxray_temperature_highest_celsius", "cxray_temperature_threshold_celsius",
	"cxray_module_present", "cxray_module_info", "cxray_module_ddm", "cxray_module_temperature_celsius", "cxray_module_voltage_volts",
	"cxray_module_tx_bias_amperes", "cxray_module_tx_power_watts", "cxray_module_tx_power_dbm", "cxray_module_rx_power_watts", "cxray_module_rx_power_dbm",
	"cxray_module_temperature_threshold_celsius", "cxray_module_voltage_threshold_volts", "cxray_module_tx_bias_threshold_amperes",
	"cxray_module_tx_power_threshold_watts", "cxray_module_tx_power_threshold_dbm", "cxray_module_rx_power_threshold_watts", "cxray_module_rx_power_threshold_dbm",
	"cxray_module_alarm", "cxray_module_warning", "cxray_module_lane_alarm", "cxray_module_lane_warning", "cxray_module_lane_signal",
	"cxray_port_info", "cxray_port_up", "cxray_port_admin_up", "cxray_port_speed_bytes_per_second", "cxray_port_lanes",
	"cxray_ppcnt_a_frames_transmitted_ok_total", "cxray_ppcnt_a_octets_received_ok_bytes_total", "cxray_ppcnt_if_in_errors_total",
	"cxray_ppcnt_rs_fec_corrected_blocks_total", "cxray_ppcnt_symbol_errors_total", "cxray_ppcnt_time_since_last_clear_seconds",
	"cxray_rdma_duplicate_request_total", "cxray_rdma_out_of_sequence_total", "cxray_rdma_local_ack_timeout_err_total",
	"cxray_rdma_packet_seq_err_total", "cxray_rdma_roce_adp_retrans_total", "cxray_rdma_roce_adp_retrans_to_total",
	"cxray_rdma_roce_slow_restart_total", "cxray_rdma_rx_write_requests_total", "cxray_rdma_np_cnp_sent_total",
	"cxray_scrape_collector_success", "cxray_scrape_collector_duration_seconds", "cxray_scrape_collector_errors_total",
	"cxray_scrape_device_duration_seconds", "cxray_exporter_build_info",
}

// fleetDevices lists the fleet's functions with their ports and modules.
type fleetDevice struct {
	bdf   string
	ports int
	mods  []int
}

func fleetDevices(t testing.TB) []fleetDevice {
	t.Helper()
	e, err := scenario.Resolve("emu:"+fleetFile(t), scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []fleetDevice
	for _, f := range e.Functions() {
		d := fleetDevice{bdf: f.BDF}
		for _, p := range f.View.Ports() {
			d.ports++
			d.mods = append(d.mods, f.Adapter.Spec.Spec.Ports[p-1].Module)
		}
		out = append(out, d)
	}
	return out
}

// TestExporterFleetMatchesCLI: `cxray exporter` on the sixteen emulated
// adapters serves every family, and its values are what `cxray module -o
// json` and `cxray reg get -o json` report at the same emulated time (the
// scenario's clock is manual and nobody moves it, so every command reads
// the scenario's start).
func TestExporterFleetMatchesCLI(t *testing.T) {
	file := fleetFile(t)
	r := startExporter(t, "-d", "emu:"+file, "--all")
	s, _ := scrapeURL(t, r.url)
	for _, f := range everyFamily {
		if len(s.Find(f)) == 0 {
			t.Errorf("family %s missing from the scrape", f)
		}
	}
	devs := fleetDevices(t)
	if len(devs) != 29 {
		t.Fatalf("%d functions", len(devs))
	}
	ports := 0
	for _, d := range devs {
		ports += d.ports
		if v, _ := s.Value("cxray_device_up", "device", d.bdf); v != 1 {
			t.Errorf("%s down: %s", d.bdf, r.stderr.String())
		}
		if v, _ := s.Value("cxray_scrape_collector_success", "device", d.bdf, "collector", "identity"); v != 1 {
			t.Errorf("%s identity failed", d.bdf)
		}
	}
	if ports != 32 || len(s.Find("cxray_port_up")) != 32 || len(s.Find("cxray_module_present")) != 32 {
		t.Errorf("ports %d, port_up %d, module_present %d", ports, len(s.Find("cxray_port_up")), len(s.Find("cxray_module_present")))
	}
	// Every module of every function against `cxray module`; the register
	// readings of a function of each kind against `cxray reg get`. The
	// commands run in parallel: each builds the scenario anew.
	regSample := map[string]bool{"0000:03:00.0": true, "0000:06:00.0": true, "0000:0d:00.1": true, "0000:0f:00.0": true}
	var mu sync.Mutex
	total := 0
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, d := range devs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			c := &checker{t: t, s: s, device: d.bdf}
			name := "emu:" + file + "@" + d.bdf
			c.modules(cliJSON(t, "module", "-d", name, "--all"))
			if regSample[d.bdf] {
				for _, q := range regQueries(d.ports, d.mods) {
					c.register(q.reg, q.index, cliJSON(t, append([]string{"reg", "get", q.reg, "-d", name}, indexArgs(q.index)...)...))
				}
			}
			mu.Lock()
			total += c.n
			mu.Unlock()
		}()
	}
	wg.Wait()
	t.Logf("%d values compared with the CLI", total)
	if total < 2000 {
		t.Errorf("only %d values compared", total)
	}
}

// TestExporterFleetMatchesCLIAnHourLater: the same comparison after the
// emulated clock moved an hour (temperatures, optics and counters have all
// moved), with the exporter and the CLI's own code reading one emulation.
func TestExporterFleetMatchesCLIAnHourLater(t *testing.T) {
	a := newApp(context.Background(), nil, &bytes.Buffer{}, &bytes.Buffer{})
	db, err := a.DB()
	if err != nil {
		t.Fatal(err)
	}
	name := "emu:" + fleetFile(t)
	e, err := scenario.Resolve(name, scenario.Options{DB: db})
	if err != nil || e.Manual == nil {
		t.Fatal(err)
	}
	e.Manual.Advance(time.Hour)
	srv := serveEmulation(t, e, db, name)
	s, _ := scrapeURL(t, srv)
	ctx := context.Background()
	total := 0
	for _, f := range e.Functions() {
		c := &checker{t: t, s: s, device: f.BDF}
		ads, err := emulator.Open(ctx, e, []*scenario.Function{f}, name, true, nil, adapter.Options{DB: db})
		if err != nil {
			t.Fatal(err)
		}
		ad := ads[0]
		reports, err := modules.Read(ctx, ad, modules.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var mods []int
		for _, r := range reports {
			mods = append(mods, r.Module)
		}
		out, _ := json.Marshal(map[string]any{"modules": reports})
		c.modules(out)
		d, err := ad.Registers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range regQueries(len(reports), mods) {
			var buf bytes.Buffer
			ca := newApp(ctx, nil, &buf, io.Discard)
			ca.Output = "json"
			rd, err := d.Get(ctx, q.reg, assignments(q.index), nil, 0)
			if err != nil {
				t.Fatalf("%s %s: %v", f.BDF, q.reg, err)
			}
			if err := regcmd.PrintReading(ca, ad, rd, "", false); err != nil {
				t.Fatal(err)
			}
			c.register(q.reg, q.index, buf.Bytes())
		}
		// RDMA counters: what the emulator's model says for the same time.
		m, err := rdma.New(f.Adapter, e.Clock, rdma.Config{})
		if err != nil {
			t.Fatal(err)
		}
		for lp, ap := range f.View.Ports() {
			want, err := m.Counters(ap, e.Clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range want {
				c.eq("rdma "+k, float64(v), "cxray_rdma_"+k+"_total", "port", strconv.Itoa(lp+1))
			}
		}
		ad.Close()
		total += c.n
	}
	if v, _ := s.Value("cxray_ppcnt_a_frames_transmitted_ok_total", "device", "0000:03:00.0", "port", "1"); v < 1e9 {
		t.Errorf("an hour of traffic counted only %v frames", v)
	}
	if v, _ := s.Value("cxray_rdma_rx_write_requests_total", "device", "0000:03:00.0", "port", "1"); v == 0 {
		t.Error("no RDMA writes after an hour")
	}
	t.Logf("%d values compared", total)
}

func assignments(index map[string]string) []prm.Assignment {
	var out []prm.Assignment
	for k, v := range index {
		out = append(out, prm.Assignment{Path: k, Value: v})
	}
	return out
}

// serveEmulation serves an already built emulation (its clock as it is)
// through the command's own source wiring, on a loopback port.
func serveEmulation(t testing.TB, e *scenario.Emulation, db *prm.DB, given string) string {
	t.Helper()
	ads, err := emulator.Open(context.Background(), e, e.Functions(), given, true, nil, adapter.Options{DB: db, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var srcs []exporter.Source
	for _, ad := range ads {
		srcs = append(srcs, exporter.FromAdapter(ad))
	}
	ex, err := exporter.New(srcs, exporter.Options{Timeout: 5 * time.Second, NoRuntimeMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: ex.Handler()}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close(); ex.Close() })
	return "http://" + l.Addr().String()
}

// TestExporterPassesPromtool: the fleet's scrape passes `promtool check
// metrics` (Debian package prometheus).
func TestExporterPassesPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("SKIPPING: promtool is not installed (apt-get install -y prometheus; scripts/setup.sh installs it)")
	}
	r := startExporter(t, "-d", "emu:"+fleetFile(t), "--all")
	_, text := scrapeURL(t, r.url)
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestExporterUsage: flag mistakes are usage errors that say what to do.
func TestExporterUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no device given"},
		{[]string{"-d", "emu", "--collectors", "optics"}, `no collector "optics"`},
		{[]string{"-d", "emu", "--collectors.exclude", strings.Join(exporter.CollectorNames(), ",")}, "no collector left"},
		{[]string{"-d", "emu", "--metrics.exclude", "("}, "--metrics.exclude"},
		{[]string{"-d", "emu", "--scrape-timeout", "0s"}, "--scrape-timeout"},
		{[]string{"-d", "emu", "--log.level", "loud"}, "--log.level"},
		{[]string{"-d", "emu", "--web.config", "/nonexistent/web.yml"}, "--web.config"},
		{[]string{"-d", "emu:cx7-2p400g@0000:03:00.0", "--all"}, "names one function"},
		{[]string{"-d", "emu", "-d", "emu:cx6dx-2p100g"}, "given twice"},
	} {
		var out, errb bytes.Buffer
		a := newApp(context.Background(), nil, &out, &errb)
		root := rootCmd(a)
		replaceCommand(root, exportercmd.New(a)) // cxray-exporter's command, in process
		root.SetArgs(append([]string{"exporter", "--listen", "127.0.0.1:0"}, c.args...))
		err := root.Execute()
		var ee *cmdutil.ExitError
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &ee) || ee.Code != cmdutil.ExitUsage {
			t.Errorf("%v: %v", c.args, err)
		}
	}
}

// TestExporterRefusesNonMellanox: -d naming a PCI function that is not
// Mellanox's exits 2 at start (issue 26.11), where it was served as
// cxray_device_up 0 forever; a Mellanox function that cannot be opened
// now is still served as down and retried.
func TestExporterRefusesNonMellanox(t *testing.T) {
	root := t.TempDir()
	for bdf, vendor := range map[string]string{"0000:00:1f.0": "0x8086", "0000:03:00.0": "0x15b3"} {
		dir := filepath.Join(root, "bus/pci/devices", bdf)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "vendor"), []byte(vendor+"\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "device"), []byte("0x1021\n"), 0o644)
	}
	saved := sys
	sys = devname.Sys{Root: root}
	t.Cleanup(func() { sys = saved })
	var out, errb bytes.Buffer
	a := newApp(context.Background(), nil, &out, &errb)
	r := rootCmd(a)
	// Bounded: an exporter that starts anyway serves for 5 s, then ends.
	replaceCommand(r, exportercmd.NewWithHooks(a, exportercmd.Hooks{
		Context: func(p context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(p, 5*time.Second)
		},
	}))
	r.SetArgs([]string{"exporter", "--listen", "127.0.0.1:0", "-d", "0000:00:1f.0"})
	err := r.Execute()
	var ee *cmdutil.ExitError
	if !errors.As(err, &ee) || ee.Code != cmdutil.ExitUsage || !strings.Contains(err.Error(), "vendor 0x8086, not a Mellanox/NVIDIA function") {
		t.Errorf("a non-Mellanox function: %v", err)
	}
	// The Mellanox one (no config space in the fake tree) starts, served
	// as down.
	ex := startExporter(t, "-d", "0000:03:00.0", "--timeout", "1s", "--scrape-timeout", "2s")
	s, _ := scrapeURL(t, ex.url)
	if v, ok := s.Value("cxray_device_up", "device", "0000:03:00.0"); !ok || v != 0 {
		t.Errorf("an unopenable Mellanox function: cxray_device_up %v (served %v), want 0", v, ok)
	}
}

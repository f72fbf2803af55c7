package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/feature/exporter/exportertest"
	"github.com/cxray/cxray/optics"
)

// fakeSource answers every method with fixed values, after a delay, or
// fails; stuck makes it ignore the context until released.
type fakeSource struct {
	name   string
	delay  time.Duration
	stuck  chan struct{} // non-nil: block (ignoring ctx) until closed
	gate   chan struct{} // non-nil: block (within ctx) until closed
	gone   atomic.Bool
	calls  atomic.Int32
	noRDMA bool
}

var errGone = errors.New("device gone: config space reads all ones")

func (f *fakeSource) Name() string    { return f.name }
func (f *fakeSource) Backend() string { return "fake" }
func (f *fakeSource) Close() error    { return nil }

func (f *fakeSource) wait(ctx context.Context) error {
	f.calls.Add(1)
	if f.stuck != nil {
		<-f.stuck
	}
	if f.gone.Load() {
		return errGone
	}
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (f *fakeSource) Identity(ctx context.Context) (*adapter.Identity, error) {
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	return &adapter.Identity{PSID: "MT_0000000834", Firmware: "28.39.1010", FirmwareStored: "28.40.1000", FirmwarePending: "28.40.1000", PartNumber: "PN-" + f.name,
		PermanentMAC: "b8:3f:d2:00:00:01"}, nil
}

func (f *fakeSource) OS(ctx context.Context) (*adapter.OS, error) {
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	return &adapter.OS{Netdevs: []adapter.Netdev{{Name: "eth0", Address: "02:00:00:00:00:01", PermanentAddress: "b8:3f:d2:00:00:01"}}}, nil
}

func (f *fakeSource) Temperatures(ctx context.Context) ([]adapter.Temperature, error) {
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	hi, c := 105.0, 55.5
	return []adapter.Temperature{{Sensor: "asic", Kind: "asic", Module: -1, Celsius: &c, High: &hi}}, nil
}

func (f *fakeSource) Ports(ctx context.Context) ([]adapter.Port, error) {
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	return []adapter.Port{{Local: 1, Module: 0, Lanes: 4}}, nil
}

func (f *fakeSource) Links(ctx context.Context) ([]adapter.Link, error) {
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	up, speed := true, 400.0
	return []adapter.Link{{Port: 1, OperUp: &up, AdminUp: &up, SpeedGbps: &speed}}, nil
}

func (f *fakeSource) Modules(ctx context.Context) ([]*adapter.ModuleReading, error) {
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	yes := true
	m := &optics.Module{Source: optics.SourceEEPROM, DDM: true, Temperature: &optics.Temperature{C: 40},
		Lanes: []optics.Lane{{Lane: 1, RxPower: &optics.Power{MW: 0, DBm: optics.ToDBm(0)}, TxPower: &optics.Power{MW: 1, DBm: 0}}}}
	return []*adapter.ModuleReading{{Port: 1, Module: 0, Present: &yes, EEPROM: m}}, nil
}

func (f *fakeSource) PortCounters(ctx context.Context) ([]adapter.CounterSet, error) {
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	return []adapter.CounterSet{{Port: 1, Kind: "ppcnt", Values: map[string]uint64{"a_frames_transmitted_ok": 100, "a_octets_received_ok": 6400, "time_since_last_clear": 2500, "rs_fec_corrected_symbols_total": 3}}}, nil
}

func (f *fakeSource) RDMACounters(ctx context.Context) ([]adapter.CounterSet, error) {
	if f.noRDMA {
		return nil, fmt.Errorf("hw_counters: %w", ErrUnsupported)
	}
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	return []adapter.CounterSet{{Port: 1, Kind: "rdma", Values: map[string]uint64{"local_ack_timeout_err": 9, "duplicate_request": 117}}}, nil
}

func scrape(t *testing.T, h http.Handler, header string) (*exportertest.Scrape, time.Duration) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if header != "" {
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", header)
	}
	w := httptest.NewRecorder()
	t0 := time.Now()
	h.ServeHTTP(w, req)
	took := time.Since(t0)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body.String())
	}
	s, err := exportertest.Parse(w.Body.String())
	if err != nil {
		t.Fatal(err)
	}
	return s, took
}

func value(t *testing.T, s *exportertest.Scrape, name string, labels ...string) float64 {
	t.Helper()
	v, ok := s.Value(name, labels...)
	if !ok {
		t.Fatalf("%s%v: %d samples", name, labels, len(s.Find(name, labels...)))
	}
	return v
}

func TestMetricsFromOneSource(t *testing.T) {
	e, err := New([]Source{&fakeSource{name: "0000:03:00.0"}}, Options{NoRuntimeMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := scrape(t, e.Handler(), "")
	d := []string{"device", "0000:03:00.0"}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"cxray_device_up", nil, 1},
		{"cxray_device_info", []string{"psid", "MT_0000000834", "part_number", "PN-0000:03:00.0", "firmware_version", "28.39.1010"}, 1},
		{"cxray_device_firmware_pending", nil, 1},
		{"cxray_netdev_address_changed", []string{"netdev", "eth0"}, 1},
		{"cxray_temperature_celsius", []string{"sensor", "asic", "kind", "asic", "module", ""}, 55.5},
		{"cxray_temperature_threshold_celsius", []string{"threshold", "high"}, 105},
		{"cxray_port_up", []string{"port", "1"}, 1},
		{"cxray_port_speed_bytes_per_second", []string{"port", "1"}, 5e10},
		{"cxray_port_lanes", []string{"port", "1"}, 4},
		{"cxray_module_present", []string{"port", "1"}, 1},
		{"cxray_module_tx_power_watts", []string{"lane", "1"}, 0.001},
		{"cxray_module_tx_power_dbm", []string{"lane", "1"}, 0},
		{"cxray_module_rx_power_dbm", []string{"lane", "1"}, math.Inf(-1)},
		{"cxray_ppcnt_a_frames_transmitted_ok_total", nil, 100},
		{"cxray_ppcnt_a_octets_received_ok_bytes_total", nil, 6400},
		{"cxray_ppcnt_time_since_last_clear_seconds", nil, 2.5},
		{"cxray_ppcnt_rs_fec_corrected_symbols_total", nil, 3},
		{"cxray_rdma_local_ack_timeout_err_total", []string{"port", "1"}, 9},
		{"cxray_rdma_duplicate_request_total", nil, 117},
		{"cxray_scrape_collector_success", []string{"collector", "module"}, 1},
		{"cxray_scrape_collector_errors_total", []string{"collector", "rdma"}, 0},
	} {
		if got := value(t, s, c.name, append(d, c.labels...)...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if s.Types["cxray_rdma_duplicate_request_total"] != "counter" || s.Types["cxray_ppcnt_time_since_last_clear_seconds"] != "gauge" {
		t.Errorf("types %v", s.Types)
	}
}

// TestSlowDeviceDoesNotHoldUpOthers: one device that answers only after
// the scrape; the scrape ends with everything the others had. Not a timing
// test (the load test in cli holds scrapes to their deadline, when asked
// for): the slow device's gate opens only when the test ends, so a scrape
// that waited for it would never return. The budget is generous so that
// the others answer in it on a loaded machine.
func TestSlowDeviceDoesNotHoldUpOthers(t *testing.T) {
	gate := make(chan struct{})
	t.Cleanup(func() { close(gate) })
	slow := &fakeSource{name: "slow", gate: gate}
	srcs := []Source{slow}
	for i := range 5 {
		srcs = append(srcs, &fakeSource{name: fmt.Sprintf("fast%d", i)})
	}
	e, err := New(srcs, Options{Timeout: 2 * time.Second, NoRuntimeMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := scrape(t, e.Handler(), "")
	for i := range 5 {
		d := fmt.Sprintf("fast%d", i)
		if value(t, s, "cxray_device_up", "device", d) != 1 || len(s.Find("cxray_module_tx_power_watts", "device", d)) != 1 {
			t.Errorf("%s: not read", d)
		}
	}
	if value(t, s, "cxray_device_up", "device", "slow") != 0 || value(t, s, "cxray_scrape_collector_success", "device", "slow", "collector", "identity") != 0 ||
		value(t, s, "cxray_scrape_collector_errors_total", "device", "slow", "collector", "module") != 1 {
		t.Error("slow device reported as up")
	}
}

// TestStuckDeviceIsReadByOneGoroutine: a device whose reads ignore the
// context holds one goroutine; later scrapes report it busy and start no
// more; once it answers it is read again.
func TestStuckDeviceIsReadByOneGoroutine(t *testing.T) {
	// The stuck device ignores the context until the test lets it go, so a
	// scrape that waited for it would never return (no timing assertion);
	// the budget is generous so that "ok" answers in it under load.
	stuck := &fakeSource{name: "stuck", stuck: make(chan struct{})}
	e, err := New([]Source{stuck, &fakeSource{name: "ok"}}, Options{Timeout: 500 * time.Millisecond, NoRuntimeMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	h := e.Handler()
	scrape(t, h, "")
	before := runtime.NumGoroutine()
	var s *exportertest.Scrape
	const scrapes = 10
	for range scrapes {
		s, _ = scrape(t, h, "")
	}
	if after := runtime.NumGoroutine(); after > before+2 {
		t.Errorf("goroutines grew from %d to %d over %d scrapes of a stuck device", before, after, scrapes)
	}
	if n := stuck.calls.Load(); n != 1 {
		t.Errorf("the stuck device was entered %d times, want 1", n)
	}
	if value(t, s, "cxray_device_up", "device", "stuck") != 0 || value(t, s, "cxray_scrape_collector_errors_total", "device", "stuck", "collector", "identity") != scrapes+1 ||
		value(t, s, "cxray_device_up", "device", "ok") != 1 {
		t.Error("stuck device not reported")
	}
	close(stuck.stuck)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		s, _ = scrape(t, h, "")
		if v, _ := s.Value("cxray_device_up", "device", "stuck"); v == 1 {
			return
		}
	}
	t.Error("the device did not come back once it answered")
}

func TestGoneDeviceIsReportedNotFatal(t *testing.T) {
	g := &fakeSource{name: "gone"}
	g.gone.Store(true)
	e, _ := New([]Source{g, &fakeSource{name: "ok"}}, Options{NoRuntimeMetrics: true, Timeout: time.Second})
	s, _ := scrape(t, e.Handler(), "")
	if value(t, s, "cxray_device_up", "device", "gone", "backend", "fake") != 0 || len(s.Find("cxray_device_info", "device", "gone")) != 0 ||
		value(t, s, "cxray_device_up", "device", "ok") != 1 {
		t.Error("gone device")
	}
	g.gone.Store(false)
	s, _ = scrape(t, e.Handler(), "")
	if value(t, s, "cxray_device_up", "device", "gone") != 1 || value(t, s, "cxray_scrape_collector_errors_total", "device", "gone", "collector", "port") != 1 {
		t.Error("device did not come back")
	}
}

func TestFiltersAndCollectors(t *testing.T) {
	e, err := New([]Source{&fakeSource{name: "a"}}, Options{NoRuntimeMetrics: true,
		Include: regexp.MustCompile(`^cxray_(module|ppcnt)_`), Exclude: regexp.MustCompile(`_dbm$|^cxray_ppcnt_a_`)})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := scrape(t, e.Handler(), "")
	for _, f := range s.Families() {
		if strings.HasSuffix(f, "_dbm") || strings.HasPrefix(f, "cxray_ppcnt_a_") || strings.HasPrefix(f, "cxray_temperature") || strings.HasPrefix(f, "cxray_rdma") {
			t.Errorf("%s served", f)
		}
	}
	for _, want := range []string{"cxray_module_tx_power_watts", "cxray_ppcnt_time_since_last_clear_seconds", "cxray_device_up", "cxray_scrape_collector_success"} {
		if len(s.Find(want)) == 0 {
			t.Errorf("%s missing", want)
		}
	}
	// Only some collectors: the others neither run nor report.
	src := &fakeSource{name: "b"}
	e, err = New([]Source{src}, Options{NoRuntimeMetrics: true, Collectors: []string{"identity", "rdma"}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ = scrape(t, e.Handler(), "")
	// identity reads the identity and the OS view, rdma its counters.
	if len(s.Find("cxray_temperature_celsius")) != 0 || len(s.Find("cxray_scrape_collector_success")) != 2 || src.calls.Load() != 3 {
		t.Errorf("collectors: %v, %d calls", s.Families(), src.calls.Load())
	}
	if _, err := New(nil, Options{Collectors: []string{"optics"}}); err == nil || !strings.Contains(err.Error(), "identity, temperature, port, counters, module, rdma") {
		t.Errorf("unknown collector: %v", err)
	}
}

// TestUnsupportedCollectorIsLeftOut: RDMA counters over direct access
// without the kernel driver are not an error.
func TestUnsupportedCollectorIsLeftOut(t *testing.T) {
	e, _ := New([]Source{&fakeSource{name: "a", noRDMA: true}}, Options{NoRuntimeMetrics: true})
	s, _ := scrape(t, e.Handler(), "")
	if len(s.Find("cxray_scrape_collector_success", "collector", "rdma")) != 0 || value(t, s, "cxray_device_up", "device", "a") != 1 {
		t.Error("unsupported collector reported")
	}
}

func TestOnlyGetAndHead(t *testing.T) {
	e, _ := New([]Source{&fakeSource{name: "a"}}, Options{NoRuntimeMetrics: true})
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		req, _ := http.NewRequest(m, srv.URL+"/metrics", strings.NewReader("x"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(string(b), "read-only") {
			t.Errorf("%s: %d %s", m, resp.StatusCode, b)
		}
	}
}

func TestBudgetFollowsPrometheus(t *testing.T) {
	e, _ := New(nil, Options{Timeout: 10 * time.Second, NoRuntimeMetrics: true})
	for _, c := range []struct {
		header string
		want   time.Duration
	}{{"", 10 * time.Second}, {"3", 2900 * time.Millisecond}, {"30", 10 * time.Second}, {"0.05", 100 * time.Millisecond}, {"junk", 10 * time.Second}} {
		if got := e.budget(c.header); got != c.want {
			t.Errorf("header %q: budget %v, want %v", c.header, got, c.want)
		}
	}
}

// TestConcurrentScrapes: two Prometheus servers scraping at once share the
// devices safely (run with -race).
func TestConcurrentScrapes(t *testing.T) {
	var srcs []Source
	for i := range 4 {
		srcs = append(srcs, &fakeSource{name: fmt.Sprint(i), delay: time.Millisecond})
	}
	e, _ := New(srcs, Options{NoRuntimeMetrics: true, Timeout: 2 * time.Second})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
				w := httptest.NewRecorder()
				e.Handler().ServeHTTP(w, req)
				if w.Code != 200 {
					t.Errorf("status %d", w.Code)
				}
			}
		}()
	}
	wg.Wait()
}

// TestOverlappingScrapesShareOneRead: a scrape that finds a read under
// way waits for it and serves its result; neither scrape sees the device
// down, and the device is read once.
func TestOverlappingScrapesShareOneRead(t *testing.T) {
	gate := make(chan struct{})
	slow := &fakeSource{name: "slow", gate: gate}
	e, err := New([]Source{slow, &fakeSource{name: "ok"}}, Options{NoRuntimeMetrics: true, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h := e.Handler()
	got := make(chan *exportertest.Scrape, 2)
	go func() { s, _ := scrape(t, h, ""); got <- s }()
	waitFor(t, func() bool { return slow.calls.Load() == 1 })
	go func() { s, _ := scrape(t, h, ""); got <- s }()
	waitFor(t, func() bool { return e.devices[0].joins.Load() == 1 })
	close(gate)
	for range 2 {
		s := <-got
		for _, d := range []string{"slow", "ok"} {
			if v := value(t, s, "cxray_device_up", "device", d); v != 1 {
				t.Errorf("%s: cxray_device_up %v in an overlapping scrape, want 1", d, v)
			}
			if v := value(t, s, "cxray_scrape_collector_errors_total", "device", d, "collector", "identity"); v != 0 {
				t.Errorf("%s: identity errors %v, want 0", d, v)
			}
		}
		if len(s.Find("cxray_module_tx_power_watts", "device", "slow")) != 1 {
			t.Error("the joined scrape did not serve the shared read's metrics")
		}
	}
	// One read's worth of calls: measure a read alone and compare.
	shared := slow.calls.Load()
	scrape(t, h, "")
	if alone := slow.calls.Load() - shared; shared != alone {
		t.Errorf("two overlapping scrapes made %d calls, one scrape makes %d: the read was not shared", shared, alone)
	}
}

// TestJoinedScrapeOutlivedIsBusy: a scrape whose deadline comes before
// the read it joined ends reports the device busy (an earlier read), not
// its own timeout.
func TestJoinedScrapeOutlivedIsBusy(t *testing.T) {
	gate := make(chan struct{})
	slow := &fakeSource{name: "slow", gate: gate}
	e, _ := New([]Source{slow}, Options{NoRuntimeMetrics: true, Timeout: 20 * time.Second})
	h := e.Handler()
	first := make(chan *exportertest.Scrape, 1)
	go func() { s, _ := scrape(t, h, ""); first <- s }()
	waitFor(t, func() bool { return slow.calls.Load() == 1 })
	s, _ := scrape(t, h, "0.3") // Prometheus gives this one 0.3 s
	if value(t, s, "cxray_device_up", "device", "slow") != 0 {
		t.Error("a device whose read had not ended served as up")
	}
	if !strings.Contains(e.devices[0].lastErr["identity"], "earlier scrape") {
		t.Errorf("logged error %q, want the busy explanation", e.devices[0].lastErr["identity"])
	}
	close(gate)
	if s := <-first; value(t, s, "cxray_device_up", "device", "slow") != 1 {
		t.Error("the first scrape did not get its read")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not reached in 10 s")
}

func TestCounterFamilyNames(t *testing.T) {
	for _, c := range []struct {
		kind, name, want string
		scale            float64
		lane             string
	}{
		{"ppcnt", "a_frames_received_ok", "cxray_ppcnt_a_frames_received_ok_total", 1, ""},
		{"ppcnt", "if_in_octets", "cxray_ppcnt_if_in_octets_bytes_total", 1, ""},
		{"ppcnt", "time_since_last_clear", "cxray_ppcnt_time_since_last_clear_seconds", 0.001, ""},
		// Lanes are a label of one family, apart from the port's total.
		{"ppcnt", "rs_fec_corrected_symbols_total", "cxray_ppcnt_rs_fec_corrected_symbols_total", 1, ""},
		{"ppcnt", "rs_fec_corrected_symbols_lane0", "cxray_ppcnt_rs_fec_corrected_symbols_per_lane_total", 1, "0"},
		{"ppcnt", "rs_fec_corrected_symbols_lane7", "cxray_ppcnt_rs_fec_corrected_symbols_per_lane_total", 1, "7"},
		{"ppcnt", "edpl_bip_errors_lane3", "cxray_ppcnt_edpl_bip_errors_per_lane_total", 1, "3"},
		// No _total_total, no _total_bytes_total.
		{"ppcnt", "octets_total", "cxray_ppcnt_octets_bytes_total", 1, ""},
		{"ib", "port_xmit_data", "cxray_ib_port_xmit_data_bytes_total", 4, ""},
		{"ib", "VL15_dropped", "cxray_ib_vl15_dropped_total", 1, ""},
		{"rdma", "out_of_sequence", "cxray_rdma_out_of_sequence_total", 1, ""},
		{"rdma", "weird-name.x", "cxray_rdma_weird_name_x_total", 1, ""},
		{"rdma", "errors_total", "cxray_rdma_errors_total", 1, ""},
	} {
		f, scale, lane := counterFamily(c.kind, c.name)
		if f.name != c.want || scale != c.scale || lane != c.lane {
			t.Errorf("%s %s: %s ×%v lane %q, want %s ×%v lane %q", c.kind, c.name, f.name, scale, lane, c.want, c.scale, c.lane)
		}
		if wantLabels := map[bool]int{true: 3, false: 2}[c.lane != ""]; len(f.labels) != wantLabels {
			t.Errorf("%s %s: labels %v", c.kind, c.name, f.labels)
		}
	}
}

package cli

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
	emuoptics "github.com/cxray/cxray/emu/optics"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/exporter/exportertest"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/kernel/kerneltest"
	"github.com/cxray/cxray/optics"
)

// treeDigest hashes every file, link and mode under root, to show nothing
// was written.
func treeDigest(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v %d\n", p, info.Mode(), info.ModTime().UnixNano())
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestExporterKernelBackend: over the fake ConnectX-7 sysfs tree and fake
// netlink kernel, the exporter serves every value the kernel backend reads
// (identity, devlink, MACs, hwmon, port state and rate, every counters/
// and hw_counters/ file, the CMIS module) and writes nothing.
func TestExporterKernelBackend(t *testing.T) {
	k := withKernelFixture(t)
	root := sys.Root
	before := treeDigest(t, root)
	r := startExporter(t, "-d", "kernel:mlx5_0", "-d", "kernel:mlx5_1")
	s, text := scrapeURL(t, r.url)
	es, err := kerneltest.Entries(kerneltest.CX7)
	if err != nil {
		t.Fatal(err)
	}
	const fn0 = "devices/pci0000:c0/0000:c0:01.1/0000:c1:00.0"
	const fn1 = "devices/pci0000:c0/0000:c0:01.1/0000:c1:00.1"
	n := 0
	for _, c := range []struct{ dir, rdma, bdf string }{{fn0, "mlx5_0", "0000:c1:00.0"}, {fn1, "mlx5_1", "0000:c1:00.1"}} {
		ck := &checker{t: t, s: s, device: c.bdf}
		ib := kerneltest.Values(es, c.dir+"/infiniband/"+c.rdma)
		for file, label := range map[string]string{"fw_ver": "firmware_version", "board_id": "psid", "hca_type": "hca_type", "hw_rev": "hw_rev",
			"node_guid": "node_guid", "sys_image_guid": "sys_image_guid", "node_desc": "node_desc"} {
			ck.label(file, ib[file], "cxray_device_info", label, "backend", "kernel", "rdma", c.rdma, "model", "ConnectX-7", "device_id", "0x1021")
		}
		ck.label("devlink stored firmware", "28.41.1000", "cxray_device_info", "firmware_stored_version")
		ck.eq("firmware pending", 1, "cxray_device_firmware_pending")
		port := kerneltest.Values(es, c.dir+"/infiniband/"+c.rdma+"/ports/1")
		state, _ := strconv.Atoi(strings.SplitN(port["state"], ":", 2)[0])
		phys, _ := strconv.Atoi(strings.SplitN(port["phys_state"], ":", 2)[0])
		ck.eq("state", float64(state), "cxray_port_state", "port", "1")
		ck.eq("phys_state", float64(phys), "cxray_port_phys_state", "port", "1")
		ck.eq("link up", 1, "cxray_port_up", "port", "1")
		gbps, _ := strconv.ParseFloat(strings.Fields(port["rate"])[0], 64)
		ck.eq("rate", gbps*1e9/8, "cxray_port_speed_bytes_per_second", "port", "1")
		ck.eq("width", 4, "cxray_port_lanes", "port", "1")
		ck.label("link layer", port["link_layer"], "cxray_port_info", "link_layer", "port", "1")
		for file, v := range kerneltest.Values(es, c.dir+"/infiniband/"+c.rdma+"/ports/1/counters") {
			x, _ := strconv.ParseFloat(v, 64)
			name := "cxray_ib_" + strings.ToLower(file) + "_total"
			if file == "port_xmit_data" || file == "port_rcv_data" {
				name, x = "cxray_ib_"+file+"_bytes_total", x*4
			}
			ck.eq("counters/"+file, x, name, "port", "1")
		}
		hw := kerneltest.Values(es, c.dir+"/infiniband/"+c.rdma+"/ports/1/hw_counters")
		delete(hw, "lifespan")
		if len(hw) < 20 {
			t.Fatalf("%s: %d hw_counters in the tree", c.rdma, len(hw))
		}
		for file, v := range hw {
			x, _ := strconv.ParseFloat(v, 64)
			ck.eq("hw_counters/"+file, x, "cxray_rdma_"+file+"_total", "port", "1")
		}
		hwmon := ""
		for _, e := range es {
			if strings.HasPrefix(e.Path, c.dir+"/hwmon/hwmon") && strings.HasSuffix(e.Path, "/name") {
				hwmon = filepath.Dir(e.Path)
			}
		}
		temps := kerneltest.Values(es, hwmon)
		for ch := 1; temps[fmt.Sprintf("temp%d_input", ch)] != ""; ch++ {
			label := temps[fmt.Sprintf("temp%d_label", ch)]
			for suffix, fam := range map[string]string{"input": "cxray_temperature_celsius", "highest": "cxray_temperature_highest_celsius"} {
				md, _ := strconv.ParseFloat(temps[fmt.Sprintf("temp%d_%s", ch, suffix)], 64)
				ck.eq("hwmon "+label+" "+suffix, md/1000, fam, "sensor", label)
			}
			md, _ := strconv.ParseFloat(temps[fmt.Sprintf("temp%d_crit", ch)], 64)
			ck.eq("hwmon "+label+" crit", md/1000, "cxray_temperature_threshold_celsius", "sensor", label, "threshold", "high")
		}
		n += ck.n
	}
	// MACs: sysfs current, rtnetlink permanent.
	ck := &checker{t: t, s: s, device: "0000:c1:00.0"}
	ck.label("current MAC", "02:11:22:33:44:55", "cxray_netdev_info", "address", "netdev", "ens1f0np0")
	ck.label("permanent MAC", "a0:88:c2:45:67:e2", "cxray_netdev_info", "permanent_address", "netdev", "ens1f0np0")
	ck.eq("MAC changed", 1, "cxray_netdev_address_changed", "netdev", "ens1f0np0")
	ck.label("module temperature sensor", "0", "cxray_temperature_celsius", "module", "sensor", "sensor64")
	// The module, decoded as the kernel backend decodes it on its own.
	kd, err := kernel.Open(context.Background(), "mlx5_0", kernelOptions())
	if err != nil {
		t.Fatal(err)
	}
	mr, err := kd.Module(context.Background(), "ens1f0np0")
	if err != nil || mr.Module == nil {
		t.Fatal(mr, err)
	}
	out, _ := json.Marshal(map[string]any{"modules": []any{map[string]any{"port": 1, "module": -1, "eeprom": mr.Module}}})
	ck.modules(out)
	ck.label("module vendor", "NVIDIA", "cxray_module_info", "vendor", "port", "1", "standard", optics.CMIS)
	n += ck.n
	// mlx5_1's interface has no module in the fake kernel: an error for
	// that collector only.
	if v, _ := s.Value("cxray_scrape_collector_success", "device", "0000:c1:00.1", "collector", "module"); v != 0 {
		t.Error("module of ibp193s0f1 reported as read")
	}
	if v, _ := s.Value("cxray_device_up", "device", "0000:c1:00.1", "backend", "kernel"); v != 1 {
		t.Error("mlx5_1 down")
	}
	t.Logf("%d values compared with the tree", n)
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(text)
		if out, err := cmd.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) != 0 {
			t.Errorf("promtool: %v %s", err, out)
		}
	}
	// Read-only: a second scrape, then nothing in the tree changed, the
	// netlink side only saw module reads, writes through the backend are
	// refused, and the HTTP side refuses anything but GET.
	scrapeURL(t, r.url)
	if after := treeDigest(t, root); after != before {
		t.Error("the sysfs tree changed under the exporter")
	}
	for _, req := range k.Requests() {
		if req.Netdev != "ens1f0np0" && req.Netdev != "ibp193s0f1" {
			t.Errorf("unexpected netlink request %+v", req)
		}
	}
	if err := kd.Write(context.Background(), "hw_counters/lifespan"); !errors.Is(err, kernel.ErrReadOnly) {
		t.Errorf("write: %v", err)
	}
	resp, err := http.Post(r.url+"/metrics", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", resp.StatusCode)
	}
}

// TestExporterKernelWithoutCapNetAdmin: without CAP_NET_ADMIN the module
// collector fails with the advice, the rest is served.
func TestExporterKernelWithoutCapNetAdmin(t *testing.T) {
	k := withKernelFixture(t)
	k.NoCapNetAdmin = true
	r := startExporter(t, "-d", "kernel:mlx5_0", "--log.level", "warn")
	s, _ := scrapeURL(t, r.url)
	if v, _ := s.Value("cxray_scrape_collector_success", "device", "0000:c1:00.0", "collector", "module"); v != 0 {
		t.Error("module read without CAP_NET_ADMIN")
	}
	if v, _ := s.Value("cxray_temperature_celsius", "device", "0000:c1:00.0", "sensor", "asic"); v != 61.25 {
		t.Errorf("temperature %v", v)
	}
	if log := r.stderr.String(); !strings.Contains(log, "CAP_NET_ADMIN") {
		t.Errorf("log does not say what is missing: %s", log)
	}
}

// TestExporterFallsBackToKernel: where direct access cannot work (here:
// kernel lockdown), --all and plain device names read through the kernel.
func TestExporterFallsBackToKernel(t *testing.T) {
	withKernelFixture(t)
	p := filepath.Join(sys.Root, "kernel/security/lockdown")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("none [integrity] confidentiality\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--all"}, {"-d", "mlx5_0", "-d", "0000:c1:00.1"}} {
		r := startExporter(t, args...)
		s, _ := scrapeURL(t, r.url)
		for _, bdf := range []string{"0000:c1:00.0", "0000:c1:00.1"} {
			if v, ok := s.Value("cxray_device_up", "device", bdf, "backend", "kernel"); !ok || v != 1 {
				t.Errorf("%v: %s not read through the kernel", args, bdf)
			}
		}
		if len(s.Find("cxray_device_up")) != 2 || !strings.Contains(r.stderr.String(), "lockdown") {
			t.Errorf("%v: %v\n%s", args, s.Find("cxray_device_up"), r.stderr.String())
		}
		r.stop()
	}
}

// realTimeScenario writes a small scenario whose clock runs with the wall
// clock, so counters move between scrapes.
func realTimeScenario(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "realtime.yaml")
	err := os.WriteFile(p, []byte(`seed: 5
devices:
  - {name: a, profile: cx7-2p400g, functions: 2}
  - {name: b, profile: cx6dx-2p100g, functions: 2,
     modules: [{module: 0, type: qsfp28-100g-sr4}]}
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// promQuery asks Prometheus' HTTP API for an instant vector.
func promQuery(base, q string) ([]float64, error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q, r.Error)
	}
	var out []float64
	for _, v := range r.Data.Result {
		f, err := strconv.ParseFloat(fmt.Sprint(v.Value[1]), 64)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// TestExporterPrometheusEndToEnd runs a real Prometheus (Debian's package;
// loopback only, data in a temporary directory) that scrapes the exporter
// every second, and reads a module power and a counter rate back through
// Prometheus' HTTP API.
func TestExporterPrometheusEndToEnd(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("SKIPPING the Prometheus end-to-end test: the prometheus binary is not installed (apt-get install -y prometheus; scripts/setup.sh installs it)")
	}
	r := startExporter(t, "-d", "emu:"+realTimeScenario(t), "--all")
	dir := t.TempDir()
	target := strings.TrimPrefix(r.url, "http://")
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: cxray
    static_configs:
      - targets: [%q]
rule_files: [%q]
`, target, rulesFile(t))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, prom, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr, "--log.level=debug")
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	base := "http://" + addr
	power := `cxray_module_tx_power_watts{device="0000:03:00.0",port="1",lane="1"}`
	frames := `rate(cxray_ppcnt_a_frames_transmitted_ok_total{device="0000:03:00.0",port="1"}[5s])`
	writes := `rate(cxray_rdma_rx_write_requests_total{device="0000:03:00.0",port="1"}[5s])`
	// Wait until the rate window is full of samples (a rate over a window
	// the series only partly covers is extrapolated low).
	samples := `count_over_time(cxray_ppcnt_a_frames_transmitted_ok_total{device="0000:03:00.0",port="1"}[5s])`
	deadline := time.Now().Add(60 * time.Second)
	var p, fr, wr []float64
	for time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		if n, _ := promQuery(base, samples); len(n) != 1 || n[0] < 5 {
			continue
		}
		p, _ = promQuery(base, power)
		fr, _ = promQuery(base, frames)
		wr, _ = promQuery(base, writes)
		if len(p) == 1 && len(fr) == 1 && len(wr) == 1 {
			break
		}
	}
	if len(p) != 1 || len(fr) != 1 || len(wr) != 1 {
		t.Fatalf("Prometheus has no data after a minute: power %v, frames %v, writes %v\n%s", p, fr, wr, tail(logs.String(), 8<<10))
	}
	// The profile's module sends about 1 mW per lane; the counters move.
	// (Their exact rates are TestExporterRatesExact's, on a manual clock:
	// here Prometheus' wall-clock timestamps would make them figures of
	// the machine's load.)
	if !(p[0] > 1e-4 && p[0] < 1e-2) {
		t.Errorf("module Tx power %v W", p[0])
	}
	if !(fr[0] > 0) || !(wr[0] > 0) {
		t.Errorf("frame rate %v/s, RDMA write rate %v/s: they do not move", fr[0], wr[0])
	}
	// Prometheus took every answer it got. A scrape it gave up on after
	// its 1 s scrape_timeout is a figure of this machine's load, not of
	// the exporter (TestExporterLoad asserts the deadline when asked for);
	// any other failure (a body Prometheus rejects, a refused connection,
	// an HTTP error) is the exporter's, and fails the test.
	if bad := scrapeFailures(logs.String()); len(bad) > 0 {
		t.Errorf("Prometheus rejected %d scrape(s) of the exporter:\n%s", len(bad), strings.Join(bad, "\n"))
	}
	if up, err := promQuery(base, `sum_over_time(up{job="cxray"}[1m])`); err != nil || len(up) != 1 || up[0] < 5 {
		t.Errorf("successful scrapes in the last minute: %v %v", up, err)
	}
	t.Logf("through Prometheus: Tx power %.6g W, frames %.4g/s, RDMA writes %.4g/s", p[0], fr[0], wr[0])
	// Every query of the Grafana dashboard is valid PromQL, and most find
	// data (the kernel-only ones have none on the emulator).
	exprs := dashboardExprs(t)
	found := 0
	for _, q := range exprs {
		q = strings.NewReplacer("$instance", ".*", "$device", ".*", "$port", ".*", "$__rate_interval", "10s").Replace(q)
		v, err := promQuery(base, q)
		if err != nil {
			t.Errorf("dashboard query %s: %v", q, err)
		}
		if len(v) > 0 {
			found++
		}
	}
	if found < len(exprs)*3/4 {
		t.Errorf("only %d of %d dashboard queries found data", found, len(exprs))
	}
}

// scrapeFailures returns what a debug log of Prometheus 2.x says went
// wrong with scrapes, except its own scrape_timeout running out (and the
// scrape its shutdown cancels): a body it could not take ("Append
// failed"), a scrape that failed otherwise (refused, HTTP status), and
// the scrape manager's warnings (duplicate or out-of-order samples).
func scrapeFailures(log string) []string {
	var bad []string
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, `component="scrape manager"`) {
			continue
		}
		switch {
		case strings.Contains(l, `msg="Scrape failed"`):
			if strings.Contains(l, "context deadline exceeded") || strings.Contains(l, "context canceled") {
				continue
			}
		case strings.Contains(l, `msg="Append failed"`), strings.Contains(l, "level=warn"), strings.Contains(l, "level=error"):
		default:
			continue
		}
		bad = append(bad, l)
	}
	return bad
}

// TestScrapeFailures: the log lines are in the form Prometheus 2.42 writes
// them (seen against a target that answered garbage and one that stalled).
func TestScrapeFailures(t *testing.T) {
	const pre = `ts=2026-12-03T11:38:04.204Z caller=scrape.go:1366 level=debug component="scrape manager" scrape_pool=t target=http://127.0.0.1:1/metrics `
	log := strings.Join([]string{
		pre + `msg="Append failed" err="strconv.ParseFloat: parsing \"metric\": invalid syntax"`,
		pre + `msg="Scrape failed" err="Get \"http://127.0.0.1:1/metrics\": context deadline exceeded"`,
		pre + `msg="Scrape failed" err="server returned HTTP status 500 Internal Server Error"`,
		pre + `msg="Scrape failed" err="Get \"http://127.0.0.1:1/metrics\": context canceled"`,
		`ts=2026-12-03T11:38:04.204Z caller=scrape.go:1600 level=warn component="scrape manager" scrape_pool=t target=http://127.0.0.1:1/metrics msg="Error on ingesting samples with different value but same timestamp" num_dropped=1`,
		`ts=2026-12-03T11:37:44.485Z caller=main.go:1229 level=info msg="Completed loading of configuration file"`,
	}, "\n")
	var got []string
	for _, l := range scrapeFailures(log) {
		got = append(got, l[strings.Index(l, "msg="):])
	}
	want := []string{
		`msg="Append failed" err="strconv.ParseFloat: parsing \"metric\": invalid syntax"`,
		`msg="Scrape failed" err="server returned HTTP status 500 Internal Server Error"`,
		`msg="Error on ingesting samples with different value but same timestamp" num_dropped=1`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("scrape failures (-want +got):\n%s", d)
	}
}

// TestExporterRatesExact: on a manual clock, counters scraped ten emulated
// seconds apart moved by exactly what the scenario's traffic says.
func TestExporterRatesExact(t *testing.T) {
	a := newApp(context.Background(), nil, io.Discard, io.Discard)
	db, err := a.DB()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "rates.yaml")
	os.WriteFile(file, []byte("clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n    ports:\n      - {port: 1, traffic: {tx_frames_per_sec: 2000000, frame_bytes: 1000}}\n"), 0o644)
	e, err := scenario.Resolve("emu:"+file, scenario.Options{DB: db})
	if err != nil || e.Manual == nil {
		t.Fatal(err)
	}
	srv := serveEmulation(t, e, db, "emu:"+file)
	first, _ := scrapeURL(t, srv)
	e.Manual.Advance(10 * time.Second)
	second, _ := scrapeURL(t, srv)
	name := "cxray_ppcnt_a_frames_transmitted_ok_total"
	v1, ok1 := first.Value(name, "device", "0000:03:00.0", "port", "1")
	v2, ok2 := second.Value(name, "device", "0000:03:00.0", "port", "1")
	if !ok1 || !ok2 {
		t.Fatalf("%s missing", name)
	}
	// The port's rate carries a per-port jitter of at most 5 % drawn from
	// the seed; the emulator's model is the reference.
	want, err := e.Adapters[0].Firmware.Counter(1, "IEEE_802_3_Counters", "counter_set.eth_802_3_cntrs_grp_data_layout_ext.a_frames_transmitted_ok")
	if err != nil {
		t.Fatal(err)
	}
	if float64(want) != v2 {
		t.Errorf("%s = %v after the second scrape, the model says %v", name, v2, want)
	}
	if rate := (v2 - v1) / 10; math.Abs(rate-2e6) > 0.05*2e6 || rate <= 0 {
		t.Errorf("frame rate %v/s over 10 emulated seconds, want 2e6 within the 5 %% jitter", rate)
	}
}

// dashboardExprs lists the PromQL of contrib's Grafana dashboard.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../contrib/grafana/cxray-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	if len(out) < 20 {
		t.Fatalf("the dashboard has %d queries", len(out))
	}
	return out
}

// TestAlertRules: contrib's alert rules load and pass their unit tests.
func TestAlertRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("SKIPPING: promtool is not installed (apt-get install -y prometheus; scripts/setup.sh installs it)")
	}
	for _, args := range [][]string{{"check", "rules", "cxray-alerts.yml"}, {"test", "rules", "cxray-alerts.test.yml"},
		{"check", "rules", "cxray-fleet-rules.yml"}, {"test", "rules", "cxray-fleet-rules.test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "../contrib/prometheus"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

// rulesFile is contrib's alert rules, which Prometheus must load.
func rulesFile(t *testing.T) string {
	p, err := filepath.Abs("../contrib/prometheus/cxray-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// loadFigures are what the load test measured.
type loadFigures struct {
	Duration                time.Duration
	Scrapes, Devices        int
	Series                  int
	Bytes                   int
	P50, P99, Max, Deadline time.Duration
	GoroutinesBefore        int
	GoroutinesAfter         int
	HeapBefore, HeapAfter   uint64
	FaultSwitches           int
}

// TestExporterLoad scrapes the sixteen-adapter fleet (real-time clock)
// every second while faults come and go through the emulator's Go API:
// a function removed and back, a slow ICMD, an I2C hang, a link down, a
// cage emptied and filled, a register answering busy. No scrape may pass
// its deadline (asserted when CXRAY_EXPORTER_LOAD asks for the load run:
// a loaded machine is slow, not wrong) and goroutines and heap must not
// grow. It runs 10 s by default; CXRAY_EXPORTER_LOAD=60s runs the
// documented minute (-short: 3 s).
func TestExporterLoad(t *testing.T) {
	dur := 10 * time.Second
	if testing.Short() {
		dur = 3 * time.Second
	}
	loadRun := os.Getenv("CXRAY_EXPORTER_LOAD") != ""
	if v := os.Getenv("CXRAY_EXPORTER_LOAD"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > 30*time.Minute {
			t.Fatalf("CXRAY_EXPORTER_LOAD=%q: give a duration up to 30m", v)
		}
		dur = d
	}
	a := newApp(context.Background(), nil, io.Discard, io.Discard)
	db, err := a.DB()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load(fleetFile(t))
	if err != nil {
		t.Fatal(err)
	}
	e, err := scenario.Build(sc, scenario.Options{DB: db, Clock: clock.Real{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := serveEmulation(t, e, db, "emu:fleet")
	const deadline = time.Second // Prometheus' scrape_timeout
	// The load run holds scrapes to Prometheus' 1 s; the default run (a
	// loaded CI machine, where a healthy read can take seconds) gives them
	// 20 s, so that up=0 means a neighbour's fault took a device down, not
	// that the machine was slow.
	timeoutHeader := "20"
	if loadRun {
		timeoutHeader = "1"
	}
	get := func() (time.Duration, int, *exportertest.Scrape) {
		req, _ := http.NewRequest(http.MethodGet, srv+"/metrics", nil)
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", timeoutHeader)
		t0 := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_, err = fmt.Fprint(&b, "")
		buf := make([]byte, 64<<10)
		for {
			n, rerr := resp.Body.Read(buf)
			b.Write(buf[:n])
			if rerr != nil {
				break
			}
		}
		resp.Body.Close()
		took := time.Since(t0)
		s, err := exportertest.Parse(b.String())
		if err != nil {
			t.Fatal(err)
		}
		return took, b.Len(), s
	}
	for range 3 {
		get()
	}
	fig := loadFigures{Duration: dur, Deadline: deadline, Devices: len(e.Functions())}
	fig.GoroutinesBefore, fig.HeapBefore = settle()

	fns := e.Functions()
	ads := e.Adapters
	kind, _ := ads[4].Optics.Kind(1)
	mciaID := uint16(0x9014)
	switches := []func(on bool){
		func(on bool) { fns[0].Device.SetFaults(emu.Faults{Removed: on}) },
		func(on bool) {
			var f emu.Faults
			if on {
				f.SlowICMD = 3 * time.Second
			}
			fns[5].Device.SetFaults(f)
		},
		func(on bool) { ads[2].Optics.SetFaults(0, emuoptics.Faults{I2CHang: on}) },
		func(on bool) {
			var f fw.Faults
			if on {
				f.LinkDown = []int{1}
			}
			ads[3].Firmware.SetFaults(f)
		},
		func(on bool) {
			if on {
				ads[4].Optics.Plug(1, "empty")
			} else {
				ads[4].Optics.Plug(1, kind)
			}
		},
		func(on bool) {
			var f emu.Faults
			if on {
				f.RegisterStatus = map[uint16]uint8{mciaID: 1}
			}
			fns[9].Device.SetFaults(f)
		},
	}
	faulty := map[string]bool{fns[0].BDF: true, fns[5].BDF: true}
	var took []time.Duration
	start := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := 0; time.Since(start) < dur; i++ {
		// Each fault is on for three seconds in six, staggered.
		for j, sw := range switches {
			if (i+j)%3 == 0 {
				sw((i+j)/3%2 == 0)
				fig.FaultSwitches++
			}
		}
		d, n, s := get()
		took = append(took, d)
		fig.Bytes, fig.Series = n, len(s.Samples)
		// Scrape times are figures of the machine, not of the code: they
		// are asserted only when the load run is asked for.
		if d > deadline && loadRun {
			t.Errorf("scrape %d took %v, past the %v deadline", i, d, deadline)
		}
		if os.Getenv("CXRAY_EXPORTER_LOAD_TRACE") != "" {
			t.Logf("scrape %d: %v", i, d)
		}
		for _, f := range fns {
			if v, ok := s.Value("cxray_device_up", "device", f.BDF); !ok || (v != 1 && !faulty[f.BDF]) {
				t.Errorf("scrape %d: %s up=%v (present %v)", i, f.BDF, v, ok)
			}
		}
		<-tick.C
	}
	// All faults off; let a slow read finish; the state must be as before.
	for _, sw := range switches {
		sw(false)
	}
	time.Sleep(1500 * time.Millisecond)
	_, _, s := get()
	for _, f := range fns {
		if v, _ := s.Value("cxray_device_up", "device", f.BDF); v != 1 {
			t.Errorf("after the faults: %s up=%v", f.BDF, v)
		}
	}
	get()
	fig.GoroutinesAfter, fig.HeapAfter = settle()
	fig.Scrapes = len(took)
	slices.Sort(took)
	fig.P50, fig.P99, fig.Max = took[len(took)/2], took[min(len(took)-1, len(took)*99/100)], took[len(took)-1]
	if fig.GoroutinesAfter > fig.GoroutinesBefore+3 {
		t.Errorf("goroutines grew from %d to %d", fig.GoroutinesBefore, fig.GoroutinesAfter)
	}
	if fig.HeapAfter > fig.HeapBefore*3/2+4<<20 {
		t.Errorf("heap grew from %d to %d bytes", fig.HeapBefore, fig.HeapAfter)
	}
	t.Logf("load: %+v", fig)
	if p := os.Getenv("CXRAY_EXPORTER_LOAD_REPORT"); p != "" {
		b, _ := json.MarshalIndent(fig, "", "  ")
		os.WriteFile(p, b, 0o644)
	}
}

// settle collects garbage and returns the goroutine count and live heap.
func settle() (int, uint64) {
	var m runtime.MemStats
	for range 3 {
		runtime.GC()
		time.Sleep(50 * time.Millisecond)
	}
	runtime.ReadMemStats(&m)
	return runtime.NumGoroutine(), m.HeapAlloc
}

// TestExporterKernelWithoutDevlink: an old kernel without devlink still
// gives PSID and firmware from sysfs; identity does not fail for it.
func TestExporterKernelWithoutDevlink(t *testing.T) {
	k := withKernelFixture(t)
	k.NoDevlink = true
	r := startExporter(t, "-d", "kernel:mlx5_1")
	s, _ := scrapeURL(t, r.url)
	ck := &checker{t: t, s: s, device: "0000:c1:00.1"}
	ck.eq("identity", 1, "cxray_scrape_collector_success", "collector", "identity")
	ck.label("firmware", "28.39.1002", "cxray_device_info", "firmware_version")
	ck.label("stored firmware", "", "cxray_device_info", "firmware_stored_version")
	if len(s.Find("cxray_device_firmware_pending")) != 0 {
		t.Error("pending firmware without devlink")
	}
}

// tail returns the last n bytes of s, from a line start.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return "…\n" + s
}

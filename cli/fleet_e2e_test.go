package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fleetHosts is how many emulated hosts the fleet test runs: a few by
// default (CI's budget), CXRAY_FLEET_HOSTS=100 for the figures in
// docs/exporter.md.
func fleetHosts(t *testing.T) int {
	n := 12
	if v := os.Getenv("CXRAY_FLEET_HOSTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 6 || n > 200 {
			t.Fatalf("CXRAY_FLEET_HOSTS=%s: give 6 to 200", v)
		}
	} else if testing.Short() {
		n = 6
	}
	return n
}

// fleetHost is one emulated host: five dual-function ConnectX-7 (ten
// functions, a GPU node's), one of which is drifted on some hosts.
type fleetHost struct {
	name     string
	firmware bool // one adapter runs an older firmware
	nv       bool // one adapter holds another LOG_TX_PSN_WINDOW
	pcie     bool // one adapter trained x8 in its x16 slot
}

func (h fleetHost) scenario(seed int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed: %d\nclock: {mode: manual}\ndevices:\n", seed)
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&b, "  - {name: a%d, profile: cx7-2p400g, functions: 2", i)
		if h.firmware && i == 2 {
			b.WriteString(", firmware: {version: 28.38.1002}")
		}
		if h.nv && i == 4 {
			b.WriteString(", nv: {configured: {LOG_TX_PSN_WINDOW: 10}}")
		}
		if h.pcie && i == 1 {
			b.WriteString(", pcie: {width: 8}")
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// nvFleetParams are the NV parameters a large fleet test serves.
const nvFleetParams = "^(SRIOV_EN|NUM_OF_VFS|LINK_TYPE_P[12]|LOG_TX_PSN_WINDOW|ATS_ENABLED|ROCE_CONTROL)$"

// buildExporter builds cxray-exporter for the test's processes.
func buildExporter(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cxray-exporter")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/cxray-exporter")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("SKIPPING: cannot build cxray-exporter (go build): %v\n%s", err, out)
	}
	return bin
}

var listenLine = regexp.MustCompile(`msg="cxray exporter serving" address=(\S+)`)

// startDaemon runs cxray-exporter as a process and returns it with the
// address it listens on; the caller stops it (stopAll). SIGTERM stops it:
// a process started in the background may have SIGINT ignored.
func startDaemon(t *testing.T, ctx context.Context, bin string, env []string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--web.listen-address", "127.0.0.1:0", "--log.level", "info"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	var log strings.Builder
	var mu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := listenLine.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		return cmd, a
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("cxray-exporter %v did not start:\n%s", args, log.String())
	}
	return nil, ""
}

// stopAll stops the processes: every one signalled first, then each
// waited for (killed past its WaitDelay).
func stopAll(cmds []*exec.Cmd) {
	for _, c := range cmds {
		c.Process.Signal(syscall.SIGTERM)
	}
	for _, c := range cmds {
		c.Wait()
	}
}

// promLabels asks Prometheus for an instant vector and returns each
// sample's labels, with its value under "__value__".
func promLabels(base, q string) ([]map[string]string, error) {
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
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q, r.Error)
	}
	var out []map[string]string
	for _, v := range r.Data.Result {
		m := v.Metric
		if m == nil {
			m = map[string]string{}
		}
		m["__value__"] = fmt.Sprint(v.Value[1])
		out = append(out, m)
	}
	return out, nil
}

// hostsOf lists the distinct host labels of a query's answer.
// ruleErrors asks Prometheus' rules API for the rules whose last
// evaluation failed, each with its error.
func ruleErrors(base string) ([]string, error) {
	resp, err := http.Get(base + "/api/v1/rules")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Groups []struct {
				Name  string `json:"name"`
				Rules []struct {
					Name      string `json:"name"`
					Health    string `json:"health"`
					LastError string `json:"lastError"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("rules API: %w", err)
	}
	if r.Status != "success" || len(r.Data.Groups) == 0 {
		return nil, fmt.Errorf("rules API: status %q, %d groups: the rule files were not loaded", r.Status, len(r.Data.Groups))
	}
	var bad []string
	for _, g := range r.Data.Groups {
		for _, rule := range g.Rules {
			if rule.Health != "ok" {
				bad = append(bad, fmt.Sprintf("%s/%s: %s %s", g.Name, rule.Name, rule.Health, rule.LastError))
			}
		}
	}
	return bad, nil
}

func hostsOf(base, q string) ([]string, error) {
	rs, err := promLabels(base, q)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, r := range rs {
		set[r["host"]] = true
	}
	out := make([]string, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	sort.Strings(out)
	return out, nil
}

// TestFleetPrometheus runs a fleet of emulated hosts, each a cxray-exporter
// process of its own with ten ConnectX-7 functions and a scenario of its
// own, some drifted in firmware, in an NV value or in PCIe width, scraped by a real
// Prometheus found through file service discovery with contrib's fleet
// rules. Prometheus' API must name exactly the drifted hosts (per rule)
// and the policy's violations (firmware minimum, PCIe x16), and no scrape
// may fail. 12 hosts by
// default, 6 with -short, CXRAY_FLEET_HOSTS=100 for the figures recorded
// in docs/exporter.md (logged here).
func TestFleetPrometheus(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("SKIPPING the fleet test: the prometheus binary is not installed (apt-get install -y prometheus; scripts/setup.sh installs it)")
	}
	n := fleetHosts(t)
	bin := buildExporter(t)
	dir := t.TempDir()
	rules, _ := filepath.Abs("../contrib/prometheus/cxray-fleet-rules.yml")
	policyFile := filepath.Join(dir, "policy.yaml")
	os.WriteFile(policyFile, []byte("kind: CxrayPolicy\nselector: {nicType: \"1021\"}\nfirmware: {minimum: 28.39.1010}\npcie: {minWidth: 16, minSpeedGTs: 32}\n"), 0o644)

	// Scrapes every 5 s for a dozen hosts; the interval grows with the
	// fleet so two shared CPUs keep up with the emulated devices as well
	// as the exporters (a 10-function host takes about 0.2 to 0.4 s of CPU
	// a scrape: 100 hosts at 10 s overloaded this machine, load 75).
	// (Whole seconds: Prometheus reads no fraction in "7.2s".)
	interval := max(5*time.Second, (time.Duration(n) * 600 * time.Millisecond).Round(time.Second))
	bound := 4*time.Minute + time.Duration(n)*6*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()

	var hosts []fleetHost
	var wantFW, wantNV, wantPCIe []string
	var targets []string
	var daemons []*exec.Cmd
	t.Cleanup(func() { stopAll(daemons) })
	state := filepath.Join(dir, "state")
	for i := 0; i < n; i++ {
		h := fleetHost{name: fmt.Sprintf("host%03d", i), firmware: i%6 == 1, nv: i%6 == 3, pcie: i%6 == 5}
		if h.pcie {
			wantPCIe = append(wantPCIe, h.name)
		}
		if h.firmware {
			wantFW = append(wantFW, h.name)
		}
		if h.nv {
			wantNV = append(wantNV, h.name)
		}
		hosts = append(hosts, h)
		scen := filepath.Join(dir, h.name+".yaml")
		if err := os.WriteFile(scen, []byte(h.scenario(100+i)), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"-d", "emu:" + scen, "--all", "--device-label", "rdma", "--policy", policyFile, "--scrape-timeout", interval.String()}
		if n > 24 {
			// A large fleet keeps the NV parameters a fleet compares (as
			// docs/exporter.md advises): every parameter of 1000
			// functions is 224 000 series, and one round of the fleet
			// rules over them took 177 s on two shared CPUs (every rule
			// healthy, measured 2026-12-04): longer than the test waits.
			args = append(args, "--collector.nvconfig.include", nvFleetParams)
		}
		d, addr := startDaemon(t, ctx, bin, []string{"NODE_NAME=" + h.name, "XDG_STATE_HOME=" + state}, args...)
		daemons = append(daemons, d)
		targets = append(targets, addr)
	}
	sd, _ := json.Marshal([]map[string]any{{"targets": targets, "labels": map[string]string{"fleet": "test"}}})
	os.WriteFile(filepath.Join(dir, "targets.json"), sd, 0o644)
	promAddr := freePort(t)
	cfg := fmt.Sprintf(`global:
  scrape_interval: %s
  scrape_timeout: %s
  evaluation_interval: 2s
scrape_configs:
  - job_name: cxray
    file_sd_configs:
      - files: [%q]
        refresh_interval: 5s
  - job_name: prometheus
    static_configs:
      - targets: [%q]
rule_files: [%q]
`, interval, interval, filepath.Join(dir, "targets.json"), promAddr, rules)
	os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644)
	cmd := exec.CommandContext(ctx, prom, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr, "--log.level=debug")
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Signal(syscall.SIGTERM)
	base := "http://" + promAddr

	// Wait for two good scrapes of every host and the rules' evaluation.
	ready := fmt.Sprintf(`count(count_over_time(up{job="cxray"}[%ds]) >= 2) == %d`, int(4*interval/time.Second), n)
	for {
		if r, _ := promLabels(base, ready); len(r) == 1 {
			if h, _ := hostsOf(base, `cxray:host_drift:devices`); len(h) > 0 {
				break
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("Prometheus did not scrape all %d hosts twice within %v\n%s", n, bound, tail(logs.String(), 8<<10))
		case <-time.After(2 * time.Second):
		}
	}
	wantAll := append(append([]string{}, wantFW...), wantNV...)
	sort.Strings(wantAll)
	checks := []struct {
		query string
		want  []string
	}{
		{`cxray:firmware_drift:devices`, wantFW},
		{`cxray:nvconfig_drift:value`, wantNV},
		{`cxray:host_drift:devices`, wantAll},
		{`cxray_policy_violations{check="firmware"} > 0`, wantFW},
		{`cxray_policy_violations{check="pcie"} > 0`, wantPCIe},
	}
	// The rules see a host once Prometheus has its first complete read
	// (a first read of ten functions' NV configuration may be cut by the
	// deadline on a loaded machine and is read again): wait, bounded, for
	// the answer to settle.
	settle := time.Now().Add(time.Minute + time.Duration(n)*time.Second)
	var diffs []string
	for {
		diffs = diffs[:0]
		for _, c := range checks {
			got, err := hostsOf(base, c.query)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				diffs = append(diffs, fmt.Sprintf("hosts named by %s (-want +got):\n%s", c.query, diff))
			}
		}
		if len(diffs) == 0 || time.Now().After(settle) || ctx.Err() != nil {
			break
		}
		time.Sleep(2 * time.Second)
	}
	for _, d := range diffs {
		t.Error(d)
	}
	if len(diffs) > 0 {
		// The other reason a rule answers short: its group has not finished
		// a round over the data yet (a round over every NV parameter of 1000
		// functions took 177 s on two loaded CPUs).
		r, _ := promLabels(base, `prometheus_rule_group_last_duration_seconds{rule_group=~".*;cxray-fleet"}`)
		t.Logf("the cxray-fleet rule group's last round took %v s (evaluation interval 2 s)", r)
	}
	// An empty or short answer has a reason: every rule evaluated without
	// error (a rule that fails, such as a join that found two series for a
	// device, leaves every rule built on it empty for the whole fleet).
	if bad, err := ruleErrors(base); err != nil {
		t.Error(err)
	} else {
		for _, b := range bad {
			t.Errorf("rule failed in Prometheus: %s", b)
		}
	}
	// The NV drift is the parameter set, on the adapter that has it, for
	// both configurations; the firmware drift is the two functions of the
	// adapter with the old image.
	nv, _ := promLabels(base, `cxray:nvconfig_drift:value`)
	for _, r := range nv {
		if r["parameter"] != "LOG_TX_PSN_WINDOW" || r["__value__"] != "10" {
			t.Errorf("NV drift %v: want LOG_TX_PSN_WINDOW at 10 only", r)
		}
	}
	if len(nv) != 2*2*len(wantNV) {
		t.Errorf("%d NV drift series; want %d (two functions, Current and Next Boot, per drifted host)", len(nv), 4*len(wantNV))
	}
	if fw, _ := promLabels(base, `cxray:firmware_drift:devices`); len(fw) != 2*len(wantFW) {
		t.Errorf("%d firmware drift series; want %d (two functions per drifted host): %v", len(fw), 2*len(wantFW), fw)
	}

	// No scrape failed: Prometheus took every answer it got (a body it
	// rejected, a refused connection or an HTTP error fails the test), and
	// the last scrape of every host and every collector in it succeeded. A
	// scrape Prometheus gave up on at its scrape_timeout is a figure of
	// this machine's load (TestExporterPrometheusEndToEnd's rule), counted
	// below.
	if r, _ := promLabels(base, `up{job="cxray"} == 0`); len(r) > 0 {
		t.Errorf("targets whose last scrape failed: %v", r)
	}
	if r, _ := promLabels(base, `cxray_scrape_collector_success == 0`); len(r) > 0 {
		t.Errorf("collectors that failed in the last scrape: %v", r)
	}
	if bad := scrapeFailures(logs.String()); len(bad) > 0 {
		t.Errorf("Prometheus rejected %d scrape(s):\n%s", len(bad), strings.Join(bad, "\n"))
	}
	if r, _ := promLabels(base, `count(cxray_device_up == 1)`); len(r) != 1 || r[0]["__value__"] != strconv.Itoa(10*n) {
		t.Errorf("devices up: %v; want %d", r, 10*n)
	}

	// The figures.
	figure := func(q string) string {
		r, err := promLabels(base, q)
		if err != nil || len(r) != 1 {
			return "?"
		}
		f, _ := strconv.ParseFloat(r[0]["__value__"], 64)
		return strconv.FormatFloat(f, 'g', 4, 64)
	}
	t.Logf("fleet of %d hosts (%d functions), scrape interval %v: scrape time per host avg %s s, max %s s; series per host avg %s; NV series %s (joined to a PSID %s, rule group evaluation %s s); Prometheus RSS %s MiB, head series %s; collector reads cut or failed during the run: %s; hosts with a scrape past Prometheus' timeout: %s",
		n, 10*n, interval,
		figure(`avg(scrape_duration_seconds{job="cxray"})`), figure(`max(max_over_time(scrape_duration_seconds{job="cxray"}[10m]))`),
		figure(`avg(scrape_samples_scraped{job="cxray"})`),
		figure(`count(cxray_nvconfig_value)`), figure(`count(cxray:nvconfig_value:psid)`),
		figure(`max(prometheus_rule_group_last_duration_seconds{rule_group=~".*;cxray-fleet"})`),
		figure(`process_resident_memory_bytes{job="prometheus"} / 2^20`), figure(`prometheus_tsdb_head_series`),
		figure(`sum(cxray_scrape_collector_errors_total) or vector(0)`),
		figure(`count(count_over_time((up{job="cxray"} == 0)[10m:])) or vector(0)`))
}

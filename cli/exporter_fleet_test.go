package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/exporterd"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/exportercmd"
	"github.com/cxray/cxray/feature/exporter"
	"github.com/cxray/cxray/feature/exporter/exportertest"
)

// runDaemon runs cxray-exporter in this process and returns its exit
// code, standard output and standard error.
func runDaemon(t testing.TB, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := exporterd.Run(context.Background(), args, strings.NewReader(""), &out, &errb, exportercmd.Hooks{})
	return code, out.String(), errb.String()
}

// samplesOf flattens --once's JSON into exportertest samples.
func samplesOf(t testing.TB, text string) *exportertest.Scrape {
	t.Helper()
	var doc struct {
		Metrics []exporter.JSONFamily `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("--once.format json: %v\n%.400s", err, text)
	}
	s := &exportertest.Scrape{Types: map[string]string{}}
	for _, f := range doc.Metrics {
		s.Types[f.Name] = f.Type
		for _, smp := range f.Samples {
			s.Samples = append(s.Samples, exportertest.Sample{Name: f.Name, Labels: smp.Labels, Value: float64(smp.Value)})
		}
	}
	return s
}

// twoAdaptersPolicy departs on the ConnectX-6 Dx (firmware, VFs, link) and
// on LOG_TX_PSN_WINDOW of the ConnectX-7.
const twoAdaptersPolicy = `kind: CxrayPolicy
firmware: {minimum: 28.39.1010}
nv: {SRIOV_EN: True, NUM_OF_VFS: 8, LOG_TX_PSN_WINDOW: 7}
link: {up: true, minSpeedGbps: 400}
`

// cxray-exporter --once: the text and JSON forms hold the same samples and
// exit alike; with --device-label rdma the device label is the RDMA name
// and cxray_device_info maps it to the PCI address and interface as
// `cxray status` shows them; every NV parameter's Current and Next Boot are
// what `cxray config query -e` reads; cxray_policy_violations counts what
// `cxray config check` finds; the host label comes from $NODE_NAME.
func TestExporterOnceMatchesCLI(t *testing.T) {
	scen, _ := filepath.Abs("../examples/two-adapters.yaml")
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	os.WriteFile(pol, []byte(twoAdaptersPolicy), 0o644)
	t.Setenv(exportercmd.EnvNodeName, "node-17")
	args := []string{"-d", "emu:" + scen, "--all", "--once", "--device-label", "rdma", "--policy", pol, "--log.level", "error"}

	code, text, errs := runDaemon(t, args...)
	if code != 0 {
		t.Fatalf("--once: exit %d\n%s", code, errs)
	}
	codeJ, js, errs := runDaemon(t, append(args, "--once.format", "json")...)
	if codeJ != code {
		t.Fatalf("--once.format json: exit %d, text exit %d\n%s", codeJ, code, errs)
	}
	ts, err := exportertest.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	jsn := samplesOf(t, js)
	key := func(s exportertest.Sample) string {
		b, _ := json.Marshal(s.Labels)
		return s.Name + string(b)
	}
	names := func(s *exportertest.Scrape) map[string]bool {
		m := map[string]bool{}
		for _, smp := range s.Samples {
			if smp.Name != "cxray_scrape_collector_duration_seconds" && smp.Name != "cxray_scrape_device_duration_seconds" && smp.Name != "cxray_nvconfig_read_timestamp_seconds" {
				m[key(smp)] = true
			}
		}
		return m
	}
	if diff := cmp.Diff(names(ts), names(jsn)); diff != "" {
		t.Errorf("text and JSON samples differ (-text +json):\n%s", diff)
	}
	if len(ts.Find("go_goroutines")) > 0 {
		t.Error("--once serves Go runtime metrics, which clash with node_exporter's in a textfile")
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(text)
		if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}

	var status struct {
		Devices []struct {
			BDF     string   `json:"bdf"`
			RDMA    []string `json:"rdma"`
			Netdevs []string `json:"netdevs"`
		} `json:"devices"`
	}
	if err := json.Unmarshal(cliJSON(t, "status", "-d", "emu:"+scen), &status); err != nil {
		t.Fatal(err)
	}
	if len(status.Devices) != 4 {
		t.Fatalf("status lists %d functions, want 4", len(status.Devices))
	}
	var check struct {
		Devices []struct {
			BDF      string `json:"bdf"`
			Findings []struct {
				Check     string `json:"check"`
				Violation bool   `json:"violation"`
			} `json:"findings"`
		} `json:"devices"`
	}
	var out, errb bytes.Buffer
	if code := run([]string{"config", "check", "--policy", pol, "-d", "emu:" + scen, "--all", "-o", "json"}, strings.NewReader(""), &out, &errb); code != cmdutil.ExitProblem {
		t.Fatalf("config check: exit %d, want 1 (the policy is broken on purpose)\n%s", code, errb.String())
	}
	if err := json.Unmarshal(out.Bytes(), &check); err != nil {
		t.Fatal(err)
	}
	for i, d := range status.Devices {
		rdma := d.RDMA[0]
		for _, s := range []*exportertest.Scrape{ts, jsn} {
			info := s.Find("cxray_device_info", "device", rdma)
			if len(info) != 1 || info[0].Labels["pci"] != d.BDF || info[0].Labels["netdev"] != d.Netdevs[0] || info[0].Labels["host"] != "node-17" {
				t.Errorf("cxray_device_info for %s: %v; want pci=%s netdev=%s host=node-17", rdma, info, d.BDF, d.Netdevs[0])
			}
			if up, ok := s.Value("cxray_device_up", "device", rdma, "host", "node-17"); !ok || up != 1 {
				t.Errorf("cxray_device_up{device=%s,host=node-17}: %v %v", rdma, up, ok)
			}
		}

		// NV: every numeric parameter, both configurations.
		var q struct {
			Parameters []struct {
				Name    string                 `json:"name"`
				Next    *struct{ Raw *uint64 } `json:"next"`
				Current *struct{ Raw *uint64 } `json:"current"`
			} `json:"parameters"`
		}
		if err := json.Unmarshal(cliJSON(t, "config", "query", "-e", "-d", "emu:"+scen+"@"+d.BDF), &q); err != nil {
			t.Fatal(err)
		}
		want, got := map[string]float64{}, map[string]float64{}
		for _, p := range q.Parameters {
			if p.Next != nil && p.Next.Raw != nil {
				want[p.Name+" next_boot"] = float64(*p.Next.Raw)
			}
			if p.Current != nil && p.Current.Raw != nil {
				want[p.Name+" current"] = float64(*p.Current.Raw)
			}
		}
		for _, smp := range ts.Find("cxray_nvconfig_value", "device", rdma) {
			got[smp.Labels["parameter"]+" "+smp.Labels["config"]] = smp.Value
		}
		if len(want) < 100 {
			t.Errorf("%s: config query gives %d numeric values; the comparison needs the whole set", d.BDF, len(want))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: cxray_nvconfig_value against config query -e (-query +exporter):\n%s", d.BDF, diff)
		}

		// Policy: the same count per check as config check.
		if check.Devices[i].BDF != d.BDF {
			t.Fatalf("config check lists %s where status lists %s", check.Devices[i].BDF, d.BDF)
		}
		wantV := map[string]float64{}
		for _, f := range check.Devices[i].Findings {
			if f.Violation {
				wantV[f.Check]++
			} else {
				wantV[f.Check] += 0
			}
		}
		gotV := map[string]float64{}
		for _, smp := range ts.Find("cxray_policy_violations", "device", rdma) {
			gotV[smp.Labels["check"]] = smp.Value
		}
		if diff := cmp.Diff(wantV, gotV); diff != "" {
			t.Errorf("%s: cxray_policy_violations against config check (-check +exporter):\n%s", d.BDF, diff)
		}
	}
	if v, _ := ts.Value("cxray_policy_violations", "device", status.Devices[2].RDMA[0], "check", "firmware"); v != 1 {
		t.Errorf("the ConnectX-6 Dx's firmware 22.x under a 28.39.1010 minimum: %v violations, want 1", v)
	}
}

// A policy's PCIe expectation: the function that trained x8 departs, in
// config check (table and JSON alike) and in the exporter.
func TestConfigCheckPCIe(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "pcie.yaml")
	os.WriteFile(scen, []byte("clock: {mode: manual}\ndevices:\n  - {profile: cx7-2p400g, functions: 2}\n  - {profile: cx7-2p400g, pcie: {width: 8}}\n"), 0o644)
	pol := filepath.Join(dir, "p.yaml")
	os.WriteFile(pol, []byte("pcie: {minWidth: 16, minSpeedGTs: 32}\n"), 0o644)
	args := []string{"config", "check", "--policy", pol, "-d", "emu:" + scen, "--all"}
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	if code != cmdutil.ExitProblem || !strings.Contains(out.String(), "1 of 3 device(s) depart") {
		t.Errorf("table: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	if codeJ := run(append(args, "-o", "json"), strings.NewReader(""), &out, &errb); codeJ != code {
		t.Errorf("JSON exit %d, table exit %d", codeJ, code)
	}
	var res struct {
		Devices []struct {
			BDF      string `json:"bdf"`
			Findings []struct {
				Item, Got string
				Violation bool
			} `json:"findings"`
		} `json:"devices"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, d := range res.Devices {
		for _, f := range d.Findings {
			if f.Violation {
				bad = append(bad, d.BDF+" "+f.Item+" "+f.Got)
			}
		}
	}
	if diff := cmp.Diff([]string{"0000:04:00.0 width x8"}, bad); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	c, text, errs := runDaemon(t, "-d", "emu:"+scen, "--all", "--once", "--policy", pol, "--log.level", "error")
	if c != 0 {
		t.Fatalf("exporter: exit %d %s", c, errs)
	}
	s := mustParse(t, text)
	for _, dev := range []string{"0000:03:00.0", "0000:03:00.1", "0000:04:00.0"} {
		want := 0.0
		if dev == "0000:04:00.0" {
			want = 1
		}
		if v, ok := s.Value("cxray_policy_violations", "device", dev, "check", "pcie"); !ok || v != want {
			t.Errorf("cxray_policy_violations{device=%s,check=pcie} = %v %v, want %v", dev, v, ok, want)
		}
	}
}

// --once exit codes and the file it writes: no device answering is exit 3
// with the file written (the textfile collector then serves
// cxray_device_up 0); bad flags and a bad policy are exit 2 and write
// nothing.
func TestExporterOnceExitCodes(t *testing.T) {
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone.yaml")
	os.WriteFile(gone, []byte("clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n    faults: {removed: true}\n"), 0o644)
	badPolicy := filepath.Join(dir, "bad.yaml")
	os.WriteFile(badPolicy, []byte("firmware: {minimun: 28.1.1}\n"), 0o644)
	prom := filepath.Join(dir, "cxray.prom")

	code, _, errs := runDaemon(t, "-d", "emu:"+gone, "--all", "--once", "--once.out", prom, "--log.level", "error")
	if code != cmdutil.ExitDevice || !strings.Contains(errs, "no device answered") {
		t.Errorf("every device gone: exit %d, %q; want 3 saying no device answered", code, errs)
	}
	data, err := os.ReadFile(prom)
	if err != nil || !strings.Contains(string(data), "cxray_device_up{") {
		t.Errorf("the file is not written when no device answers: %v\n%.300s", err, data)
	}
	if v, ok := mustParse(t, string(data)).Value("cxray_device_up"); !ok || v != 0 {
		t.Errorf("cxray_device_up %v %v; want 0", v, ok)
	}

	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"--once.format", "yaml"}, "--once.format yaml: give text, json or nfd"},
		{[]string{"--policy", badPolicy}, "minimun"},
		{[]string{"--device-label", "guid"}, "--device-label guid: give pci, rdma or netdev"},
		{[]string{"--collector.nvconfig.max-parameters", "-1"}, "give at least 1"},
	} {
		out := filepath.Join(dir, "x.prom")
		code, _, errs := runDaemon(t, append([]string{"-d", "emu", "--once", "--once.out", out}, c.args...)...)
		if code != cmdutil.ExitUsage || !strings.Contains(errs, c.words) {
			t.Errorf("%v: exit %d %q; want 2 saying %q", c.args, code, errs, c.words)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", c.args, out)
		}
	}
}

func mustParse(t testing.TB, text string) *exportertest.Scrape {
	t.Helper()
	s, err := exportertest.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// --once.format nfd: Node Feature Discovery's feature file, with the
// adapters' firmware, PSID and link type, "mixed" where they differ.
func TestExporterOnceNFD(t *testing.T) {
	scen, _ := filepath.Abs("../examples/two-adapters.yaml")
	code, out, errs := runDaemon(t, "-d", "emu:"+scen, "--all", "--once", "--once.format", "nfd", "--log.level", "error")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "# cxray-exporter --once --once.format nfd: this node's ConnectX adapters\ncxray-adapters=4\ncxray-firmware=mixed\ncxray-link-type=Ethernet\ncxray-psid=mixed\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("two adapters of two models (-want +got):\n%s", diff)
	}
	code, out, _ = runDaemon(t, "-d", "emu", "--once", "--once.format", "nfd", "--log.level", "error")
	for _, line := range []string{"cxray-adapters=1", "cxray-firmware=28.39.1010", "cxray-psid=MT_0000000834", "cxray-link-type=Ethernet"} {
		if code != 0 || !strings.Contains(out, line+"\n") {
			t.Errorf("-d emu: exit %d, no %q in\n%s", code, line, out)
		}
	}
}

// cxray-exporter --version says the stamped version; node_exporter's flag
// names serve.
func TestExporterDaemonFlags(t *testing.T) {
	code, out, _ := runDaemon(t, "--version")
	if code != 0 || strings.TrimSpace(out) != "cxray-exporter dev" {
		t.Errorf("--version: exit %d %q", code, out)
	}
	code, _, errs := runDaemon(t, "--web.listen-address", "256.0.0.1:1", "-d", "emu")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "256.0.0.1:1") {
		t.Errorf("--web.listen-address is not --listen: exit %d %q", code, errs)
	}
}

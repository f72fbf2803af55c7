package exportercmd

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
	"github.com/cxray/cxray/feature/exporter"
)

// defaults are the flags' defaults.
func defaults() exporterOptions {
	return exporterOptions{listen: "127.0.0.1:0", scrapeTimeout: exporter.DefaultTimeout, openTimeout: 10 * time.Second, logLevel: "info", maxRequests: 40, via: "auto"}
}

// The flags' checks: every bad value is exit 2 naming the flag and what
// to give; good ones pick the collectors asked for.
func TestExporterOptions(t *testing.T) {
	names := exporter.CollectorNames()
	if len(names) < 2 {
		t.Fatalf("collectors %v", names)
	}
	for _, c := range []struct {
		name  string
		edit  func(*exporterOptions)
		words string
	}{
		{"zero scrape timeout", func(o *exporterOptions) { o.scrapeTimeout = 0 }, "--scrape-timeout 0s: give a duration between 100ms and 10m"},
		{"long scrape timeout", func(o *exporterOptions) { o.scrapeTimeout = 11 * time.Minute }, "--scrape-timeout 11m0s"},
		{"negative requests", func(o *exporterOptions) { o.maxRequests = -1 }, "--web.max-requests -1: give 0 (no limit) or more"},
		{"zero open timeout", func(o *exporterOptions) { o.openTimeout = 0 }, "--timeout 0s: give a positive duration"},
		{"unknown excluded", func(o *exporterOptions) { o.noCollectors = []string{"nosuch"} }, "--collectors.exclude nosuch: no such collector"},
		{"unknown collector", func(o *exporterOptions) { o.collectors = []string{"nosuch"} }, "--collectors: "},
		{"none left", func(o *exporterOptions) { o.collectors = names[:1]; o.noCollectors = names[:1] }, "no collector left to run"},
		{"bad include", func(o *exporterOptions) { o.include = "(" }, "--metrics.include \"(\""},
		{"bad exclude", func(o *exporterOptions) { o.exclude = "[" }, "--metrics.exclude \"[\""},
	} {
		o := defaults()
		c.edit(&o)
		_, err := o.exporterOptions(nil, "test")
		if code := cmdutiltest.Code(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%s: exit %d %v; want exit 2 saying %q", c.name, code, err, c.words)
		}
	}
	o := defaults()
	o.noCollectors = []string{names[0]}
	o.exclude = "_dbm$"
	eo, err := o.exporterOptions(nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(names[1:], eo.Collectors); diff != "" || eo.Exclude == nil || !eo.Exclude.MatchString("cxray_module_rx_power_dbm") {
		t.Errorf("collectors (-want +got):\n%s exclude %v", diff, eo.Exclude)
	}
}

// serve runs the exporter with o until the test's scrape is done and
// returns the /metrics text and runExporter's error.
func serve(t *testing.T, a *cmdutiltest.App, o exporterOptions) (string, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- (&app{a.App}).runExporter(ctx, &o, Hooks{Ready: func(ad net.Addr) { addrs <- ad }, Timeouts: DefaultTimeouts})
	}()
	var addr net.Addr
	select {
	case addr = <-addrs:
	case err := <-done:
		return "", err
	}
	client := &http.Client{Timeout: time.Minute} // a bound, not an assertion
	resp, err := client.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	cancel()
	return string(body), <-done
}

var upLine = regexp.MustCompile(`(?m)^cxray_device_up\{[^}]*\} ([01])$`)

func ups(metrics string) []string {
	var out []string
	for _, m := range upLine.FindAllStringSubmatch(metrics, -1) {
		out = append(out, m[1])
	}
	return out
}

// A scenario's functions are served, up; one that is gone is served as
// down, not fatal; stopping the context stops the exporter cleanly.
func TestExporterServes(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	two := cmdutiltest.Scenario(t, "clock: {mode: manual}\ndevices:\n  - profile: cx7-2p400g\n  - profile: cx6dx-2p100g\n    faults: {removed: true}\n")
	o := defaults()
	o.devices, o.all = []string{two}, true
	o.logLevel = "error"
	metrics, err := serve(t, a, o)
	if err != nil {
		t.Fatalf("exporter: %v\n%s", err, a.Err)
	}
	if diff := cmp.Diff([]string{"1", "0"}, ups(metrics)); diff != "" {
		t.Errorf("cxray_device_up (-want +got):\n%s", diff)
	}
	if !strings.Contains(metrics, "cxray_exporter_build_info{") {
		t.Errorf("no build info in:\n%.600s", metrics)
	}

	if !strings.Contains(metrics, "\ncxray_device_info{") {
		t.Errorf("no device info in:\n%.600s", metrics)
	}

	// --metrics.exclude leaves a family out of the scrape; the exporter's
	// own cxray_device_up stays.
	o.exclude = "^cxray_device_info$"
	if metrics, err = serve(t, a, o); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(metrics, "\ncxray_device_info{") || len(ups(metrics)) != 2 {
		t.Errorf("--metrics.exclude ^cxray_device_info$: still served, or the up metrics went too:\n%.600s", metrics)
	}
}

// Bad starts: no device, --all on a machine without adapters, --all with
// a machine's device name, a taken port, a bad log level or web config.
func TestExporterStartErrors(t *testing.T) {
	a := cmdutiltest.New(t, "table")
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	badWeb := filepath.Join(t.TempDir(), "web.yml")
	os.WriteFile(badWeb, []byte("tls_server_config: {cert_file: /nonexistent}\nnot_a_key: 1\n"), 0o644)
	for _, c := range []struct {
		name  string
		edit  func(*exporterOptions)
		code  int
		words string
	}{
		{"no device", func(o *exporterOptions) {}, cmdutil.ExitUsage, "no device given; add -d DEV"},
		{"no adapters here", func(o *exporterOptions) { o.all = true }, cmdutil.ExitDevice, "no ConnectX adapters found on this machine; use -d emu"},
		{"--all with a PCI address", func(o *exporterOptions) { o.all, o.devices = true, []string{"0000:03:00.0"} }, cmdutil.ExitUsage, "--all with -d works for emulated scenarios"},
		{"port taken", func(o *exporterOptions) { o.devices, o.listen = []string{"emu"}, taken.Addr().String() }, cmdutil.ExitUsage, "pick a free port"},
		{"log level", func(o *exporterOptions) { o.devices, o.logLevel = []string{"emu"}, "loud" }, cmdutil.ExitUsage, "--log.level loud: give debug, info, warn or error"},
		{"web config", func(o *exporterOptions) { o.devices, o.webConfig = []string{"emu"}, badWeb }, cmdutil.ExitUsage, "--web.config " + badWeb},
		{"unknown profile", func(o *exporterOptions) { o.devices = []string{"emu:no-such-profile"} }, cmdutil.ExitUsage, "no-such-profile"},
	} {
		o := defaults()
		c.edit(&o)
		_, err := serve(t, a, o)
		if code := cmdutiltest.Code(err); code != c.code || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%s: exit %d %v; want exit %d saying %q", c.name, code, err, c.code, c.words)
		}
	}
}

// docs/exporter.md sketches the --once JSON form; the document has
// exactly those keys.
func TestDocsSketchTheOnceDocument(t *testing.T) {
	const page = "../../../docs/exporter.md"
	cmdutiltest.Sketch(t, "once json", cmdutiltest.SketchAfter(t, page, "the JSON form is\n"), onceDoc{})
}

package exportercmd

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil/cmdutiltest"
)

// exporter's flags (its own, node_exporter's spellings and the fleet
// ones) land in their fields: from the options of a plain `exporter`, each
// case says which fields its flags change.
func TestVerbWiring(t *testing.T) {
	a := &app{cmdutiltest.New(t, "table").App}
	build := func(runF func(*exporterOptions, []string) error) *cobra.Command { return a.exporterCmd(Hooks{}, runF) }
	opt := cmp.AllowUnexported(exporterOptions{}, fleetOptions{})
	base, _ := cmdutiltest.Wire(t, build)
	if base.listen != defaultExporterListen || base.maxRequests != 40 || base.logLevel != "info" {
		t.Errorf("defaults: listen %q, max requests %d, log level %q", base.listen, base.maxRequests, base.logLevel)
	}
	for _, c := range []struct {
		argv []string
		set  func(o *exporterOptions)
	}{
		{[]string{"-d", "emu", "-d", "kernel:mlx5_0", "--all", "--listen", ":9000", "--web.config", "w.yml", "--timeout", "3s", "--scrape-timeout", "2s"}, func(o *exporterOptions) {
			o.devices, o.all, o.listen, o.webConfig, o.openTimeout, o.scrapeTimeout = []string{"emu", "kernel:mlx5_0"}, true, ":9000", "w.yml", 3*time.Second, 2*time.Second
		}},
		{[]string{"--web.listen-address", ":9001", "--web.config.file", "x.yml", "--collectors", "optics,ports", "--collectors.exclude", "rdma", "--metrics.include", "^a", "--metrics.exclude", "_dbm$", "--log.level", "debug", "--web.max-requests", "4"}, func(o *exporterOptions) {
			o.listen, o.webConfig, o.collectors, o.noCollectors, o.include, o.exclude, o.logLevel, o.maxRequests = ":9001", "x.yml", []string{"optics", "ports"}, []string{"rdma"}, "^a", "_dbm$", "debug", 4
		}},
		{[]string{"--device-label", "serial", "--host.name", "h1", "--nvdb", "builtin", "--collector.nvconfig.include", "SRIOV", "--collector.nvconfig.max-parameters", "7", "--collector.nvconfig.interval", "1m", "--policy", "p.yaml", "--once", "--once.format", "json", "--once.out", "m.prom"}, func(o *exporterOptions) {
			o.fleet = fleetOptions{deviceLabel: "serial", host: "h1", nvdb: "builtin", nvInclude: "SRIOV", nvMax: 7, nvInterval: time.Minute, policy: "p.yaml", once: true, onceFormat: "json", onceOut: "m.prom"}
		}},
	} {
		want := *base
		c.set(&want)
		got, args := cmdutiltest.Wire(t, build, c.argv...)
		if d := cmp.Diff(&want, got, opt); d != "" {
			t.Errorf("%q (-want +got):\n%s", c.argv, d)
		}
		if len(args) != 0 {
			t.Errorf("%q: args %q", c.argv, args)
		}
	}
}

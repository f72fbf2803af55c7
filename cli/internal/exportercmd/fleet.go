package exportercmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/exporter"
	"github.com/cxray/cxray/feature/policy"
	"github.com/cxray/cxray/internal/atomicfile"
)

// fleetOptions are the flags that make a host's metrics join and compare
// with its fleet's, and run-once mode (docs/exporter.md).
type fleetOptions struct {
	deviceLabel string
	host        string
	nvdb        string
	nvInclude   string
	nvMax       int
	nvInterval  time.Duration
	policy      string
	once        bool
	onceFormat  string
	onceOut     string
}

// EnvNodeName is the variable a Kubernetes pod gets its node's name in
// (the downward API: fieldRef spec.nodeName), as dcgm-exporter reads it.
const EnvNodeName = "NODE_NAME"

// maxPolicyBytes bounds a policy file: a fleet's templates are kilobytes.
const maxPolicyBytes = 4 << 20

// nodeExporterFlags adds node_exporter's names for the flags it shares
// with cxray-exporter, so a DaemonSet written for one reads right for the
// other (--web.listen-address, --web.config.file), and the fleet's flags.
func nodeExporterFlags(f *pflag.FlagSet, o *exporterOptions) {
	f.StringVar(&o.listen, "web.listen-address", defaultExporterListen, "the same as --listen (node_exporter's name)")
	f.StringVar(&o.webConfig, "web.config.file", "", "the same as --web.config (node_exporter's name)")
	fo := &o.fleet
	f.StringVar(&fo.deviceLabel, "device-label", exporter.DevicePCI, "what the device label holds: pci (0000:03:00.0), rdma (mlx5_0, as node_exporter's infiniband collector) or netdev (as its netclass collector)")
	f.StringVar(&fo.host, "host.name", "", "the host label of every device's series (default $NODE_NAME from the downward API, else the hostname; 'none' leaves it out)")
	f.StringVar(&fo.nvdb, "nvdb", "", "NV parameter database for the nvconfig collector (as for 'cxray config')")
	f.StringVar(&fo.nvInclude, "collector.nvconfig.include", "", "serve only NV parameters whose names match this regular expression")
	f.IntVar(&fo.nvMax, "collector.nvconfig.max-parameters", exporter.DefaultNVMaxParams, "at most this many NV parameters per device (the rest are counted in cxray_nvconfig_parameters_dropped)")
	f.DurationVar(&fo.nvInterval, "collector.nvconfig.interval", exporter.DefaultNVInterval, "read the NV configuration again after this long (it changes only with a write and a reset)")
	f.StringVar(&fo.policy, "policy", "", "policy file (CxrayPolicy or NicConfigurationTemplate YAML): served as cxray_policy_violations")
	f.BoolVar(&fo.once, "once", false, "read every device once, write the metrics and exit (node_exporter's textfile collector, cron, Slurm prologs)")
	f.StringVar(&fo.onceFormat, "once.format", "text", "--once output: text (Prometheus text format, *.prom), json, or nfd (a Node Feature Discovery feature file: firmware, PSID, link type)")
	f.StringVar(&fo.onceOut, "once.out", "-", "--once output file, written atomically (a .prom file in the textfile collector's directory); - for standard output")
}

// fleet completes the exporter's options with the fleet's flags.
func (fo *fleetOptions) apply(eo *exporter.Options) error {
	// Zero values are the defaults (options built without flags).
	switch fo.deviceLabel {
	case "", exporter.DevicePCI, exporter.DeviceRDMA, exporter.DeviceNetdev:
	default:
		return cmdutil.UsageErr("--device-label %s: give pci, rdma or netdev", fo.deviceLabel)
	}
	eo.DeviceLabel = fo.deviceLabel
	switch fo.host {
	case "none":
	case "":
		eo.Host = os.Getenv(EnvNodeName)
		if eo.Host == "" {
			eo.Host, _ = os.Hostname()
		}
	default:
		eo.Host = fo.host
	}
	if fo.nvMax < 0 {
		return cmdutil.UsageErr("--collector.nvconfig.max-parameters %d: give at least 1", fo.nvMax)
	}
	if fo.nvInterval < 0 {
		return cmdutil.UsageErr("--collector.nvconfig.interval %v: give a positive duration", fo.nvInterval)
	}
	eo.NVMaxParams, eo.NVInterval = fo.nvMax, fo.nvInterval
	if fo.nvInclude != "" {
		re, err := regexp.Compile(fo.nvInclude)
		if err != nil {
			return cmdutil.UsageErr("--collector.nvconfig.include %q: %v", fo.nvInclude, err)
		}
		eo.NVInclude = re
	}
	if fo.onceFormat != "" && fo.onceFormat != "text" && fo.onceFormat != "json" && fo.onceFormat != "nfd" {
		return cmdutil.UsageErr("--once.format %s: give text, json or nfd", fo.onceFormat)
	}
	if fo.once {
		// A one-shot process's Go runtime metrics mean nothing, and in a
		// textfile they would clash with node_exporter's own.
		eo.NoRuntimeMetrics = true
	}
	if fo.policy != "" {
		data, err := cmdutil.ReadInput(fo.policy, nil, maxPolicyBytes, "a policy file")
		if err != nil {
			return err
		}
		set, err := policy.Parse(fo.policy, data)
		if err != nil {
			return cmdutil.UsageErr("--policy: %v", err)
		}
		eo.Policy = set
	}
	return nil
}

// loadNV loads the NV parameter database when a collector reads it.
func (fo *fleetOptions) loadNV(eo *exporter.Options) error {
	if !wants(eo.Collectors, "nvconfig") && !(eo.Policy != nil && wants(eo.Collectors, "policy")) {
		return nil
	}
	db, err := cmdutil.NVDB(fo.nvdb)
	if err != nil {
		return err
	}
	eo.NV = db
	return nil
}

func wants(collectors []string, name string) bool {
	return collectors == nil || contains(collectors, name)
}

// onceDoc is --once --once.format json (docs/exporter.md).
type onceDoc struct {
	Metrics []exporter.JSONFamily `json:"metrics"`
}

// runOnce reads every device once and writes the metrics: exit 0 when a
// device answered, 3 when none did (the file is written all the same, so
// the textfile collector serves cxray_device_up 0).
func (a *app) runOnce(ctx context.Context, e *exporter.Exporter, fo *fleetOptions) error {
	mfs, err := e.Gather(ctx)
	if err != nil && len(mfs) == 0 {
		return cmdutil.DeviceErr(err)
	}
	var data []byte
	switch fo.onceFormat {
	case "json":
		data, err = json.MarshalIndent(onceDoc{exporter.JSON(mfs)}, "", "  ")
		data = append(data, '\n')
	case "nfd":
		data = exporter.NFD(mfs)
	default:
		data, err = exporter.Text(mfs)
	}
	if err != nil {
		return cmdutil.DeviceErr(err)
	}
	if fo.onceOut == "-" || fo.onceOut == "" {
		if _, err := a.Stdout.Write(data); err != nil {
			return err
		}
	} else if err := atomicfile.Write(fo.onceOut, data); err != nil {
		return cmdutil.UsageErr("--once.out: %v", err)
	}
	if up, all := exporter.Up(mfs); up == 0 && all > 0 {
		return cmdutil.DeviceErr(fmt.Errorf("no device answered (%d read, %d down): see cxray_scrape_collector_success in the output", all, all))
	}
	return nil
}

// once is the run-once switch, for runExporter.
func (o *exporterOptions) onceMode() bool { return o.fleet.once }

// hostNote is logged at start, so the label's origin is visible.
func hostNote(h string) string {
	if h == "" {
		return "none"
	}
	if os.Getenv(EnvNodeName) == h {
		return h + " ($" + EnvNodeName + ")"
	}
	return strings.TrimSpace(h)
}

package exportercmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/feature/exporter"
	"github.com/cxray/cxray/prm"
)

// exporterOptions are the flags of `cxray exporter`.
type exporterOptions struct {
	via            string
	listen         string
	webConfig      string
	devices        []string
	all            bool
	collectors     []string
	noCollectors   []string
	include        string
	exclude        string
	scrapeTimeout  time.Duration
	openTimeout    time.Duration
	logLevel       string
	allowNoDevices bool
	fleet          fleetOptions
	maxConns       int // --web.max-connections: deprecated, ignored
	maxRequests    int
}

// Hooks let a test run the exporter in-process. Zero fields keep the
// defaults.
type Hooks struct {
	// Context is how long the exporter serves; by default until the App's
	// context ends (SIGINT, SIGTERM).
	Context func(parent context.Context) (context.Context, context.CancelFunc)
	// Ready is told the listening address (tests listen on port 0).
	Ready func(net.Addr)
	// Timeouts of the HTTP server (tests shorten them).
	Timeouts Timeouts
}

// Timeouts bound what a client can hold (see exporterServer).
type Timeouts struct {
	Read, WriteMargin, Idle time.Duration
}

// DefaultTimeouts are the HTTP server's timeouts. An idle keep-alive
// connection is closed after 10 s: Prometheus scrapes every 15 s or more
// and opens a new one at little cost, while a held idle connection costs
// the exporter a goroutine.
var DefaultTimeouts = Timeouts{Read: 10 * time.Second, WriteMargin: 10 * time.Second, Idle: 10 * time.Second}

// defaultExporterListen is the exporter's address unless told otherwise:
// loopback only, so that nothing is exposed by accident.
const defaultExporterListen = "127.0.0.1:9879"

// exporterCmd wires the flags to exporterOptions; runF (tests) replaces
// runExporter (h are the process-level hooks tests set).
func (a *app) exporterCmd(h Hooks, runF func(*exporterOptions, []string) error) *cobra.Command {
	if h.Context == nil {
		h.Context = context.WithCancel
	}
	if h.Timeouts == (Timeouts{}) {
		h.Timeouts = DefaultTimeouts
	}
	o := exporterOptions{}
	var names []string
	for _, n := range exporter.CollectorNames() {
		names = append(names, fmt.Sprintf("  %-12s %s", n, exporter.CollectorHelp()[n]))
	}
	c := &cobra.Command{
		Use:   "exporter [--listen ADDR] [--web.config FILE] [-d DEV ... | --all]",
		Short: "Serve adapter telemetry to Prometheus: identity, temperatures, optics, ports, counters, RDMA",
		Long: `Serve what cxray reads from ConnectX adapters as Prometheus metrics on
/metrics. Each scrape reads every device within the scrape's deadline, one
goroutine per device, so a slow or failing device never holds up the others; a
device that disappears shows as cxray_device_up 0. Nothing is ever written to
a device. docs/exporter.md lists every metric.

Backends, per device:
  direct    -d 0000:03:00.0 (or mlx5_0, eth2) or --all, as root: PRM registers
            through the PCI config space; RDMA hw_counters from the kernel's
            sysfs when the driver is loaded
  kernel    -d kernel:mlx5_0, and automatically when direct access is not
            possible (not root, kernel lockdown): sysfs, hwmon, devlink,
            ethtool netlink (module optics need CAP_NET_ADMIN)
  emulator  -d emu, emu:PROFILE, emu:FILE.yaml (--all: every function of the
            scenario); RDMA counters from the emulator's model (emu/rdma)

Collectors (--collectors to choose, --collectors.exclude to drop):
` + strings.Join(names, "\n") + `

It listens on 127.0.0.1:9879 unless --listen says otherwise. TLS and basic
authentication come from an exporter-toolkit web configuration file
(--web.config; see https://github.com/prometheus/exporter-toolkit).`,
		Example: `  cxray exporter --all
  cxray exporter -d kernel:mlx5_0 -d kernel:mlx5_1 --listen :9879 --web.config /etc/cxray/web.yml
  cxray exporter -d emu:examples/fleet-16.yaml --all --metrics.exclude '_dbm$'`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			ctx, stop := h.Context(a.Ctx)
			defer stop()
			return a.runExporter(ctx, &o, h)
		},
	}
	f := c.Flags()
	f.StringVar(&o.listen, "listen", defaultExporterListen, "address to serve /metrics on (host:port; :9879 for every interface)")
	f.StringVar(&o.webConfig, "web.config", "", "exporter-toolkit web configuration file (TLS, basic auth)")
	nodeExporterFlags(f, &o)
	f.StringArrayVarP(&o.devices, "device", "d", nil, "device to read (repeat): PCI address, mlx5_0, interface, kernel:mlx5_0, emu, emu:PROFILE, emu:FILE.yaml")
	f.BoolVar(&o.all, "all", false, "read every ConnectX function of the machine (or, with -d emu:FILE.yaml, of the scenario)")
	f.StringSliceVar(&o.collectors, "collectors", nil, "collectors to run (default all): "+strings.Join(exporter.CollectorNames(), ", "))
	f.StringSliceVar(&o.noCollectors, "collectors.exclude", nil, "collectors not to run")
	f.StringVar(&o.include, "metrics.include", "", "serve only metric families whose names match this regular expression")
	f.StringVar(&o.exclude, "metrics.exclude", "", "leave out metric families whose names match this regular expression (e.g. '^cxray_ppcnt_' or '_dbm$')")
	f.DurationVar(&o.scrapeTimeout, "scrape-timeout", exporter.DefaultTimeout, "deadline of one scrape (Prometheus' own scrape_timeout wins when shorter)")
	f.DurationVar(&o.openTimeout, "timeout", 10*time.Second, "give up opening a device at start after this long")
	f.StringVar(&o.logLevel, "log.level", "info", "log level: debug, info, warn, error")
	f.IntVar(&o.maxRequests, "web.max-requests", 40, "requests answered at once (as node_exporter's): more are answered 503 at once; idle, slow and half-open connections hold none; 0: no limit")
	f.IntVar(&o.maxConns, "web.max-connections", 0, "")
	f.MarkDeprecated("web.max-connections", "connections are no longer limited (idle and slow ones held every slot); use --web.max-requests")
	cmdutil.AddViaFlag(c, &o.via)
	return c
}

// runExporter serves until ctx ends. h.Ready, when set, is told the address
// once the listener is up (tests listen on port 0).
func (a *app) runExporter(ctx context.Context, o *exporterOptions, h Hooks) error {
	log, err := exporterLogger(a, o.logLevel)
	if err != nil {
		return err
	}
	eo, err := o.exporterOptions(log, a.Version)
	if err != nil {
		return err
	}
	if err := o.fleet.apply(&eo); err != nil {
		return err
	}
	if err := o.fleet.loadNV(&eo); err != nil {
		return err
	}
	if o.webConfig != "" {
		if err := web.Validate(o.webConfig); err != nil {
			return cmdutil.UsageErr("--web.config %s: %v", o.webConfig, err)
		}
	}
	db, err := a.DB()
	if err != nil {
		return err
	}
	octx, cancel := context.WithTimeout(ctx, o.openTimeout)
	srcs, err := a.exporterSources(octx, o, db, log)
	cancel()
	if err != nil {
		closeSources(srcs)
		return err
	}
	e, err := exporter.New(srcs, eo)
	if err != nil {
		closeSources(srcs)
		return cmdutil.UsageWrap(err)
	}
	defer e.Close()
	if o.onceMode() {
		return a.runOnce(ctx, e, &o.fleet)
	}

	mux := http.NewServeMux()
	mux.Handle("/metrics", e.Handler())
	landing, err := web.NewLandingPage(web.LandingConfig{
		Name:        "cxray exporter",
		Description: "ConnectX adapter telemetry: " + strings.Join(e.Devices(), ", "),
		Version:     a.Version,
		Links:       []web.LandingLinks{{Address: "/metrics", Text: "Metrics"}},
	})
	if err != nil {
		return err
	}
	mux.Handle("/", getOnly(landing))
	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		return cmdutil.UsageErr("--listen %s: %v; pick a free port (the default is %s)", o.listen, err, defaultExporterListen)
	}
	if !isLoopback(l.Addr()) && o.webConfig == "" {
		log.Warn("serving on a non-loopback address without TLS or authentication; give --web.config to add them", "address", l.Addr().String())
	}
	srv := exporterServer(newLimitRequests(mux, o.maxRequests, h.Timeouts.WriteMargin), o.scrapeTimeout, h.Timeouts)
	errc := make(chan error, 1)
	noSocket := false
	flags := &web.FlagConfig{WebListenAddresses: &[]string{o.listen}, WebSystemdSocket: &noSocket, WebConfigFile: &o.webConfig}
	go func() { errc <- web.Serve(l, srv, flags, log) }()
	log.Info("cxray exporter serving", "address", l.Addr().String(), "devices", len(srcs), "host", hostNote(eo.Host))
	if h.Ready != nil {
		h.Ready(l.Addr())
	}
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return cmdutil.DeviceErr(fmt.Errorf("serving %s: %w", o.listen, err))
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		<-errc
		return nil
	}
}

// exporterServer bounds what a client can hold: a request must arrive
// within t.Read, the answer must be taken within a scrape's deadline
// and a margin for a slow network (limitRequests narrows it to the margin
// once the answer is ready; a reader that stalls is cut, and its buffers
// freed), and an idle connection is closed after t.Idle.
func exporterServer(h http.Handler, scrape time.Duration, t Timeouts) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.Read,
		ReadTimeout:       t.Read,
		WriteTimeout:      scrape + t.WriteMargin,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    64 << 10,
	}
}

func isLoopback(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}

func closeSources(srcs []exporter.Source) {
	for _, s := range srcs {
		s.Close()
	}
}

func exporterLogger(a *app, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, cmdutil.UsageErr("--log.level %s: give debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(a.Stderr, &slog.HandlerOptions{Level: l})), nil
}

// exporterOptions turns the flags into the exporter's options.
func (o *exporterOptions) exporterOptions(log *slog.Logger, version string) (exporter.Options, error) {
	eo := exporter.Options{Timeout: o.scrapeTimeout, Logger: log, Version: version}
	if o.scrapeTimeout <= 0 || o.scrapeTimeout > 10*time.Minute {
		return eo, cmdutil.UsageErr("--scrape-timeout %v: give a duration between 100ms and 10m", o.scrapeTimeout)
	}
	if o.maxRequests < 0 {
		return eo, cmdutil.UsageErr("--web.max-requests %d: give 0 (no limit) or more", o.maxRequests)
	}
	if o.openTimeout <= 0 {
		return eo, cmdutil.UsageErr("--timeout %v: give a positive duration", o.openTimeout)
	}
	names := exporter.CollectorNames()
	if len(o.collectors) > 0 {
		names = o.collectors
	}
	drop := map[string]bool{}
	for _, n := range o.noCollectors {
		drop[strings.TrimSpace(n)] = true
	}
	for n := range drop {
		if !contains(exporter.CollectorNames(), n) {
			return eo, cmdutil.UsageErr("--collectors.exclude %s: no such collector; collectors: %s", n, strings.Join(exporter.CollectorNames(), ", "))
		}
	}
	for _, n := range names {
		if !drop[strings.TrimSpace(n)] {
			eo.Collectors = append(eo.Collectors, n)
		}
	}
	if len(eo.Collectors) == 0 {
		return eo, cmdutil.UsageErr("no collector left to run; --collectors and --collectors.exclude leave none of %s", strings.Join(exporter.CollectorNames(), ", "))
	}
	for _, r := range []struct {
		flag, expr string
		dst        **regexp.Regexp
	}{{"--metrics.include", o.include, &eo.Include}, {"--metrics.exclude", o.exclude, &eo.Exclude}} {
		if r.expr == "" {
			continue
		}
		re, err := regexp.Compile(r.expr)
		if err != nil {
			return eo, cmdutil.UsageErr("%s %q: %v (a Go regular expression over metric names)", r.flag, r.expr, err)
		}
		*r.dst = re
	}
	// Check the collector names now, with the flag's name in the message.
	if _, err := exporter.New(nil, eo); err != nil {
		return eo, cmdutil.UsageErr("--collectors: %v", strings.TrimPrefix(err.Error(), "exporter: "))
	}
	return eo, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// exporterSources opens the devices to read, each read-only, with the
// one opener (adapter.OpenTargets): directly as root, else through the
// kernel. A function whose register path does not open at start (held by
// another tool, gone for now) is served as down and opened again on each
// scrape; only a name that cannot mean a device is an error.
func (a *app) exporterSources(ctx context.Context, o *exporterOptions, db *prm.DB, log *slog.Logger) ([]exporter.Source, error) {
	if len(o.devices) == 0 && !o.all {
		return nil, cmdutil.UsageErr("no device given; add -d DEV (repeatable: a PCI address, mlx5_0, kernel:mlx5_0, emu:FILE.yaml) or --all for every adapter of this machine")
	}
	opts := a.AdapterOptions(db)
	opts.ReadOnly, opts.Fallback = true, true
	if len(o.devices) == 0 {
		// Where direct access cannot work, only the functions the kernel
		// driver has can be read, through it.
		if why := opts.DirectBlocked(); why != "" {
			log.Info("reading through the kernel backend where the driver has the function", "reason", why)
		}
		return a.sources(ctx, "", true, opts, log)
	}
	var out []exporter.Source
	for _, given := range o.devices {
		n, err := opts.Parse(given)
		if err != nil {
			return out, cmdutil.Classify(err)
		}
		if o.all && n.Kind != devname.Emu {
			return out, cmdutil.UsageErr("--all with -d works for emulated scenarios (emu:FILE.yaml); for this machine's adapters leave out -d")
		}
		if n.Kind == devname.PCI {
			// A function that is there but not Mellanox's will never be
			// one: refuse it now rather than serve it as down forever.
			if f, err := a.Sys.Function(n.BDF); err != nil && f.VendorID != 0 && f.VendorID != devname.MellanoxVendor {
				return out, cmdutil.UsageErr("-d %s: %v", given, err)
			}
		}
		srcs, err := a.sources(ctx, given, o.all, opts, log)
		out = append(out, srcs...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// sources opens what given (and all) name as sources, and logs how each
// is reached.
func (a *app) sources(ctx context.Context, given string, all bool, opts adapter.Options, log *slog.Logger) ([]exporter.Source, error) {
	ads, err := a.OpenTargetsWith(ctx, given, all, opts)
	if err != nil {
		return nil, err
	}
	out := make([]exporter.Source, 0, len(ads))
	for _, ad := range ads {
		for _, n := range ad.Notes() {
			log.Info("device", "device", ad.BDF(), "note", n)
		}
		out = append(out, exporter.FromAdapter(ad))
	}
	return out, nil
}

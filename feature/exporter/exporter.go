package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Options tune an Exporter. The zero value serves every collector with a
// 10 s deadline.
type Options struct {
	// Collectors are the collectors to run, by name (CollectorNames); nil
	// runs them all.
	Collectors []string
	// Include and Exclude filter metric families by name (the exporter's
	// own cxray_device_up and cxray_scrape_* are always served). A family
	// is served when it matches Include (nil: every family) and does not
	// match Exclude.
	Include, Exclude *regexp.Regexp
	// Timeout is a scrape's deadline when Prometheus gives none shorter
	// (0: DefaultTimeout).
	Timeout time.Duration
	// Logger gets read errors as they start and stop (nil: discarded).
	Logger *slog.Logger
	// Version labels cxray_exporter_build_info.
	Version string
	// NoRuntimeMetrics leaves out the Go runtime and process metrics.
	NoRuntimeMetrics bool
	// Fleet: what the device label means, the host label, the NV
	// configuration and policy collectors (fleet.go).
	Fleet
}

// DefaultTimeout is the scrape deadline when neither the flag nor
// Prometheus sets one (Prometheus' own default scrape timeout).
const DefaultTimeout = 10 * time.Second

// Shares of a scrape's budget: device reads must end by readShare of it,
// the exporter stops waiting at waitShare and encodes in the rest (a fifth
// of the budget: on a busy two-CPU host, turning thousands of samples into
// compressed text takes tens of milliseconds, more when other work competes).
const (
	readShare = 0.75
	waitShare = 0.8
)

// Exporter reads a set of devices on each scrape.
type Exporter struct {
	opts       Options
	log        *slog.Logger
	devices    []*device
	collectors []collector
	static     *prometheus.Registry

	descMu sync.Mutex
	descs  map[string]*prometheus.Desc
	allow  sync.Map // family name -> bool

	labels labels // the device label's values (fleet.go)
}

// device is one Source with what the exporter keeps across scrapes.
type device struct {
	src Source
	// flight is the read of the device under way, nil when none is: one
	// reader at a time, and a scrape that finds one joins it instead of
	// starting another, so concurrent scrapes (two Prometheus servers, an
	// operator's curl) share one read and none sees the device as down
	// because of the other. A stuck read stays the only one until it ends.
	flightMu sync.Mutex
	flight   *result
	joins    atomic.Int64 // scrapes that joined a read under way (tests look)

	mu          sync.Mutex
	label       string             // the device label's value once known (fleet.go)
	nv          nvCache            // the last NV configuration read (nvconfig.go)
	errors      map[string]float64 // collector -> failed scrapes
	lastErr     map[string]string  // collector -> last error logged
	unsupported map[string]bool
}

// New builds an exporter over sources; it owns them from now on (Close
// closes them).
func New(sources []Source, o Options) (*Exporter, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	cs, err := pickCollectors(o.Collectors)
	if err != nil {
		return nil, err
	}
	if err := o.Fleet.check(); err != nil {
		return nil, err
	}
	e := &Exporter{opts: o, log: o.Logger, collectors: cs, descs: map[string]*prometheus.Desc{}}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	seen := map[string]bool{}
	for _, s := range sources {
		if seen[s.Name()] {
			return nil, fmt.Errorf("exporter: device %s is given twice; give each device once", s.Name())
		}
		seen[s.Name()] = true
		e.devices = append(e.devices, &device{src: s,
			errors: map[string]float64{}, lastErr: map[string]string{}, unsupported: map[string]bool{}})
	}
	e.static = prometheus.NewRegistry()
	version := o.Version
	if version == "" {
		version = "dev"
	}
	build := prometheus.NewGauge(prometheus.GaugeOpts{Name: famBuild.name, Help: famBuild.help, ConstLabels: prometheus.Labels{"version": version}})
	build.Set(1)
	e.static.MustRegister(build)
	if !o.NoRuntimeMetrics {
		e.static.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return e, nil
}

// Close closes every source.
func (e *Exporter) Close() error {
	var errs []error
	for _, d := range e.devices {
		if err := d.src.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Handler serves /metrics (and a landing page at / when the caller adds
// one). Only GET and HEAD are answered.
func (e *Exporter) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "cxray exporter is read-only: only GET and HEAD are served", http.StatusMethodNotAllowed)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), e.budget(r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds")))
		defer cancel()
		reg := prometheus.NewRegistry()
		reg.MustRegister(scrapeCollector{e, ctx})
		g := prometheus.Gatherers{e.static, reg}
		promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, ErrorLog: promLogger{e.log}}).ServeHTTP(w, r)
	})
}

// budget is a scrape's deadline: the flag, or less when Prometheus will
// give up sooner (its header says when; a little is kept for the answer
// to travel).
func (e *Exporter) budget(header string) time.Duration {
	b := e.opts.Timeout
	if header != "" {
		if s, err := strconv.ParseFloat(header, 64); err == nil && s > 0 {
			p := time.Duration(s*float64(time.Second)) - 100*time.Millisecond
			if p < b {
				b = max(p, 100*time.Millisecond)
			}
		}
	}
	return b
}

// scrapeCollector is one scrape as a prometheus.Collector. It describes
// nothing (an "unchecked" collector): its families depend on what the
// devices report.
type scrapeCollector struct {
	e   *Exporter
	ctx context.Context
}

func (scrapeCollector) Describe(chan<- *prometheus.Desc) {}

func (s scrapeCollector) Collect(ch chan<- prometheus.Metric) { s.e.collect(s.ctx, ch) }

// result is what one read of a device delivered. The reader adds to it;
// every scrape sharing the read takes a copy when it stops waiting, so
// what a reader adds later reaches only the scrapes still waiting.
type result struct {
	mu      sync.Mutex
	metrics []prometheus.Metric
	status  map[string]runStatus
	took    time.Duration // set when the reader finished
	done    chan struct{}
}

type runStatus struct {
	dur time.Duration
	err error
}

func (r *result) add(name string, ms []prometheus.Metric, st runStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.metrics = append(r.metrics, ms...)
	r.status[name] = st
}

// view is one scrape's copy of a read.
type view struct {
	metrics []prometheus.Metric
	status  map[string]runStatus
	// finished: the read ended (what did not run ran out of time);
	// joined: the scrape found the read under way (what has not run yet
	// waits on an earlier scrape's read: busy).
	finished, joined bool
	took             time.Duration
}

// copyFor takes a scrape's copy; elapsed is the scrape's own time, given
// as the device's time when the read has not finished.
func (r *result) copyFor(joined bool, elapsed time.Duration) view {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := view{metrics: r.metrics[:len(r.metrics):len(r.metrics)], status: make(map[string]runStatus, len(r.status)),
		finished: r.took != 0, joined: joined, took: r.took}
	for k, st := range r.status {
		v.status[k] = st
	}
	if !v.finished {
		v.took = elapsed
	}
	return v
}

// errDeadline and errBusy explain a collector that did not run.
var (
	errDeadline = errors.New("the scrape's deadline came first; raise --scrape-timeout (or Prometheus' scrape_timeout), or look for a slow device (cxray status)")
	errBusy     = errors.New("a read of the device that an earlier scrape started is still running (the device is slow or stuck); it is not read again until that read ends")
)

func (e *Exporter) collect(ctx context.Context, ch chan<- prometheus.Metric) {
	start := time.Now()
	deadline, _ := ctx.Deadline()
	budget := deadline.Sub(start)
	readDeadline := start.Add(time.Duration(float64(budget) * readShare))
	waitCtx, cancelWait := context.WithDeadline(ctx, start.Add(time.Duration(float64(budget)*waitShare)))
	defer cancelWait()

	results := make([]*result, len(e.devices))
	joined := make([]bool, len(e.devices))
	for i, d := range e.devices {
		results[i], joined[i] = e.start(ctx, d, readDeadline)
	}
	for _, r := range results {
		select {
		case <-r.done:
		case <-waitCtx.Done():
		}
	}
	elapsed := time.Since(start)
	for i, d := range e.devices {
		v := results[i].copyFor(joined[i], elapsed)
		for _, m := range v.metrics {
			ch <- m
		}
		e.report(ch, d, v)
	}
}

// start joins the read of d under way, or starts one that ends by
// deadline. The read does not end with the scrape that started it (a
// client that goes away must not cut the read other scrapes share), only
// at its deadline.
func (e *Exporter) start(ctx context.Context, d *device, deadline time.Time) (r *result, joined bool) {
	d.flightMu.Lock()
	defer d.flightMu.Unlock()
	if d.flight != nil {
		d.joins.Add(1)
		return d.flight, true
	}
	r = &result{status: map[string]runStatus{}, done: make(chan struct{})}
	d.flight = r
	rctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	go func() {
		defer cancel()
		e.read(rctx, d, r)
		d.flightMu.Lock()
		d.flight = nil
		d.flightMu.Unlock()
		close(r.done)
	}()
	return r, false
}

// read runs the collectors on one device in order until the deadline.
func (e *Exporter) read(ctx context.Context, d *device, r *result) {
	start := time.Now()
	defer func() {
		r.mu.Lock()
		r.took = max(time.Since(start), time.Nanosecond)
		r.mu.Unlock()
	}()
	for _, c := range e.collectors {
		if ctx.Err() != nil {
			return
		}
		t0 := time.Now()
		s := &sink{e: e, device: e.deviceLabel(ctx, d), d: d}
		err := c.collect(ctx, s, d.src)
		if err != nil && ctx.Err() != nil && !errors.Is(err, ErrUnsupported) {
			err = fmt.Errorf("%w (%v)", errDeadline, err)
		}
		r.add(c.name, s.out, runStatus{dur: time.Since(t0), err: err})
	}
}

// report emits the exporter's own metrics for a device and logs changes.
func (e *Exporter) report(ch chan<- prometheus.Metric, d *device, v view) {
	name := d.src.Name()
	s := &sink{e: e, device: e.knownLabel(d), meta: true, d: d}
	up := 0.0
	d.mu.Lock()
	for _, c := range e.collectors {
		st, ran := v.status[c.name]
		if ran && errors.Is(st.err, ErrUnsupported) {
			d.unsupported[c.name] = true
		}
		if d.unsupported[c.name] {
			continue
		}
		err := st.err
		switch {
		case !ran && v.joined && !v.finished:
			err = errBusy
		case !ran:
			err = errDeadline
		}
		ok := 0.0
		if err == nil {
			ok, up = 1, 1
			if d.lastErr[c.name] != "" {
				e.log.Info("device reads again", "device", name, "collector", c.name)
			}
			d.lastErr[c.name] = ""
		} else {
			d.errors[c.name]++
			if msg := err.Error(); msg != d.lastErr[c.name] {
				e.log.Warn("read failed", "device", name, "collector", c.name, "err", msg)
				d.lastErr[c.name] = msg
			}
		}
		s.add(famSuccess, ok, c.name)
		s.add(famDuration, st.dur.Seconds(), c.name)
		s.add(famErrors, d.errors[c.name], c.name)
	}
	d.mu.Unlock()
	s.add(famUp, up, d.src.Backend())
	s.add(famDeviceDuration, v.took.Seconds())
	for _, m := range s.out {
		ch <- m
	}
}

// sink collects one device's metrics.
type sink struct {
	e      *Exporter
	device string
	meta   bool // the exporter's own families: never filtered
	out    []prometheus.Metric
	d      *device
}

// add emits a sample of f; labels are the values after device. A label
// whose value is empty (the backend cannot tell) is left out of the
// sample rather than exported as label="": Prometheus reads the two alike,
// and people reading the exposition should not see unknowns as values.
func (s *sink) add(f family, v float64, labels ...string) {
	if !s.meta && !s.e.allowed(f.name) {
		return
	}
	values := append([]string{s.device}, labels...)
	names := f.labels
	if len(values) == len(f.labels) {
		names, values = present(f.labels, values)
	}
	desc := s.e.desc(f, names)
	m, err := prometheus.NewConstMetric(desc, f.typ, v, values...)
	if err != nil {
		m = prometheus.NewInvalidMetric(desc, err)
	}
	s.out = append(s.out, m)
}

// present keeps the label names and values whose value is not empty.
func present(names, values []string) ([]string, []string) {
	empty := 0
	for _, v := range values {
		if v == "" {
			empty++
		}
	}
	if empty == 0 {
		return names, values
	}
	n := make([]string, 0, len(names)-empty)
	vs := make([]string, 0, len(names)-empty)
	for i, v := range values {
		if v != "" {
			n, vs = append(n, names[i]), append(vs, v)
		}
	}
	return n, vs
}

// desc is f's description with the label names a sample has (f's, less
// the empty ones).
func (e *Exporter) desc(f family, labels []string) *prometheus.Desc {
	key := f.name + "\x00" + strings.Join(labels, ",")
	e.descMu.Lock()
	defer e.descMu.Unlock()
	d := e.descs[key]
	if d == nil {
		d = prometheus.NewDesc(f.name, f.help, labels, e.constLabels())
		e.descs[key] = d
	}
	return d
}

// allowed applies the family filters.
func (e *Exporter) allowed(name string) bool {
	if v, ok := e.allow.Load(name); ok {
		return v.(bool)
	}
	ok := (e.opts.Include == nil || e.opts.Include.MatchString(name)) && (e.opts.Exclude == nil || !e.opts.Exclude.MatchString(name))
	e.allow.Store(name, ok)
	return ok
}

// Devices names the devices read, in order.
func (e *Exporter) Devices() []string {
	out := make([]string, len(e.devices))
	for i, d := range e.devices {
		out[i] = d.src.Name()
	}
	return out
}

// pickCollectors resolves collector names.
func pickCollectors(names []string) ([]collector, error) {
	if names == nil {
		return allCollectors, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		found := false
		for _, c := range allCollectors {
			if c.name == n {
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("exporter: no collector %q; collectors: %s", n, strings.Join(CollectorNames(), ", "))
		}
		want[n] = true
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("exporter: no collector chosen; give some of %s", strings.Join(CollectorNames(), ", "))
	}
	var out []collector
	for _, c := range allCollectors {
		if want[c.name] {
			out = append(out, c)
		}
	}
	return out, nil
}

// CollectorNames lists the collectors, in the order they run.
func CollectorNames() []string {
	out := make([]string, len(allCollectors))
	for i, c := range allCollectors {
		out[i] = c.name
	}
	return out
}

// CollectorHelp says what each collector reads, for the command's help.
func CollectorHelp() map[string]string {
	out := map[string]string{}
	for _, c := range allCollectors {
		out[c.name] = c.help
	}
	return out
}

// promLogger passes promhttp's errors to slog.
type promLogger struct{ l *slog.Logger }

func (p promLogger) Println(v ...any) { p.l.Error(strings.TrimSpace(fmt.Sprintln(v...))) }

// sortedKeys returns a map's keys in order, for stable output.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

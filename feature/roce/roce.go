// Package roce reads and advises on RoCE retransmission: the ROCE_ACCL
// switches (adaptive retransmission, TX window, slow restart ...), the
// LOG_TX_PSN_WINDOW NV setting, and the retransmission counters; and works
// out the transmit window a link's bandwidth-delay product needs.
//
// What the device does not expose is said plainly: there is no per-QP
// window setting, and a receive-side (out-of-order PSN) window only where
// the NV parameter database names one (newer mstflint databases:
// nv_sw_accelerate_conf.log_max_rx_ooo_psn_win); the advice reads what the
// database in use has.
package roce

import (
	"context"
	"errors"
	"fmt"
	"github.com/cxray/cxray/feature/driverhealth"
	"github.com/cxray/cxray/feature/pcielink"
	"github.com/cxray/cxray/feature/throughput"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/prm"
)

// Feature is one ROCE_ACCL switch.
type Feature struct {
	Name      string `json:"name"`
	Supported bool   `json:"supported"`
	Enabled   bool   `json:"enabled"`
	Meaning   string `json:"meaning"`
}

// features are the ROCE_ACCL switches, by their enable field name.
var features = []struct{ name, meaning string }{
	{"roce_adp_retrans", "adaptive retransmission: the retransmission timeout follows the measured RTT instead of a fixed floor"},
	{"roce_tx_window", "transmission window: limits unacknowledged packets in flight to the PSN window (LOG_TX_PSN_WINDOW)"},
	{"roce_slow_restart", "slow restart: after a retransmission, restart sending slowly instead of at full rate"},
	{"roce_slow_restart_idle", "slow restart after idle: ramp up again after a quiet period"},
	{"min_ack_timeout_limit_disabled", "no minimum ACK timeout: allow timeouts below the firmware's floor"},
	{"adaptive_routing_forced_en", "adaptive routing forced on for new QPs"},
	{"selective_repeat_forced_en", "selective repeat forced on for new QPs: resend only lost packets, not go-back-N"},
}

// Features reads ROCE_ACCL. On a query the *_field_select bits say which
// features the device supports.
func Features(ctx context.Context, d *dev.Device) ([]Feature, error) {
	r, err := d.Get(ctx, "ROCE_ACCL", nil, nil, 0)
	if err != nil {
		return nil, err
	}
	var out []Feature
	for _, f := range features {
		sel, err1 := r.Decoded.Get(selectName(f.name))
		en, err2 := r.Decoded.Get(enableName(f.name))
		if err1 != nil || err2 != nil {
			continue // this database revision lacks the feature
		}
		out = append(out, Feature{Name: f.name, Supported: sel.Uint() == 1, Enabled: en.Uint() == 1, Meaning: f.meaning})
	}
	return out, nil
}

func selectName(f string) string { return f + "_field_select" }

func enableName(f string) string {
	if f == "min_ack_timeout_limit_disabled" || strings.HasSuffix(f, "_en") {
		return f
	}
	return f + "_en"
}

// FeatureNames lists the switch names `roce set` accepts.
func FeatureNames() []string {
	out := make([]string, len(features))
	for i, f := range features {
		out[i] = f.name
	}
	return out
}

// SetAssignments are the ROCE_ACCL fields that change one feature: its
// select bit and its enable bit.
func SetAssignments(feature string, on bool) ([]prm.Assignment, error) {
	for _, f := range features {
		if f.name == feature {
			v := "0"
			if on {
				v = "1"
			}
			return []prm.Assignment{{Path: selectName(f.name), Value: "1"}, {Path: enableName(f.name), Value: v}}, nil
		}
	}
	return nil, fmt.Errorf("no RoCE feature %q; features: %s", feature, strings.Join(FeatureNames(), ", "))
}

// Advice is what `roce advise` works out.
type Advice struct {
	RateGbps     float64 `json:"rate_gbps"`
	RTTMicros    float64 `json:"rtt_us"`
	MTU          int     `json:"mtu"`
	Loss         float64 `json:"loss,omitempty"`
	BDPBytes     float64 `json:"bdp_bytes"`
	BDPPackets   float64 `json:"bdp_packets"`
	MinLogWindow int     `json:"min_log_tx_psn_window"`
	// Current is the device's LOG_TX_PSN_WINDOW (-1 unknown); 0 means the
	// device default, whose size is not published.
	Current         int      `json:"current_log_tx_psn_window"`
	Limiting        *bool    `json:"limiting,omitempty"`
	MaxRateGbps     *float64 `json:"max_rate_gbps_with_current,omitempty"`
	ExpectedResends float64  `json:"expected_resent_packets_per_loss,omitempty"`
	// RxWindow is the receive-side window the NV database names, if any.
	RxWindow *RxWindow `json:"rx_window,omitempty"`
	Notes    []string  `json:"notes"`
}

// MaxLogWindow is the largest value LOG_TX_PSN_WINDOW holds (6 bits); 63
// means "the device maximum".
const MaxLogWindow = 63

// maxRate bounds --rate (bit/s): far beyond any port (800G), so that a
// typo of units is refused rather than advised on.
const maxRate = 10e12

// Advise computes the window a link needs. rate is in bits per second, rtt
// in seconds, mtu the RoCE path MTU in bytes (256..4096), loss the packet
// loss probability (0 if unknown), current the device's setting (-1
// unknown). With rate at most maxRate, rtt at most 1 s and an MTU of at
// least 256 bytes, the advice stays below 2^33 packets: always a window
// the device takes (MaxLogWindow).
func Advise(rate, rtt float64, mtu int, loss float64, current int, rx *RxWindow) (*Advice, error) {
	switch {
	case rate <= 0 || math.IsInf(rate, 0) || math.IsNaN(rate):
		return nil, fmt.Errorf("--rate must be positive, e.g. 400G or 100G")
	case rate > maxRate:
		return nil, fmt.Errorf("--rate %.4gG is more than any link carries (a ConnectX port runs at most 800G); give the port's rate, e.g. 400G", rate/1e9)
	case rtt <= 0 || rtt > 1 || math.IsNaN(rtt):
		return nil, fmt.Errorf("--rtt must be between 0 and 1s, e.g. 8us")
	case mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 && mtu != 4096:
		return nil, fmt.Errorf("--mtu %d: the RoCE path MTU is 256, 512, 1024, 2048 or 4096", mtu)
	case loss < 0 || loss >= 1 || math.IsNaN(loss):
		return nil, fmt.Errorf("--loss must be a probability in [0, 1), e.g. 1e-5")
	}
	a := &Advice{RateGbps: rate / 1e9, RTTMicros: rtt * 1e6, MTU: mtu, Loss: loss, Current: current}
	a.BDPBytes = rate / 8 * rtt
	a.BDPPackets = math.Ceil(a.BDPBytes / float64(mtu))
	// 0 would mean "the device default", not a window of one packet:
	// advice is never 0.
	a.MinLogWindow = max(1, int(math.Ceil(math.Log2(math.Max(a.BDPPackets, 1)))))
	a.Notes = append(a.Notes, fmt.Sprintf("the bandwidth-delay product is %.0f bytes = %.0f packets of %d bytes: a window of 2^%d = %.0f packets covers it",
		a.BDPBytes, a.BDPPackets, mtu, a.MinLogWindow, math.Pow(2, float64(a.MinLogWindow))))
	switch {
	case current < 0:
		a.Notes = append(a.Notes, "the device's LOG_TX_PSN_WINDOW is unknown; give -d DEV to compare")
	case current == 0:
		a.Notes = append(a.Notes, "LOG_TX_PSN_WINDOW is 0: the device default, whose size NVIDIA does not publish; set it explicitly to know what you run with")
	case current >= MaxLogWindow:
		a.Notes = append(a.Notes, "LOG_TX_PSN_WINDOW is 63: the device maximum")
		f := false
		a.Limiting = &f
	default:
		win := math.Pow(2, float64(current))
		lim := win < a.BDPPackets
		a.Limiting = &lim
		max := win * float64(mtu) * 8 / rtt / 1e9
		if max > a.RateGbps {
			max = a.RateGbps
		}
		a.MaxRateGbps = &max
		if lim {
			a.Notes = append(a.Notes, fmt.Sprintf("the current window 2^%d = %.0f packets is smaller than the BDP: one connection can reach only %.1f Gb/s of %.0f; raise LOG_TX_PSN_WINDOW to at least %d ('cxray roce set log_tx_psn_window=%d')",
				current, win, max, a.RateGbps, a.MinLogWindow, a.MinLogWindow))
		} else {
			a.Notes = append(a.Notes, fmt.Sprintf("the current window 2^%d = %.0f packets covers the BDP: it does not limit a connection", current, win))
		}
	}
	if loss > 0 {
		// With go-back-N, a loss resends the window in flight behind it.
		w := a.BDPPackets
		if current > 0 && current < MaxLogWindow {
			w = math.Min(w, math.Pow(2, float64(current)))
		}
		a.ExpectedResends = w
		a.Notes = append(a.Notes, fmt.Sprintf("with go-back-N each loss resends up to %.0f packets in flight; at loss %g that is %.2g%% extra traffic: selective repeat (selective_repeat_forced_en) avoids it where supported",
			w, loss, 100*loss*w))
	}
	a.Notes = append(a.Notes, "a window much larger than the BDP lets every connection fill switch buffers under congestion (incast): size it to the BDP, not the maximum",
		rx.note())
	a.RxWindow = rx
	return a, nil
}

// RxWindowField is the receive-side window's field in the NV databases
// that name one: log2 of the largest out-of-order PSN window of a QP, in
// units of 256 PSNs; 0 is the device default.
const RxWindowField = "log_max_rx_ooo_psn_win"

// RxWindow is what the NV database, and the device, say of the
// receive-side window.
type RxWindow struct {
	// Name is the parameter as 'config' takes it (tlv.field); "" when the
	// database names none.
	Name     string `json:"name,omitempty"`
	Database string `json:"database"`
	// Asked says the device was asked; Supported that its firmware
	// offers the TLV; Next and Current its values (-1 unknown).
	Asked     bool `json:"asked"`
	Supported bool `json:"supported"`
	Next      int  `json:"next"`
	Current   int  `json:"current"`
}

// FindRxWindow looks the receive-side window up in the NV database.
func FindRxWindow(nv *nvconf.DB) *RxWindow {
	rx := &RxWindow{Next: -1, Current: -1}
	if nv == nil {
		return rx
	}
	rx.Database = nv.Source
	for _, t := range nv.TLVs {
		for _, p := range t.Params {
			if p.Name == RxWindowField {
				rx.Name = t.Name + "." + p.Name
				return rx
			}
		}
	}
	return rx
}

// ReadRxWindow is FindRxWindow with the device's values.
func ReadRxWindow(ctx context.Context, d *dev.Device, nv *nvconf.DB) (*RxWindow, error) {
	rx := FindRxWindow(nv)
	if rx.Name == "" {
		return rx, nil
	}
	s, err := nvconf.Open(ctx, d, nv)
	if err != nil {
		return nil, err
	}
	res, err := s.Query(ctx, nvconf.QueryOptions{Names: []string{rx.Name}, Extended: true})
	if err != nil {
		return nil, err
	}
	rx.Asked = true
	for _, st := range res.Settings {
		rx.Supported = true
		if st.Next != nil && st.Next.Numeric {
			rx.Next = int(st.Next.Raw)
		}
		if st.Current != nil && st.Current.Numeric {
			rx.Current = int(st.Current.Raw)
		}
	}
	return rx, nil
}

// note says what the advice can say of the receive side.
func (rx *RxWindow) note() string {
	switch {
	case rx == nil || rx.Name == "":
		db := "the NV database in use"
		if rx != nil && rx.Database != "" {
			db += " (" + rx.Database + ")"
		}
		return db + " names no receive-side window, only this global transmit window (no per-QP one either); a newer one (mstflint's mlxconfig_host.db, --nvdb) may name " + RxWindowField
	case !rx.Asked:
		return fmt.Sprintf("the NV database names a receive-side window, %s: log2 of the largest out-of-order PSN window of a QP, in units of 256 PSNs (0: the device default); read it with 'cxray config query -d DEV %s' (give -d here)", rx.Name, rx.Name)
	case !rx.Supported:
		return fmt.Sprintf("the NV database names a receive-side window, %s, but this firmware does not offer its TLV: only the global transmit window is set here", rx.Name)
	case rx.Next == 0:
		return fmt.Sprintf("the receive-side window %s is 0: the device default (log2 of the largest out-of-order PSN window, in units of 256 PSNs)", rx.Name)
	}
	return fmt.Sprintf("the receive-side window %s is %d: out-of-order PSNs up to 2^%d × 256 = %.0f (current %d)", rx.Name, rx.Next, rx.Next, math.Pow(2, float64(rx.Next))*256, rx.Current)
}

// ParseRate reads "400G", "100Gb/s", "25g", "800M", "1T" as bits per
// second. A number without a unit is refused: "400" could mean 400G or
// 400 bit/s, and guessing wrong gives advice a million times off.
func ParseRate(s string) (float64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(t, "/s"), "bps"), "b")
	mult := 0.0
	switch {
	case strings.HasSuffix(t, "t"):
		mult, t = 1e12, strings.TrimSuffix(t, "t")
	case strings.HasSuffix(t, "g"):
		mult, t = 1e9, strings.TrimSuffix(t, "g")
	case strings.HasSuffix(t, "m"):
		mult, t = 1e6, strings.TrimSuffix(t, "m")
	case strings.HasSuffix(t, "k"):
		mult, t = 1e3, strings.TrimSuffix(t, "k")
	}
	v, err := strconv.ParseFloat(t, 64)
	switch {
	case err == nil && mult == 0:
		return 0, fmt.Errorf("rate %q has no unit; give one: 400G, 100G, 25G (Gb/s), 800M (Mb/s) or 1T (Tb/s)", s)
	case err != nil || v <= 0 || math.IsInf(v*mult, 0) || math.IsNaN(v):
		return 0, fmt.Errorf("rate %q: write it as 400G, 100G or 25G (bits per second; M, G and T units)", s)
	}
	return v * mult, nil
}

// RetransmissionCounters are the RDMA counters that move when RoCE
// retransmits (kernel hw_counters names).
var RetransmissionCounters = []string{"duplicate_request", "out_of_sequence", "packet_seq_err", "local_ack_timeout_err",
	"rnr_nak_retry_err", "implied_nak_seq_err", "roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart"}

// CounterMeaning says what a moving retransmission counter suggests.
var CounterMeaning = map[string]string{
	"duplicate_request":     "the responder received requests again: the requester retransmitted (loss, or a timeout shorter than the RTT)",
	"out_of_sequence":       "packets arrived with a PSN gap: loss on the path or reordering",
	"packet_seq_err":        "NAK-sequence errors received: the peer saw a gap and asked for a resend",
	"local_ack_timeout_err": "ACKs did not come in time: loss, congestion, or a window that keeps packets waiting",
	"rnr_nak_retry_err":     "the receiver had no receive buffer posted (RNR): the application is slow to post receives",
	"implied_nak_seq_err":   "a read response implied a lost request",
	"roce_adp_retrans":      "adaptive retransmission fired",
	"roce_adp_retrans_to":   "adaptive retransmission hit its timeout",
	"roce_slow_restart":     "slow restart engaged after retransmission",
}

// WindowParam is the NV parameter of the transmit PSN window.
const WindowParam = "LOG_TX_PSN_WINDOW"

// Window reads LOG_TX_PSN_WINDOW: Next Boot and Current (-1 unknown).
func Window(ctx context.Context, d *dev.Device, nv *nvconf.DB) (next, current int, err error) {
	s, err := nvconf.Open(ctx, d, nv)
	if err != nil {
		return -1, -1, err
	}
	res, err := s.Query(ctx, nvconf.QueryOptions{Names: []string{WindowParam}, Extended: true})
	if err != nil {
		return -1, -1, err
	}
	next, current = -1, -1
	for _, st := range res.Settings {
		if st.Name != WindowParam {
			continue
		}
		if st.Next != nil && st.Next.Numeric {
			next = int(st.Next.Raw)
		}
		if st.Current != nil && st.Current.Numeric {
			current = int(st.Current.Raw)
		}
	}
	return next, current, nil
}

// Rates samples the retransmission counters of every owned port twice,
// interval apart on the adapter's clock, and returns those that moved,
// per second, keyed "port<N>.<counter>".
func Rates(ctx context.Context, a *adapter.Adapter, interval time.Duration) (map[string]float64, error) {
	if interval <= 0 {
		// A rate over no time is no number (it would read +Inf).
		return nil, fmt.Errorf("roce: rates need a positive interval, not %v", interval)
	}
	first, err := a.RDMACounters(ctx)
	if err != nil && len(first) == 0 {
		return nil, err
	}
	if err := a.Sleep(ctx, interval); err != nil {
		return nil, fmt.Errorf("roce: waiting %v between the two samples of the retransmission counters: %w", interval, err)
	}
	second, err := a.RDMACounters(ctx)
	if err != nil && len(second) == 0 {
		return nil, err
	}
	return retransRates(first, second, interval), nil
}

func retransRates(first, second []adapter.CounterSet, interval time.Duration) map[string]float64 {
	before := map[int]map[string]uint64{}
	for _, cs := range first {
		before[cs.Port] = cs.Values
	}
	out := map[string]float64{}
	for _, cs := range second {
		for _, n := range RetransmissionCounters {
			b, ok1 := before[cs.Port][n]
			v, ok2 := cs.Values[n]
			if ok1 && ok2 && v > b {
				out[fmt.Sprintf("port%d.%s", cs.Port, n)] = float64(v-b) / interval.Seconds()
			}
		}
	}
	return out
}

// PortRate is the first owned port's operating speed in bits per second.
func PortRate(ctx context.Context, a *adapter.Adapter) (float64, error) {
	ls, err := a.Links(ctx)
	if len(ls) == 0 {
		if err == nil {
			err = errors.New("the function reports no port")
		}
		return 0, err
	}
	if ls[0].SpeedGbps == nil || *ls[0].SpeedGbps == 0 {
		return 0, fmt.Errorf("port %d reports no speed (is it up?)", ls[0].Port)
	}
	return *ls[0].SpeedGbps * 1e9, nil
}

// Report is `roce status`: the switches, the window, the rates and, with
// an RTT, the advice. A part the backend cannot serve carries its reason.
type Report struct {
	Device      string             `json:"device"`
	Features    []Feature          `json:"features"`
	FeaturesErr string             `json:"features_error,omitempty"`
	Window      WindowReport       `json:"log_tx_psn_window"`
	Rates       map[string]float64 `json:"retransmission_rates_per_s"`
	RatesErr    string             `json:"retransmission_rates_error,omitempty"`
	Advice      *Advice            `json:"advice,omitempty"`
	// PCIe is the link to the host ("Gen5 x8 (capable Gen5 x16)").
	PCIe string `json:"pcie,omitempty"`
	// Causes are what the evidence of the interval says limits
	// throughput, most decisive first (package throughput); Unjudged what
	// it could not judge, and what would.
	Causes   []throughput.Cause `json:"throughput_causes"`
	Unjudged []string           `json:"throughput_unjudged,omitempty"`
}

// WindowReport is LOG_TX_PSN_WINDOW as read (-1 unknown).
type WindowReport struct {
	NextBoot int    `json:"next_boot"`
	Current  int    `json:"current"`
	Error    string `json:"error,omitempty"`
}

// StatusOptions tune Status.
type StatusOptions struct {
	NV       *nvconf.DB
	Interval time.Duration
	RTT      time.Duration // 0: no advice
}

// Status reads everything `roce status` shows. It fails only on a device
// error of the register path; what a backend cannot serve is reported in
// the parts.
func Status(ctx context.Context, a *adapter.Adapter, o StatusOptions) (*Report, error) {
	r := &Report{Device: a.Name(), Features: []Feature{}, Window: WindowReport{NextBoot: -1, Current: -1}}
	d, derr := a.Registers(ctx)
	if derr != nil && !errors.Is(derr, errors.ErrUnsupported) {
		// Only a backend without registers (the kernel's) is a part the
		// report can do without; a device that does not answer is the
		// answer.
		return nil, derr
	}
	if derr == nil {
		feats, err := Features(ctx, d)
		if err != nil && !errors.Is(err, dev.ErrNotSupported) {
			return nil, err
		}
		if err != nil {
			r.FeaturesErr = err.Error()
		}
		r.Features = append(r.Features, feats...)
		if o.NV != nil {
			next, cur, err := Window(ctx, d, o.NV)
			r.Window = WindowReport{NextBoot: next, Current: cur}
			if err != nil {
				r.Window.Error = err.Error()
			}
		}
	} else {
		r.FeaturesErr = derr.Error()
		r.Window.Error = derr.Error()
	}
	ev, err := sample(ctx, a, r, o.Interval)
	if err != nil {
		return nil, err
	}
	if o.RTT > 0 {
		if rate, err := PortRate(ctx, a); err == nil {
			r.Advice, _ = Advise(rate, o.RTT.Seconds(), 4096, 0, r.Window.Current, FindRxWindow(o.NV))
		}
	}
	switch adv := r.Advice; {
	case adv != nil && adv.Limiting != nil:
		ev.Window = &throughput.Window{LogWindow: adv.Current, BDPPackets: adv.BDPPackets, Limiting: *adv.Limiting}
		if adv.MaxRateGbps != nil {
			ev.Window.MaxGbps = *adv.MaxRateGbps
		}
	case o.RTT <= 0:
		ev.WindowWhy = "give the fabric's round-trip time (--rtt 8us) to compare the window with the bandwidth-delay product"
	case r.Window.Current == 0:
		ev.WindowWhy = "LOG_TX_PSN_WINDOW is 0, the device default, whose size is not published"
	default:
		ev.WindowWhy = "LOG_TX_PSN_WINDOW could not be read"
	}
	r.Causes, r.Unjudged = throughput.Explain(ev), throughput.Unjudged(ev)
	return r, nil
}

// sample reads, interval apart, what the throughput causes weigh: the
// retransmission counters (the report's rates), the port counters
// (errors, discards, pause), the driver's statistics where the kernel
// drives the function, and, at the end, the PCIe link.
func sample(ctx context.Context, a *adapter.Adapter, r *Report, interval time.Duration) (throughput.Evidence, error) {
	var ev throughput.Evidence
	if interval <= 0 {
		r.RatesErr = fmt.Sprintf("roce: rates need a positive interval, not %v", interval)
		return ev, nil
	}
	ports := func() map[int]map[string]uint64 {
		m := map[int]map[string]uint64{}
		cs, _ := a.PortCounters(ctx)
		for _, c := range cs {
			m[c.Port] = c.Values
		}
		return m
	}
	rdma1, rerr1 := a.RDMACounters(ctx)
	ports1 := ports()
	drv1, _ := a.Driver(ctx, false)
	if err := a.Sleep(ctx, interval); err != nil {
		return ev, err
	}
	rdma2, rerr2 := a.RDMACounters(ctx)
	ports2 := ports()
	var drv2 *adapter.Driver
	if drv1 != nil {
		drv2, _ = a.Driver(ctx, false)
	}
	if err := ctx.Err(); err != nil {
		return ev, err
	}
	switch {
	case rerr1 != nil && len(rdma1) == 0:
		r.RatesErr = rerr1.Error()
	case rerr2 != nil && len(rdma2) == 0:
		r.RatesErr = rerr2.Error()
	default:
		r.Rates = retransRates(rdma1, rdma2, interval)
	}
	for _, k := range SortedRates(r.Rates) {
		ev.Retransmissions = append(ev.Retransmissions, fmt.Sprintf("%s %.3g/s", k, r.Rates[k]))
	}
	secs := interval.Seconds()
	if len(ports2) == 0 {
		ev.Unread = append(ev.Unread, "the port counters (errors, discards, pause): not read")
	}
	ev.Errors = throughput.Grew(ports1, ports2, throughput.ErrorCounters, secs)
	ev.Discards = throughput.Grew(ports1, ports2, throughput.DiscardCounters, secs)
	ev.Pause = throughput.Grew(ports1, ports2, throughput.PauseCounters, secs)
	if drv1 != nil && drv2 != nil {
		dr := driverhealth.Build(drv1, drv2, interval)
		ev.Pause = append(ev.Pause, driverhealth.Pausing(dr)...)
		ev.Discards = append(ev.Discards, driverhealth.Discarding(dr)...)
	}
	if p, err := a.PCIe(ctx); err == nil {
		ev.PCIe = pcielink.Build(pcielink.Info{Device: a.Name(), BDF: a.BDF(), Backend: string(a.Backend()), PortGbps: pcielink.PortGbps(ctx, a)},
			p, nil, 0, pcielink.Thresholds{})
		r.PCIe = ev.PCIe.Text
	} else if ctx.Err() != nil {
		return ev, err
	}
	return ev, nil
}

// SortedRates lists the rate keys in order.
func SortedRates(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

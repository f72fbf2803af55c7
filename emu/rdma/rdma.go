// Package rdma gives an emulated adapter the RDMA hardware counters the
// Linux driver would show for it. The emulated firmware has no Q counters
// (QUERY_Q_COUNTER is a command, not a register), so there is nothing to
// read them from; this package derives them instead, from the port's
// emulated traffic and link-up time and from two properties of the path the
// emulator does not otherwise model: the packet loss rate and the round-trip
// time. The names and widths are mlx5's (drivers/infiniband/hw/mlx5/
// counters.c): what /sys/class/infiniband/<dev>/ports/<n>/hw_counters/
// holds, so code written against the kernel backend reads the emulator the
// same way.
//
// # The model
//
// It is a model of a reliable-connection RoCE sender and receiver with
// go-back-N recovery, simple enough to reason about, not a simulation:
//
//	N   RoCE packets sent per second      = port Tx frames/s × share
//	R   RoCE packets received per second  = port Rx frames/s × share
//	p   loss probability per packet       (Config.Loss)
//	BDP bandwidth-delay product, packets  = link speed × RTT / (8 × frame bytes), at least 1
//	W   Tx PSN window, packets            = 2^LogWindow
//	F   packets in flight                 = min(W, BDP), at least 1
//	d   window deficit                    = max(0, 1 − W/BDP)
//
// Losses (N·p per second on our sends, R·p on the peer's) are repaired in
// one of two ways. A loss with packets behind it is seen by the receiver as
// a gap: it counts the F−1 packets that follow as out of sequence and sends
// one NAK, which the sender counts as a sequence error. A loss with nothing
// behind it (one in F) is found only by the sender's ACK timer: a local ACK
// timeout.
//
// A window smaller than the BDP stalls the sender once per window (N/W
// times a second) for the share d of a round trip. With adaptive
// retransmission on, the retransmission timer follows the measured RTT and
// a stall that long reads as a lost ACK: a share d of the stalls ends in a
// timeout and a retransmission of a packet the receiver already has, which
// the receiver counts as a duplicate request. The peer is assumed to run
// the same configuration, so its stalls show up here as duplicates.
//
// Per second of link-up time, then:
//
//	rx_write_requests       R (every RoCE packet counted as a one-packet RDMA WRITE)
//	out_of_sequence         R·p·(F−1)
//	packet_seq_err          N·p·(1 − 1/F)
//	local_ack_timeout_err   N·p/F + N·d/W
//	duplicate_request       R·d/W   (0 without adaptive retransmission)
//	roce_adp_retrans        local_ack_timeout_err when roce_adp_retrans is enabled (ROCE_ACCL), else 0
//	roce_adp_retrans_to     roce_adp_retrans × p (the retransmission was lost too)
//	roce_slow_restart       roce_adp_retrans_to when roce_slow_restart is enabled, else 0
//	roce_slow_restart_trans 2 × roce_slow_restart (into slow restart and back)
//
// and every other counter mlx5 shows (reads, atomics, RNR, the enhanced
// error group, congestion) stays 0: the model has no reads, no receiver
// that runs out of buffers and no congestion. Counters are rates integrated
// over link-up time and rounded down, so they are exact for a given emulated
// time and never go backwards; the 32-bit Q counters wrap at 2^32 as the
// firmware's do. Changing a port's Config (SetPortConfig) keeps the counts
// reached so far and applies the new rates from then on.
//
// Loss 0 with a window that covers the BDP gives no retransmission at all;
// raising the loss or the RTT (or lowering LogWindow) makes the
// retransmission counters grow, which is what `cxray exporter` and alert
// rules are tested against.
package rdma

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/nvstore"
	"github.com/cxray/cxray/emu/scenario"
)

// Config is a port's RDMA path: what the model needs beyond the adapter's
// own traffic and link state. The zero value means no loss, an 8 µs round
// trip, the adapter's own Tx PSN window and the RoCE share of its traffic.
type Config struct {
	// Loss is the probability that a packet is lost on the wire (0..0.5).
	Loss float64
	// RTT is the round-trip time of the path (0: DefaultRTT; at most 1 s).
	RTT time.Duration
	// LogWindow is log2 of the Tx PSN window in packets (1..15). 0 takes
	// the adapter's LOG_TX_PSN_WINDOW NV value in effect (its scenario's
	// configured value, else its profile's factory value), else 7.
	LogWindow int
	// Share is the part of the port's frames that are RoCE (0..1). 0 takes
	// the port's traffic share on Priority; a port whose traffic has no
	// priority split is taken as all RoCE.
	Share float64
	// Priority is the RoCE priority used to find Share (0: 3, the usual
	// lossless class; use Share to say "all traffic" explicitly).
	Priority int
}

// DefaultRTT is the round trip of a short data-centre path through one or
// two switches.
const DefaultRTT = 8 * time.Microsecond

// DefaultLogWindow is the Tx PSN window when the adapter's NV store says
// nothing (128 packets, the ConnectX-6 Dx factory value).
const DefaultLogWindow = 7

// Validate says what is wrong with a Config.
func (c Config) Validate() error {
	var errs []error
	if !(c.Loss >= 0 && c.Loss <= 0.5) {
		errs = append(errs, fmt.Errorf("rdma: loss %v is out of range; give a probability 0..0.5 (1e-5 is one packet in 100000)", c.Loss))
	}
	if c.RTT < 0 || c.RTT > time.Second {
		errs = append(errs, fmt.Errorf("rdma: rtt %v is out of range; give 0 (the default %v) up to 1s", c.RTT, DefaultRTT))
	}
	if c.LogWindow < 0 || c.LogWindow > 15 {
		errs = append(errs, fmt.Errorf("rdma: log_window %d is out of range; give 1..15 (log2 of packets), or 0 for the adapter's LOG_TX_PSN_WINDOW", c.LogWindow))
	}
	if !(c.Share >= 0 && c.Share <= 1) {
		errs = append(errs, fmt.Errorf("rdma: share %v is out of range; give 0..1, or 0 for the RoCE priority's share", c.Share))
	}
	if c.Priority < 0 || c.Priority > 7 {
		errs = append(errs, fmt.Errorf("rdma: priority %d is out of range; give 0..7", c.Priority))
	}
	return errors.Join(errs...)
}

// Counter names, grouped as mlx5 groups them (each group is present on
// hardware whose firmware has the capability; the model has them all).
var (
	// Q counters, 32 bits wide in the firmware: they wrap at 2^32.
	basic          = []string{"rx_write_requests", "rx_read_requests", "rx_atomic_requests", "rx_dct_connect", "out_of_buffer"}
	outOfSeq       = []string{"out_of_sequence"}
	retransmission = []string{"duplicate_request", "rnr_nak_retry_err", "packet_seq_err", "implied_nak_seq_err", "local_ack_timeout_err"}
	enhanced       = []string{"resp_local_length_error", "resp_cqe_error", "req_cqe_error", "req_remote_invalid_request",
		"req_remote_access_errors", "resp_remote_access_errors", "resp_cqe_flush_error", "req_cqe_flush_error",
		"req_transport_retries_exceeded", "req_rnr_retries_exceeded"}
	roceAccl = []string{"roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart", "roce_slow_restart_cnps", "roce_slow_restart_trans"}
	// 64-bit counters (congestion statistics and PPCNT).
	wide = []string{"rp_cnp_ignored", "rp_cnp_handled", "np_ecn_marked_roce_packets", "np_cnp_sent", "rx_icrc_encapsulated"}
)

// Names lists every counter the model produces, sorted.
func Names() []string {
	var out []string
	for _, g := range [][]string{basic, outOfSeq, retransmission, enhanced, roceAccl, wide} {
		out = append(out, g...)
	}
	sort.Strings(out)
	return out
}

// Is64Bit says whether a counter is 64 bits wide (the others wrap at 2^32).
func Is64Bit(name string) bool {
	for _, n := range wide {
		if n == name {
			return true
		}
	}
	return false
}

// Model produces the counters of one emulated adapter's ports.
type Model struct {
	a   *scenario.Adapter
	clk emu.Clock
	mu  sync.Mutex
	// segs holds, per adapter port, the counts reached when its Config
	// last changed and the link-up time then.
	segs map[int]*segment
	def  Config
}

type segment struct {
	cfg  Config
	up0  time.Duration      // link-up time at the start of the segment
	base map[string]float64 // counts reached before it
}

// New builds the model of an adapter with one Config for every port. clk
// is the emulation's clock (scenario.Emulation.Clock), the one its firmware
// runs on.
func New(a *scenario.Adapter, clk emu.Clock, cfg Config) (*Model, error) {
	if a == nil || a.Firmware == nil || clk == nil {
		return nil, errors.New("rdma: no adapter or no clock; pass an adapter of a built scenario and the emulation's clock")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Model{a: a, clk: clk, segs: map[int]*segment{}, def: cfg}, nil
}

// SetPortConfig changes one port's path from now on (loss switched on by a
// test, a longer RTT); counts reached so far are kept.
func (m *Model) SetPortConfig(port int, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	st, spec, now, err := m.port(port)
	if err != nil {
		return err
	}
	s := m.seg(port)
	up := upTimeAt(st, now, now)
	s.base = m.counts(s, st, spec, up)
	s.cfg, s.up0 = cfg, up
	return nil
}

// PortConfig is the Config a port runs with.
func (m *Model) PortConfig(port int) Config {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seg(port).cfg
}

func (m *Model) seg(port int) *segment {
	s := m.segs[port]
	if s == nil {
		s = &segment{cfg: m.def}
		m.segs[port] = s
	}
	return s
}

// port finds an adapter port (1-based) and reads its status with the
// clock's time at the read.
func (m *Model) port(port int) (fw.PortStatus, fw.PortSpec, time.Time, error) {
	f := m.a.Firmware
	now := m.clk.Now()
	ports := f.Ports()
	spec := f.Spec()
	if port < 1 || port > len(ports) || port > len(spec.Ports) {
		return fw.PortStatus{}, fw.PortSpec{}, time.Time{}, fmt.Errorf("rdma: adapter %s has no port %d (ports 1..%d)", m.a.Name, port, len(ports))
	}
	return ports[port-1], spec.Ports[port-1], now, nil
}

// Counters returns the hw_counters of an adapter port (1-based, adapter
// numbering: a function's own port is scenario.Function.Port) at now, the
// emulated time the caller reads registers at (the emulation's clock; a
// time other than the clock's moves the link-up time by the difference,
// which is exact while the link state does not change in between).
func (m *Model) Counters(port int, now time.Time) (map[string]uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, spec, clockNow, err := m.port(port)
	if err != nil {
		return nil, err
	}
	up := upTimeAt(st, now, clockNow)
	s := m.seg(port)
	c := m.counts(s, st, spec, up)
	out := make(map[string]uint64, len(c))
	for _, n := range Names() {
		v := c[n]
		u := uint64(0)
		if v > 0 {
			u = uint64(math.Min(math.Floor(v), math.MaxUint64))
		}
		if !Is64Bit(n) {
			u &= math.MaxUint32
		}
		out[n] = u
	}
	return out, nil
}

// upTimeAt moves a port's link-up time, read at clockNow, to now.
func upTimeAt(st fw.PortStatus, now, clockNow time.Time) time.Duration {
	up := st.UpTime
	if st.OperUp {
		up += now.Sub(clockNow)
	}
	return max(up, 0)
}

// Rates are a port's counter rates per second of link-up time.
type Rates map[string]float64

// PortRates returns the rates a port's counters grow at with its current
// Config (zero while its link is down: no speed, no traffic).
func (m *Model) PortRates(port int) (Rates, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, spec, _, err := m.port(port)
	if err != nil {
		return nil, err
	}
	return m.rates(m.seg(port).cfg, st, spec), nil
}

func (m *Model) counts(s *segment, st fw.PortStatus, spec fw.PortSpec, up time.Duration) map[string]float64 {
	out := map[string]float64{}
	for k, v := range s.base {
		out[k] = v
	}
	dt := (up - s.up0).Seconds()
	if dt <= 0 {
		return out
	}
	for k, r := range m.rates(s.cfg, st, spec) {
		out[k] += r * dt
	}
	return out
}

func (m *Model) rates(cfg Config, st fw.PortStatus, spec fw.PortSpec) Rates {
	r := Rates{}
	gbps := float64(st.SpeedGbps)
	if gbps <= 0 {
		// Down now: the counts integrate up-time only, and up-time does not
		// grow while down, so any rate gives the same counts; use the
		// fastest protocol so a port that comes back is ready.
		for _, n := range spec.Protocols {
			if p, err := fw.LookupEthProtocol(n); err == nil {
				gbps = max(gbps, float64(p.Gbps))
			}
		}
	}
	t := spec.Traffic
	share := m.share(cfg, t)
	n, rx := t.TxFramesPerSec*share, t.RxFramesPerSec*share
	frame := t.FrameBytes
	if frame <= 0 {
		frame = 1024
	}
	rtt := cfg.RTT
	if rtt == 0 {
		rtt = DefaultRTT
	}
	bdp := max(gbps*1e9*rtt.Seconds()/(8*frame), 1)
	w := math.Ldexp(1, m.logWindow(cfg))
	f := max(math.Min(w, bdp), 1)
	d := max(0, 1-w/bdp)
	p := cfg.Loss
	feats := m.a.Firmware.RoCEFeatures()
	adaptive := feats["roce_adp_retrans"][1]
	slow := feats["roce_slow_restart"][1]

	r["rx_write_requests"] = rx
	r["out_of_sequence"] = rx * p * (f - 1)
	r["packet_seq_err"] = n * p * (1 - 1/f)
	timeouts := n * p / f
	if adaptive {
		timeouts += n * d / w
		r["duplicate_request"] = rx * d / w
		r["roce_adp_retrans"] = timeouts
		r["roce_adp_retrans_to"] = timeouts * p
		if slow {
			r["roce_slow_restart"] = timeouts * p
			r["roce_slow_restart_trans"] = 2 * timeouts * p
		}
	}
	r["local_ack_timeout_err"] = timeouts
	return r
}

// share is the RoCE part of a port's frames.
func (m *Model) share(cfg Config, t fw.Traffic) float64 {
	if cfg.Share > 0 {
		return cfg.Share
	}
	prio := cfg.Priority
	if prio == 0 {
		prio = 3
	}
	var sum float64
	for _, s := range t.PriorityShare {
		sum += s
	}
	if sum == 0 {
		return 1
	}
	return t.PriorityShare[prio] / sum
}

// logWindow is the Tx PSN window in effect.
func (m *Model) logWindow(cfg Config) int {
	if cfg.LogWindow > 0 {
		return cfg.LogWindow
	}
	d, _ := nvstore.ProfileDefaults(m.a.Profile)
	if m.a.Spec != nil {
		d = d.Merge(m.a.Spec.NV)
	}
	for _, src := range []map[string]string{d.Configured, d.Factory} {
		if v, ok := src["LOG_TX_PSN_WINDOW"]; ok {
			if n, err := strconv.Atoi(v); err == nil && n >= 1 && n <= 15 {
				return n
			}
		}
	}
	return DefaultLogWindow
}

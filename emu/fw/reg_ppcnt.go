package fw

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"time"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/prm"
)

// portRates are a port's counter rates in micro-events per second (integers,
// so counts are exact and identical on every platform).
type portRates struct {
	txFrames, rxFrames         uint64
	txOctets, rxOctets         uint64
	txMcast, txBcast           uint64
	rxMcast, rxBcast           uint64
	rxErrors, rxDiscards       uint64
	symbolErrors               uint64
	fecCorrected, fecUncorr    uint64
	topGbps                    float64   // the fastest protocol the port enables
	prioShare                  [8]uint64 // per-million of the traffic
	lanes                      int
	correctedSymbolsPerBlock10 uint64 // corrected symbols per corrected block, ×10
}

// perMicro converts a rate per second to micro-units per second.
func perMicro(r float64) uint64 {
	if !(r > 0) {
		return 0
	}
	return uint64(math.Round(math.Min(r, 1e12) * 1e6))
}

// newPortRates applies the seed's jitter (±5 %, per port) to a traffic spec.
func newPortRates(ps PortSpec, seed uint64, port int) portRates {
	t := ps.Traffic
	j := 0.95 + float64(mix(seed, uint64(0x70+port))%1001)/10000 // 0.95..1.05
	tx, rx := t.TxFramesPerSec*j, t.RxFramesPerSec*j
	r := portRates{
		txFrames: perMicro(tx), rxFrames: perMicro(rx),
		txOctets: perMicro(tx * t.FrameBytes), rxOctets: perMicro(rx * t.FrameBytes),
		txMcast: perMicro(tx * t.MulticastShare), txBcast: perMicro(tx * t.BroadcastShare),
		rxMcast: perMicro(rx * t.MulticastShare), rxBcast: perMicro(rx * t.BroadcastShare),
		rxErrors: perMicro(t.RxErrorsPerSec * j), rxDiscards: perMicro(t.RxDiscardsPerSec * j),
		symbolErrors: perMicro(t.SymbolErrorsPerSec * j),
		fecCorrected: perMicro(t.FECCorrectedPerSec * j), fecUncorr: perMicro(t.FECUncorrPerSec * j),
		lanes: ps.Lanes, correctedSymbolsPerBlock10: 13,
	}
	// Bits and RS-FEC codewords are counted at the speed the link runs
	// (link.go, linkRates); before the link first comes up, at the
	// fastest the port enables.
	for _, n := range ps.Protocols {
		if p, err := LookupEthProtocol(n); err == nil {
			r.topGbps = max(r.topGbps, float64(p.Gbps))
		}
	}
	var sum float64
	for _, s := range t.PriorityShare {
		sum += s
	}
	if sum == 0 {
		r.prioShare[0] = 1e6
	} else {
		for i, s := range t.PriorityShare {
			r.prioShare[i] = uint64(math.Round(s / sum * 1e6))
		}
	}
	return r
}

// count is rate (micro-units per second) over d, exact to the unit: the
// product is computed in 128 bits. It saturates instead of wrapping.
func count(rate uint64, d time.Duration) uint64 {
	if d <= 0 || rate == 0 {
		return 0
	}
	hi, lo := bits.Mul64(rate, uint64(d))
	const div = 1e15 // micro-units × nanoseconds
	if hi >= div {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, div)
	return q
}

// share scales a count by a per-million share.
func share(n, perMillion uint64) uint64 {
	hi, lo := bits.Mul64(n, perMillion)
	if hi >= 1e6 {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, 1e6)
	return q
}

// clearMark is where a counter group was last cleared: the wall time (for
// time_since_last_clear) and the port's link-up time then (counters count
// link-up time since).
type clearMark struct {
	at    time.Time
	up    time.Duration
	downs uint64 // the port's link-down count then
}

// PPCNT counter groups (grp enum values, looked up by name at run time).
var ppcntGroups = map[string]func(f *Firmware, c *Call, p *portState, up time.Duration, since time.Duration) uint8{
	"IEEE_802_3_Counters":     (*Firmware).ppcnt8023,
	"RFC_2863_Counters":       (*Firmware).ppcnt2863,
	"Per_Priority_Counters":   (*Firmware).ppcntPrio,
	"Physical_Layer_Counters": (*Firmware).ppcntPhys,

	"Physical_Layer_Statistical_Counters": (*Firmware).ppcntPhysStat,

	"InfiniBand_Port_Counters":          (*Firmware).ppcntIB,
	"InfiniBand_Extended_Port_Counters": (*Firmware).ppcntIBExt,
	"InfiniBand_General_Counters":       (*Firmware).ppcntIBGeneral,

	"RS_FEC_Histogram_group": (*Firmware).ppcntFECHist,
}

// ethernetGroups count the Ethernet MAC's traffic: on a port that runs
// InfiniBand they count nothing.
var ethernetGroups = map[string]bool{"IEEE_802_3_Counters": true, "RFC_2863_Counters": true, "Per_Priority_Counters": true}

// PPCNT: port counters. Counters grow at the port's rates while its link
// is up; clr (GET or SET) clears the group after reading it.
func (f *Firmware) ppcnt(c *Call) uint8 {
	p, st := c.localPort()
	if st != StatusOK {
		return st
	}
	if st := c.portType(); st != StatusOK {
		return st
	}
	if sw := c.Req("swid"); sw != 0 {
		return c.Fail(StatusBadParam, "swid %d: an adapter has only switch partition 0", sw)
	}
	if pn := c.Req("pnat"); pn > 1 {
		return c.Fail(StatusBadParam, "pnat %d: use 0 (local port) or 1 (label port)", pn)
	}
	grp := uint8(c.Req("grp"))
	name, _ := f.enumName("PPCNT", "grp", uint64(grp))
	fill := ppcntGroups[name]
	if p.ib != nil && ethernetGroups[name] {
		fill = nil
	}
	mark, ok := p.clears[grp]
	if !ok {
		mark = clearMark{at: f.boot}
	}
	up := p.upTime(c.Now) - mark.up
	since := c.Now.Sub(mark.at)
	if fill != nil {
		if st := fill(f, c, p, up, since); st != StatusOK {
			return st
		}
	}
	if c.Req("clr") != 0 {
		p.clears[grp] = clearMark{at: c.Now, up: p.upTime(c.Now), downs: p.downs}
		// A SET with clr answers with the cleared counters.
		if c.Method == emu.MethodSet {
			c.pending = nil
			if fill != nil {
				fill(f, c, p, 0, 0)
			}
		}
	}
	return StatusOK
}

func (f *Firmware) ppcnt8023(c *Call, p *portState, up, _ time.Duration) uint8 {
	const pre = "counter_set.eth_802_3_cntrs_grp_data_layout_ext."
	r := &p.rates
	c.Put(pre+"a_frames_transmitted_ok", count(r.txFrames, up))
	c.Put(pre+"a_frames_received_ok", count(r.rxFrames, up))
	c.Put(pre+"a_frame_check_sequence_errors", count(r.rxErrors, up))
	c.Put(pre+"a_octets_transmitted_ok", count(r.txOctets, up))
	c.Put(pre+"a_octets_received_ok", count(r.rxOctets, up))
	c.Put(pre+"a_multicast_frames_xmitted_ok", count(r.txMcast, up))
	c.Put(pre+"a_broadcast_frames_xmitted_ok", count(r.txBcast, up))
	c.Put(pre+"a_multicast_frames_received_ok", count(r.rxMcast, up))
	c.Put(pre+"a_broadcast_frames_received_ok", count(r.rxBcast, up))
	return StatusOK
}

func (f *Firmware) ppcnt2863(c *Call, p *portState, up, _ time.Duration) uint8 {
	const pre = "counter_set.eth_2863_cntrs_grp_data_layout_ext."
	r := &p.rates
	rx, tx := count(r.rxFrames, up), count(r.txFrames, up)
	rxM, rxB, txM, txB := count(r.rxMcast, up), count(r.rxBcast, up), count(r.txMcast, up), count(r.txBcast, up)
	c.Put(pre+"if_in_octets", count(r.rxOctets, up))
	c.Put(pre+"if_in_ucast_pkts", rx-min(rx, rxM+rxB))
	c.Put(pre+"if_in_discards", count(r.rxDiscards, up))
	c.Put(pre+"if_in_errors", count(r.rxErrors, up))
	c.Put(pre+"if_out_octets", count(r.txOctets, up))
	c.Put(pre+"if_out_ucast_pkts", tx-min(tx, txM+txB))
	c.Put(pre+"if_in_multicast_pkts", rxM)
	c.Put(pre+"if_in_broadcast_pkts", rxB)
	c.Put(pre+"if_out_multicast_pkts", txM)
	c.Put(pre+"if_out_broadcast_pkts", txB)
	return StatusOK
}

func (f *Firmware) ppcntPrio(c *Call, p *portState, up, _ time.Duration) uint8 {
	prio := c.Req("prio_tc")
	if prio > 7 {
		return c.Fail(StatusBadParam, "prio_tc %d: priorities are 0..7", prio)
	}
	const pre = "counter_set.eth_per_prio_grp_data_layout_ext."
	r, s := &p.rates, p.rates.prioShare[prio]
	c.Put(pre+"rx_octets", share(count(r.rxOctets, up), s))
	c.Put(pre+"rx_frames", share(count(r.rxFrames, up), s))
	c.Put(pre+"tx_octets", share(count(r.txOctets, up), s))
	c.Put(pre+"tx_frames", share(count(r.txFrames, up), s))
	return StatusOK
}

func (f *Firmware) ppcntPhys(c *Call, p *portState, up, since time.Duration) uint8 {
	if p.lq.spec.modeled() {
		f.ppcntPhysModel(c, p, up, since)
		return StatusOK
	}
	const pre = "counter_set.phys_layer_cntrs_ext."
	r := &p.rates
	c.Put(pre+"time_since_last_clear", uint64(max(since, 0)/time.Millisecond))
	c.Put(pre+"symbol_errors", count(r.symbolErrors, up))
	corr, unc := count(r.fecCorrected, up), count(r.fecUncorr, up)
	blocks := f.linkCounts(p, c.Now, up).blocks
	c.Put(pre+"rs_fec_corrected_blocks", corr)
	c.Put(pre+"rs_fec_uncorrectable_blocks", unc)
	c.Put(pre+"rs_fec_no_errors_blocks", blocks-min(blocks, corr+unc))
	syms := corr / 10 * r.correctedSymbolsPerBlock10
	c.Put(pre+"rs_fec_corrected_symbols_total", syms)
	n := p.countedLanes()
	lanes := uint64(max(n, 1))
	for l := 0; l < n && l < 8; l++ {
		// Spread the symbols over the lanes, the remainder on lane 0.
		n := syms / lanes
		if l == 0 {
			n += syms % lanes
		}
		c.Put(fmt.Sprintf("%srs_fec_corrected_symbols_lane%d", pre, l), n)
	}
	return StatusOK
}

// ppcntPhysStat is the physical-layer statistics group: bits received,
// errors before and after FEC, and the bit error rates mlxlink shows.
func (f *Firmware) ppcntPhysStat(c *Call, p *portState, up, since time.Duration) uint8 {
	if p.lq.spec.modeled() {
		f.ppcntPhysStatModel(c, p, up, since)
		return StatusOK
	}
	const pre = "counter_set.phys_layer_stat_cntrs_ext."
	r := &p.rates
	bits := f.linkCounts(p, c.Now, up).bits
	// A corrected RS-FEC symbol is 10 bits of which about two are wrong.
	corrected := count(r.fecCorrected, up) / 10 * r.correctedSymbolsPerBlock10 * 2
	effective := count(r.fecUncorr, up)
	symbols := count(r.symbolErrors, up)
	c.Put(pre+"time_since_last_clear", uint64(max(since, 0)/time.Millisecond))
	c.Put(pre+"phy_received_bits", bits)
	c.Put(pre+"phy_corrected_bits", corrected)
	c.Put(pre+"phy_symbol_errors", symbols)
	c.Put(pre+"phy_effective_errors", effective)
	nl := p.countedLanes()
	lanes := uint64(max(nl, 1))
	for l := 0; l < nl && l < 8; l++ {
		n := corrected / lanes
		if l == 0 {
			n += corrected % lanes
		}
		c.Put(fmt.Sprintf("%sphy_raw_errors_lane%d", pre, l), n)
	}
	for _, b := range []struct {
		coef, mag string
		errors    uint64
	}{
		{"raw_ber_coef", "raw_ber_magnitude", corrected},
		{"effective_ber_coef", "effective_ber_magnitude", effective},
		{"symbol_fec_ber_coef", "symbol_ber_magnitude", symbols},
	} {
		coef, mag := ber(b.errors, bits)
		c.Put(pre+b.coef, coef)
		c.Put(pre+b.mag, mag)
	}
	return StatusOK
}

// ber writes errors/bits as coef × 10^-mag with coef 1..9. No errors (or
// no traffic) reads 15E-255, what firmware reports for a clean link.
func ber(errors, bits uint64) (coef, mag uint64) {
	if errors == 0 || bits == 0 {
		return 15, 255
	}
	e, b := new(big.Int).SetUint64(errors), new(big.Int).SetUint64(bits)
	ten := big.NewInt(10)
	for m := uint64(0); m <= 254; m++ {
		if e.Cmp(b) >= 0 { // errors × 10^m ≥ bits: the first digit is here
			q := new(big.Int).Quo(e, b)
			return min(q.Uint64(), 9), m
		}
		e.Mul(e, ten)
	}
	return 15, 255
}

// Counter returns a PPCNT counter of a local port by its path inside the
// group's layout (for tests and a control socket), reading it the same way
// a GET would, without clearing it.
func (f *Firmware) Counter(local int, group string, path string) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, err := f.readPPCNT(local, group)
	if err != nil {
		return 0, err
	}
	v, err := d.Get(path)
	if err != nil {
		return 0, fmt.Errorf("fw: %w", err)
	}
	return v.Uint(), nil
}

// readPPCNT reads one PPCNT group of a local port as a GET without clr
// would. The caller holds f.mu.
func (f *Firmware) readPPCNT(local int, group string) (*prm.Decoded, error) {
	p := f.port(local)
	if p == nil {
		return nil, fmt.Errorf("fw: local port %d does not exist (ports 1..%d)", local, len(f.ports))
	}
	id, err := f.lookup("PPCNT")
	if err != nil {
		return nil, fmt.Errorf("fw: %w", err)
	}
	grp, ok := f.enumValue("PPCNT", "grp", group)
	if !ok {
		return nil, fmt.Errorf("fw: PPCNT has no group %q; use one of %s", group, f.enumNames("PPCNT", "grp"))
	}
	ri := f.regs[id]
	in := ri.plan.NewBuffer()
	c := &Call{Register: ri.reg, Plan: ri.plan, Method: emu.MethodGet, Now: f.clk.Now(), fw: f}
	if err := ri.plan.Encode(in, []prm.Assignment{{Path: "local_port", Value: fmt.Sprint(local)}, {Path: "grp", Value: fmt.Sprint(grp)}}); err != nil {
		return nil, fmt.Errorf("fw: %w", err)
	}
	c.In, c.Out = in, merge(make([]byte, len(in)), in, ri.index)
	f.tick(c.Now)
	if st := f.ppcnt(c); st != StatusOK {
		return nil, fmt.Errorf("fw: PPCNT: %s (%s)", StatusName(st), c.reason)
	}
	if err := c.Flush(); err != nil {
		return nil, fmt.Errorf("fw: %w", err)
	}
	d, err := ri.plan.Decode(c.Out)
	if err != nil {
		return nil, fmt.Errorf("fw: %w", err)
	}
	return d, nil
}

// IBCounters are an InfiniBand port's PortCounters as the kernel's sysfs
// names them (ports/N/counters/), read the way mlx5_ib reads them
// (drivers/infiniband/hw/mlx5/mad.c): the error counters from PPCNT's
// InfiniBand port counters group, whose narrow fields saturate, the data
// and packet counters from the 64-bit group, and the unicast and multicast
// packets the port carried. An Ethernet port has none (nil).
func (f *Firmware) IBCounters(local int) (map[string]uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.port(local)
	if p == nil {
		return nil, fmt.Errorf("fw: local port %d does not exist (ports 1..%d)", local, len(f.ports))
	}
	if p.ib == nil {
		return nil, nil
	}
	short, err := f.readPPCNT(local, "InfiniBand_Port_Counters")
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	long, lerr := f.readPPCNT(local, "InfiniBand_Extended_Port_Counters")
	for _, n := range ibCounterFields {
		d, path := short, "counter_set.IB_portcntrs_attribute_grp_data_ext."+n.short
		switch n.name {
		case "port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets":
			if lerr == nil {
				d, path = long, "counter_set.IB_long_portcntrs_attribute_grp_data_ext."+n.long
			}
		}
		if v, err := d.Get(path); err == nil {
			out[n.name] = v.Uint()
		}
	}
	g, _ := f.enumValue("PPCNT", "grp", "InfiniBand_Extended_Port_Counters")
	mark := p.clears[uint8(g)]
	up := p.upTime(f.clk.Now()) - mark.up
	r := &p.rates
	tx, rx, txM, rxM := count(r.txFrames, up), count(r.rxFrames, up), count(r.txMcast+r.txBcast, up), count(r.rxMcast+r.rxBcast, up)
	out["unicast_xmit_packets"], out["multicast_xmit_packets"] = tx-min(tx, txM), txM
	out["unicast_rcv_packets"], out["multicast_rcv_packets"] = rx-min(rx, rxM), rxM
	return out, nil
}

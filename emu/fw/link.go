package fw

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cxray/cxray/emu"
)

// The link-quality model: per port and lane, the bit error ratio before
// FEC (raw), the ratio of errors FEC could not correct (effective), and
// the link partner (the protocols it enables, a FEC it forces). It drives
// PPCNT's physical-layer groups, PDDR's operational and troubleshooting
// pages, PPLM and SLRG from the same numbers, so that every tool reading
// any of them sees one consistent link.
//
// Error counts integrate exactly over link-up time, as the traffic
// counters do (reg_ppcnt.go): each change of the model starts an epoch at
// the port's up-time, carrying the totals reached so far.

// LinkSpec is a port's link quality and its partner. The zero value is a
// clean link whose counters follow the port's Traffic FEC rates, with a
// partner that takes whatever this port offers.
type LinkSpec struct {
	// RawBER is the pre-FEC bit error ratio of every lane (0..0.5).
	RawBER float64
	// LaneBER overrides RawBER lane by lane (a degraded lane); a 0 entry
	// takes RawBER.
	LaneBER []float64
	// EffectiveBER is the ratio of bits in blocks FEC could not correct
	// (0..0.5); on a link without FEC every raw error is effective.
	EffectiveBER float64
	// PartnerProtocols are the Ethernet protocols the link partner
	// enables; empty: every one. A partner that enables fewer speeds than
	// this side brings the link up slower (a speed mismatch), or not at all.
	PartnerProtocols []string
	// PartnerFEC is the FEC the partner forces: "" (negotiated), none,
	// firecode, rs528 or rs544. A different FEC on this side keeps the link
	// down (PDDR opcode 38, FEC mismatch during override).
	PartnerFEC string
}

// modeled says whether the spec drives the error counters (else the
// Traffic FEC rates do, as before the model existed).
func (l LinkSpec) modeled() bool {
	if l.RawBER > 0 || l.EffectiveBER > 0 {
		return true
	}
	for _, b := range l.LaneBER {
		if b > 0 {
			return true
		}
	}
	return false
}

// partnerFECs are the FEC names of LinkSpec.PartnerFEC, as PDDR
// fec_mode_active numbers.
var partnerFECs = map[string]int{"none": fecNone, "firecode": 1, "rs528": fecRS528, "rs544": fecRS544}

// PartnerFECNames lists the values PartnerFEC takes.
func PartnerFECNames() []string { return []string{"none", "firecode", "rs528", "rs544"} }

// MaxLanes is the widest port a ConnectX has (PMLP width 8, 800G).
const MaxLanes = 8

// Validate checks a link spec for a port of lanes lanes.
func (l LinkSpec) Validate(lanes int) error {
	var errs []error
	ratio := func(what string, v float64) {
		if !(v >= 0 && v <= 0.5) {
			errs = append(errs, fmt.Errorf("%s %v is not a bit error ratio 0..0.5", what, v))
		}
	}
	ratio("raw BER", l.RawBER)
	ratio("effective BER", l.EffectiveBER)
	if len(l.LaneBER) > lanes {
		errs = append(errs, fmt.Errorf("lane BER lists %d lanes, the port has %d", len(l.LaneBER), lanes))
	}
	for i, b := range l.LaneBER {
		ratio(fmt.Sprintf("lane %d BER", i), b)
	}
	for _, n := range l.PartnerProtocols {
		if _, err := LookupEthProtocol(n); err != nil {
			errs = append(errs, fmt.Errorf("partner: %w", err))
		}
	}
	if _, ok := partnerFECs[l.PartnerFEC]; l.PartnerFEC != "" && !ok {
		errs = append(errs, fmt.Errorf("partner FEC %q; use one of %s (or leave it out to negotiate)", l.PartnerFEC, strings.Join(PartnerFECNames(), ", ")))
	}
	return errors.Join(errs...)
}

func (l LinkSpec) clone() LinkSpec {
	l.LaneBER = append([]float64(nil), l.LaneBER...)
	l.PartnerProtocols = append([]string(nil), l.PartnerProtocols...)
	return l
}

// laneBER is the raw BER of lane i.
func (l LinkSpec) laneBER(i int) float64 {
	if i < len(l.LaneBER) && l.LaneBER[i] > 0 {
		return l.LaneBER[i]
	}
	return l.RawBER
}

// linkQuality is a port's model state.
type linkQuality struct {
	spec    LinkSpec
	partner uint32 // partner's extended protocol mask; 0: every protocol
	// admin holds PPLM fec_override_admin_<group> values set by SET.
	admin  map[string]uint64
	epochs []linkEpoch
}

type linkEpoch struct {
	from time.Duration // link-up time at which the epoch starts
	gbps float64       // the speed the link runs at in the epoch
	base linkTotals
	rate linkTotals // micro-events per second of link-up time
}

// linkTotals are counts of the physical layer: raw errors per lane,
// effective errors, and the bits and RS-FEC codewords received.
type linkTotals struct {
	lane         [8]uint64
	effective    uint64
	bits, blocks uint64
}

func (t linkTotals) sub(o linkTotals) linkTotals {
	for i := range t.lane {
		t.lane[i] -= min(t.lane[i], o.lane[i])
	}
	t.effective -= min(t.effective, o.effective)
	t.bits -= min(t.bits, o.bits)
	t.blocks -= min(t.blocks, o.blocks)
	return t
}

func (t linkTotals) raw() uint64 {
	var s uint64
	for _, n := range t.lane {
		s = satAdd(s, n)
	}
	return s
}

func satAdd(a, b uint64) uint64 {
	if a+b < a {
		return math.MaxUint64
	}
	return a + b
}

// maxLinkEpochs bounds how often a port's model may change.
const maxLinkEpochs = 1024

// totals are the error counts at link-up time up.
func (q *linkQuality) totals(up time.Duration) linkTotals {
	if len(q.epochs) == 0 {
		return linkTotals{}
	}
	e := q.epochs[0]
	for _, x := range q.epochs[1:] {
		if x.from <= up {
			e = x
		}
	}
	t := e.base
	d := up - e.from
	for i := range t.lane {
		t.lane[i] = satAdd(t.lane[i], count(e.rate.lane[i], d))
	}
	t.effective = satAdd(t.effective, count(e.rate.effective, d))
	t.bits = satAdd(t.bits, count(e.rate.bits, d))
	t.blocks = satAdd(t.blocks, count(e.rate.blocks, d))
	return t
}

// operGbps is the speed the port's link runs at: its active protocol's
// (an InfiniBand speed on its trained width), or (down, before it first
// comes up) the fastest the port enables.
func operGbps(p *portState) float64 {
	switch {
	case p.ib != nil && p.proto >= 0:
		return ibRate(p.proto, p.ibLanes())
	case p.ib == nil && p.proto >= 0 && p.proto < len(ethProtocols):
		return float64(ethProtocols[p.proto].Gbps)
	}
	return p.rates.topGbps
}

// linkRates are the rates of a spec on port p at the speed the link runs:
// bits, codewords (an RS-FEC codeword carries 5140 bits) and the errors
// the spec's bit error rates make of those bits.
func linkRates(p *portState) linkTotals {
	var r linkTotals
	lanes := max(p.activeLanes(), 1)
	bits := operGbps(p) * 1e9 // bits per second
	for i := 0; i < lanes && i < 8; i++ {
		r.lane[i] = perMicro(p.lq.spec.laneBER(i) * bits / float64(lanes))
	}
	r.effective = perMicro(p.lq.spec.EffectiveBER * bits)
	r.bits = perMicro(bits)
	r.blocks = perMicro(bits / 5140)
	return r
}

// respeed starts an epoch at the port's current link-up time when the link
// now runs at another speed than the last epoch counted (a partner or an
// admin change brought it up slower), so counters count the bits the link
// carries. Past maxLinkEpochs the last speed keeps counting.
func (f *Firmware) respeed(p *portState, now time.Time) {
	n := len(p.lq.epochs)
	if !p.up || n == 0 || p.lq.epochs[n-1].gbps == operGbps(p) {
		return
	}
	up := p.upTime(now)
	e := linkEpoch{from: up, gbps: operGbps(p), base: p.lq.totals(up), rate: linkRates(p)}
	switch {
	case p.lq.epochs[n-1].from == up:
		e.base = p.lq.epochs[n-1].base
		p.lq.epochs[n-1] = e
	case n < maxLinkEpochs:
		p.lq.epochs = append(p.lq.epochs, e)
	}
}

// initLink sets a port's model at power-on.
func (f *Firmware) initLink(p *portState, spec LinkSpec) {
	p.lq = linkQuality{admin: map[string]uint64{}}
	f.applyLink(p, spec, 0)
}

// applyLink starts an epoch of spec at link-up time up.
func (f *Firmware) applyLink(p *portState, spec LinkSpec, up time.Duration) {
	base := p.lq.totals(up)
	p.lq.spec = spec.clone()
	p.lq.partner = 0
	if len(spec.PartnerProtocols) > 0 {
		var ps []int
		for _, n := range spec.PartnerProtocols {
			if proto, err := LookupEthProtocol(n); err == nil {
				ps = append(ps, protoIndex(proto.Name))
			}
		}
		p.lq.partner = extMask(ps)
	}
	e := linkEpoch{from: up, gbps: operGbps(p), base: base, rate: linkRates(p)}
	if n := len(p.lq.epochs); n > 0 && p.lq.epochs[n-1].from == up {
		p.lq.epochs[n-1] = e
	} else {
		p.lq.epochs = append(p.lq.epochs, e)
	}
}

// SetLink changes a port's link quality and partner at run time (the
// control socket's link operation); counters keep what they counted.
func (f *Firmware) SetLink(local int, spec LinkSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.port(local)
	if p == nil {
		return fmt.Errorf("fw: local port %d does not exist (ports 1..%d)", local, len(f.ports))
	}
	if err := spec.Validate(int(p.width)); err != nil {
		return fmt.Errorf("fw: port %d link: %w", local, err)
	}
	if len(p.lq.epochs) >= maxLinkEpochs {
		return fmt.Errorf("fw: port %d link changed %d times; restart the emulator", local, maxLinkEpochs)
	}
	now := f.clk.Now()
	f.tick(now)
	f.applyLink(p, spec, p.upTime(now))
	f.relink(now)
	return nil
}

// Link returns a port's link spec.
func (f *Firmware) Link(local int) (LinkSpec, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.port(local)
	if p == nil {
		return LinkSpec{}, fmt.Errorf("fw: local port %d does not exist (ports 1..%d)", local, len(f.ports))
	}
	return p.lq.spec.clone(), nil
}

// withPartner picks the protocol the link comes up with once the partner
// has its say: the best of what both sides enable, and the FEC both run.
func (f *Firmware) withPartner(p *portState, best int, common uint32, lowest bool) (bool, int, downCause) {
	if p.lq.partner != 0 {
		best = bestProtocol(common&p.lq.partner, int(p.width), lowest)
		if best < 0 {
			return false, -1, causePartnerNoSpeed
		}
	}
	if want, ok := partnerFECs[p.lq.spec.PartnerFEC]; ok && int(f.fecOf(p, best)) != want {
		return false, -1, causeFECMismatch
	}
	return true, best, causeNone
}

// pplmGroups name the PPLM fec_override fields of each protocol.
var pplmGroups = map[string]string{
	"10GBASE-R": "10g_40g", "40GBASE-R4": "10g_40g", "25GAUI-1": "25g", "50GAUI-2": "50g", "CAUI-4": "100g",
	"50GAUI-1": "50g_1x", "100GAUI-2": "100g_2x", "200GAUI-4": "200g_4x", "400GAUI-8": "400g_8x",
	"100GAUI-1": "100g_1x", "200GAUI-2": "200g_2x", "400GAUI-4": "400g_4x",
}

// fecCap is the PPLM capability mask of a protocol: bit k is the FEC with
// fec_mode_active number k (0 none, 1 Firecode, 2 RS(528,514), 7
// RS(544,514)). PAM4 lanes need RS(544,514).
func fecCap(proto EthProtocol) uint64 {
	switch {
	case proto.FEC == fecRS544:
		return 1 << fecRS544
	case proto.Name == "CAUI-4":
		return 1<<fecNone | 1<<fecRS528
	case proto.FEC == fecRS528:
		return 1<<fecNone | 1<<1 | 1<<fecRS528
	}
	return 1<<fecNone | 1<<1
}

// fecOf is the FEC the port runs at protocol i: PPLM's override for its
// speed when one is set, else the protocol's own.
func (f *Firmware) fecOf(p *portState, i int) uint16 {
	if p.ib != nil {
		return ibSpeeds[i].FEC
	}
	proto := ethProtocols[i]
	g := pplmGroups[proto.Name]
	v := p.lq.admin[g]
	if v == 0 || f.autoFEC(g, v) {
		return proto.FEC
	}
	for k := 0; k < 16; k++ {
		if v&(1<<k) != 0 {
			return uint16(k)
		}
	}
	return proto.FEC
}

// autoFEC says whether an admin value names auto mode in this database
// (the 16-bit fields name it Auto_mode=1).
func (f *Firmware) autoFEC(group string, v uint64) bool {
	n, ok := f.enumName("PPLM", "fec_override_admin_"+group, v)
	return ok && strings.EqualFold(n, "auto_mode")
}

// activeFEC is the FEC of an up link (and the one requested while down).
func (f *Firmware) activeFEC(p *portState) uint16 {
	if p.proto < 0 {
		return fecNone
	}
	return f.fecOf(p, p.proto)
}

// PPLM: FEC capabilities and overrides per speed, and the active FEC.
func (f *Firmware) pplm(c *Call) uint8 {
	p, st := c.localPort()
	if st != StatusOK {
		return st
	}
	if st := c.portType(); st != StatusOK {
		return st
	}
	caps := map[string]uint64{}
	for _, i := range p.protos {
		if g := pplmGroups[ethProtocols[i].Name]; g != "" && p.ib == nil {
			caps[g] |= fecCap(ethProtocols[i])
		}
	}
	if c.Method == emu.MethodSet {
		admin := map[string]uint64{}
		for _, g := range sortedGroups() {
			path := "fec_override_admin_" + g
			if !c.Has(path) {
				continue
			}
			v := c.Req(path)
			if v != 0 && !f.autoFEC(g, v) {
				if v&(v-1) != 0 || v&caps[g] == 0 {
					return c.Fail(StatusBadParam, "PPLM %s=0x%x: give 0 (auto) or one FEC bit of the capability 0x%x", path, v, caps[g])
				}
			}
			if v != 0 {
				admin[g] = v
			}
		}
		p.lq.admin = admin
		f.relink(c.Now)
	}
	for _, g := range sortedGroups() {
		if c.Has("fec_override_cap_" + g) {
			c.Put("fec_override_cap_"+g, caps[g])
			c.Put("fec_override_admin_"+g, p.lq.admin[g])
		}
	}
	if p.up {
		c.Put("fec_mode_active", f.activeFEC(p))
	}
	return StatusOK
}

func sortedGroups() []string {
	return []string{"10g_40g", "25g", "50g", "100g", "50g_1x", "100g_2x", "200g_4x", "400g_8x", "100g_1x", "200g_2x", "400g_4x"}
}

// laneBERNow is lane i's raw BER as the model has it (the Traffic rates
// spread evenly when the spec does not drive the counters).
func laneBERNow(p *portState, i int) float64 {
	if p.lq.spec.modeled() {
		return p.lq.spec.laneBER(i)
	}
	bits := operGbps(p) * 1e9
	if bits == 0 {
		return 0
	}
	// Two wrong bits per corrected symbol, 1.3 symbols per block
	// (fecCorrected is per million seconds).
	return float64(p.rates.fecCorrected) / 1e6 * float64(p.rates.correctedSymbolsPerBlock10) / 10 * 2 / bits
}

// highBER is the lane BER the firmware reports as a problem (PDDR opcode
// 17): well past what RS-FEC corrects without loss on a healthy link.
const highBER = 1e-5

// worstLane is the lane with the highest raw BER, and that BER.
func worstLane(p *portState) (int, float64) {
	lane, worst := 0, 0.0
	for i := 0; i < p.activeLanes() && i < 8; i++ {
		if b := laneBERNow(p, i); b > worst {
			lane, worst = i, b
		}
	}
	return lane, worst
}

// modelTroubleshooting is the opcode and message of an up link the model
// finds at fault (ok false: nothing to report).
func modelTroubleshooting(p *portState) (uint16, string, bool) {
	if !p.up {
		return 0, "", false
	}
	if lane, b := worstLane(p); b >= highBER {
		return 17, fmt.Sprintf("Large number of physical errors (high BER) on lane %d", lane), true
	}
	if p.lq.spec.EffectiveBER > 0 {
		return 17, "Large number of physical errors (high BER): FEC cannot correct every block", true
	}
	return 0, "", false
}

// ppcntPhysModel fills the physical-layer group from the model.
func (f *Firmware) ppcntPhysModel(c *Call, p *portState, up, since time.Duration) {
	const pre = "counter_set.phys_layer_cntrs_ext."
	t := f.linkCounts(p, c.Now, up)
	c.Put(pre+"time_since_last_clear", uint64(max(since, 0)/time.Millisecond))
	c.Put(pre+"symbol_errors", t.effective)
	if f.activeFEC(p) == fecNone && p.proto >= 0 {
		return
	}
	var syms uint64
	for l := 0; l < p.activeLanes() && l < 8; l++ {
		n := t.lane[l] / 2 // two wrong bits per corrected symbol
		syms += n
		c.Put(fmt.Sprintf("%srs_fec_corrected_symbols_lane%d", pre, l), n)
	}
	blocks := t.blocks
	corr := syms * 10 / 13
	c.Put(pre+"rs_fec_corrected_blocks", corr)
	c.Put(pre+"rs_fec_uncorrectable_blocks", t.effective)
	c.Put(pre+"rs_fec_no_errors_blocks", blocks-min(blocks, satAdd(corr, t.effective)))
	c.Put(pre+"rs_fec_corrected_symbols_total", syms)
}

// ppcntPhysStatModel fills the statistical group from the model.
func (f *Firmware) ppcntPhysStatModel(c *Call, p *portState, up, since time.Duration) {
	const pre = "counter_set.phys_layer_stat_cntrs_ext."
	t := f.linkCounts(p, c.Now, up)
	bits := t.bits
	raw := t.raw()
	eff := t.effective
	if f.activeFEC(p) == fecNone && p.proto >= 0 {
		eff = satAdd(eff, raw)
	}
	c.Put(pre+"time_since_last_clear", uint64(max(since, 0)/time.Millisecond))
	c.Put(pre+"phy_received_bits", bits)
	c.Put(pre+"phy_corrected_bits", raw)
	c.Put(pre+"phy_symbol_errors", eff)
	c.Put(pre+"phy_effective_errors", eff)
	for l := 0; l < p.activeLanes() && l < 8; l++ {
		c.Put(fmt.Sprintf("%sphy_raw_errors_lane%d", pre, l), t.lane[l])
	}
	for _, b := range []struct {
		coef, mag string
		errors    uint64
	}{
		{"raw_ber_coef", "raw_ber_magnitude", raw},
		{"effective_ber_coef", "effective_ber_magnitude", eff},
		{"symbol_fec_ber_coef", "symbol_ber_magnitude", eff},
	} {
		coef, mag := ber(b.errors, bits)
		c.Put(pre+b.coef, coef)
		c.Put(pre+b.mag, mag)
	}
}

// linkCounts are the errors counted over the last up of link-up time.
func (f *Firmware) linkCounts(p *portState, now time.Time, up time.Duration) linkTotals {
	end := p.upTime(now)
	return p.lq.totals(end).sub(p.lq.totals(end - up))
}

// SLRG: serdes lane receive grade, per lane: the eye opening the receiver
// measures, from the lane's raw BER (a wider eye, fewer errors). The page
// is the 7 nm one (ConnectX-7) when the database has it, else 16 nm.
func (f *Firmware) slrg(c *Call) uint8 {
	p, st := c.localPort()
	if st != StatusOK {
		return st
	}
	if st := c.portType(); st != StatusOK {
		return st
	}
	lane := int(c.Req("lane"))
	if lane >= int(p.width) {
		return c.Fail(StatusBadParam, "SLRG lane %d: the port has lanes 0..%d", lane, int(p.width)-1)
	}
	// A lane an InfiniBand link trained without carries nothing.
	up := p.up && lane < p.activeLanes()
	eye := 0
	if up {
		eye = eyeOf(laneBERNow(p, lane))
	}
	c.Put("status", up)
	if _, err := c.Plan.Resolve("page_data.slrg_7nm_ext.mid_eye", c.Out); err == nil {
		const pre = "page_data.slrg_7nm_ext."
		c.Put("version", 4)
		c.Put(pre+"fom_mode", 0)
		c.Put(pre+"initial_fom", eye*3)
		c.Put(pre+"last_fom", eye*3)
		c.Put(pre+"upper_eye", eye-eye/10)
		c.Put(pre+"mid_eye", eye)
		c.Put(pre+"lower_eye", eye-eye/8)
		return StatusOK
	}
	const pre = "page_data.slrg_16nm_ext."
	c.Put("version", 3)
	c.Put(pre+"grade", eye*100)
	c.Put(pre+"up_eye_grade", (eye-eye/10)*100)
	c.Put(pre+"mid_eye_grade", eye*100)
	c.Put(pre+"dn_eye_grade", (eye-eye/8)*100)
	return StatusOK
}

// eyeOf maps a lane's BER to an eye opening (arbitrary units, 0..70): 60
// at 1E-12, 40 at 1E-8, 20 at 1E-4; 70 without errors.
func eyeOf(ber float64) int {
	if !(ber > 0) {
		return 70
	}
	return int(math.Max(0, math.Min(70, math.Round(-5*math.Log10(ber)))))
}

package fw

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The RS-FEC histogram: PPHCR says which FEC the histogram counts and
// what each bin holds (bin k: codewords with k symbol errors); PPCNT group
// RS_FEC_Histogram_group (0x23) counts the codewords of each bin since the
// group was last cleared.

// histBins is the number of bins the model counts (PPCNT hist[16]).
const histBins = 16

// histType is PPHCR active_hist_type for the FEC a port runs: 1 KP4
// RS(544,514), 2 LL RS(272,257+1), 3 KR4 RS(528,514), 0 none (down, no
// RS-FEC).
func (f *Firmware) histType(p *portState) uint64 {
	if !p.up {
		return 0
	}
	fec := f.activeFEC(p)
	switch fec {
	case fecRS544:
		return 1
	case fecRS528:
		return 3
	}
	if n, ok := f.enumName("PDDR", "page_data.pddr_operation_info_page_ext.fec_mode_active", uint64(fec)); ok && strings.Contains(n, "272") {
		return 2
	}
	return 0
}

// pphcr answers the histogram's configuration: one bin per symbol-error
// count, 0..15 (hist_type 0 follows the active link, the only type the
// firmware supports for a read).
func (f *Firmware) pphcr(c *Call) uint8 {
	p, st := c.localPort()
	if st != StatusOK {
		return st
	}
	if ht := c.Req("hist_type"); ht != 0 && ht != f.histType(p) {
		return c.Fail(StatusBadParam, "PPHCR hist_type %d: the port counts type %d (0 follows the active link)", ht, f.histType(p))
	}
	c.Put("active_hist_type", f.histType(p))
	if f.histType(p) == 0 {
		return StatusOK
	}
	c.Put("num_of_bins", histBins)
	c.Put("hist_min_measurement", 0)
	c.Put("hist_max_measurement", histBins-1)
	for i := 0; i < histBins; i++ {
		c.Put(fmt.Sprintf("bin_range[%d].low_val", i), i)
		c.Put(fmt.Sprintf("bin_range[%d].high_val", i), i)
	}
	return StatusOK
}

// ppcntFECHist fills group 0x23 from the link model's totals over the
// window: the corrected symbols spread over the codewords as a Poisson
// count (each symbol of a codeword errs independently), the codewords FEC
// could not correct in the last bin, the rest error-free in bin 0. So the
// bins add up to the codewords received and a degraded lane moves
// codewords to the high bins.
func (f *Firmware) ppcntFECHist(c *Call, p *portState, up, _ time.Duration) uint8 {
	const pre = "counter_set.ppcnt_rs_fec_histograms_counters_ext."
	if f.histType(p) == 0 && up == 0 {
		return StatusOK
	}
	t := f.linkCounts(p, c.Now, up)
	var syms uint64
	for l := 0; l < p.activeLanes() && l < 8; l++ {
		syms += t.lane[l] / 2 // two wrong bits per corrected symbol
	}
	blocks := t.blocks
	if blocks == 0 {
		return StatusOK
	}
	var bins [histBins]uint64
	lambda := float64(syms) / float64(blocks)
	term := math.Exp(-lambda) // P(0)
	used := uint64(0)
	for k := 1; k < histBins-1; k++ {
		term *= lambda / float64(k)
		n := uint64(math.Round(float64(blocks) * term))
		bins[k] = n
		used += n
	}
	bins[histBins-1] = t.effective
	used += t.effective
	bins[0] = blocks - min(blocks, used)
	for i, n := range bins {
		c.Put(fmt.Sprintf("%shist[%d]", pre, i), n)
	}
	return StatusOK
}

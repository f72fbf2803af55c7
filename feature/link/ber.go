package link

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// BER is a bit error ratio with where it came from. Value is nil when
// there is no ratio to give (no time since the counters were cleared, no
// bits received): Text then says "n/a" and Why says why, never a number
// that would look like a measurement.
type BER struct {
	Value *float64 `json:"value"`
	// Text is the ratio as people write it ("2.0E-10", "0", "n/a").
	Text string `json:"text"`
	// Firmware is the firmware's own coefficient and magnitude
	// ("2E-10"; "15E-255" is how firmware writes "no errors"), when it
	// gave them.
	Firmware string `json:"firmware,omitempty"`
	// Source: "firmware" (PPCNT's BER fields) or "counters" (errors over
	// bits received since the last clear).
	Source string `json:"source,omitempty"`
	Why    string `json:"why,omitempty"`
}

// NA is a ratio that cannot be given.
func NA(why string) BER { return BER{Text: "n/a", Why: why} }

// noErrors is the coefficient and magnitude firmware reports for a clean
// link (PPCNT physical-layer statistical group: 15E-255).
const (
	cleanCoef = 15
	cleanMag  = 255
)

// FromFirmware is the ratio PPCNT's coef × 10^-magnitude fields give.
// sinceClear is the group's time_since_last_clear: with none, the firmware
// has counted nothing and its fields are not a ratio.
func FromFirmware(coef, mag uint64, sinceClearMS uint64) BER {
	fwText := fmt.Sprintf("%dE-%d", coef, mag)
	if sinceClearMS == 0 {
		b := NA("no time has passed since the counters were cleared")
		b.Firmware, b.Source = fwText, "firmware"
		return b
	}
	if coef == cleanCoef && mag == cleanMag || coef == 0 {
		z := 0.0
		return BER{Value: &z, Text: "0", Firmware: fwText, Source: "firmware"}
	}
	if mag > 400 {
		b := NA(fmt.Sprintf("the firmware's magnitude %d is out of range", mag))
		b.Firmware, b.Source = fwText, "firmware"
		return b
	}
	v := float64(coef) * math.Pow(10, -float64(mag))
	return BER{Value: &v, Text: Format(v), Firmware: fwText, Source: "firmware"}
}

// FromCounters is errors over bits. Both are since the last clear;
// sinceClearMS 0 or no bits is "n/a". Any 64-bit values work: the ratio
// is taken in floating point, not by multiplying counters.
func FromCounters(errors, bits uint64, sinceClearMS uint64) BER {
	switch {
	case sinceClearMS == 0:
		return NA("no time has passed since the counters were cleared")
	case bits == 0:
		return NA("no bits were received since the counters were cleared")
	}
	v := float64(errors) / float64(bits)
	return BER{Value: &v, Text: Format(v), Source: "counters"}
}

// Format writes a ratio as coefficient and exponent ("2.0E-10"); 0 is
// "0".
func Format(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.IsNaN(v) || math.IsInf(v, 0) || v < 0:
		return "n/a"
	}
	// strconv rounds the decimal form itself (9.96E-5 becomes 1.0E-4) and
	// reaches subnormal ratios, which dividing by a power of ten does not.
	c, e, _ := strings.Cut(strconv.FormatFloat(v, 'e', 1, 64), "e")
	exp, _ := strconv.Atoi(e)
	return c + "E" + strconv.Itoa(exp)
}

// Delta is how much a counter grew between two reads. A counter that went
// down was cleared in between (the counting restarted: cleared is then
// true and the delta is the new value), unless wrapped says the counter
// is width bits wide and rolled over (the time since clear kept growing).
func Delta(prev, cur uint64, width int, sinceClearGrew bool) (delta uint64, cleared bool) {
	if cur >= prev {
		return cur - prev, false
	}
	if sinceClearGrew && width > 0 && width < 64 {
		return cur + (uint64(1)<<width - prev), false
	}
	if sinceClearGrew && width == 64 {
		return cur + (math.MaxUint64 - prev) + 1, false
	}
	return cur, true
}

// Rate is a count per second over an interval; nil when the interval is
// not positive.
func Rate(n uint64, seconds float64) *float64 {
	if !(seconds > 0) {
		return nil
	}
	r := float64(n) / seconds
	return &r
}

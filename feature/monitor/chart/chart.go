// Package chart draws what cxray monitor recorded: the values of chosen
// keys against time, with threshold lines, as SVG, PNG or PDF (gonum/plot).
// It is apart from package monitor so that only the binary that draws
// (cxray-plot, which `cxray plot` runs) links the plotting stack and its
// fonts.
package chart

import (
	"fmt"
	"io"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/cxray/cxray/feature/monitor"
)

// Options tune a chart.
type Options struct {
	Title string
	// Mode is "auto" (counters as rates, the rest as values), "rate" or
	// "value".
	Mode string
	// Width and Height of the chart; 0 is 8 by 4 inches (taller when the
	// legend needs it).
	Width, Height vg.Length
}

// Chart is what Plot drew, for the caller's report.
type Chart struct {
	YLabel string
	XLabel string
	Notes  []string
	// Data and Legend are where the data and the legend were drawn (in
	// the chart's coordinates): they never overlap.
	Data, Legend vg.Rectangle
}

// FiniteError is a value plot cannot draw.
type FiniteError struct {
	Series string
	Time   time.Time
	Value  float64
}

func (e *FiniteError) Error() string {
	return fmt.Sprintf("%s at %s is %v; a chart draws finite numbers only (is the file damaged, or was the value written by another tool?)", e.Series, e.Time.Format(time.RFC3339), e.Value)
}

type line struct {
	name string
	segs []plotter.XYs // split where a counter went back (cleared)
	rate bool
}

// Plot draws the series against time with threshold lines and writes the
// chart in the format of the file name's extension (.svg, .png, .pdf). The
// y axis is labelled with the quantity and unit of the keys; counters are
// drawn as rates in auto mode; the legend sits beside the data, not on it;
// any finite values are drawn (huge or constant ones on a scaled axis) and
// NaN or infinite ones are refused.
func Plot(w io.Writer, file string, series []monitor.Series, ths []monitor.Threshold, opt Options) (*Chart, error) {
	if len(series) == 0 {
		return nil, fmt.Errorf("nothing to plot: no values match; list the keys with: head -1 FILE")
	}
	format := strings.TrimPrefix(strings.ToLower(path.Ext(file)), ".")
	switch format {
	case "svg", "png", "pdf":
	default:
		return nil, fmt.Errorf("chart %s: the file name must end in .svg, .png or .pdf", file)
	}
	switch opt.Mode {
	case "", "auto", "rate", "value":
	default:
		return nil, fmt.Errorf("--mode %s: use auto, rate or value", opt.Mode)
	}
	for _, th := range ths {
		if math.IsNaN(th.Value) || math.IsInf(th.Value, 0) {
			return nil, fmt.Errorf("threshold %s is %v; a chart draws finite numbers only", th.Name, th.Value)
		}
	}
	ch := &Chart{}
	// One device: name the lines by key and the device in the title.
	oneDevice := true
	for _, s := range series {
		oneDevice = oneDevice && s.Device == series[0].Device
	}
	var lines []line
	quantities := map[monitor.Quantity]bool{}
	anyRate := false
	var tmin, tmax time.Time
	for _, s := range series {
		for i, v := range s.V {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, &FiniteError{Series: s.Name, Time: s.T[i], Value: v}
			}
			if tmin.IsZero() || s.T[i].Before(tmin) {
				tmin = s.T[i]
			}
			if s.T[i].After(tmax) {
				tmax = s.T[i]
			}
		}
		rate := opt.Mode == "rate" || (opt.Mode == "" || opt.Mode == "auto") && s.Counter
		l := line{name: s.Name, rate: rate}
		if oneDevice {
			l.name = s.Key
		}
		if rate {
			anyRate = true
			l.name += " (per s)"
			l.segs, ch.Notes = rates(s, ch.Notes)
		} else {
			pts := make(plotter.XYs, len(s.T))
			for i := range s.T {
				pts[i] = plotter.XY{X: unixSeconds(s.T[i]), Y: s.V[i]}
			}
			l.segs = []plotter.XYs{pts}
		}
		q := monitor.QuantityOf(s.Key)
		if rate && q.Name == "count" {
			q = monitor.Quantity{Name: "rate", Unit: "per second"}
		} else if rate {
			q = monitor.Quantity{Name: q.Name + " change", Unit: q.Unit + "/s"}
		}
		quantities[q] = true
		lines = append(lines, l)
	}
	// Scale huge values so the axis arithmetic stays finite and exact.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		for _, seg := range l.segs {
			for _, p := range seg {
				lo, hi = math.Min(lo, p.Y), math.Max(hi, p.Y)
			}
		}
	}
	for _, th := range ths {
		lo, hi = math.Min(lo, th.Value), math.Max(hi, th.Value)
	}
	scale := 1.0
	if big := math.Max(math.Abs(lo), math.Abs(hi)); !math.IsInf(big, 0) && big >= 1e15 {
		scale = math.Pow(10, math.Floor(math.Log10(big)))
		for i := range lines {
			for j := range lines[i].segs {
				seg := make(plotter.XYs, len(lines[i].segs[j]))
				for k, p := range lines[i].segs[j] {
					seg[k] = plotter.XY{X: p.X, Y: p.Y / scale}
				}
				lines[i].segs[j] = seg
			}
		}
		lo, hi = lo/scale, hi/scale
	}
	if math.IsInf(lo, 0) { // every counter had a single sample: no rate
		lo, hi = 0, 1
	}
	ylo, yhi := padRange(lo, hi)

	p := plot.New()
	p.Title.Text = opt.Title
	if oneDevice && series[0].Device != "" {
		if p.Title.Text != "" {
			p.Title.Text += " — "
		}
		p.Title.Text += series[0].Device
	}
	ch.XLabel = timeLabel(tmin, tmax)
	p.X.Label.Text = ch.XLabel
	ch.YLabel = yLabel(quantities, scale)
	p.Y.Label.Text = ch.YLabel
	p.Y.Tick.Marker = niceTicks{}
	p.Y.Min, p.Y.Max = ylo, yhi
	xlo, xhi := unixSeconds(tmin), unixSeconds(tmax)
	if xhi <= xlo {
		xlo, xhi = xlo-30, xhi+30
	}
	p.X.Min, p.X.Max = xlo, xhi
	if len(quantities) > 1 {
		ch.Notes = append(ch.Notes, "the series measure different things ("+ch.YLabel+"); draw them in separate charts to compare them")
	}

	legend := plot.NewLegend()
	legend.Left = true
	for i, l := range lines {
		var first *plotter.Line
		for _, seg := range l.segs {
			if len(seg) == 0 {
				continue
			}
			pl, err := plotter.NewLine(seg)
			if err != nil {
				return nil, err
			}
			pl.Color = plotutil.Color(i)
			pl.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
			pl.Width = vg.Points(1.2)
			p.Add(pl)
			if first == nil {
				first = pl
			}
		}
		if first != nil {
			legend.Add(l.name, first)
		} else {
			ch.Notes = append(ch.Notes, l.name+": fewer than two samples, no rate to draw")
		}
	}
	for i, th := range ths {
		v := th.Value / scale
		pl, err := plotter.NewLine(plotter.XYs{{X: xlo, Y: v}, {X: xhi, Y: v}})
		if err != nil {
			return nil, err
		}
		pl.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		pl.Color = plotutil.Color(len(lines) + i)
		p.Add(pl)
		legend.Add(th.Name, pl)
	}
	if anyRate {
		ch.Notes = append(ch.Notes, "counters are drawn as their rate per second (--mode value draws the running totals)")
	}
	width, height := opt.Width, opt.Height
	if width == 0 {
		width = 8 * vg.Inch
	}
	if height == 0 {
		height = 4 * vg.Inch
	}
	// The legend goes beside the data, to the right, or below it when its
	// names are long; the chart grows to hold it.
	probe, err := draw.NewFormattedCanvas(width, height, format)
	if err != nil {
		return nil, err
	}
	lr := legend.Rectangle(draw.New(probe))
	lw := lr.Max.X - lr.Min.X + vg.Points(12)
	lh := lr.Max.Y - lr.Min.Y + vg.Points(12)
	below := lw > width*0.35
	if below {
		height += lh
		width = max(width, lw+vg.Points(24))
	} else if need := lh + vg.Points(40); need > height {
		height = need
	}
	plotW := width
	if !below {
		plotW = width - lw
	}
	p.X.Tick.Marker = plot.TimeTicks{Format: timeFormat(tmin, tmax), Ticker: timeTicks{max: ticksFor(plotW, timeFormat(tmin, tmax))}}
	c, err := draw.NewFormattedCanvas(width, height, format)
	if err != nil {
		return nil, err
	}
	dc := draw.New(c)
	legend.Top = true
	var plotC, legC draw.Canvas
	if below {
		plotC, legC = draw.Crop(dc, 0, 0, lh, 0), draw.Crop(dc, vg.Points(12), 0, 0, -(height-lh))
	} else {
		plotC, legC = draw.Crop(dc, 0, -lw, 0, 0), draw.Crop(dc, width-lw+vg.Points(6), 0, 0, -vg.Points(24))
	}
	p.Draw(plotC)
	legend.Draw(legC)
	ch.Data = p.DataCanvas(plotC).Rectangle
	ch.Legend = vg.Rectangle{Min: vg.Point{X: legC.Min.X, Y: legC.Max.Y - (lh - vg.Points(12))}, Max: vg.Point{X: legC.Min.X + lw - vg.Points(12), Y: legC.Max.Y}}
	_, err = c.WriteTo(w)
	return ch, err
}

// ticksFor is how many time labels of a format fit a width.
func ticksFor(w vg.Length, format string) int {
	per := vg.Length(len(format))*vg.Points(6.5) + vg.Points(24)
	return max(2, min(8, int((w-vg.Points(60))/per)))
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// rates turns a counter into its rate per second between samples, split
// where the counter went down (cleared or wrapped).
func rates(s monitor.Series, notes []string) ([]plotter.XYs, []string) {
	var segs []plotter.XYs
	var cur plotter.XYs
	for i := 1; i < len(s.V); i++ {
		dt := s.T[i].Sub(s.T[i-1]).Seconds()
		d := s.V[i] - s.V[i-1]
		if dt <= 0 {
			continue
		}
		if d < 0 {
			notes = append(notes, fmt.Sprintf("%s went down at %s (cleared or wrapped): the line breaks there", s.Name, s.T[i].Format(time.RFC3339)))
			if len(cur) > 0 {
				segs = append(segs, cur)
			}
			cur = nil
			continue
		}
		r := d / dt
		if math.IsInf(d, 0) || math.IsInf(r, 0) {
			// Halves, so a change across ±1e308 is still computed.
			r = (s.V[i]/2 - s.V[i-1]/2) / dt * 2
		}
		if math.IsInf(r, 0) || math.IsNaN(r) {
			notes = append(notes, fmt.Sprintf("%s: the rate at %s does not fit a float64; left out", s.Name, s.T[i].Format(time.RFC3339)))
			continue
		}
		cur = append(cur, plotter.XY{X: unixSeconds(s.T[i]), Y: r})
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	return segs, notes
}

// padRange gives the y axis some room, and a constant series a range of
// its own (gonum's ticks need max > min).
func padRange(lo, hi float64) (float64, float64) {
	span := hi - lo
	if span <= math.Max(math.Abs(hi), math.Abs(lo))*1e-9 || span == 0 {
		d := math.Max(math.Abs(hi)*0.05, 1)
		return lo - d, hi + d
	}
	return lo - span*0.05, hi + span*0.05
}

func yLabel(qs map[monitor.Quantity]bool, scale float64) string {
	var names, unitsSeen []string
	for q := range qs {
		names = append(names, q.Name)
		if q.Unit != "" {
			unitsSeen = append(unitsSeen, q.Unit)
		}
	}
	sort.Strings(names)
	sort.Strings(unitsSeen)
	names, unitsSeen = uniq(names), uniq(unitsSeen)
	label := strings.Join(names, ", ")
	if len(qs) > 1 {
		label = "value: " + label
	}
	u := strings.Join(unitsSeen, ", ")
	if scale != 1 {
		if u != "" {
			u = "×" + strconv.FormatFloat(scale, 'g', 3, 64) + " " + u
		} else {
			u = "×" + strconv.FormatFloat(scale, 'g', 3, 64)
		}
	}
	if u != "" {
		label += " (" + u + ")"
	}
	return label
}

func uniq(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// timeFormat picks tick labels by the span: times within a day, dates
// with times over days, dates alone over weeks.
func timeFormat(a, b time.Time) string {
	switch d := b.Sub(a); {
	case d > 14*24*time.Hour:
		return "2006-01-02"
	case d > 20*time.Hour || a.YearDay() != b.YearDay() || a.Year() != b.Year():
		return "Jan 02 15:04"
	case d < 10*time.Minute:
		return "15:04:05"
	}
	return "15:04"
}

// timeLabel names the time axis, with the day when the ticks do not show it.
func timeLabel(a, b time.Time) string {
	if timeFormat(a, b) == "15:04:05" || timeFormat(a, b) == "15:04" {
		return "time (UTC), " + a.UTC().Format("2006-01-02")
	}
	return "time (UTC)"
}

// niceTicks are ticks at 1, 2 or 5 times a power of ten, about five to a
// range, computed so that no range of finite values overflows or loops
// without end (gonum's default ticks fail on a range of 0 at 1e16, and
// spin on one of ±1e308).
type niceTicks struct{}

func (niceTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) || math.IsInf(min, 0) || math.IsInf(max, 0) || math.IsNaN(min) || math.IsNaN(max) {
		return []plot.Tick{{Value: min, Label: strconv.FormatFloat(min, 'g', 6, 64)}}
	}
	half := max/2 - min/2 // half the span, finite whatever the values
	raw := half * 2 / 5
	if math.IsInf(raw, 0) {
		raw = half / 2.5
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	if step == 0 || math.IsInf(step, 0) || math.IsNaN(step) {
		return []plot.Tick{{Value: min, Label: strconv.FormatFloat(min, 'g', 6, 64)}, {Value: max, Label: strconv.FormatFloat(max, 'g', 6, 64)}}
	}
	first := math.Ceil(min / step)
	var out []plot.Tick
	for i := 0; i < 50; i++ {
		v := (first + float64(i)) * step
		if v > max || math.IsInf(v, 0) {
			break
		}
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 6, 64)})
		// Minor ticks between.
		if m := v + step/2; m < max {
			out = append(out, plot.Tick{Value: m})
		}
	}
	if len(out) == 0 {
		out = append(out, plot.Tick{Value: min, Label: strconv.FormatFloat(min, 'g', 6, 64)})
	}
	return out
}

// timeTicks are ticks at round times: seconds, minutes, hours or days that
// divide the clock, at most max to a chart.
type timeTicks struct{ max int }

var timeSteps = []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400, 14 * 86400, 30 * 86400, 91 * 86400, 365 * 86400}

func (t timeTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) || math.IsInf(max-min, 0) {
		return niceTicks{}.Ticks(min, max)
	}
	n := t.max
	if n <= 0 {
		n = 6
	}
	// The finest step whose round times inside the range are at most n:
	// counted, not estimated from the span, so a chart three and a half
	// days wide gets one tick a day rather than a single one at an even
	// two-day mark.
	step := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if math.Floor(max/s)-math.Ceil(min/s)+1 <= float64(n) {
			step = s
			break
		}
	}
	var out []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max && len(out) < 100; v += step {
		out = append(out, plot.Tick{Value: v, Label: "x"}) // TimeTicks writes the label
	}
	return out
}

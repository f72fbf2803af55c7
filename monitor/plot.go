package monitor

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// ReadSamples reads a JSON-lines monitor file. Lines that do not parse are
// counted and skipped (a file cut by power loss ends in a torn line).
func ReadSamples(r io.Reader) ([]Sample, int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var out []Sample
	bad := 0
	for sc.Scan() {
		var s Sample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil || s.Time.IsZero() {
			bad++
			continue
		}
		out = append(out, s)
	}
	return out, bad, sc.Err()
}

// Series is one line of a chart.
type Series struct {
	Name string
	T    []time.Time
	V    []float64
}

// SelectSeries picks the values whose "device key" name matches one of the
// patterns (same rules as alerts: exact, suffix after a dot, * wildcard).
func SelectSeries(samples []Sample, patterns []string) []Series {
	byName := map[string]*Series{}
	for _, s := range samples {
		for k, v := range s.Values {
			if !matchAny(patterns, k) {
				continue
			}
			name := s.Device + " " + k
			se := byName[name]
			if se == nil {
				se = &Series{Name: name}
				byName[name] = se
			}
			se.T = append(se.T, s.Time)
			se.V = append(se.V, v)
		}
	}
	out := make([]Series, 0, len(byName))
	for _, s := range byName {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func matchAny(patterns []string, k string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		a := Alert{Key: p}
		if a.matches(k) {
			return true
		}
	}
	return false
}

// AutoThresholds finds threshold values recorded beside the plotted ones:
// keys containing "threshold" under the same first element ("temp.").
func AutoThresholds(samples []Sample, series []Series) []Threshold {
	prefixes := map[string]bool{}
	for _, s := range series {
		k := s.Name[strings.IndexByte(s.Name, ' ')+1:]
		if i := strings.IndexByte(k, '.'); i > 0 {
			prefixes[k[:i+1]] = true
		}
	}
	last := map[string]float64{}
	for _, s := range samples {
		for k, v := range s.Values {
			if !strings.Contains(k, "threshold") {
				continue
			}
			if i := strings.IndexByte(k, '.'); i > 0 && prefixes[k[:i+1]] {
				last[k] = v
			}
		}
	}
	var out []Threshold
	for k, v := range last {
		out = append(out, Threshold{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Threshold is a horizontal line on a chart ("alarm 70").
type Threshold struct {
	Name  string
	Value float64
}

// Plot draws the series against time with threshold lines and writes the
// chart in the format of the file name's extension (.svg, .png, .pdf).
func Plot(w io.Writer, file string, title string, series []Series, ths []Threshold) error {
	if len(series) == 0 {
		return fmt.Errorf("nothing to plot: no values match; list the keys with: head -1 FILE")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "time"
	p.X.Tick.Marker = plot.TimeTicks{Format: "15:04:05"}
	p.Legend.Top = true
	var args []any
	for _, s := range series {
		pts := make(plotter.XYs, len(s.T))
		for i := range s.T {
			pts[i].X = float64(s.T[i].UnixNano()) / 1e9
			pts[i].Y = s.V[i]
		}
		args = append(args, s.Name, pts)
	}
	if err := plotutil.AddLines(p, args...); err != nil {
		return err
	}
	if len(ths) > 0 {
		lo, hi := p.X.Min, p.X.Max
		for i, th := range ths {
			l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: th.Value}, {X: hi, Y: th.Value}})
			if err != nil {
				return err
			}
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			l.Color = plotutil.Color(len(series) + i)
			p.Add(l)
			p.Legend.Add(th.Name, l)
		}
	}
	format := strings.TrimPrefix(strings.ToLower(path.Ext(file)), ".")
	switch format {
	case "svg", "png", "pdf":
	default:
		return fmt.Errorf("chart %s: the file name must end in .svg, .png or .pdf", file)
	}
	wt, err := p.WriterTo(8*vg.Inch, 4*vg.Inch, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

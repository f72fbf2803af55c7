package exporter

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"sort"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Gather reads every device once, as one scrape would, under the
// exporter's timeout.
func (e *Exporter) Gather(ctx context.Context) ([]*dto.MetricFamily, error) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	reg := prometheus.NewRegistry()
	reg.MustRegister(scrapeCollector{e, ctx})
	return prometheus.Gatherers{e.static, reg}.Gather()
}

// Text writes families in Prometheus' text format, what node_exporter's
// textfile collector reads (*.prom files).
func Text(mfs []*dto.MetricFamily) ([]byte, error) {
	var b bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// JSONFamily is one metric family of the JSON form of --once.
type JSONFamily struct {
	Name    string       `json:"name"`
	Type    string       `json:"type"`
	Help    string       `json:"help"`
	Samples []JSONSample `json:"samples"`
}

// JSONSample is one sample: its labels and value.
type JSONSample struct {
	Labels map[string]string `json:"labels"`
	Value  JSONValue         `json:"value"`
}

// JSONValue is a sample value: a number, or the string "+Inf", "-Inf" or
// "NaN" that JSON numbers cannot hold (a dark lane is -Inf dBm).
type JSONValue float64

// MarshalJSON writes the number, or its name when JSON has none.
func (v JSONValue) MarshalJSON() ([]byte, error) {
	f := float64(v)
	switch {
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	}
	return []byte(strconv.FormatFloat(f, 'g', -1, 64)), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (v *JSONValue) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		f, err := strconv.ParseFloat(s, 64)
		*v = JSONValue(f)
		return err
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*v = JSONValue(f)
	return err
}

// JSON turns families into the JSON form of --once: gauges and counters
// (the exporter serves no other type).
func JSON(mfs []*dto.MetricFamily) []JSONFamily {
	out := make([]JSONFamily, 0, len(mfs))
	for _, mf := range mfs {
		f := JSONFamily{Name: mf.GetName(), Type: lowerType(mf.GetType()), Help: mf.GetHelp(), Samples: []JSONSample{}}
		for _, m := range mf.GetMetric() {
			s := JSONSample{Labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				s.Labels[l.GetName()] = l.GetValue()
			}
			switch {
			case m.Gauge != nil:
				s.Value = JSONValue(m.GetGauge().GetValue())
			case m.Counter != nil:
				s.Value = JSONValue(m.GetCounter().GetValue())
			case m.Untyped != nil:
				s.Value = JSONValue(m.GetUntyped().GetValue())
			default:
				continue
			}
			f.Samples = append(f.Samples, s)
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func lowerType(t dto.MetricType) string {
	switch t {
	case dto.MetricType_COUNTER:
		return "counter"
	case dto.MetricType_GAUGE:
		return "gauge"
	}
	return "untyped"
}

// Up counts the devices the families show up and all devices.
func Up(mfs []*dto.MetricFamily) (up, all int) {
	for _, mf := range mfs {
		if mf.GetName() != famUp.name {
			continue
		}
		for _, m := range mf.GetMetric() {
			all++
			if m.GetGauge().GetValue() == 1 {
				up++
			}
		}
	}
	return up, all
}

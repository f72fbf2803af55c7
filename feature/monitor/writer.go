package monitor

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// WriterOptions choose how samples are written.
type WriterOptions struct {
	// Format is jsonl, csv or table.
	Format string
	// Sink takes one line at a time (a LogFile); when nil, Stdout gets
	// the lines.
	Sink   func(line []byte) error
	Stdout io.Writer
	// Live redraws a terminal for each batch (table format on a tty).
	Live bool
	// Header is the CSV header a file being appended to already has: it
	// is not written again, and its columns are kept. The first batch's
	// columns must all be in it: otherwise the writer returns an
	// *AppendError naming HeaderFile before it writes anything.
	Header     []string
	HeaderFile string
}

// NewWriter returns a function that writes a batch of samples.
func NewWriter(o WriterOptions) (func([]Sample) error, error) {
	sink := o.Sink
	if sink == nil {
		if o.Stdout == nil {
			return nil, fmt.Errorf("monitor: nowhere to write")
		}
		sink = func(line []byte) error {
			_, err := o.Stdout.Write(append(line, '\n'))
			return err
		}
	}
	switch o.Format {
	case "jsonl":
		return func(ss []Sample) error {
			for _, s := range ss {
				b, err := json.Marshal(s)
				if err != nil {
					return err
				}
				if err := sink(b); err != nil {
					return err
				}
			}
			return nil
		}, nil
	case "csv":
		return csvWriter(sink, o.Header, o.HeaderFile), nil
	case "table":
		return tableWriter(o, sink), nil
	}
	return nil, fmt.Errorf("--format %s: use table, jsonl or csv", o.Format)
}

// csvFixed are the columns before the values.
var csvFixed = []string{"time", "device", "alerts", "frozen", "errors"}

func csvWriter(sink func([]byte) error, header []string, file string) func([]Sample) error {
	var cols []string
	if len(header) > len(csvFixed) {
		cols = header[len(csvFixed):]
	}
	checked := header == nil
	return func(ss []Sample) error {
		if !checked && len(ss) > 0 {
			// The run's columns are its first sample's (as in a new
			// file); each must have a place in the existing header, or
			// its values would be dropped without a word.
			checked = true
			have := map[string]bool{}
			for _, c := range cols {
				have[c] = true
			}
			var extra []string
			for k := range ss[0].Values {
				if !have[k] {
					extra = append(extra, k)
				}
			}
			if len(extra) > 0 {
				sort.Strings(extra)
				more := ""
				if len(extra) > 3 {
					more = fmt.Sprintf(" and %d more", len(extra)-3)
				}
				return &AppendError{Path: file, Msg: fmt.Sprintf("its CSV header has %d value columns, and this run also reads %d values the header has no column for (%s%s)",
					len(cols), len(extra), strings.Join(extra[:min(3, len(extra))], ", "), more)}
			}
		}
		for _, s := range ss {
			if cols == nil {
				for k := range s.Values {
					cols = append(cols, k)
				}
				sort.Strings(cols)
				if err := sink(csvLine(append(append([]string{}, csvFixed...), cols...))); err != nil {
					return err
				}
			}
			row := []string{s.Time.Format(time.RFC3339Nano), s.Device, strings.Join(s.Alerts, "; "), strings.Join(s.Frozen, "; "), strings.Join(s.Errors, "; ")}
			for _, c := range cols {
				if v, ok := s.Values[c]; ok {
					row = append(row, strconv.FormatFloat(v, 'f', -1, 64))
				} else {
					row = append(row, "")
				}
			}
			if err := sink(csvLine(row)); err != nil {
				return err
			}
		}
		return nil
	}
}

func csvLine(fields []string) []byte {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(fields)
	w.Flush()
	return []byte(strings.TrimRight(b.String(), "\n"))
}

func tableWriter(o WriterOptions, sink func([]byte) error) func([]Sample) error {
	prev := map[string]Sample{}
	return func(ss []Sample) error {
		var b strings.Builder
		if o.Live {
			b.WriteString("\033[H\033[2J")
		}
		for _, s := range ss {
			fmt.Fprintf(&b, "%s  %s\n", s.Time.Format(time.RFC3339), s.Device)
			writeSampleTable(&b, s, prev[s.Device])
			prev[s.Device] = s
		}
		if o.Sink != nil {
			return sink([]byte(strings.TrimRight(b.String(), "\n")))
		}
		_, err := io.WriteString(o.Stdout, b.String())
		return err
	}
}

func writeSampleTable(w io.Writer, s, prev Sample) {
	keys := make([]string, 0, len(s.Values))
	for k := range s.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dt := s.Time.Sub(prev.Time).Seconds()
	for _, k := range keys {
		v := s.Values[k]
		line := fmt.Sprintf("  %-60s %16s", k, strconv.FormatFloat(v, 'f', -1, 64))
		if p, ok := prev.Values[k]; ok && dt > 0 && isCounterKey(k) {
			line += fmt.Sprintf("  %12.4g/s", (v-p)/dt)
		}
		fmt.Fprintln(w, line)
	}
	for _, x := range s.Alerts {
		fmt.Fprintf(w, "  ALERT %s\n", x)
	}
	for _, x := range s.Frozen {
		fmt.Fprintf(w, "  FROZEN %s\n", x)
	}
	for _, x := range s.Errors {
		fmt.Fprintf(w, "  error: %s\n", x)
	}
}

// isCounterKey says a value key is a counter, whose rate is worth showing.
func isCounterKey(k string) bool {
	return strings.Contains(k, ".ppcnt.") || strings.Contains(k, ".ib.") || strings.Contains(k, ".rdma.") || strings.Contains(k, ".nvmf.") ||
		strings.HasPrefix(k, "pcie.aer_") || strings.HasPrefix(k, "pcie.mpcnt_") ||
		(strings.HasPrefix(k, "driver.") && !strings.HasSuffix(k, ".healthy"))
}

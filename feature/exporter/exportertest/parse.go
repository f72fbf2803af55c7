// Package exportertest reads the exporter's text exposition back for tests
// of the exporter and of what serves it: one Sample per line, with lookups
// by name and labels. It is imported by tests only.
package exportertest

import (
	"bufio"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Sample is one line of the text format.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Scrape is a parsed exposition.
type Scrape struct {
	Samples []Sample
	// Types maps a family name to its # TYPE.
	Types map[string]string
}

// Parse reads Prometheus' text format (version 0.0.4): comments, HELP and
// TYPE lines, and samples without timestamps.
func Parse(text string) (*Scrape, error) {
	s := &Scrape{Types: map[string]string{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			f := strings.Fields(line)
			if len(f) >= 4 && f[1] == "TYPE" {
				s.Types[f[2]] = f[3]
			}
			continue
		}
		smp, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d %q: %v", n, line, err)
		}
		s.Samples = append(s.Samples, smp)
	}
	return s, sc.Err()
}

func parseLine(line string) (Sample, error) {
	smp := Sample{Labels: map[string]string{}}
	rest := line
	if i := strings.IndexAny(line, "{ "); i < 0 {
		return smp, fmt.Errorf("no value")
	} else {
		smp.Name, rest = line[:i], line[i:]
	}
	if strings.HasPrefix(rest, "{") {
		rest = rest[1:]
		for {
			rest = strings.TrimLeft(rest, ",")
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			eq := strings.Index(rest, "=\"")
			if eq < 0 {
				return smp, fmt.Errorf("bad label")
			}
			key := rest[:eq]
			rest = rest[eq+2:]
			var val strings.Builder
			i := 0
			for ; i < len(rest) && rest[i] != '"'; i++ {
				if rest[i] == '\\' && i+1 < len(rest) {
					i++
					switch rest[i] {
					case 'n':
						val.WriteByte('\n')
					default:
						val.WriteByte(rest[i])
					}
					continue
				}
				val.WriteByte(rest[i])
			}
			if i >= len(rest) {
				return smp, fmt.Errorf("unterminated label value")
			}
			smp.Labels[key] = val.String()
			rest = rest[i+1:]
		}
	}
	f := strings.Fields(rest)
	if len(f) < 1 {
		return smp, fmt.Errorf("no value")
	}
	switch f[0] {
	case "+Inf":
		smp.Value = math.Inf(1)
	case "-Inf":
		smp.Value = math.Inf(-1)
	case "NaN":
		smp.Value = math.NaN()
	default:
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return smp, err
		}
		smp.Value = v
	}
	return smp, nil
}

// Find returns the samples of a family whose labels include every pair of
// want ("key", "value", ...).
func (s *Scrape) Find(name string, want ...string) []Sample {
	var out []Sample
	for _, smp := range s.Samples {
		if smp.Name != name {
			continue
		}
		ok := true
		for i := 0; i+1 < len(want); i += 2 {
			if smp.Labels[want[i]] != want[i+1] {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, smp)
		}
	}
	return out
}

// Value returns the one sample of a family matching want; ok is false when
// there is none or more than one.
func (s *Scrape) Value(name string, want ...string) (float64, bool) {
	f := s.Find(name, want...)
	if len(f) != 1 {
		return 0, false
	}
	return f[0].Value, true
}

// Families lists the family names with at least one sample, sorted.
func (s *Scrape) Families() []string {
	seen := map[string]bool{}
	for _, smp := range s.Samples {
		seen[smp.Name] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

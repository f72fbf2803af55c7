package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// mstlinkHist reads the counts of 'mstlink --rx_fec_histogram
// --show_histogram': lines "Bin N : [range] count".
func mstlinkHist(t *testing.T, out string) []string {
	t.Helper()
	var got []string
	for _, l := range strings.Split(stripANSI(out), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || !strings.HasPrefix(strings.TrimSpace(k), "Bin ") {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 {
			t.Fatalf("mstlink histogram line %q", l)
		}
		got = append(got, f[0]+" "+f[1])
	}
	return got
}

func cxrayHist(t *testing.T, out string) []string {
	t.Helper()
	var d struct {
		Histogram struct {
			Bins []struct {
				Low   uint64  `json:"low_symbol_errors"`
				High  uint64  `json:"high_symbol_errors"`
				Count *uint64 `json:"codewords"`
			} `json:"bins"`
		} `json:"histogram"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got []string
	for _, b := range d.Histogram.Bins {
		r := fmt.Sprintf("[%d]", b.Low)
		if b.High != b.Low {
			r = fmt.Sprintf("[%d:%d]", b.Low, b.High)
		}
		got = append(got, fmt.Sprintf("%s %d", r, *b.Count))
	}
	return got
}

// The FEC histogram of the degraded and the healthy 400G link, ten minutes
// into a manual clock: cxray's bins and counts are mstlink's, and a clear
// by either tool is what the other reads.
func TestFECHistogramVsMstlink(t *testing.T) {
	need(t, "mstlink")
	var script strings.Builder
	script.WriteString(`cxray emu ctl --socket "$SOCK" advance 10m >/dev/null` + "\n")
	for _, b := range []string{"03:00.0", "03:00.1"} {
		fmt.Fprintf(&script, "run m%[1]s mstlink -d %[2]s --rx_fec_histogram --show_histogram\nrun c%[1]s cxray link -d 0000:%[2]s --fec_histogram -o json\n", b[3:5]+b[6:], b)
	}
	script.WriteString("run mclear mstlink -d 03:00.1 --rx_fec_histogram --clear_histogram --yes\n")
	script.WriteString("run cafter cxray link -d 0000:03:00.1 --fec_histogram -o json\n")
	script.WriteString(`cxray emu ctl --socket "$SOCK" advance 1m >/dev/null` + "\n")
	script.WriteString("run cclear cxray link -d 0000:03:00.0 --rx_fec_histogram --clear_histogram --yes\n")
	script.WriteString("run mafter mstlink -d 03:00.0 --rx_fec_histogram --show_histogram\n")
	s := emuServe(t, "link.yaml", script.String(), 4*time.Minute)
	for _, k := range []string{"000", "001"} {
		m, c := mstlinkHist(t, s.ok(t, "m"+k).stdout), cxrayHist(t, s.ok(t, "c"+k).stdout)
		if len(m) != 16 || strings.Join(m, ", ") != strings.Join(c, ", ") {
			t.Errorf("03:00.%s\nmstlink %v\ncxray   %v", k[2:], m, c)
		}
		if k == "001" && strings.HasSuffix(m[0], " 0") {
			t.Errorf("the degraded link counted no codewords in ten minutes: %v", m)
		}
	}
	s.ok(t, "mclear")
	for _, v := range cxrayHist(t, s.ok(t, "cafter").stdout) {
		if !strings.HasSuffix(v, " 0") {
			t.Errorf("after mstlink's clear cxray reads %v", v)
		}
	}
	s.ok(t, "cclear")
	for _, v := range mstlinkHist(t, s.ok(t, "mafter").stdout) {
		if !strings.HasSuffix(v, " 0") {
			t.Errorf("after cxray's clear mstlink reads %v", v)
		}
	}
}

// A byte mstlink writes into a module is what cxray reads, and the other
// way round; a read-only byte cxray refuses (exit 2) stays as it was.
func TestCableWriteVsMstlink(t *testing.T) {
	need(t, "mstlink")
	script := `run mw mstlink -d 03:00.0 --cable --write 0x10 --page 0 --offset 26 --yes
run cr cxray link -d 0000:03:00.0 --cable --read --offset 26 --length 1 -o json
run cw cxray link -d 0000:03:00.0 --cable --write 0x00 --offset 26 --yes --force
run mr mstlink -d 03:00.0 --cable --read --page 0 --offset 26 --length 1
run cbad cxray link -d 0000:03:00.0 --cable --write 0x11 --offset 0 --yes --force
run mid mstlink -d 03:00.0 --cable --read --page 0 --offset 0 --length 1
`
	s := emuRun(t, "link.yaml", script, 3*time.Minute)
	s.ok(t, "mw")
	var d struct {
		Bytes []string `json:"bytes"`
	}
	if err := json.Unmarshal([]byte(s.ok(t, "cr").stdout), &d); err != nil || len(d.Bytes) != 1 || d.Bytes[0] != "0x10" {
		t.Errorf("cxray after mstlink's write: %v %v", d.Bytes, err)
	}
	s.ok(t, "cw")
	read := func(name string) []string {
		var got []string
		for _, l := range strings.Split(stripANSI(s.ok(t, name).stdout), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.HasPrefix(strings.TrimSpace(k), "page[") {
				got = append(got, strings.TrimSpace(v))
			}
		}
		return got
	}
	if got := read("mr"); strings.Join(got, " ") != "0x00" {
		t.Errorf("mstlink after cxray's write: %v", got)
	}
	if st := s.step(t, "cbad"); st.rc != 2 || !strings.Contains(st.stderr, "not a byte CMIS defines as host-writable") {
		t.Errorf("identifier write: %s", st)
	}
	if got := read("mid"); len(got) != 1 || got[0] == "0x11" {
		t.Errorf("identifier after a refused write: %v", got)
	}
}

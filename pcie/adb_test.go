package pcie

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

// The MPEIN and MPCNT fields cxray reads, with their places in the
// built-in database (Rev 0.57), which every revision of the history must
// keep: a field that moved would be read wrong. optionalFields may be
// missing from a revision (the reader then says it is unknown): MPEIN's
// link_peer_max_speed came with Rev 0.56.
var registerFields = map[string][]string{
	"MPEIN": {"link_speed_enabled", "link_width_enabled", "link_speed_active", "link_width_active",
		"link_peer_max_speed", "device_status", "port_type", "max_payload_size", "max_read_request_size", "pwr_status"},
	"MPCNT": {"counter_set.pcie_perf_counters_ext.rx_errors", "counter_set.pcie_perf_counters_ext.tx_errors",
		"counter_set.pcie_perf_counters_ext.crc_error_dllp", "counter_set.pcie_perf_counters_ext.crc_error_tlp",
		"counter_set.pcie_perf_counters_ext.outbound_stalled_reads", "counter_set.pcie_perf_counters_ext.outbound_stalled_writes"},
}

var optionalFields = map[string]bool{"MPEIN.link_peer_max_speed": true}

func place(t *testing.T, db *prm.DB, reg, path string) (bit, width int, f *prm.Field) {
	t.Helper()
	r, err := db.Register(reg)
	if err != nil {
		t.Fatalf("%s: %v", db.Revision, err)
	}
	p, err := db.RegisterPlan(r)
	if err != nil {
		t.Fatalf("%s %s: %v", db.Revision, reg, err)
	}
	buf := p.NewBuffer()
	if reg == "MPCNT" {
		// group 0 selects the performance counters.
		if err := p.Encode(buf, []prm.Assignment{{Path: "grp", Value: "0"}}); err != nil {
			t.Fatal(err)
		}
	}
	tg, err := p.Resolve(path, buf)
	if err != nil && optionalFields[reg+"."+path] && db != nil && revisionBefore(db.Revision, 0.56) {
		return -1, -1, nil
	}
	if err != nil {
		t.Errorf("%s: %s.%s: %v", db.Revision, reg, path, err)
		return -1, -1, nil
	}
	return tg.Bit, tg.Width, tg.Step.Field
}

func TestRegisterFieldsEveryRevision(t *testing.T) {
	base, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	type pl struct{ bit, width int }
	want := map[string]pl{}
	for reg, paths := range registerFields {
		for _, p := range paths {
			b, w, _ := place(t, base, reg, p)
			want[reg+"."+p] = pl{b, w}
		}
	}
	devtest.EachRevision(t, func(t *testing.T, db *prm.DB) {
		for reg, paths := range registerFields {
			for _, p := range paths {
				b, w, _ := place(t, db, reg, p)
				if b < 0 && optionalFields[reg+"."+p] {
					continue
				}
				if got := (pl{b, w}); got != want[reg+"."+p] {
					t.Errorf("%s.%s at bit %d width %d; the built-in database has bit %d width %d", reg, p, b, w, want[reg+"."+p].bit, want[reg+"."+p].width)
				}
			}
		}
	})
}

// speedBitRE finds "Bit 4: 16G" (or "Bit 4- 16G", "Bit 0 - 2.5G") in a
// field description.
var speedBitRE = regexp.MustCompile(`Bit\s*(\d+)\s*[-:]\s*([0-9.]+)G(\s*PAM-4)?`)

// The speed bits and width encodings of mpeinBits and WidthOfMPEIN
// against what each revision's description says (the descriptions are
// read from NVIDIA's files at test time, never committed).
func TestMPEINEncodingsEveryRevision(t *testing.T) {
	devtest.EachRevision(t, func(t *testing.T, db *prm.DB) {
		for _, field := range []string{"link_speed_enabled", "link_speed_active", "link_peer_max_speed"} {
			_, _, f := place(t, db, "MPEIN", field)
			if f == nil {
				continue
			}
			d := db.FieldDescr(f)
			ms := speedBitRE.FindAllStringSubmatch(d, -1)
			if len(ms) < 4 {
				t.Errorf("%s: %d speed bits in %q", field, len(ms), d)
				continue
			}
			for _, m := range ms {
				bit, _ := strconv.Atoi(m[1])
				g, _ := strconv.ParseFloat(m[2], 64)
				want := SpeedOfGTs(g)
				if m[3] != "" {
					want = Gen6 // "32G PAM-4": 64 GT/s
				}
				if got := SpeedOfMPEIN(1 << bit); got != want {
					t.Errorf("%s bit %d is %sG%s in the ADB; cxray reads %v", field, bit, m[2], m[3], got)
				}
			}
		}
		for _, field := range []string{"link_width_enabled", "link_width_active"} {
			_, _, f := place(t, db, "MPEIN", field)
			d := db.FieldDescr(f)
			counts := countsRE.MatchString(d)
			codes := codesRE.MatchString(d)
			old := revisionBefore(db.Revision, 0.59)
			switch {
			case old && !codes, !old && !counts:
				t.Errorf("%s: %q; expected codes 0..4 before Rev 0.59 and lane counts after", field, d)
			}
		}
	})
}

// Width descriptions: "16: 16x" (lane counts) or "4 - 16x", "4: 16x"
// (codes).
var (
	countsRE = regexp.MustCompile(`(^|[^0-9])16\s*[-:]\s*16x`)
	codesRE  = regexp.MustCompile(`(^|[^0-9])4\s*[-:]\s*16x`)
)

func revisionBefore(rev string, v float64) bool {
	f := strings.Fields(rev)
	n, err := strconv.ParseFloat(f[len(f)-1], 64)
	return err == nil && n < v
}

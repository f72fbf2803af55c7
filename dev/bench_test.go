package dev_test

import (
	"context"
	"testing"

	"github.com/cxray/cxray/access/pci/pcitest"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

// BenchmarkRegGet reads MGIR and PDDR from the emulated ConnectX-7 through
// the same access path as hardware and reports the config-space operations
// per read next to the protocol's minimum (18 + 3w + 2r for w request and r
// reply dwords; see access/regaccess TestConfigSpaceCounts for the
// derivation) and mstflint 4.21's sequence (115 + 3w + 3r).
func BenchmarkRegGet(b *testing.B) {
	db, err := builtin.Load()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		reg   string
		index []prm.Assignment
	}{
		{"MGIR", nil},
		{"PDDR", []prm.Assignment{{Path: "page_select", Value: "Operational_info_page"}}},
	} {
		b.Run(c.reg, func(b *testing.B) {
			emuDev, _, err := scenario.NewDevice("cx7-2p400g", scenario.Options{DB: db})
			if err != nil {
				b.Fatal(err)
			}
			cs := pcitest.NewCounting(emuDev)
			ctx := context.Background()
			d, _, err := dev.OpenConfigSpace(ctx, "emu", "0000:03:00.0", "emulator", db, cs, dev.StackOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := d.Get(ctx, c.reg, c.index, nil, 0); err != nil {
				b.Fatal(err) // warm-up: capabilities, space checks
			}
			r, _ := db.Register(c.reg)
			w := (20 + r.Size) / 4
			cs.Reset()
			for b.Loop() {
				if _, err := d.Get(ctx, c.reg, c.index, nil, 0); err != nil {
					b.Fatal(err)
				}
			}
			n := cs.Counts()
			b.ReportMetric(float64(n.Ops())/float64(b.N), "cfgops/op")
			b.ReportMetric(float64(n.Reads)/float64(b.N), "cfgreads/op")
			b.ReportMetric(float64(n.Writes)/float64(b.N), "cfgwrites/op")
			b.ReportMetric(float64(18+3*w+2*w), "protocol-min")
			b.ReportMetric(float64(115+3*w+3*w), "mstflint-seq")
		})
	}
}

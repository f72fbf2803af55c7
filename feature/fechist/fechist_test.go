package fechist_test

import (
	"context"
	"testing"
	"time"

	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/feature/fechist"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/prm"
)

// The histogram of a healthy 400G link and of one with a degraded lane,
// after a minute of traffic, with the built-in database and each revision
// of the history: KP4, sixteen bins of one symbol-error count each, the
// uncorrectable ones in the last bin as PPCNT's physical group counts
// them, most in bin 0; the degraded lane moves
// codewords into higher bins. A down link has no histogram. (Rev 0.51 has
// no PPHCR; dev reads it with the reference layout, as for PGUID.)
func TestHistogram(t *testing.T) {
	check := func(t *testing.T, db *prm.DB) {
		em := emutest.BuildFile(t, "../../examples/link-trouble.yaml")
		ads := emutest.Open(t, em, "emu", db, "0000:03:00.0", "0000:03:00.1", "0000:04:00.0")
		em.Manual.Advance(time.Minute)
		ctx := context.Background()
		var worst [2]uint64
		for i, ad := range ads[:2] {
			h, err := fechist.Read(ctx, ad, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !h.Active || h.TypeID != 1 || len(h.Bins) != 16 || h.Worst == nil {
				t.Fatalf("%s: %+v", ad.Name(), h)
			}
			for k, b := range h.Bins {
				if b.Low != uint64(k) || b.High != uint64(k) || b.Count == nil {
					t.Errorf("%s bin %d: %+v", ad.Name(), k, b)
				}
			}
			worst[i] = *h.Worst
			reps, err := link.Read(ctx, ad, link.Options{Ports: []int{1}})
			if err != nil {
				t.Fatal(err)
			}
			c := reps[0].Counters
			if c == nil || c.FECUncorrectableBlocks == nil || c.FECCorrectedBlocks == nil {
				t.Fatalf("%s: no FEC block counters: %+v", ad.Name(), c)
			}
			if got, want := *h.Bins[15].Count, *c.FECUncorrectableBlocks; got != want {
				t.Errorf("%s: last bin %d codewords, PPCNT uncorrectable blocks %d", ad.Name(), got, want)
			}
			if h.Codewords <= *c.FECCorrectedBlocks || *h.Bins[0].Count == 0 {
				t.Errorf("%s: %d codewords, bin 0 %d, corrected blocks %d", ad.Name(), h.Codewords, *h.Bins[0].Count, *c.FECCorrectedBlocks)
			}
		}
		if worst[1] <= worst[0] {
			t.Errorf("worst bin: healthy %d, degraded lane %d; want the degraded higher", worst[0], worst[1])
		}
		h, err := fechist.Read(ctx, ads[2], 1)
		if err != nil || h.Active || len(h.Bins) != 0 {
			t.Errorf("down link: %+v, %v; want no histogram", h, err)
		}
	}
	t.Run("builtin", func(t *testing.T) { check(t, devtest.DB(t)) })
	devtest.EachRevision(t, check)
}

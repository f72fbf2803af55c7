package nvstore_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/fwreset"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"github.com/cxray/cxray/prm/source"
)

// With every register database in the history, the emulated firmware
// answers MROQ where the database has it (Rev 0.61 on): per reset type the
// levels, flows and PCI methods, read through the real access path by
// dev/fwreset. Where the database lacks MROQ, the answer is a database
// finding and the levels are MFRL's. MFRL refuses a level MROQ does not
// offer with the type asked for.
func TestMROQEveryRevision(t *testing.T) {
	for _, file := range prmhistorytest.Files(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			pdb, err := source.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := scenario.FromProfile("cx7-2p400g")
			if err != nil {
				t.Fatal(err)
			}
			// The emulated firmware answers from the same database where the
			// profile can be built on it; Rev 0.51 and 0.56 lack fields the
			// profile needs, so there the tool's old database reads an
			// emulator on the built-in one.
			e, err := scenario.Build(sc, scenario.Options{DB: pdb})
			if err != nil {
				if e, err = scenario.Build(sc, scenario.Options{}); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			d, _, err := dev.OpenConfigSpace(ctx, "emu", "0000:03:00.0", "emulator", pdb, e.Functions()[0].Device, dev.StackOptions{SemaphoreTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			c, err := fwreset.Query(ctx, d)
			if err != nil {
				t.Fatal(err)
			}
			all := fwreset.LevelLivePatch | fwreset.LevelLinkToggle | fwreset.LevelPERST
			if c.Levels != all || c.Types != 0x3 {
				t.Errorf("MFRL levels 0x%x types 0x%x; want 0x%x 0x3", c.Levels, c.Types, all)
			}
			_, hasMROQ := pdb.Register("MROQ")
			if hasMROQ != nil {
				if c.ByType != nil || c.NoMROQCategory != fwreset.CategoryDatabase || c.LevelsFor(1) != all {
					t.Errorf("without MROQ in the database: %+v; want a database finding and MFRL's levels", c)
				}
				return
			}
			want := []fwreset.TypeCaps{
				{Type: 0, Levels: all, Sync: fwreset.SyncLegacy | fwreset.SyncDriver, Methods: 3},
				{Type: 1, Levels: fwreset.LevelLinkToggle, Sync: fwreset.SyncLegacy | fwreset.SyncDriver, Methods: 3},
			}
			if diff := cmp.Diff(want, c.ByType); diff != "" || c.NoMROQ != "" {
				t.Errorf("MROQ per type (-want +got):\n%s%s", diff, c.NoMROQ)
			}
			if c.Supports(fwreset.LevelPERST, 1) || !c.Supports(fwreset.LevelLinkToggle, 1) {
				t.Errorf("Supports disagrees with MROQ: %+v", c.ByType)
			}
			// The firmware itself refuses what MROQ does not offer.
			if err := fwreset.Send(ctx, d, fwreset.Request{Level: fwreset.LevelPERST, Type: 1}); err == nil || !strings.Contains(err.Error(), "bad parameter") {
				t.Errorf("a phy-less reset at PERST: %v; want the firmware's refusal", err)
			}
			if err := fwreset.Send(ctx, d, fwreset.Request{Level: fwreset.LevelLinkToggle, Type: 1, Sync: 1}); err != nil {
				t.Errorf("a phy-less link-toggle reset in the driver-synced flow: %v", err)
			}
		})
	}
}

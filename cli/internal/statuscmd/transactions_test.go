package statuscmd

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
)

// TestStatusRegisterTransactions: one status line of one function reads
// each register (at each index) once: no plain repeat (MGIR once for the
// identity, the port count and the build date; PDDR's operational page
// once per port), on every function of every scenario, the GPU node's ten
// among them (issue 25 item 3).
func TestStatusRegisterTransactions(t *testing.T) {
	db := devtest.DB(t)
	for _, file := range emutest.ScenarioFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			entries := map[string]Entry{}
			logs := emutest.Transactions(t, file, func(t *testing.T, a *adapter.Adapter) {
				entries[a.BDF()] = adapterStatus(context.Background(), a)
			})
			if filepath.Base(file) == "gpu-node.yaml" && len(logs) != 10 {
				t.Fatalf("status ran on %d functions, want the GPU node's 10", len(logs))
			}
			for bdf, log := range logs {
				// A function that was read (not one whose register path is
				// held) read something: an empty log would make this test
				// pass on nothing.
				if e := entries[bdf]; e.Firmware != "" && len(log) == 0 {
					t.Errorf("status on %s shows firmware %s but made no register transaction", bdf, e.Firmware)
				}
				if reps := emutest.PlainRepeats(db, log); len(reps) > 0 {
					t.Errorf("status on %s: %d register transactions, %d of them plain repeats: %v", bdf, len(log), len(reps), reps)
				}
			}
		})
	}
}

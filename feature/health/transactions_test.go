package health_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/feature/health"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/nvconf/nvtest"
)

// TestHealthRegisterTransactions: one health on one function reads each
// register (at each index) once per sample: no plain repeat, on every
// function of every scenario (the GPU node's ten among them; issue 25
// item 3).
func TestHealthRegisterTransactions(t *testing.T) {
	db := devtest.DB(t)
	nv := nvtest.NV(t)
	for _, file := range emutest.ScenarioFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			logs := emutest.Transactions(t, file, func(t *testing.T, a *adapter.Adapter) {
				health.Run(context.Background(), a, health.Options{Interval: 2 * time.Second, NV: nv})
			})
			if filepath.Base(file) == "gpu-node.yaml" && len(logs) != 10 {
				t.Fatalf("health ran on %d functions, want the GPU node's 10", len(logs))
			}
			for bdf, log := range logs {
				if reps := emutest.PlainRepeats(db, log); len(reps) > 0 {
					t.Errorf("health on %s: %d register transactions, %d of them plain repeats: %v", bdf, len(log), len(reps), reps)
				}
			}
		})
	}
}

// TestLinkRegisterTransactions: link reads PAOS and PTYS once (through
// the adapter's Links), PDDR's operational page once (the reading Ports
// made for the link layer, adapter.OperationalPage) and each PPCNT group
// once per sample, with and without a second sample, on every function of
// every scenario.
func TestLinkRegisterTransactions(t *testing.T) {
	db := devtest.DB(t)
	for _, file := range emutest.ScenarioFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			for _, interval := range []time.Duration{0, time.Second} {
				logs := emutest.Transactions(t, file, func(t *testing.T, a *adapter.Adapter) {
					// The held semaphore is the one scenario whose function
					// cannot be read; what it read until then still counts.
					if _, err := link.Read(context.Background(), a, link.Options{Interval: interval}); err != nil && filepath.Base(file) != "semaphore-held.yaml" {
						t.Errorf("link on %s: %v", a.BDF(), err)
					}
				})
				if filepath.Base(file) == "gpu-node.yaml" && len(logs) != 10 {
					t.Fatalf("link ran on %d functions, want the GPU node's 10", len(logs))
				}
				for bdf, log := range logs {
					if reps := emutest.PlainRepeats(db, log); len(reps) > 0 {
						t.Errorf("link --interval %v on %s: %d register transactions, %d of them plain repeats: %v", interval, bdf, len(log), len(reps), reps)
					}
				}
			}
		})
	}
}

package health_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/health"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/nvconf/nvtest"
	"github.com/cxray/cxray/prm"
)

// transaction is one register access the firmware handled.
type transaction struct {
	id      uint16
	method  emu.Method
	request []byte
	at      time.Time // on the emulation's clock
	status  uint8     // the firmware's answer (0 ok)
}

// countingFirmware sits where every register access of a function passes
// (scenario.Options.Firmware), whichever path the client took (the
// gateway or the command interface), and records each.
type countingFirmware struct {
	emu.Firmware
	now func() time.Time
	mu  sync.Mutex
	log []transaction
}

func (c *countingFirmware) AccessRegister(id uint16, method emu.Method, data []byte) ([]byte, uint8) {
	req := append([]byte(nil), data...)
	out, status := c.Firmware.AccessRegister(id, method, data)
	c.mu.Lock()
	c.log = append(c.log, transaction{id, method, req, c.now(), status})
	c.mu.Unlock()
	return out, status
}

func (c *countingFirmware) transactions() []transaction {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]transaction(nil), c.log...)
}

// plainRepeats lists the reads that repeat an earlier one: the same
// register, the same request (index and all) and method GET, with no
// write to the device and no time passing between them (a write may
// change what a read answers; a second sample after health's interval is
// a new reading, and on the emulation's manual clock time moves only
// then). A read the firmware answered with a status is no reading to
// keep. Each is the register's name and its request's first bytes.
func plainRepeats(db *prm.DB, log []transaction) []string {
	var out []string
	var since []transaction // reads since the last write
	for _, t := range log {
		if t.method != emu.MethodGet {
			since = nil
			continue
		}
		if len(since) > 0 && !t.at.Equal(since[len(since)-1].at) {
			since = nil
		}
		for _, s := range since {
			if s.id == t.id && bytes.Equal(s.request, t.request) {
				out = append(out, fmt.Sprintf("%s %x", regName(db, t.id), t.request[:min(8, len(t.request))]))
				break
			}
		}
		// A read the firmware refused (busy, ...) gave nothing to keep:
		// asking again is no repeat.
		if t.status == 0 {
			since = append(since, t)
		}
	}
	return out
}

func regName(db *prm.DB, id uint16) string {
	if r, ok := db.RegisterByID(uint32(id)); ok {
		return r.Name
	}
	return fmt.Sprintf("0x%04x", id)
}

// count runs fn once on each function of the scenario file (all of them
// when bdfs is empty), each on its own adapter from open to close, and
// returns each function's register transactions as its firmware saw
// them.
func count(t *testing.T, file string, fn func(t *testing.T, a *adapter.Adapter), bdfs ...string) map[string][]transaction {
	t.Helper()
	sc, err := scenario.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	counters := map[string]*countingFirmware{}
	start := sc.Clock.Start
	if start.IsZero() {
		start = scenario.DefaultStart
	}
	clk := clock.NewManual(start)
	em, err := scenario.Build(sc, scenario.Options{DB: devtest.DB(t), Clock: clk,
		Firmware: func(b string, v *fw.View) emu.Firmware {
			c := &countingFirmware{Firmware: v, now: clk.Now}
			counters[b] = c
			return c
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(bdfs) == 0 {
		for _, f := range em.Functions() {
			bdfs = append(bdfs, f.BDF)
		}
	}
	out := map[string][]transaction{}
	for _, bdf := range bdfs {
		c := counters[bdf]
		if c == nil {
			t.Fatalf("no firmware of %s was built", bdf)
		}
		// Functions of one adapter share its firmware: count this one's
		// run only.
		c.mu.Lock()
		c.log = nil
		c.mu.Unlock()
		ads := emutest.Open(t, em, "emu:"+file, nil, bdf)
		fn(t, ads[0])
		ads[0].Close()
		out[bdf] = c.transactions()
	}
	return out
}

// TestHealthRegisterTransactions: one health on one function reads each
// register (at each index) once per sample: no plain repeat, on every
// function of every scenario (the GPU node's ten among them; issue 25
// item 3).
func TestHealthRegisterTransactions(t *testing.T) {
	db := devtest.DB(t)
	nv := nvtest.NV(t)
	for _, file := range emutest.ScenarioFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			logs := count(t, file, func(t *testing.T, a *adapter.Adapter) {
				health.Run(context.Background(), a, health.Options{Interval: 2 * time.Second, NV: nv})
			})
			if filepath.Base(file) == "gpu-node.yaml" && len(logs) != 10 {
				t.Fatalf("health ran on %d functions, want the GPU node's 10", len(logs))
			}
			for bdf, log := range logs {
				if reps := plainRepeats(db, log); len(reps) > 0 {
					t.Errorf("health on %s: %d register transactions, %d of them plain repeats: %v", bdf, len(log), len(reps), reps)
				}
			}
		})
	}
}

// TestLinkRegisterTransactions: link reads PAOS and PTYS once (through
// the adapter's Links) and each PPCNT group once per sample, with and
// without a second sample. One repeat is known and left: PDDR's
// operational page of port 1, which Ports reads for the port's link layer
// (kept for the adapter's life) and link again for the PHY's state.
func TestLinkRegisterTransactions(t *testing.T) {
	db := devtest.DB(t)
	known := "PDDR 0001000000000000" // local_port 1, page_select 0
	for _, interval := range []time.Duration{0, time.Second} {
		logs := count(t, "../../examples/gpu-node.yaml", func(t *testing.T, a *adapter.Adapter) {
			if _, err := link.Read(context.Background(), a, link.Options{Interval: interval}); err != nil {
				t.Fatalf("link on %s: %v", a.BDF(), err)
			}
		}, "0000:29:00.0", "0000:18:00.0")
		for bdf, log := range logs {
			reps := plainRepeats(db, log)
			if i := slices.Index(reps, known); i >= 0 {
				reps = slices.Delete(reps, i, i+1)
			}
			if len(reps) > 0 {
				t.Errorf("link --interval %v on %s: %d register transactions, %d of them plain repeats: %v", interval, bdf, len(log), len(reps), reps)
			}
		}
	}
}

// TestPlainRepeats: what counts as a plain repeat.
func TestPlainRepeats(t *testing.T) {
	db := devtest.DB(t)
	mgir, _ := db.Register("MGIR")
	paos, _ := db.Register("PAOS")
	t0 := time.Unix(0, 0)
	t1 := t0.Add(time.Second)
	get := func(r *prm.Register, at time.Time, b ...byte) transaction {
		return transaction{uint16(r.ID), emu.MethodGet, b, at, 0}
	}
	busy := func(r *prm.Register, at time.Time) transaction {
		return transaction{uint16(r.ID), emu.MethodGet, nil, at, 1}
	}
	set := func(r *prm.Register, at time.Time) transaction {
		return transaction{uint16(r.ID), emu.MethodSet, []byte{1}, at, 0}
	}
	for _, c := range []struct {
		name string
		log  []transaction
		want int
	}{
		{"the same read twice", []transaction{get(mgir, t0), get(mgir, t0)}, 1},
		{"three times", []transaction{get(mgir, t0), get(paos, t0, 1), get(mgir, t0), get(mgir, t0)}, 2},
		{"another index", []transaction{get(paos, t0, 1), get(paos, t0, 2)}, 0},
		{"a write between", []transaction{get(paos, t0, 1), set(paos, t0), get(paos, t0, 1)}, 0},
		{"a write to another register between", []transaction{get(mgir, t0), set(paos, t0), get(mgir, t0)}, 0},
		{"a second sample", []transaction{get(mgir, t0), get(mgir, t1)}, 0},
		{"twice in the second sample", []transaction{get(mgir, t0), get(mgir, t1), get(mgir, t1)}, 1},
		{"again after busy", []transaction{busy(mgir, t0), get(mgir, t0)}, 0},
	} {
		if got := plainRepeats(db, c.log); len(got) != c.want {
			t.Errorf("%s: %d plain repeats %v, want %d", c.name, len(got), got, c.want)
		}
	}
}

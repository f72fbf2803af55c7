package health_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/health"
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
	c.mu.Lock()
	c.log = append(c.log, transaction{id, method, append([]byte(nil), data...), c.now()})
	c.mu.Unlock()
	return c.Firmware.AccessRegister(id, method, data)
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
// then). Each is the register's name and its request's first bytes.
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
		since = append(since, t)
	}
	return out
}

func regName(db *prm.DB, id uint16) string {
	if r, ok := db.RegisterByID(uint32(id)); ok {
		return r.Name
	}
	return fmt.Sprintf("0x%04x", id)
}

// countHealth runs health once on the function at bdf of the scenario
// file, counting from the open to the close, and returns the firmware's
// log.
func countHealth(t *testing.T, file, bdf string) []transaction {
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
	ads := emutest.Open(t, em, "emu:"+file, nil, bdf)
	rep := health.Run(context.Background(), ads[0], health.Options{Interval: 2 * time.Second, NV: nvtest.NV(t)})
	if rep.Error != "" {
		t.Fatalf("health on %s: %s", bdf, rep.Error)
	}
	ads[0].Close()
	c := counters[bdf]
	if c == nil {
		t.Fatalf("no firmware of %s was built", bdf)
	}
	return c.transactions()
}

// TestHealthRegisterTransactions: one health on one function reads each
// register (at each index) once per sample; a plain repeat is a
// transaction the adapter should have kept from its first read (issue 25
// item 3). An Ethernet function (the GPU node's front end) and an
// InfiniBand one.
func TestHealthRegisterTransactions(t *testing.T) {
	db := devtest.DB(t)
	for _, bdf := range []string{"0000:29:00.0", "0000:18:00.0"} {
		t.Run(bdf, func(t *testing.T) {
			log := countHealth(t, "../../examples/gpu-node.yaml", bdf)
			if len(log) == 0 {
				t.Fatal("the firmware saw no register transaction")
			}
			reps := plainRepeats(db, log)
			t.Logf("health on %s: %d register transactions, %d plain repeats: %v", bdf, len(log), len(reps), reps)
		})
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
		return transaction{uint16(r.ID), emu.MethodGet, b, at}
	}
	set := func(r *prm.Register, at time.Time) transaction {
		return transaction{uint16(r.ID), emu.MethodSet, []byte{1}, at}
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
	} {
		if got := plainRepeats(db, c.log); len(got) != c.want {
			t.Errorf("%s: %d plain repeats %v, want %d", c.name, len(got), got, c.want)
		}
	}
}

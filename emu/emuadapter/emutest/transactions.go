package emutest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm"
)

// Transaction is one register access a function's firmware handled.
type Transaction struct {
	ID      uint16
	Method  emu.Method
	Request []byte
	At      time.Time // on the emulation's clock
	Status  uint8     // the firmware's answer (0 ok)
}

// countingFirmware sits where every register access of a function passes
// (scenario.Options.Firmware), whichever path the client took (the
// gateway or the command interface), and records each.
type countingFirmware struct {
	emu.Firmware
	now func() time.Time
	mu  sync.Mutex
	log []Transaction
}

func (c *countingFirmware) AccessRegister(id uint16, method emu.Method, data []byte) ([]byte, uint8) {
	req := append([]byte(nil), data...)
	out, status := c.Firmware.AccessRegister(id, method, data)
	c.mu.Lock()
	c.log = append(c.log, Transaction{id, method, req, c.now(), status})
	c.mu.Unlock()
	return out, status
}

func (c *countingFirmware) transactions() []Transaction {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Transaction(nil), c.log...)
}

// Transactions runs fn once on each function of the scenario file (all
// of them when bdfs is empty), each on its own adapter from open to
// close, on the scenario's manual clock, and returns each function's
// register transactions as its firmware saw them, by BDF.
func Transactions(t *testing.T, file string, fn func(t *testing.T, a *adapter.Adapter), bdfs ...string) map[string][]Transaction {
	t.Helper()
	return transactions(t, file, false, fn, bdfs)
}

// RealTimeTransactions is Transactions on the wall clock: the adapters
// sleep and age readings in real time.
func RealTimeTransactions(t *testing.T, file string, fn func(t *testing.T, a *adapter.Adapter), bdfs ...string) map[string][]Transaction {
	t.Helper()
	return transactions(t, file, true, fn, bdfs)
}

func transactions(t *testing.T, file string, real bool, fn func(t *testing.T, a *adapter.Adapter), bdfs []string) map[string][]Transaction {
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
	var clk interface{ Now() time.Time } = clock.NewManual(start)
	if real {
		clk = clock.Real{}
	}
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
	out := map[string][]Transaction{}
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
		ads := Open(t, em, "emu:"+file, nil, bdf)
		fn(t, ads[0])
		ads[0].Close()
		out[bdf] = c.transactions()
	}
	return out
}

// PlainRepeats lists the reads that repeat an earlier one: the same
// register, the same request (index and all) and method GET, with no
// write to the device and no time passing between them (a write may
// change what a read answers; a second sample after an interval is a new
// reading, and on the emulation's manual clock time moves only then). A
// read the firmware answered with a status is no reading to keep. Each is
// the register's name and its request's first bytes.
func PlainRepeats(db *prm.DB, log []Transaction) []string {
	var out []string
	var since []Transaction // reads since the last write
	for _, t := range log {
		if t.Method != emu.MethodGet {
			since = nil
			continue
		}
		if len(since) > 0 && !t.At.Equal(since[len(since)-1].At) {
			since = nil
		}
		for _, s := range since {
			if s.ID == t.ID && bytes.Equal(s.Request, t.Request) {
				out = append(out, fmt.Sprintf("%s %x", regName(db, t.ID), t.Request[:min(8, len(t.Request))]))
				break
			}
		}
		// A read the firmware refused (busy, ...) gave nothing to keep:
		// asking again is no repeat.
		if t.Status == 0 {
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

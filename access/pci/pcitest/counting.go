// Package pcitest counts the config-space calls a client makes, for the
// tests and benchmarks of the access layer (how many syscalls a register
// transaction costs). Only _test.go files and benchmark tools import it.
package pcitest

import (
	"fmt"
	"sync/atomic"

	"github.com/cxray/cxray/access/pci"
)

// Counts is a tally of config-space calls. One call is one pread/pwrite
// syscall, which is one FUSE round trip under `cxray emu run` and one or
// more configuration cycles on real hardware.
type Counts struct {
	Reads, Writes         int64
	ReadBytes, WriteBytes int64
}

// Ops returns Reads + Writes.
func (c Counts) Ops() int64 { return c.Reads + c.Writes }

func (c Counts) String() string {
	return fmt.Sprintf("%d reads (%d B), %d writes (%d B)", c.Reads, c.ReadBytes, c.Writes, c.WriteBytes)
}

// Counting wraps a ConfigSpace and counts the calls made through it. Safe for
// concurrent use.
type Counting struct {
	cs                    pci.ConfigSpace
	reads, writes         atomic.Int64
	readBytes, writeBytes atomic.Int64
}

// NewCounting wraps cs.
func NewCounting(cs pci.ConfigSpace) *Counting { return &Counting{cs: cs} }

// ReadAt counts and forwards a read.
func (c *Counting) ReadAt(p []byte, off int64) (int, error) {
	c.reads.Add(1)
	c.readBytes.Add(int64(len(p)))
	return c.cs.ReadAt(p, off)
}

// WriteAt counts and forwards a write.
func (c *Counting) WriteAt(p []byte, off int64) (int, error) {
	c.writes.Add(1)
	c.writeBytes.Add(int64(len(p)))
	return c.cs.WriteAt(p, off)
}

// Counts returns the tally so far.
func (c *Counting) Counts() Counts {
	return Counts{
		Reads: c.reads.Load(), Writes: c.writes.Load(),
		ReadBytes: c.readBytes.Load(), WriteBytes: c.writeBytes.Load(),
	}
}

// Reset zeroes the tally.
func (c *Counting) Reset() {
	c.reads.Store(0)
	c.writes.Store(0)
	c.readBytes.Store(0)
	c.writeBytes.Store(0)
}

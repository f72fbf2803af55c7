package pcitest_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/access/pci/pcitest"
)

// memConfig is 256 bytes of config space in memory.
type memConfig struct{ b [256]byte }

func (m *memConfig) ReadAt(p []byte, off int64) (int, error)  { return copy(p, m.b[off:]), nil }
func (m *memConfig) WriteAt(p []byte, off int64) (int, error) { return copy(m.b[off:], p), nil }

// Every call is counted once with its size, the data passes through, and
// Reset starts the tally again.
func TestCounting(t *testing.T) {
	mem := &memConfig{}
	c := pcitest.NewCounting(mem)
	c.WriteAt([]byte{1, 2, 3, 4}, 0)
	got := make([]byte, 8)
	c.ReadAt(got, 0)
	c.ReadAt(make([]byte, 1), 0)
	if d := cmp.Diff(pcitest.Counts{Reads: 2, Writes: 1, ReadBytes: 9, WriteBytes: 4}, c.Counts()); d != "" {
		t.Errorf("counts (-want +got):\n%s", d)
	}
	if c.Counts().Ops() != 3 {
		t.Errorf("ops %d, want 3", c.Counts().Ops())
	}
	if d := cmp.Diff([]byte{1, 2, 3, 4, 0, 0, 0, 0}, got); d != "" {
		t.Errorf("data read through the counter (-want +got):\n%s", d)
	}
	c.Reset()
	if d := cmp.Diff(pcitest.Counts{}, c.Counts()); d != "" {
		t.Errorf("after Reset (-want +got):\n%s", d)
	}
}

package state

import (
	"testing"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/prm"
)

// BenchmarkAccess measures what keeping the state costs one register
// access (the log's lock, a look for new records, the unlock): a GET of
// PAOS through a function's firmware, kept and not.
func BenchmarkAccess(b *testing.B) {
	s, err := Open("emu", Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	f := s.Emulation().Functions()[0]
	r := client(b, s, f.BDF)
	rg, _ := r.db.Register("PAOS")
	p, _ := r.db.RegisterPlan(rg)
	enc := func(kv ...string) []byte {
		buf := p.NewBuffer()
		var as []prm.Assignment
		for i := 0; i+1 < len(kv); i += 2 {
			as = append(as, prm.Assignment{Path: kv[i], Value: kv[i+1]})
		}
		if err := p.Encode(buf, as); err != nil {
			b.Fatal(err)
		}
		return buf
	}
	req := enc("local_port", "1")
	sets := [][]byte{enc("local_port", "1", "admin_status", "up", "ase", "1"), enc("local_port", "1", "admin_status", "down_by_configuration", "ase", "1")}
	kept := s.wrap(f.BDF, f.View)
	plain, err := scenario.Resolve("emu", scenario.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		fw   emu.Firmware
	}{{"kept", kept}, {"fresh", plain.Functions()[0].View}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, st := c.fw.AccessRegister(uint16(rg.ID), emu.MethodGet, req); st != 0 {
					b.Fatalf("status %d", st)
				}
			}
		})
	}
	// Replaying a log at open: what a command pays per record written
	// before it.
	b.Run("open-1000-records", func(b *testing.B) {
		dir := b.TempDir()
		w, err := Open("emu", Options{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		wf := w.Emulation().Functions()[0]
		fwi := w.wrap(wf.BDF, wf.View)
		for i := 0; i < 1000; i++ {
			if _, st := fwi.AccessRegister(uint16(rg.ID), emu.MethodSet, sets[i%2]); st != 0 {
				b.Fatalf("status %d", st)
			}
		}
		w.Close()
		for b.Loop() {
			o, err := Open("emu", Options{Dir: dir})
			if err != nil {
				b.Fatal(err)
			}
			o.Close()
		}
	})
}

package link_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm/builtin"
)

// FuzzRegisterImages: whatever bytes the firmware answers in PPCNT's two
// groups and PDDR's two pages, Read does not fail or panic, and what it
// reports holds together: a ratio is either a finite non-negative number
// or n/a with a reason, the JSON encodes, every verdict has a code, a
// known category and a next step, and the speed and the lanes read are
// within what the masks allow.
func FuzzRegisterImages(f *testing.F) {
	db, err := builtin.Load()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(make([]byte, 256), make([]byte, 256), make([]byte, 256), make([]byte, 256))
	seed := make([]byte, 256)
	for i := range seed {
		seed[i] = byte(i * 37)
	}
	f.Add(seed, seed, seed, seed)
	cats := map[string]bool{link.CategoryPartner: true, link.CategoryCable: true, link.CategoryConfiguration: true, link.CategorySignal: true}
	f.Fuzz(func(t *testing.T, stat, phys, op, troub []byte) {
		fk := devtest.New(db)
		fk.Put("MGIR", "hw_info.num_ports=1")
		fk.Put("PMLP", "local_port=1", "width=4")
		fk.Put("PAOS", "local_port=1", "admin_status=up", "oper_status=up")
		fk.Put("PTYS", "local_port=1", "proto_mask=4", "ext_eth_proto_oper=0x10000", "ext_eth_proto_admin=0x13ff2", "ext_eth_proto_capability=0x13ff2")
		fk.PutImage("PPCNT", stat, "local_port=1", "grp=0x16")
		fk.PutImage("PPCNT", phys, "local_port=1", "grp=0x12")
		fk.PutImage("PDDR", op, "local_port=1", "page_select=0")
		fk.PutImage("PDDR", troub, "local_port=1", "page_select=1", "page_data.pddr_troubleshooting_page_ext.group_opcode=0")
		a := adapter.New(adapter.Config{Name: "fuzz", BDF: "0000:03:00.0", Backend: dev.BackendDirect, DB: db,
			Registers: fk.Device("fuzz", "0000:03:00.0", dev.BackendDirect), Clock: clock.NewManual(time.Unix(0, 0))})
		reps, err := link.Read(context.Background(), a, link.Options{})
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if _, err := json.Marshal(reps); err != nil {
			t.Fatalf("JSON: %v", err)
		}
		r := reps[0]
		if r.Counters == nil {
			t.Fatalf("the counters were not read: %v", r.Unavailable)
		}
		check := func(what string, b link.BER) {
			if b.Value == nil {
				if b.Text != "n/a" || b.Why == "" {
					t.Fatalf("%s: no value, text %q, why %q", what, b.Text, b.Why)
				}
				return
			}
			if v := *b.Value; math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || b.Text == "n/a" {
				t.Fatalf("%s: value %v text %q", what, v, b.Text)
			}
		}
		c := r.Counters
		check("raw", c.RawBER)
		check("effective", c.EffectiveBER)
		check("symbol", c.SymbolBER)
		if len(c.Lanes) != 4 {
			t.Fatalf("%d lanes, PMLP says 4", len(c.Lanes))
		}
		for _, l := range c.Lanes {
			check("lane", l.RawBER)
		}
		if *c.TimeSinceClearMS == 0 && c.RawBER.Value != nil {
			t.Fatalf("a ratio with no time since clear: %+v", c.RawBER)
		}
		for _, v := range r.Verdicts {
			if v.Code == "" || !cats[v.Category] || v.NextStep == "" || v.Summary == "" {
				t.Fatalf("verdict %+v", v)
			}
		}
		// PDDR's operational page names the protocol; when its bytes say
		// InfiniBand, PTYS's IB fields (all zero here) hold the speed, so
		// none is known; else the speed is PTYS's Ethernet 400G_4X.
		if s := r.Operational.SpeedGbps; r.Operational.Protocol == "InfiniBand" {
			if s != nil {
				t.Fatalf("speed %v on an InfiniBand port whose PTYS IB fields are zero", *s)
			}
		} else if s == nil || *s != 400 {
			t.Fatalf("speed %v from PTYS 400G_4X (protocol %q)", s, r.Operational.Protocol)
		}
	})
}

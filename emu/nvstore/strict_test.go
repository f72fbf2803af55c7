package nvstore_test

import (
	"strings"
	"testing"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/nvstore"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/builtin"
	"github.com/cxray/cxray/nvconf/tlv"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/adb"
	prmbuiltin "github.com/cxray/cxray/prm/builtin"
)

// privateDB is a private copy of the built-in PRM database that a test may
// change (prmbuiltin.Load's is shared).
func privateDB(t *testing.T) *prm.DB {
	t.Helper()
	db, err := prmbuiltin.New()
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// nodeOf finds the node that holds field path of register reg ("a.b"
// walks subnodes).
func nodeOf(t *testing.T, db *prm.DB, reg, path string) (*prm.Node, string) {
	t.Helper()
	r, err := db.Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	n := db.Node(r)
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		f := n.Field(p)
		if f == nil || f.Subnode == "" {
			t.Fatalf("%s has no structure %s", reg, p)
		}
		n = db.Nodes[f.Subnode]
	}
	return n, parts[len(parts)-1]
}

// dropField removes a field from the database's layout.
func dropField(t *testing.T, db *prm.DB, reg, path string) {
	t.Helper()
	n, name := nodeOf(t, db, reg, path)
	for i, f := range n.Fields {
		if f.Name == name {
			n.Fields = append(n.Fields[:i:i], n.Fields[i+1:]...)
			return
		}
	}
	t.Fatalf("%s has no field %s", reg, path)
}

// narrowField makes a field one bit wide, so the store's values do not fit.
func narrowField(t *testing.T, db *prm.DB, reg, path string) {
	t.Helper()
	n, name := nodeOf(t, db, reg, path)
	f := n.Field(name)
	if f == nil {
		t.Fatalf("%s has no field %s", reg, path)
	}
	f.Offset += f.Size - 1 // keep the LSB where it was
	f.Size = 1
}

// A PRM database without a field the handlers answer with cannot run the
// store: New says which register and field, instead of answering with the
// field left out.
func TestNewNeedsTheFieldsItAnswersWith(t *testing.T) {
	for _, c := range []struct{ reg, path string }{
		{"MNVQC", "type"}, {"MNVQC", "support_rd"}, {"MNVQC", "support_wr"}, {"MNVQC", "version"},
		{"MNVGC", "nvda_read_factory_settings"}, {"MNVGC", "nvda_read_current_settings"}, {"MNVGC", "priv_nv_other_host"},
		{"MNVIA", "target"}, {"MNVGN", "nv_pointer"},
	} {
		db := privateDB(t)
		dropField(t, db, c.reg, c.path)
		_, err := nvstore.New(nvstore.Options{PRM: db, Ports: 2})
		if err == nil || !strings.Contains(err.Error(), c.reg) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s without %s: New gave %v; want an error naming both", c.reg, c.path, err)
		}
	}
}

// Every PRM revision of the history has the fields (MFRL's reset_trigger,
// absent from Rev 0.51, is optional), so the strict store runs on each.
func TestNewOnEveryRevision(t *testing.T) {
	for _, file := range prmhistorytest.Files(t) {
		db, err := adb.LoadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nvstore.New(nvstore.Options{PRM: db, Ports: 2}); err != nil {
			t.Errorf("%s: %v", db.Revision, err)
		}
	}
}

// strictRig is an emulated cx7 over a changed PRM database, reached through
// AccessRegister so the test sees the status the tool would.
type strictRig struct {
	t  *testing.T
	db *prm.DB
	fw *fw.Firmware
}

func newStrictRig(t *testing.T, db *prm.DB) *strictRig {
	t.Helper()
	sc, err := scenario.FromProfile("cx7-2p400g")
	if err != nil {
		t.Fatal(err)
	}
	e, err := scenario.Build(sc, scenario.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	return &strictRig{t: t, db: db, fw: e.Adapters[0].Firmware}
}

// access sends reg with the given fields set (through the codec the store
// uses) and returns the status.
func (r *strictRig) access(m emu.Method, reg string, set func(f *tlv.HeaderCodec, g *tlv.Fields, buf []byte) error) uint8 {
	r.t.Helper()
	rg, err := r.db.Register(reg)
	if err != nil {
		r.t.Fatal(err)
	}
	p, err := r.db.RegisterPlan(rg)
	if err != nil {
		r.t.Fatal(err)
	}
	buf := p.NewBuffer()
	g, err := tlv.NewFields(r.db, reg)
	if err != nil {
		r.t.Fatal(err)
	}
	var hc *tlv.HeaderCodec
	if g.Has("configuration_item_header.length") {
		if hc, err = tlv.NewHeaderCodec(r.db, reg); err != nil {
			r.t.Fatal(err)
		}
		// Room for a TLV's data, as mstconfig's requests have.
		buf = append(buf, make([]byte, max(0, hc.DataOffset()+tlv.MaxData-len(buf)))...)
	}
	if set != nil {
		if err := set(hc, g, buf); err != nil {
			r.t.Fatal(err)
		}
	}
	_, st := r.fw.AccessRegister(uint16(rg.ID), m, buf)
	return st
}

func (r *strictRig) wantInternal(what string, st uint8, field string) {
	r.t.Helper()
	if st != fw.StatusInternalError {
		r.t.Errorf("%s: status 0x%x, want internal error 0x%x", what, st, fw.StatusInternalError)
		return
	}
	if err := r.fw.LastError(); err == nil || !strings.Contains(err.Error(), field) {
		r.t.Errorf("%s: firmware error %v does not name %s", what, err, field)
	}
}

// keepLinkUp is the type dword of nv_keep_link_up on port 1: the cx7
// profile stores it at version 3.
func keepLinkUp(t *testing.T) uint32 {
	t.Helper()
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	tl := db.TLV("nv_keep_link_up")
	if tl == nil {
		t.Fatal("no nv_keep_link_up")
	}
	typ, err := nvconf.TypeDword(nvconf.Instance{TLV: tl, Port: 1})
	if err != nil {
		t.Fatal(err)
	}
	return typ
}

// A value that does not encode in the reply fails the access with the
// firmware's internal error, naming the field, instead of answering with the
// field left zero.
func TestCodecErrorFailsTheAccess(t *testing.T) {
	typ := keepLinkUp(t)
	t.Run("MNVQC version", func(t *testing.T) {
		db := privateDB(t)
		narrowField(t, db, "MNVQC", "version")
		r := newStrictRig(t, db)
		st := r.access(emu.MethodGet, "MNVQC", func(_ *tlv.HeaderCodec, g *tlv.Fields, buf []byte) error {
			return g.Set(buf, "type", uint64(typ))
		})
		r.wantInternal("MNVQC of a version-3 TLV with a 1-bit version", st, "version")
	})
	t.Run("MFRL reset_trigger", func(t *testing.T) {
		db := privateDB(t)
		narrowField(t, db, "MFRL", "reset_trigger")
		r := newStrictRig(t, db)
		r.wantInternal("MFRL query with a 1-bit reset_trigger", r.access(emu.MethodGet, "MFRL", nil), "reset_trigger")
	})
	t.Run("MNVGN nv_pointer", func(t *testing.T) {
		db := privateDB(t)
		narrowField(t, db, "MNVGN", "nv_pointer")
		r := newStrictRig(t, db)
		st, ok := nvstore.Lookup(r.fw)
		if !ok {
			t.Fatal("no NV store")
		}
		// Two writes: the second record's pointer (2) needs two bits.
		for _, a := range []string{"KEEP_ETH_LINK_UP_P1=0", "KEEP_ETH_LINK_UP_P2=0"} {
			n, v, _ := strings.Cut(a, "=")
			if err := st.Set(n, v, nvstore.Pending); err != nil {
				t.Fatal(err)
			}
		}
		ptr := uint64(0)
		var status uint8
		for range 3 {
			status = r.access(emu.MethodGet, "MNVGN", func(_ *tlv.HeaderCodec, g *tlv.Fields, buf []byte) error {
				return g.Set(buf, "nv_pointer", ptr)
			})
			if status != fw.StatusOK {
				break
			}
			ptr++
		}
		r.wantInternal("MNVGN walk with a 1-bit nv_pointer", status, "nv_pointer")
	})
}

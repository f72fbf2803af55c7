package prm_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/adb"
	"github.com/cxray/cxray/prm/builtin"
)

// databases returns every database the tests can reach: the built-in one,
// the installed ADB and the seven revisions in shared/prm-history.
func databases(t testing.TB) []*prm.DB {
	t.Helper()
	bi, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	dbs := []*prm.DB{bi}
	paths, _ := filepath.Glob(prmhistorytest.Require(t) + "/*.adb")
	if len(paths) != 7 {
		t.Errorf("found %d ADB revisions in %s, want 7", len(paths), prmhistorytest.Require(t))
	}
	if _, err := os.Stat(adb.MstflintPath); err == nil {
		paths = append(paths, adb.MstflintPath)
	} else {
		t.Logf("NOTE: %s missing (apt-get install -y mstflint); testing the other databases", adb.MstflintPath)
	}
	for _, p := range paths {
		db, err := adb.LoadFile(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		dbs = append(dbs, db)
	}
	return dbs
}

// coverage marks the bits that decoded leaves came from.
func coverage(d *prm.Decoded) []byte {
	mask := make([]byte, len(d.Raw))
	for _, r := range d.Rows() {
		if r.Value.Kind() == prm.KindJoined {
			continue
		}
		t, err := d.Plan.Resolve(r.Path, d.Raw)
		if err != nil {
			panic(r.Path + ": " + err.Error())
		}
		for b := t.Bit; b < t.Bit+t.Width; b++ {
			mask[b/8] |= 0x80 >> (b % 8)
		}
	}
	return mask
}

// TestRoundTripEveryRegister: for random bytes, decode -> assignments ->
// encode into zeros -> decode gives the same values, and the encoded bytes
// are the input with every bit no field owns cleared.
func TestRoundTripEveryRegister(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, db := range databases(t) {
		for _, r := range db.Registers {
			p, err := db.RegisterPlan(r)
			if err != nil {
				t.Fatalf("%s %s: %v", db.Revision, r.Name, err)
			}
			for iter := 0; iter < 6; iter++ {
				n := p.Bytes
				if p.HasVariable() {
					n += 4 * rng.IntN(16)
				}
				buf := make([]byte, n)
				for i := range buf {
					buf[i] = byte(rng.Uint32())
				}
				if iter == 0 {
					clear(buf)
				}
				d1, err := p.Decode(buf)
				if err != nil {
					t.Fatalf("%s %s: decode: %v", db.Revision, r.Name, err)
				}
				out := make([]byte, n)
				if err := p.Encode(out, d1.Assignments()); err != nil {
					t.Fatalf("%s %s: encode: %v", db.Revision, r.Name, err)
				}
				d2, err := p.Decode(out)
				if err != nil {
					t.Fatal(err)
				}
				j1 := string(d1.AppendJSON(nil, prm.JSONOptions{Raw: true}))
				j2 := string(d2.AppendJSON(nil, prm.JSONOptions{Raw: true}))
				if j1 != j2 {
					t.Fatalf("%s %s: round trip differs\n in: %s\nout: %s", db.Revision, r.Name, j1, j2)
				}
				mask := coverage(d1)
				for i := range buf {
					if out[i] != buf[i]&mask[i] {
						t.Fatalf("%s %s: byte %d: encoded %#02x, input %#02x under mask %#02x", db.Revision, r.Name, i, out[i], buf[i], mask[i])
					}
				}
			}
		}
	}
}

func plan(t *testing.T, db *prm.DB, reg string) *prm.Plan {
	t.Helper()
	r, err := db.Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.RegisterPlan(r)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func leaf(t *testing.T, p *prm.Plan, path string) prm.Leaf {
	t.Helper()
	for _, l := range p.Leaves() {
		if l.Path == path {
			return l
		}
	}
	t.Fatalf("%s has no leaf %s", p.Node.Name, path)
	return prm.Leaf{}
}

// The acceptance layout of PMAOS, which mlx5_ifc.h also gives.
func TestPMAOSLayout(t *testing.T) {
	for _, db := range databases(t) {
		p := plan(t, db, "PMAOS")
		if l := leaf(t, p, "module"); l.Bit != 8 || l.Width != 8 || l.Access != prm.AccessIndex {
			t.Errorf("%s PMAOS.module at %d/%d %s, want 8/8 INDEX", db.Revision, l.Bit, l.Width, l.Access)
		}
		if l := leaf(t, p, "oper_status"); l.Bit != 28 || l.Width != 4 {
			t.Errorf("%s PMAOS.oper_status at %d/%d, want 28/4", db.Revision, l.Bit, l.Width)
		}
	}
}

func TestEncodeBytes(t *testing.T) {
	db, _ := builtin.Load()
	p := plan(t, db, "PAOS")
	buf := p.NewBuffer()
	as, _ := prm.ParseAssignments([]string{"local_port=0x1", "admin_status=down_by_configuration", "ase=1", "swid=-1"})
	if err := p.Encode(buf, as); err != nil {
		t.Fatal(err)
	}
	// swid is the top byte, local_port the second, admin_status bits 20..23
	// (mlx5_ifc.h), ase the top bit of dword 1.
	want := []byte{0xff, 0x01, 0x00 | 0x02, 0x00, 0x80, 0, 0, 0}
	if !bytes.Equal(buf[:8], want) {
		t.Errorf("PAOS bytes % x, want % x", buf[:8], want)
	}
	d, err := p.Decode(buf)
	if err != nil {
		t.Fatal(err)
	}
	js := string(d.AppendJSON(nil, prm.JSONOptions{}))
	if !strings.Contains(js, `"admin_status":"down_by_configuration"`) || !strings.Contains(js, `"local_port":1`) {
		t.Errorf("JSON %s lacks enum name or number", js)
	}
	raw := string(d.AppendJSON(nil, prm.JSONOptions{Raw: true}))
	if !strings.Contains(raw, `"admin_status":2`) {
		t.Errorf("raw JSON %s lacks the number", raw)
	}
}

func TestEncodeErrors(t *testing.T) {
	db, _ := builtin.Load()
	p := plan(t, db, "PAOS")
	cases := []struct {
		arg, want string
	}{
		{"admin_statu=1", "valid here: "},
		{"admin_status=300", "does not fit in 4 bits (largest is 15)"},
		{"admin_status=sideways", "one of: up(1)"},
		{"swid=-129", "does not fit in 8 bits"},
		{"local_port", "is not field=value"},
		{"local_port.x=1", "no members"},
	}
	for _, c := range cases {
		buf := p.NewBuffer()
		buf[0] = 0x55
		as, err := prm.ParseAssignments([]string{"local_port=7", c.arg})
		if err == nil {
			err = p.Encode(buf, as)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.arg, err, c.want)
		}
		if buf[0] != 0x55 || buf[1] != 0 {
			t.Errorf("%s: a failed encode changed the buffer: % x", c.arg, buf[:4])
		}
	}
}

// Text, joined halves, MACs and unions chosen by their selector.
func TestDecodeShapes(t *testing.T) {
	db, _ := builtin.Load()
	p := plan(t, db, "MGIR")
	buf := p.NewBuffer()
	as, _ := prm.ParseAssignments([]string{"fw_info.psid=MT_0000000838", "fw_info.extended_major=28"})
	if err := p.Encode(buf, as); err != nil {
		t.Fatal(err)
	}
	d, _ := p.Decode(buf)
	js := string(d.AppendJSON(nil, prm.JSONOptions{}))
	if !strings.Contains(js, `"psid":"MT_0000000838"`) {
		t.Errorf("PSID not shown as text: %s", js)
	}
	if i := bytes.Index(buf, []byte("MT_0000000838")); i < 0 {
		t.Errorf("PSID bytes not in the buffer in order: % x", buf)
	}

	pp := plan(t, db, "PPCNT")
	buf = pp.NewBuffer()
	as, _ = prm.ParseAssignments([]string{"grp=0x0", "counter_set.eth_802_3_cntrs_grp_data_layout_ext.a_frames_transmitted_ok_high=1", "counter_set.eth_802_3_cntrs_grp_data_layout_ext.a_frames_transmitted_ok_low=2"})
	if err := pp.Encode(buf, as); err != nil {
		t.Fatal(err)
	}
	d, _ = pp.Decode(buf)
	js = string(d.AppendJSON(nil, prm.JSONOptions{}))
	if !strings.Contains(js, `"a_frames_transmitted_ok":4294967298`) {
		t.Errorf("joined counter missing: %s", js)
	}

	// A member named without its selector sets the selector.
	pd := plan(t, db, "PDDR")
	buf = pd.NewBuffer()
	as, _ = prm.ParseAssignments([]string{"page_data.pddr_module_info_ext.temperature=0x1900"})
	if err := pd.Encode(buf, as); err != nil {
		t.Fatal(err)
	}
	d, _ = pd.Decode(buf)
	js = string(d.AppendJSON(nil, prm.JSONOptions{}))
	if !strings.Contains(js, `"page_select":"Module_info_page"`) || !strings.Contains(js, `"temperature":6400`) {
		t.Errorf("union member or selector wrong: %.300s", js)
	}
	// A selector set to another page conflicts.
	as, _ = prm.ParseAssignments([]string{"page_select=0", "page_data.pddr_module_info_ext.temperature=1"})
	if err := pd.Encode(pd.NewBuffer(), as); err == nil || !strings.Contains(err.Error(), "page_select=Module_info_page") {
		t.Errorf("conflicting selector accepted or unclear: %v", err)
	}
}

func TestLengthErrors(t *testing.T) {
	db, _ := builtin.Load()
	p := plan(t, db, "MGIR")
	_, err := p.Decode(make([]byte, 12))
	if err == nil || !strings.Contains(err.Error(), "160 bytes") {
		t.Errorf("short buffer error %v", err)
	}
}

func TestRegisterSuggestions(t *testing.T) {
	db, _ := builtin.Load()
	_, err := db.Register("PMAOZ")
	if err == nil || !strings.Contains(err.Error(), "PMAOS") {
		t.Errorf("no suggestion: %v", err)
	}
	if r, err := db.Register("0x9020"); err != nil || r.Name != "MGIR" {
		t.Errorf("lookup by ID: %v %v", r, err)
	}
	if r, err := db.Register("mgir"); err != nil || r.Name != "MGIR" {
		t.Errorf("lookup ignoring case: %v %v", r, err)
	}
}

func TestJoinedText(t *testing.T) {
	db, _ := builtin.Load()
	p := plan(t, db, "MTMP")
	buf := p.NewBuffer()
	as, _ := prm.ParseAssignments([]string{"sensor_name=ASIC"})
	if err := p.Encode(buf, as); err != nil {
		t.Fatal(err)
	}
	d, _ := p.Decode(buf)
	v, err := d.Get("sensor_name")
	if err != nil || !v.IsText() || v.TextString() != "ASIC" {
		t.Fatalf("sensor_name %v %v", prm.FormatValue(v), err)
	}
	if hi, _ := d.Get("sensor_name_hi"); hi.Uint() != 0x41534943 {
		t.Errorf("sensor_name_hi %#x", hi.Uint())
	}
}

// Fields that cross a dword or lie outside their node are layout errors,
// not panics at decode time.
func TestBadLayoutsRejected(t *testing.T) {
	for _, f := range []*prm.Field{
		{Name: "x", Offset: 30, Size: 4},  // 0x0.30, 4 bits: crosses the dword
		{Name: "y", Offset: 128, Size: 8}, // past the end of an 8-byte node
	} {
		n := &prm.Node{Name: "n", Size: 64, Fields: []*prm.Field{f}}
		db, err := prm.NewDB("t", "", map[string]*prm.Node{"n": n}, []*prm.Register{{Name: "N", ID: 1, Node: "n", Size: 8}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Plan("n"); err == nil {
			t.Errorf("field %s accepted", f.Name)
		}
	}
}

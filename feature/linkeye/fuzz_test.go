package linkeye

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/adb"
	"github.com/cxray/cxray/prm/builtin"
)

// FuzzDecodeSLRG: whatever bytes the firmware answers in SLRG, decoded
// with the built-in database and a conditional-union revision of the
// history when it is here, the lane holds together: measured exactly when
// it has a figure and no reason for not being measured; a figure, an eye
// or a field is never an all-ones value of its width (no reading); a lane
// with SLRG status 0 is never measured; the page is one the database has;
// and it encodes as JSON. A database finding comes with a measured lane
// only when the lane was read with the built-in layout, which it says.
// judge names only measured lanes.
func FuzzDecodeSLRG(f *testing.F) {
	dbs := []*prm.DB{}
	db, err := builtin.Load()
	if err != nil {
		f.Fatal(err)
	}
	dbs = append(dbs, db)
	if dir, ok := prmhistorytest.Dir(); ok {
		if h, err := adb.LoadFile(filepath.Join(dir, "hca-ext-rev0.64.adb")); err == nil {
			dbs = append(dbs, h)
		}
	}
	f.Add(make([]byte, 40), make([]byte, 40))
	seven := make([]byte, 40)
	seven[0] = 0x14 // status 1, version 4
	seven[12], seven[13], seven[14], seven[15] = 0x90, 0x2c, 0x30, 0x2a
	f.Add(seven, seven)
	ones := make([]byte, 40)
	for i := range ones {
		ones[i] = 0xff
	}
	f.Add(ones, seven)
	f.Fuzz(func(t *testing.T, a, b []byte) {
		for _, db := range dbs {
			r, err := db.Register("SLRG")
			if err != nil {
				t.Fatal(err)
			}
			p, err := db.RegisterPlan(r)
			if err != nil {
				t.Fatal(err)
			}
			rep := &Report{Port: 1}
			for i, img := range [][]byte{a, b} {
				buf := make([]byte, p.Bytes)
				copy(buf, img)
				d, err := p.Decode(buf)
				if err != nil {
					t.Fatal(err)
				}
				ln, finding := decode(d, i, db.Revision)
				if ln.Measured != (ln.Figure != nil) || ln.Measured != (ln.NotMeasured == "") {
					t.Fatalf("%s: measured %v, figure %v, not measured %q", db.Revision, ln.Measured, ln.Figure, ln.NotMeasured)
				}
				builtinLayout := strings.HasSuffix(ln.Selection, "layout")
				if finding != "" && (ln.Measured && !builtinLayout || !strings.HasPrefix(finding, "database finding: ")) {
					t.Fatalf("%s: finding %q with lane %+v", db.Revision, finding, ln)
				}
				if buf[0]>>4 == 0 && ln.Measured {
					t.Fatalf("%s: status 0 measured: %+v", db.Revision, ln)
				}
				if ln.Page != "" && !builtinLayout {
					if _, err := d.Get("page_data." + ln.Page); err != nil {
						t.Fatalf("%s: page %q: %v", db.Revision, ln.Page, err)
					}
				}
				for name, v := range ln.Fields {
					if builtinLayout {
						break
					}
					if pv, err := d.Get("page_data." + ln.Page + "." + name); err == nil {
						if w := pv.Step().Width; w > 1 && w < 64 && v == 1<<w-1 {
							t.Fatalf("%s: field %s holds the all-ones %d as a reading", db.Revision, name, v)
						}
					}
				}
				// The eyes' own widths (8 bits on the 7 nm page, 16 on the
				// 16 nm one); the figure is one of Fields, checked above.
				for _, e := range []*uint64{ln.Upper, ln.Mid, ln.Lower} {
					if e != nil && (*e == 0xff && ln.Page == "slrg_7nm_ext" || *e == 0xffff && ln.Page != "slrg_7nm_ext" && ln.Page != "slrg_40nm_28nm_ext") {
						t.Fatalf("%s: an eye of %s is the all-ones %d", db.Revision, ln.Page, *e)
					}
				}
				if _, err := json.Marshal(ln); err != nil {
					t.Fatal(err)
				}
				rep.Lanes = append(rep.Lanes, ln)
			}
			for _, v := range judge(rep) {
				for _, l := range rep.Lanes {
					if !l.Measured && strings.Contains(v.Summary, "lane "+string(rune('0'+l.Lane))+" ") {
						t.Fatalf("%s: verdict %q names unmeasured lane %d", db.Revision, v.Summary, l.Lane)
					}
				}
			}
		}
	})
}

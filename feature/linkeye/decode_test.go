package linkeye

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/prm"
)

// The older pages, which the emulated ConnectX-7 never answers with: SLRG
// images built by the database's own encoder (field names, never
// offsets) for a 16 nm lane (grade, three PAM4 eye grades, the middle
// eye's height and width), a 16 nm lane whose middle eye grade holds the
// all-ones "no reading" value, and a 28 nm lane (grade, height, width),
// decoded with the built-in database and every revision of the history.
func TestDecodeOlderPages(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	type got struct {
		Page, Figure                   string
		Value, Upper, Mid, Lower, H, W *uint64
		Sentinels                      []string
	}
	const p16, p28 = "page_data.slrg_16nm_ext.", "page_data.slrg_40nm_28nm_ext."
	cases := []struct {
		name string
		set  []string
		want got
	}{
		{"16nm", []string{"version=3", p16 + "grade=900", p16 + "up_eye_grade=300", p16 + "mid_eye_grade=320", p16 + "dn_eye_grade=280",
			p16 + "height_eo_pos_mid=40", p16 + "height_eo_neg_mid=38", p16 + "phase_eo_pos_mid=12", p16 + "phase_eo_neg_mid=11"},
			got{"slrg_16nm_ext", "grade", u(900), u(300), u(320), u(280), u(78), u(23), nil}},
		{"16nm sentinel", []string{"version=3", p16 + "grade=900", p16 + "up_eye_grade=300", p16 + "mid_eye_grade=0xffff", p16 + "dn_eye_grade=280"},
			got{"slrg_16nm_ext", "grade", u(900), u(300), nil, u(280), u(0), u(0), []string{"mid_eye_grade"}}},
		{"28nm", []string{"version=1", p28 + "grade=1234", p28 + "height_eo_pos=20", p28 + "height_eo_neg=21", p28 + "phase_eo_pos=5", p28 + "phase_eo_neg=6"},
			got{"slrg_40nm_28nm_ext", "grade", u(1234), nil, nil, nil, u(41), u(11), nil}},
	}
	check := func(t *testing.T, db *prm.DB) {
		reg, err := db.Register("SLRG")
		if err != nil {
			t.Fatal(err)
		}
		p, err := db.RegisterPlan(reg)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			buf := p.NewBuffer()
			as, err := prm.ParseAssignments(append([]string{"status=1"}, c.set...))
			if err != nil {
				t.Fatal(err)
			}
			// The selector fields first, so that a conditional union
			// resolves its member, then the page.
			if err := p.Encode(buf, as[:2]); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			// Rev 0.51's 16 nm page has no eye grades: what the database
			// lacks is left out, and so is its reading.
			want, kept := c.want, as[:2]
			for _, a := range as[2:] {
				if _, err := p.Resolve(a.Path, buf); err == nil {
					kept = append(kept, a)
				} else if strings.HasSuffix(a.Path, "_eye_grade") {
					want.Upper, want.Mid, want.Lower, want.Sentinels = nil, nil, nil, nil
				}
			}
			if err := p.Encode(buf, kept); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			d, err := p.Decode(buf)
			if err != nil {
				t.Fatal(err)
			}
			ln, finding := decode(d, 0, db.Revision)
			if finding != "" || !ln.Measured {
				t.Fatalf("%s %s: %q, %+v", db.Revision, c.name, finding, ln)
			}
			g := got{ln.Page, ln.FigureName, ln.Figure, ln.Upper, ln.Mid, ln.Lower, ln.HeightTicks, ln.WidthTicks, ln.Sentinels}
			if d := cmp.Diff(want, g); d != "" {
				t.Errorf("%s %s (-want +got):\n%s", db.Revision, c.name, d)
			}
		}
	}
	t.Run("builtin", func(t *testing.T) { check(t, devtest.DB(t)) })
	devtest.EachRevision(t, check)
}

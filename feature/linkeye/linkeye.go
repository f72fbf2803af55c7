// Package linkeye reads each lane's receive eye the way mlxlink's
// --show_eye does, from SLRG (serdes lane receive grade), and judges the
// lanes of a port against each other: a lane whose eye is much smaller
// than its neighbours' is named.
//
// SLRG's page_data is a union whose member depends on the SerDes
// generation (version) and the port type. From PRM Rev 0.59 on the
// database says which member applies (conditional union members); the
// decode picks it and this package reads that member. Rev 0.51 to 0.57
// give no selector: every member is decoded, and the member is picked
// from SLRG.version by the PRM's own table of versions (the version
// field's description; Rev 0.59's conditions map the same way).
package linkeye

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/regpath"
)

// Degraded is the share of the best lane's figure below which a lane's eye
// is judged degraded. The lanes of one port share the module, the cable
// and the partner, so they are alike on a healthy link; the firmware's
// units differ by SerDes generation, so the comparison is between lanes of
// one reading, never against a fixed number.
const Degraded = 2.0 / 3

// Below says a lane's figure is degraded next to the best lane's of the
// same port: 0 (a closed eye), or under Degraded of the best.
func Below(figure, best uint64) bool {
	return figure == 0 || float64(figure) < Degraded*float64(best)
}

// Options choose the lanes; nil is every lane of the port.
type Options struct {
	Lanes []int
}

// Lane is one lane's eye.
type Lane struct {
	Lane int `json:"lane"`
	// Measured is SLRG.status valid with a page the database decodes;
	// otherwise NotMeasured says why and no number is a reading.
	Measured    bool   `json:"measured"`
	NotMeasured string `json:"not_measured,omitempty"`
	// Version is SLRG.version (its enum name where the database has one).
	Version string `json:"version,omitempty"`
	// Page is the page_data member read, by the database's name, and
	// Selection how it was chosen: "database" (the union's conditions) or
	// "version" (the database gives none), with ", with the built-in ...
	// layout" when the decoding database lacks the page.
	Page      string `json:"page,omitempty"`
	Selection string `json:"selection,omitempty"`
	// Fields are the page's numbers by the database's names; Sentinels
	// the fields holding all ones (no reading).
	Fields    map[string]uint64 `json:"fields,omitempty"`
	Sentinels []string          `json:"sentinels,omitempty"`
	// Upper, Mid, Lower are the three PAM4 eyes (7 nm and later: the
	// EOM figure of merit of each; 16 nm: each eye's grade).
	Upper *uint64 `json:"upper_eye,omitempty"`
	Mid   *uint64 `json:"mid_eye,omitempty"`
	Lower *uint64 `json:"lower_eye,omitempty"`
	// HeightTicks and WidthTicks are the (middle) eye's opening, the
	// offsets from its centre to either side added (16 nm and older).
	HeightTicks *uint64 `json:"height_ticks,omitempty"`
	WidthTicks  *uint64 `json:"width_ticks,omitempty"`
	// Figure is the number lanes are compared by (FigureName: last_fom,
	// the composite eye's figure of merit, or grade).
	Figure     *uint64 `json:"figure,omitempty"`
	FigureName string  `json:"figure_name,omitempty"`
}

// Report is one port's eyes.
type Report struct {
	Port     int    `json:"port"`
	Protocol string `json:"protocol,omitempty"`
	Lanes    []Lane `json:"lanes"`
	// DatabaseFindings are what the register database could not decode:
	// never a hardware fault.
	DatabaseFindings []string       `json:"database_findings,omitempty"`
	Verdicts         []link.Verdict `json:"verdicts"`
}

// Document is `cxray link --show_eye -o json`.
type Document struct {
	Device         string  `json:"device"`
	Backend        string  `json:"backend"`
	SourceRevision string  `json:"source_revision"`
	Eye            *Report `json:"eye"`
}

// versionPage is SLRG.version's page for the network port where the
// database names no selector (the version field's description: 0 40 nm,
// 1 28 nm, 3 16 nm, 4 7 nm, 5 5 nm, read with the 7 nm page as Rev 0.59's
// conditions do).
var versionPage = map[uint64]string{0: "slrg_40nm_28nm_ext", 1: "slrg_40nm_28nm_ext", 3: "slrg_16nm_ext", 4: "slrg_7nm_ext", 5: "slrg_7nm_ext"}

// figureNames are the fields a lane is compared by, first present wins.
var figureNames = []string{"last_fom", "grade"}

// eyeNames are the per-eye fields: upper, mid, lower, by generation.
var eyeNames = [][3]string{{"upper_eye", "mid_eye", "lower_eye"}, {"up_eye_grade", "mid_eye_grade", "dn_eye_grade"}}

// ErrLane is a lane the port does not have.
var ErrLane = errors.New("no such lane")

// Read reads the eye of the lanes of port local.
func Read(ctx context.Context, ad *adapter.Adapter, local int, o Options) (*Report, error) {
	if !ad.HasRegisters() {
		return nil, fmt.Errorf("the eye is read from SLRG, a register the kernel backend does not reach; use -d with a PCI address: %w", prm.ErrInput)
	}
	p, err := ad.Port(ctx, local)
	if err != nil {
		return nil, err
	}
	lanes := max(min(p.Lanes, 8), 1)
	want := o.Lanes
	if want == nil {
		for l := 0; l < lanes; l++ {
			want = append(want, l)
		}
	}
	for _, l := range want {
		if l < 0 || l >= lanes {
			return nil, fmt.Errorf("lane %d: port %d has lanes 0..%d: %w: %w", l, local, lanes-1, ErrLane, prm.ErrInput)
		}
	}
	if _, err := ad.DB().Register("SLRG"); err != nil {
		return nil, fmt.Errorf("database finding: %s has no SLRG, so no eye can be read with it; give another database (--adb): %w", ad.DB().Revision, prm.ErrInput)
	}
	r := &Report{Port: local, Protocol: p.LinkLayer, Verdicts: []link.Verdict{}}
	for _, l := range want {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		idx := adapter.LocalPort(local).With("lane", uint64(l))
		idx = idx.Join(link.OptionalIndex(ad.DB(), "SLRG", adapter.LocalPort(local)))
		x, err := ad.ReadRegister(ctx, "SLRG", idx)
		if err != nil {
			return nil, fmt.Errorf("port %d lane %d SLRG: %w", local, l, err)
		}
		ln, finding := decode(x.Decoded, l, ad.DB().Revision)
		if finding != "" && !slices.Contains(r.DatabaseFindings, finding) {
			r.DatabaseFindings = append(r.DatabaseFindings, finding)
		}
		r.Lanes = append(r.Lanes, ln)
	}
	r.Verdicts = judge(r)
	return r, nil
}

// decode reads one lane from an SLRG reading. A page the decoding
// database lacks (Rev 0.51 has no 7 nm page) is a database finding; the
// same bytes are then read with the built-in database's layout, as dev
// reads a register an older database lacks, and the lane says so (its
// Selection); where that has no page either, the lane is not measured.
func decode(d *prm.Decoded, lane int, rev string) (Lane, string) {
	ln, finding, missing := decodeIn(d, lane, rev)
	ref := adapter.Reference()
	if !missing || ref == nil || d.Plan == nil || d.Plan.DB == ref {
		return ln, finding
	}
	r, err := ref.Register("SLRG")
	if err != nil {
		return ln, finding
	}
	p, err := ref.RegisterPlan(r)
	if err != nil {
		return ln, finding
	}
	buf := make([]byte, max(p.Bytes, len(d.Raw)))
	copy(buf, d.Raw)
	rd, err := p.Decode(buf)
	if err != nil {
		return ln, finding
	}
	if l2, _, miss2 := decodeIn(rd, lane, ref.Revision); !miss2 {
		l2.Selection += ", with the built-in " + ref.Revision + " layout"
		return l2, finding + fmt.Sprintf("; read with the built-in database's (%s) layout", ref.Revision)
	}
	return ln, finding
}

// decodeIn reads one lane with the database that decoded d; missing says
// the database has no page for it.
func decodeIn(d *prm.Decoded, lane int, rev string) (Lane, string, bool) {
	ln := Lane{Lane: lane}
	ver, _ := adapter.FieldOf(d, "SLRG", regpath.SLRGVersion)
	ln.Version = strconv.FormatUint(ver, 10)
	if v, err := d.Get("version"); err == nil {
		if n, ok := v.EnumName(); ok {
			ln.Version = n
		}
	}
	st, _ := adapter.FieldOf(d, "SLRG", regpath.SLRGStatus)
	if st == 0 {
		ln.NotMeasured = "SLRG status invalid: no signal measured on this lane (a lane the link did not train, or a link down)"
		return ln, "", false
	}
	u, err := d.Get("page_data")
	if err != nil {
		ln.NotMeasured = "the database's SLRG has no page_data"
		return ln, fmt.Sprintf("database finding: %s SLRG has no page_data union; the eye cannot be decoded with it", rev), true
	}
	var page prm.Value
	switch m := u.Member(); m {
	case prm.MemberNone:
		ln.NotMeasured = "the database describes no page for this SerDes version"
		return ln, fmt.Sprintf("database finding: %s SLRG selects no page_data member for version %s on a network port; give a newer database (--adb)", rev, ln.Version), true
	case prm.MemberAll:
		name, ok := versionPage[ver]
		found := false
		for i := 0; ok && i < u.Len(); i++ {
			if k := u.Kid(i); k.Name() == name {
				page, found = k, true
			}
		}
		if !found {
			ln.NotMeasured = "the database has no page for this SerDes version"
			return ln, fmt.Sprintf("database finding: %s SLRG has no page for version %s; give a newer database (--adb)", rev, ln.Version), true
		}
		ln.Selection = "version"
	default:
		page = u.Kid(0)
		ln.Selection = "database"
	}
	ln.Page = page.Name()
	ln.Fields = map[string]uint64{}
	for i := 0; i < page.Len(); i++ {
		k := page.Kid(i)
		if k.Kind() != prm.KindUint {
			continue
		}
		w := k.Step().Width
		if w > 1 && w < 64 && k.Uint() == 1<<w-1 {
			ln.Sentinels = append(ln.Sentinels, k.Name())
			continue
		}
		ln.Fields[k.Name()] = k.Uint()
	}
	get := func(n string) *uint64 {
		if v, ok := ln.Fields[n]; ok {
			return &v
		}
		return nil
	}
	// The eyes the page has, each read apart: one holding all ones is
	// no reading, the others still are.
	for _, e := range eyeNames {
		if get(e[0]) != nil || get(e[1]) != nil || get(e[2]) != nil {
			ln.Upper, ln.Mid, ln.Lower = get(e[0]), get(e[1]), get(e[2])
			break
		}
	}
	ln.HeightTicks = sum(get, "height_eo_pos_mid", "height_eo_neg_mid")
	if ln.HeightTicks == nil {
		ln.HeightTicks = sum(get, "height_eo_pos", "height_eo_neg")
	}
	ln.WidthTicks = sum(get, "phase_eo_pos_mid", "phase_eo_neg_mid")
	if ln.WidthTicks == nil {
		ln.WidthTicks = sum(get, "phase_eo_pos", "phase_eo_neg")
	}
	for _, n := range figureNames {
		if v := get(n); v != nil {
			ln.Figure, ln.FigureName = v, n
			break
		}
	}
	if ln.Figure == nil {
		ln.NotMeasured = "the page holds no figure of merit or grade (or only the all-ones 'no reading' value)"
		return ln, "", false
	}
	ln.Measured = true
	return ln, "", false
}

func sum(get func(string) *uint64, a, b string) *uint64 {
	x, y := get(a), get(b)
	if x == nil || y == nil {
		return nil
	}
	s := *x + *y
	return &s
}

// judge names the lanes whose eye is closed, or much smaller than the
// best lane's of the same port.
func judge(r *Report) []link.Verdict {
	var best uint64
	name := ""
	for _, l := range r.Lanes {
		if l.Measured && *l.Figure > best {
			best, name = *l.Figure, l.FigureName
		}
	}
	vs := []link.Verdict{}
	var closed, small []string
	var ev []string
	for _, l := range r.Lanes {
		if !l.Measured || l.FigureName != name {
			continue
		}
		f := *l.Figure
		switch {
		case f == 0:
			closed = append(closed, strconv.Itoa(l.Lane))
			ev = append(ev, fmt.Sprintf("lane %d %s 0 (%s page)", l.Lane, name, l.Page))
		case Below(f, best):
			small = append(small, strconv.Itoa(l.Lane))
			ev = append(ev, fmt.Sprintf("lane %d %s %d, the best lane's %d (below %.0f%%)", l.Lane, name, f, best, Degraded*100))
		}
	}
	if len(closed) == 0 && len(small) == 0 {
		return vs
	}
	what := "lane " + strings.Join(append(closed, small...), ", ")
	summary := fmt.Sprintf("the receive eye of %s is much smaller than the other lanes' of port %d", what, r.Port)
	if best == 0 {
		summary = fmt.Sprintf("the receive eye of every measured lane of port %d is closed", r.Port)
	} else if len(small) == 0 {
		summary = fmt.Sprintf("the receive eye of %s of port %d is closed", what, r.Port)
	}
	return append(vs, link.Verdict{
		Code: "eye_degraded_lane", Category: link.CategorySignal, Summary: summary, Evidence: ev,
		NextStep: "reseat or swap the cable or module to see whether the lane follows it; clean the connector; compare the lane's raw errors (cxray link --counters) and run a PRBS test on the lane",
	})
}

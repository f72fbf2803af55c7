// Package caps reads a function's capability pages (QUERY_HCA_CAP, one
// page per capability type: general, e-switch, RoCE, NVMe-oF ...) with the
// command interface of a dev.Device, decodes them with the command
// database's layouts (prm/cmdb), and compares two reports field by field:
// two devices, or a device and a report saved as JSON.
//
// Each page is read twice, as the PRM offers it: the maximum the device
// supports (op_mod type<<1) and the current value (type<<1 | 1), which the
// driver may have lowered with SET_HCA_CAP.
package caps

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/cmdb"
)

// DefaultTypes are the pages read when none are asked for.
var DefaultTypes = []string{"general", "eswitch", "roce", "nvmf"}

// Options tune Read.
type Options struct {
	// Types are capability type names or values (cmdb.DB.CapType reads
	// them); nil: DefaultTypes; "all": every type with a known layout.
	Types []string
	// All keeps fields that are zero in both the maximum and the current
	// page (they are left out otherwise).
	All bool
}

// Report is the capability pages of one function.
type Report struct {
	Device string `json:"device"`
	// Layouts names the layout source (mlx5_ifc.h of which kernel).
	Layouts string `json:"layouts"`
	Pages   []Page `json:"pages"`
}

// Page is one capability type.
type Page struct {
	Type   string `json:"type"` // GENERAL, ESWITCH ...
	Value  uint16 `json:"value"`
	Layout string `json:"layout"` // cmd_hca_cap, e_switch_cap ...
	// Error says why the page could not be read (the firmware's status,
	// or a capability that rules it out); Fields is then empty.
	Error  string  `json:"error,omitempty"`
	Fields []Field `json:"fields"`
}

// Field is one capability, current and maximum.
type Field struct {
	Path    string `json:"path"`
	Current uint64 `json:"current"`
	Max     uint64 `json:"max"`
	// Text is the current value as a person reads it: the number, an enum
	// name, or hex bytes for fields wider than 64 bits (Current and Max
	// are then 0).
	Text    string `json:"text"`
	MaxText string `json:"max_text"`
}

// Field returns a page's field by path.
func (p *Page) Field(path string) (Field, bool) {
	for _, f := range p.Fields {
		if f.Path == path {
			return f, true
		}
	}
	return Field{}, false
}

// Page returns a page of the report by type name (case-insensitive).
func (r *Report) Page(typ string) *Page {
	for i := range r.Pages {
		if strings.EqualFold(r.Pages[i].Type, typ) {
			return &r.Pages[i]
		}
	}
	return nil
}

// Read reads the pages of d. A page the firmware refuses is reported
// with its error; only a failure to run commands at all (no command
// interface, the device gone) fails the whole read.
func Read(ctx context.Context, d *dev.Device, o Options) (*Report, error) {
	db, err := cmdb.Load()
	if err != nil {
		return nil, err
	}
	types, err := resolveTypes(db, o.Types)
	if err != nil {
		return nil, err
	}
	rep := &Report{Device: d.Name, Layouts: db.Revision, Pages: []Page{}}
	var general *Page
	for _, ct := range types {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pg := Page{Type: ct.Name, Value: ct.Value, Layout: ct.Node, Fields: []Field{}}
		if ct.Node == "" {
			pg.Error = "no source cxray has describes this page's layout"
			rep.Pages = append(rep.Pages, pg)
			continue
		}
		if ct.Name == "NVMF" && general != nil && general.Error == "" {
			if f, _ := general.Field("nvmf_target_offload"); f.Current == 0 {
				pg.Error = "no NVMe-oF target offload on this function (cmd_hca_cap.nvmf_target_offload is 0)"
				rep.Pages = append(rep.Pages, pg)
				continue
			}
		}
		var pages [2]*prm.Decoded
		for mode := range pages {
			p, err := readPage(ctx, d, db, ct, mode == 1)
			if err != nil {
				if !dev.IsRefused(err) && !dev.IsCommandStatus(err) {
					return nil, err
				}
				pg.Error = err.Error()
				break
			}
			pages[mode] = p
		}
		if pg.Error == "" {
			pg.Fields = fields(pages[1], pages[0], o.All)
		}
		rep.Pages = append(rep.Pages, pg)
		if ct.Name == "GENERAL" {
			general = &rep.Pages[len(rep.Pages)-1]
		}
	}
	return rep, nil
}

func resolveTypes(db *cmdb.DB, names []string) ([]cmdb.CapType, error) {
	if len(names) == 0 {
		names = DefaultTypes
	}
	if len(names) == 1 && strings.EqualFold(names[0], "all") {
		var out []cmdb.CapType
		for _, c := range db.CapTypes {
			if c.Node != "" {
				out = append(out, c)
			}
		}
		return out, nil
	}
	var out []cmdb.CapType
	seen := map[uint16]bool{}
	for _, n := range names {
		c, err := db.CapType(n)
		if err != nil {
			return nil, err
		}
		if !seen[c.Value] {
			seen[c.Value] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// readPage runs QUERY_HCA_CAP for one type and decodes the page from the
// capability union's bytes with the type's own layout.
func readPage(ctx context.Context, d *dev.Device, db *cmdb.DB, ct cmdb.CapType, cur bool) (*prm.Decoded, error) {
	opMod := uint64(ct.Value) << 1
	if cur {
		opMod |= 1
	}
	r, err := d.RunCommand(ctx, "QUERY_HCA_CAP", []prm.Assignment{{Path: "op_mod", Value: fmt.Sprint(opMod)}})
	if err != nil {
		return nil, err
	}
	p, err := db.Plan(ct.Node)
	if err != nil {
		return nil, err
	}
	t, err := r.Decoded.Plan.Resolve("capability", r.Decoded.Raw)
	if err != nil {
		return nil, err
	}
	start := t.Bit / 8
	raw := r.Decoded.Raw[start:min(len(r.Decoded.Raw), start+p.Bytes)]
	if len(raw) < p.Bytes {
		raw = append(append([]byte(nil), raw...), make([]byte, p.Bytes-len(raw))...)
	}
	return p.Decode(raw)
}

// fields lists the page's leaves, current and maximum side by side.
func fields(cur, max *prm.Decoded, all bool) []Field {
	maxRows := map[string]prm.Row{}
	for _, r := range max.Rows() {
		maxRows[r.Path] = r
	}
	out := []Field{}
	for _, r := range cur.Rows() {
		if r.Value.Kind() == prm.KindJoined {
			continue // its halves are listed
		}
		m := maxRows[r.Path]
		f := Field{Path: r.Path, Text: text(r), MaxText: text(m)}
		if r.Value.Kind() == prm.KindUint {
			f.Current, f.Max = r.Value.Uint(), m.Value.Uint()
		}
		if !all && f.Current == 0 && f.Max == 0 && isZeroText(f.Text) && isZeroText(f.MaxText) {
			continue
		}
		out = append(out, f)
	}
	return out
}

func text(r prm.Row) string {
	if r.Value.Kind() == prm.KindUint {
		return prm.FormatValue(r.Value)
	}
	if raw := r.Value.Raw(); raw != nil {
		return "0x" + hex.EncodeToString(raw)
	}
	return r.Text
}

func isZeroText(s string) bool { return strings.Trim(s, "0x\"") == "" }

// Save writes the report as JSON, for a later Diff.
func (r *Report) Save(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Load reads a report Save wrote (or `cxray caps -o json` printed).
func Load(rd io.Reader) (*Report, error) {
	var r Report
	dec := json.NewDecoder(io.LimitReader(rd, 64<<20))
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("caps: not a capability report (JSON as `cxray caps -o json` writes it): %v", err)
	}
	if r.Pages == nil {
		return nil, fmt.Errorf("caps: the JSON has no \"pages\"; is it a capability report?")
	}
	for i, p := range r.Pages {
		if p.Type == "" {
			return nil, fmt.Errorf("caps: page %d has no type", i)
		}
	}
	return &r, nil
}

// Change is one capability that differs between two reports.
type Change struct {
	Type string `json:"type"`
	Path string `json:"path"`
	// Old and New are the current values on each side (as text), OldMax
	// and NewMax the maximums; "" when the page is missing on that side.
	Old    string `json:"old"`
	New    string `json:"new"`
	OldMax string `json:"old_max"`
	NewMax string `json:"new_max"`
}

// MarshalJSON writes a change as the table shows it: the type in lower
// case (general), and each value a number when it is one (a JSON reader
// compares numbers, not "0" and "1"); enum names, hex bytes and page
// states stay text, and a side without the value is null.
func (c Change) MarshalJSON() ([]byte, error) {
	val := func(s string) any {
		if s == "" {
			return nil
		}
		if n, err := strconv.ParseUint(s, 10, 64); err == nil && n <= 1<<53 {
			return n // above 2^53 a decimal string, as every cxray JSON number
		}
		return s
	}
	return json.Marshal(struct {
		Type   string `json:"type"`
		Path   string `json:"path"`
		Old    any    `json:"old"`
		New    any    `json:"new"`
		OldMax any    `json:"old_max"`
		NewMax any    `json:"new_max"`
	}{strings.ToLower(c.Type), c.Path, val(c.Old), val(c.New), val(c.OldMax), val(c.NewMax)})
}

// Diff compares two reports: every field of every page either has, with a
// field missing on one side read as zero (a report leaves zeros out), and
// pages one side could not read.
func Diff(a, b *Report) []Change {
	var out []Change
	types := map[string]bool{}
	for _, r := range []*Report{a, b} {
		for _, p := range r.Pages {
			types[p.Type] = true
		}
	}
	var names []string
	for t := range types {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		pa, pb := a.Page(t), b.Page(t)
		switch {
		case pa == nil || pb == nil || (pa.Error != "") != (pb.Error != ""):
			out = append(out, Change{Type: t, Path: "(page)", Old: pageState(pa), New: pageState(pb)})
			continue
		case pa.Error != "":
			continue // unreadable on both sides
		}
		paths := map[string]bool{}
		for _, f := range pa.Fields {
			paths[f.Path] = true
		}
		for _, f := range pb.Fields {
			paths[f.Path] = true
		}
		var ps []string
		for p := range paths {
			ps = append(ps, p)
		}
		sort.Strings(ps)
		for _, p := range ps {
			fa, _ := pa.Field(p)
			fb, _ := pb.Field(p)
			if fa.Current != fb.Current || fa.Max != fb.Max || norm(fa.Text) != norm(fb.Text) || norm(fa.MaxText) != norm(fb.MaxText) {
				out = append(out, Change{Type: t, Path: p, Old: orZero(fa.Text), New: orZero(fb.Text), OldMax: orZero(fa.MaxText), NewMax: orZero(fb.MaxText)})
			}
		}
	}
	return out
}

func pageState(p *Page) string {
	switch {
	case p == nil:
		return "(not read)"
	case p.Error != "":
		return "unreadable: " + p.Error
	}
	return fmt.Sprintf("%d fields", len(p.Fields))
}

func norm(s string) string {
	if isZeroText(s) {
		return ""
	}
	return s
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// Rows lays the report out as a table: a header, then one row per field
// (the maximum only when it differs from the current value), and one row
// per unreadable page with the reason.
func (r *Report) Rows() [][]string {
	rows := [][]string{{"TYPE", "FIELD", "CURRENT", "MAX"}}
	for _, p := range r.Pages {
		name := strings.ToLower(p.Type)
		if p.Error != "" {
			rows = append(rows, []string{name, "-", "not read: " + p.Error, ""})
			continue
		}
		for _, f := range p.Fields {
			max := f.MaxText
			if max == f.Text {
				max = "="
			}
			rows = append(rows, []string{name, f.Path, f.Text, max})
		}
	}
	return rows
}

// DiffRows lays changes out as a table.
func DiffRows(cs []Change) [][]string {
	rows := [][]string{{"TYPE", "FIELD", "OLD", "NEW", "OLD MAX", "NEW MAX"}}
	for _, c := range cs {
		rows = append(rows, []string{strings.ToLower(c.Type), c.Path, c.Old, c.New, c.OldMax, c.NewMax})
	}
	return rows
}

package snapshot

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cxray/cxray/internal/lazyre"
	"github.com/cxray/cxray/prm/units"
)

// Change is one field that differs between two snapshots, or one that
// appeared, disappeared, or went stale.
type Change struct {
	Device   string `json:"device"`
	Register string `json:"register"` // the instance key, PAOS[local_port=1]
	Path     string `json:"path"`
	// OldPath is set when the field was matched by position across PRM
	// revisions (renamed).
	OldPath string `json:"old_path,omitempty"`
	Class   string `json:"class,omitempty"`
	// Old and New are the recorded values: numbers (raw, as the register
	// holds them) or text. OldText and NewText are what people read: the
	// enum name, the text, the value in its unit ("50.75 °C").
	Old     any    `json:"old,omitempty"`
	New     any    `json:"new,omitempty"`
	OldText string `json:"old_text,omitempty"`
	NewText string `json:"new_text,omitempty"`
	// Unit is the unit of the texts and of Delta, for fields that have one.
	Unit string `json:"unit,omitempty"`
	// Delta is new - old for plain numbers (in Unit when there is one;
	// never for enums, text, dates); Rate is Delta per second for
	// counters.
	Delta *float64 `json:"delta,omitempty"`
	Rate  *float64 `json:"rate_per_s,omitempty"`
	Note  string   `json:"note,omitempty"`
}

// macOrGUID matches the texts of joined MACs and GUIDs: for them the text
// is the value people compare, not the 48- or 64-bit number.
var macOrGUID = lazyre.New(`^([0-9a-f]{2}(:[0-9a-f]{2}){5}|[0-9a-f]{4}(:[0-9a-f]{4}){3})$`)

// fieldVal is a recorded field's value as JSON shows it in a diff: the
// number (a string of digits above 2^53), the text, or a MAC or GUID as
// written.
func fieldVal(f *Field) any {
	if f.Value.IsNum && macOrGUID.MatchString(f.Text) {
		return f.Text
	}
	return jsonVal(f.Value)
}

// jsonVal is a recorded value as JSON shows it in a diff: a number or a
// string of digits above 2^53, or the text.
func jsonVal(v Val) any {
	if !v.IsNum {
		return v.S
	}
	if v.N >= 1<<53 {
		return strconv.FormatUint(v.N, 10)
	}
	return v.N
}

// reading is a field value as people read it: the text and, for plain
// numbers, the number to subtract (signed where the field is).
type reading struct {
	text string
	num  *float64
	unit string
}

// read renders a recorded field of register reg: in its unit when it has
// one (°C for temperatures), else the text cxray showed; a number only for
// plain numbers, not for enums ("up (1)"), text or BCD dates.
func read(reg string, f *Field) reading {
	r := reading{text: f.Value.String()}
	if f.Text != "" {
		r.text = f.Text
	}
	if !f.Value.IsNum {
		return r
	}
	if u, ok := units.Lookup(reg, f.Path); ok && f.Width > 0 && f.Width <= 64 {
		s := u.Apply(f.Value.N, f.Width)
		r.text, r.unit = s.String(), s.Unit
		r.num = &s.Value
		return r
	}
	if n, ok := plainNumber(f); ok {
		r.num = &n
	}
	return r
}

// plainNumber: the value is shown as a number ("5", "0x1021 (4129)",
// "0xfff6 (-10)"), not as a name, text, or a reading in other digits.
func plainNumber(f *Field) (float64, bool) {
	t := f.Text
	if t == "" || t == strconv.FormatUint(f.Value.N, 10) {
		return float64(f.Value.N), true
	}
	hexPart, dec, ok := strings.Cut(t, " (")
	if !ok || !strings.HasPrefix(hexPart, "0x") || !strings.HasSuffix(dec, ")") {
		return 0, false
	}
	if h, err := strconv.ParseUint(hexPart[2:], 16, 64); err != nil || h != f.Value.N {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(dec, ")"), 10, 64)
	if err != nil {
		if u, err := strconv.ParseUint(strings.TrimSuffix(dec, ")"), 10, 64); err == nil {
			return float64(u), true
		}
		return 0, false
	}
	return float64(n), true
}

// Meta describes one side of a diff.
type Meta struct {
	Created     time.Time `json:"created"`
	Host        string    `json:"host"`
	PRMRevision string    `json:"prm_revision"`
	Samples     int       `json:"samples"`
}

// Report is the result of Diff.
type Report struct {
	Base Meta `json:"base"`
	New  Meta `json:"new"`
	// Notes call out what changed around the registers: firmware, driver,
	// PRM revision, devices present in one snapshot only.
	Notes []string `json:"notes"`
	// Vanished are devices, registers (ports, modules, sensors) present
	// and readable in the baseline that are missing or unreadable now: a
	// finding, listed before every value change.
	Vanished    []Change `json:"vanished"`
	Static      []Change `json:"static_changes"`
	Stale       []Change `json:"stale"`
	Dynamic     []Change `json:"dynamic_changes"`
	Counters    []Change `json:"counters"`
	Appeared    []Change `json:"appeared"`
	Disappeared []Change `json:"disappeared"`
	Errors      []string `json:"errors"`
}

// Problems says whether the diff found something wrong: something
// vanished, a static value changed, or a value that should move is stale.
func (r *Report) Problems() bool { return len(r.Vanished)+len(r.Static)+len(r.Stale) > 0 }

// Diff compares a baseline with a newer snapshot.
func Diff(base, new *File, rules Rules) *Report {
	if rules == nil {
		rules = DefaultRules()
	}
	r := &Report{
		Base:  Meta{base.Created, base.Host, base.PRMRevision, base.Samples},
		New:   Meta{new.Created, new.Host, new.PRMRevision, new.Samples},
		Notes: []string{}, Vanished: []Change{}, Static: []Change{}, Stale: []Change{}, Dynamic: []Change{}, Counters: []Change{},
		Appeared: []Change{}, Disappeared: []Change{}, Errors: []string{},
	}
	crossRev := base.PRMRevision != new.PRMRevision
	if crossRev {
		r.Notes = append(r.Notes, fmt.Sprintf("PRM database changed: %s → %s; fields are matched by name, then by position (renames are shown)", base.PRMRevision, new.PRMRevision))
	}
	newDevs := map[string]*Device{}
	for i := range new.Devices {
		newDevs[devKey(&new.Devices[i])] = &new.Devices[i]
	}
	seen := map[string]bool{}
	for i := range base.Devices {
		bd := &base.Devices[i]
		k := devKey(bd)
		nd := newDevs[k]
		if nd == nil {
			r.Vanished = append(r.Vanished, Change{Device: k, Note: "the device is in the baseline but not in the new snapshot"})
			continue
		}
		if bd.Error == "" && nd.Error != "" {
			r.Vanished = append(r.Vanished, Change{Device: k, Note: "the device was read in the baseline and could not be read now: " + nd.Error})
			seen[k] = true
			continue
		}
		seen[k] = true
		r.diffDevice(bd, nd, rules)
	}
	for k := range newDevs {
		if !seen[k] {
			r.Notes = append(r.Notes, fmt.Sprintf("device %s is only in the new snapshot", k))
		}
	}
	for _, d := range new.Devices {
		r.stale(&d, rules)
	}
	return r
}

func devKey(d *Device) string {
	if d.BDF != "" {
		return d.BDF
	}
	return d.Name
}

func (r *Report) diffDevice(b, n *Device, rules Rules) {
	dk := devKey(n)
	note := func(what, old, new string) {
		if old != new {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: %s changed: %s → %s", dk, what, orNone(old), orNone(new)))
		}
	}
	note("firmware", b.Identity.Firmware, n.Identity.Firmware)
	note("driver", b.Driver, n.Driver)
	note("PSID", b.Identity.PSID, n.Identity.PSID)
	r.diffExtras(dk, b, n)
	newRegs := map[string]*Register{}
	for i := range n.Registers {
		newRegs[n.Registers[i].Key] = &n.Registers[i]
	}
	for i := range b.Registers {
		br := &b.Registers[i]
		nr := newRegs[br.Key]
		switch {
		case nr == nil:
			r.Vanished = append(r.Vanished, Change{Device: dk, Register: br.Key, Note: "in the baseline, not in the new snapshot"})
			continue
		case br.Error != "" && nr.Error != "":
			delete(newRegs, br.Key)
			continue
		case br.Error != "":
			r.Errors = append(r.Errors, fmt.Sprintf("%s %s: unreadable in the baseline (%s)", dk, br.Key, br.Error))
			delete(newRegs, br.Key)
			continue
		case nr.Error != "":
			r.Vanished = append(r.Vanished, Change{Device: dk, Register: br.Key, Note: "readable in the baseline, unreadable now: " + nr.Error})
			delete(newRegs, br.Key)
			continue
		}
		r.diffRegister(dk, br, nr)
		delete(newRegs, br.Key)
	}
	keys := make([]string, 0, len(newRegs))
	for k := range newRegs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r.Appeared = append(r.Appeared, Change{Device: dk, Register: k, Note: "register not in the baseline"})
	}
}

func (r *Report) diffRegister(dk string, b, n *Register) {
	nf := map[string]*Field{}
	for i := range n.Fields {
		nf[n.Fields[i].Path] = &n.Fields[i]
	}
	var lostOld []*Field
	for i := range b.Fields {
		bf := &b.Fields[i]
		if f := nf[bf.Path]; f != nil {
			r.compare(dk, b, n, bf, f, "")
			delete(nf, bf.Path)
			continue
		}
		lostOld = append(lostOld, bf)
	}
	// Renamed across revisions: same position and width.
	for _, bf := range lostOld {
		var match *Field
		for _, f := range nf {
			if f.Bit == bf.Bit && f.Width == bf.Width {
				match = f
				break
			}
		}
		if match != nil {
			r.compare(dk, b, n, bf, match, bf.Path)
			delete(nf, match.Path)
			continue
		}
		r.Disappeared = append(r.Disappeared, Change{Device: dk, Register: b.Key, Path: bf.Path, Class: bf.Class, Old: fieldVal(bf), OldText: read(b.Register, bf).text})
	}
	paths := make([]string, 0, len(nf))
	for p := range nf {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		f := nf[p]
		r.Appeared = append(r.Appeared, Change{Device: dk, Register: n.Key, Path: p, Class: f.Class, New: fieldVal(f), NewText: read(n.Register, f).text})
	}
}

func (r *Report) compare(dk string, br, nr *Register, b, n *Field, oldPath string) {
	class := b.Class
	if n.Class != Static && class == Static {
		class = n.Class // learned or newer rules say it moves
	}
	if b.Value.Equal(n.Value) || n.Half {
		return
	}
	ob, nw := read(br.Register, b), read(nr.Register, n)
	c := Change{Device: dk, Register: nr.Key, Path: n.Path, OldPath: oldPath, Class: class,
		Old: fieldVal(b), New: fieldVal(n), OldText: ob.text, NewText: nw.text, Unit: nw.unit}
	if ob.num != nil && nw.num != nil && ob.unit == nw.unit {
		d := *nw.num - *ob.num
		if nw.unit != "" {
			d = math.Round(d*1e6) / 1e6 // no float noise from the units' scales
		}
		c.Delta = &d
	}
	switch class {
	case Static:
		r.Static = append(r.Static, c)
	case Counter:
		if c.Delta != nil {
			if *c.Delta < 0 {
				c.Note = "went down: the counter was cleared or wrapped"
			} else if dt := lastTime(nr).Sub(lastTime(br)).Seconds(); dt > 0 {
				rate := *c.Delta / dt
				c.Rate = &rate
			}
		}
		r.Counters = append(r.Counters, c)
	default:
		r.Dynamic = append(r.Dynamic, c)
	}
}

func lastTime(r *Register) time.Time {
	if len(r.Times) == 0 {
		return time.Time{}
	}
	return r.Times[len(r.Times)-1]
}

// stale flags values that should move but did not across the samples of
// one snapshot. Which fields should move comes from the snapshot and from
// the rules in use (so a snapshot taken before a rule existed is judged by
// it too). When the device's own clock (MGIR's uptime) stood still over
// the samples, only that is flagged: nothing else could move (an emulator
// on a manual clock, or firmware that stopped).
func (r *Report) stale(d *Device, rules Rules) {
	type judged struct {
		rule  Rule
		group string
	}
	motion := func(reg *Register, f *Field) (judged, bool) {
		rule, ok := rules.Lookup(reg.Register, f.Path)
		if !f.ExpectMotion && !(ok && rule.ExpectMotion) {
			return judged{}, false
		}
		g := f.MotionGroup
		if g == "" && ok {
			g = rule.Group
		}
		return judged{rule, g}, true
	}
	still := false
	for _, reg := range d.Registers {
		if reg.Register != "MGIR" || len(reg.Times) < 3 {
			continue
		}
		for _, f := range reg.Fields {
			if f.Path == "hw_info.uptime" && len(f.Values) >= 3 && unchanged(f.Values) {
				still = true
			}
		}
	}
	for _, reg := range d.Registers {
		if len(reg.Times) < 3 {
			continue
		}
		span := reg.Times[len(reg.Times)-1].Sub(reg.Times[0])
		type group struct {
			fields  []string
			samples int
			moved   bool
			nonzero bool
			minSpan time.Duration
		}
		groups := map[string]*group{}
		var order []string
		for _, f := range reg.Fields {
			j, ok := motion(&reg, &f)
			if !ok || len(f.Values) < 3 || f.Half {
				continue
			}
			if still && !(reg.Register == "MGIR" && f.Path == "hw_info.uptime") {
				continue
			}
			if j.group != "" {
				g := groups[j.group]
				if g == nil {
					g = &group{}
					groups[j.group] = g
					order = append(order, j.group)
				}
				g.fields = append(g.fields, f.Path)
				g.samples = max(g.samples, len(f.Values))
				g.moved = g.moved || !unchanged(f.Values)
				g.minSpan = max(g.minSpan, j.rule.MinSpan)
				for _, v := range f.Values {
					g.nonzero = g.nonzero || !v.Equal(Num(0))
				}
				continue
			}
			if span < j.rule.MinSpan || !unchanged(f.Values) {
				continue
			}
			note := fmt.Sprintf("unchanged over %d samples in %s; a working device moves it: the reading may be frozen", len(f.Values), span.Round(time.Second))
			if still {
				note = fmt.Sprintf("unchanged over %d samples in %s: the device's clock stood still (an emulator on a manual clock, or firmware that stopped), so no other reading was judged", len(f.Values), span.Round(time.Second))
			}
			r.Stale = append(r.Stale, Change{Device: devKey(d), Register: reg.Key, Path: f.Path, Class: f.Class, New: fieldVal(&f), NewText: read(reg.Register, &f).text, Note: note})
		}
		for _, name := range order {
			g := groups[name]
			if g.moved || !g.nonzero || span < g.minSpan {
				continue
			}
			r.Stale = append(r.Stale, Change{Device: devKey(d), Register: reg.Key, Path: name, Class: Dynamic, NewText: fmt.Sprintf("%d fields", len(g.fields)),
				Note: fmt.Sprintf("none of its %d fields (%s) changed over %d samples in %s; a working module's monitors move: they may be frozen ('cxray module --verify' tells the module from the firmware's view)",
					len(g.fields), abbreviate(g.fields, 4), g.samples, span.Round(time.Second))})
		}
	}
}

// unchanged says every value equals the first.
func unchanged(vs []Val) bool {
	for _, v := range vs[1:] {
		if !v.Equal(vs[0]) {
			return false
		}
	}
	return true
}

// abbreviate lists the last parts of the first n paths and how many more.
func abbreviate(paths []string, n int) string {
	var names []string
	for _, p := range paths[:min(n, len(paths))] {
		names = append(names, p[strings.LastIndexByte(p, '.')+1:])
	}
	if len(paths) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names, ", "), len(paths)-n)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// WriteText writes the report for people: problems first.
func (r *Report) WriteText(w io.Writer, limit int) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p("baseline %s (%s, %s) → %s (%s, %s)\n", r.Base.Created.Format(time.RFC3339), r.Base.Host, r.Base.PRMRevision,
		r.New.Created.Format(time.RFC3339), r.New.Host, r.New.PRMRevision)
	for _, n := range r.Notes {
		p("note: %s\n", n)
	}
	section := func(title string, cs []Change, line func(Change) string) {
		if len(cs) == 0 {
			return
		}
		p("\n%s (%d):\n", title, len(cs))
		for i, c := range cs {
			if limit > 0 && i == limit {
				p("  ... and %d more (-o json lists them all)\n", len(cs)-limit)
				break
			}
			p("  %s\n", line(c))
		}
	}
	where := func(c Change) string {
		s := c.Device + " " + c.Register
		if c.Path != "" {
			s += " " + c.Path
		}
		if c.OldPath != "" {
			s += " (was " + c.OldPath + ")"
		}
		return s
	}
	section("VANISHED — in the baseline, missing or unreadable now", r.Vanished, func(c Change) string {
		return strings.TrimSpace(c.Device+" "+c.Register) + ": " + c.Note
	})
	section("STATIC values changed — these should not", r.Static, func(c Change) string {
		return fmt.Sprintf("%s: %s → %s", where(c), c.OldText, c.NewText)
	})
	section("STALE values — expected to move, did not", r.Stale, func(c Change) string {
		return fmt.Sprintf("%s = %s: %s", where(c), c.NewText, c.Note)
	})
	section("counters", r.Counters, func(c Change) string {
		s := fmt.Sprintf("%s: %s → %s", where(c), c.OldText, c.NewText)
		if c.Rate != nil {
			s += fmt.Sprintf(" (%+.0f, %.3g/s)", *c.Delta, *c.Rate)
		}
		if c.Note != "" {
			s += " — " + c.Note
		}
		return s
	})
	section("dynamic values", r.Dynamic, func(c Change) string {
		s := fmt.Sprintf("%s: %s → %s", where(c), c.OldText, c.NewText)
		if c.Delta != nil {
			s += fmt.Sprintf(" (%+g", *c.Delta)
			if c.Unit != "" {
				s += " " + c.Unit
			}
			s += ")"
		}
		return s
	})
	section("appeared", r.Appeared, func(c Change) string { return strings.TrimSpace(where(c) + " " + c.NewText + " " + c.Note) })
	section("disappeared", r.Disappeared, func(c Change) string { return strings.TrimSpace(where(c) + " " + c.OldText + " " + c.Note) })
	section("errors", toChanges(r.Errors), func(c Change) string { return c.Note })
	if !r.Problems() {
		p("\nnothing vanished, no static changes")
		if len(r.Dynamic)+len(r.Counters) > 0 {
			p("; %d dynamic values and %d counters moved, as they may", len(r.Dynamic), len(r.Counters))
		}
		p("\n")
	}
	return bw.Flush()
}

func toChanges(ss []string) []Change {
	var out []Change
	for _, s := range ss {
		out = append(out, Change{Note: strings.TrimSpace(s)})
	}
	return out
}

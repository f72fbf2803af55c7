// Package prmsearch is one search over everything cxray knows of the PRM:
// registers, their fields and enum values, descriptions, NV configuration
// parameters (with their TLV and bits), and, when the PRM revision history
// is at hand, names of other revisions ("renamed in Rev 0.59 to ...").
// People type what they remember (MODULE_TEMP, log_tx_psn_window, MTPM);
// every hit says where the thing is and which command shows it.
package prmsearch

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/revdiff"
)

// Sources are the databases a search looks in. Only DB is required.
type Sources struct {
	DB *prm.DB
	// NV is the NV parameter database (mlxconfig's), if any.
	NV *nvconf.DB
	// History returns the PRM revisions at hand, oldest first (one of them
	// may be DB's revision). It is called only when the name is not in DB,
	// since loading them costs time.
	History func() []*prm.DB
}

// Hit kinds.
const (
	KindRegister    = "register"
	KindField       = "field"
	KindEnum        = "enum"        // an enum value name of a field
	KindDescription = "description" // the text of a register or field
	KindNVParam     = "nv_parameter"
	KindNVTLV       = "nv_tlv"
	KindHistory     = "history" // a name of another PRM revision
)

// Hit is one thing found.
type Hit struct {
	Kind     string `json:"kind"`
	Register string `json:"register,omitempty"`
	// Path is the field's path in the register (fields, enums,
	// descriptions of fields), or the TLV of an NV parameter.
	Path string `json:"path,omitempty"`
	// Name is what matched: the register, field, enum or parameter name.
	Name string `json:"name"`
	// Text says more: where the bits are, the matching line of a
	// description, what a revision did to the name.
	Text string `json:"text,omitempty"`
	// Hint is the command that shows it.
	Hint     string `json:"hint,omitempty"`
	Revision string `json:"revision,omitempty"`
	score    int
}

// Result is what a search found.
type Result struct {
	Query string `json:"query"`
	Hits  []Hit  `json:"hits"`
	// Suggestions are names close to the query (by edit distance, with
	// transpositions), when nothing had the name itself.
	Suggestions []string `json:"suggestions"`
}

// Found says whether anything matched. A suggestion is not a match: "did
// you mean" answers a name the databases do not have.
func (r *Result) Found() bool { return len(r.Hits) > 0 }

// matcher decides whether text matches the query, and how well.
type matcher struct {
	query  string
	lower  string
	re     *regexp.Regexp // the query as a regular expression, when it is one
	tokens []string       // the query's words (module, temp)
	words  []*regexp.Regexp
}

func newMatcher(q string) *matcher {
	m := &matcher{query: q, lower: strings.ToLower(q)}
	if strings.ContainsAny(q, `.*+?[](){}|^$\`) {
		if re, err := regexp.Compile("(?i)" + q); err == nil {
			m.re = re
		}
	}
	for _, t := range strings.FieldsFunc(m.lower, func(r rune) bool { return r == '_' || r == ' ' || r == '-' || r == '.' }) {
		if len(t) >= 2 {
			m.tokens = append(m.tokens, t)
		}
	}
	return m
}

// Scores, best first.
const (
	scoreExact   = 100
	scorePrefix  = 80
	scoreSub     = 70
	scoreTokens  = 60
	scoreDescr   = 40
	scoreSpread  = 30 // the words in different fields of one register
	scoreHistory = 20
)

// name scores a name: the same name, a prefix, a substring, or every word
// of the query inside it (MODULE_TEMP in pddr_module_info_ext.temperature).
func (m *matcher) name(s string) int {
	l := strings.ToLower(s)
	last := l
	if i := strings.LastIndexAny(l, ".]"); i >= 0 && i+1 < len(l) {
		last = strings.TrimLeft(l[i+1:], ".")
	}
	switch {
	case m.re != nil:
		if m.re.MatchString(s) {
			return scoreSub
		}
		return 0
	case l == m.lower || last == m.lower:
		return scoreExact
	case strings.HasPrefix(last, m.lower):
		return scorePrefix
	case strings.Contains(l, m.lower):
		return scoreSub
	case m.allTokens(l):
		return scoreTokens
	}
	return 0
}

func (m *matcher) allTokens(l string) bool {
	if len(m.tokens) < 2 {
		return false
	}
	for _, t := range m.tokens {
		if !strings.Contains(l, t) {
			return false
		}
	}
	return true
}

// text finds the query in a description: the line that matches.
func (m *matcher) text(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	l := strings.ToLower(s)
	switch {
	case m.re != nil:
		if loc := m.re.FindStringIndex(s); loc != nil {
			return snippet(s, loc[0], loc[1]), true
		}
	case strings.Contains(l, m.lower):
		i := strings.Index(l, m.lower)
		return snippet(s, i, i+len(m.lower)), true
	case m.wordTokens(s):
		i := strings.Index(l, m.tokens[0])
		return snippet(s, max(i, 0), max(i, 0)+len(m.tokens[0])), true
	}
	return "", false
}

// wordTokens: in prose, every word of the query starts a word of the text
// ("sensor temp" in "Temperature reading from the sensor"; not "plane" in
// "backplane").
func (m *matcher) wordTokens(s string) bool {
	if len(m.tokens) < 2 {
		return false
	}
	if m.words == nil {
		for _, t := range m.tokens {
			m.words = append(m.words, regexp.MustCompile(`(?i)\b`+regexp.QuoteMeta(t)))
		}
	}
	for _, w := range m.words {
		if !w.MatchString(s) {
			return false
		}
	}
	return true
}

// snippet is the line of text around [from, to).
func snippet(text string, from, to int) string {
	start := strings.LastIndexByte(text[:from], '\n') + 1
	end := strings.IndexByte(text[to:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += to
	}
	s := strings.TrimSpace(text[start:end])
	if len(s) > 100 {
		off := max(0, from-start-40)
		s = "…" + strings.TrimSpace(s[min(off, len(s)):min(len(s), off+96)]) + "…"
	}
	return s
}

// Search looks for query everywhere in src.
func Search(src Sources, query string) *Result {
	query = strings.TrimSpace(query)
	res := &Result{Query: query, Hits: []Hit{}, Suggestions: []string{}}
	if query == "" || src.DB == nil {
		return res
	}
	m := newMatcher(query)
	exact, named := false, false
	dup := map[[4]string]bool{}
	add := func(h Hit) {
		key := [4]string{h.Kind, h.Register, h.Path, h.Name}
		if dup[key] {
			return // a GUID array and its joined value share a path
		}
		dup[key] = true
		if h.score >= scoreTokens {
			named = true
		}
		res.Hits = append(res.Hits, h)
		if h.score == scoreExact {
			exact = true
		}
	}
	db := src.DB
	for _, r := range db.Registers {
		if s := m.name(r.Name); s > 0 {
			add(Hit{Kind: KindRegister, Register: r.Name, Name: r.Name, Text: fmt.Sprintf("register 0x%04x, %d bytes", r.ID, r.Size), Hint: "cxray prm show " + r.Name, score: s})
		} else if s := m.name(r.Node); s >= scoreSub && m.re == nil {
			add(Hit{Kind: KindRegister, Register: r.Name, Name: r.Name, Text: "layout " + r.Node, Hint: "cxray prm show " + r.Name, score: s - 5})
		}
		if t, ok := m.text(db.NodeDescr(db.Node(r))); ok {
			add(Hit{Kind: KindDescription, Register: r.Name, Name: r.Name, Text: t, Hint: "cxray prm show " + r.Name, score: scoreDescr})
		}
		p, err := db.RegisterPlan(r)
		if err != nil {
			continue
		}
		spread := map[string]string{} // token -> a field holding it
		for _, l := range p.Leaves() {
			f := l.Field()
			hint := showHint(r.Name, l.Path)
			if s := m.name(l.Path); s > 0 {
				add(Hit{Kind: KindField, Register: r.Name, Path: l.Path, Name: leafName(l.Path), Text: where(l), Hint: hint, score: s})
			} else if f != nil {
				if t, ok := m.text(db.FieldDescr(f)); ok {
					add(Hit{Kind: KindDescription, Register: r.Name, Path: l.Path, Name: leafName(l.Path), Text: t, Hint: hint, score: scoreDescr})
				}
			}
			for _, e := range l.Enum() {
				if s := m.name(e.Name); s >= scoreSub || s == scoreTokens {
					add(Hit{Kind: KindEnum, Register: r.Name, Path: l.Path, Name: e.Name, Text: fmt.Sprintf("%s = %d", l.Path, e.Value), Hint: hint, score: s})
				}
			}
			for _, t := range m.tokens {
				if strings.Contains(strings.ToLower(l.Path), t) && spread[t] == "" {
					spread[t] = l.Path
				}
			}
		}
		if len(m.tokens) >= 2 && len(spread) == len(m.tokens) && !fieldHit(res.Hits, r.Name) {
			var fields []string
			for _, t := range m.tokens {
				fields = append(fields, spread[t])
			}
			add(Hit{Kind: KindRegister, Register: r.Name, Name: r.Name, Text: "fields " + strings.Join(dedupe(fields), ", "), Hint: "cxray prm show " + r.Name, score: scoreSpread})
		}
	}
	if src.NV != nil {
		searchNV(src.NV, m, add)
	}
	if !exact && m.re == nil && src.History != nil {
		searchHistory(src.DB, src.History(), query, add)
	}
	sort.SliceStable(res.Hits, func(i, j int) bool { return res.Hits[i].score > res.Hits[j].score })
	if !named && m.re == nil {
		res.Suggestions = suggest(src, query)
	}
	return res
}

func leafName(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// where says where a leaf's bits are, as prm show prints them.
func where(l prm.Leaf) string {
	s := fmt.Sprintf("%s, %d bits at bit %d", l.ByteRange(), l.Width, l.Bit)
	if l.Count > 0 {
		s += fmt.Sprintf(", %d elements", l.Count)
	}
	if l.Joined {
		s += ", joined from " + strings.Join(l.Step.PartNames(), " + ")
	} else {
		s += ", " + l.AccessOrDefault().String()
	}
	if l.When != "" {
		s += ", when " + l.When
	}
	return s
}

// showHint is the prm show command for a field: with --path for the
// structure that holds it (PDDR's page layouts are long).
func showHint(reg, path string) string {
	parent := path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		parent = path[:i]
	} else {
		return "cxray prm show " + reg + " --path " + path
	}
	return "cxray prm show " + reg + " --path " + parent
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// searchNV looks through the NV parameters: their mlxconfig names, their
// database names, their TLVs, their enum values and descriptions.
func searchNV(nv *nvconf.DB, m *matcher, add func(Hit)) {
	for _, t := range nv.TLVs {
		tlvText := fmt.Sprintf("TLV %s (class %s, index 0x%x, %d bytes)", t.Name, t.Class, t.ID, t.Size)
		if s := max(m.name(t.Name), m.name(t.Title)); s > 0 && t.HasUserParams() {
			add(Hit{Kind: KindNVTLV, Path: t.Name, Name: t.Name, Text: tlvText, Hint: "cxray config show-params --filter '^" + t.Name + "$'", score: s})
		}
		for _, p := range t.Params {
			name := p.DisplayName()
			s := m.name(name)
			if p.MlxName != "" {
				s = max(s, m.name(p.Name))
			}
			bits := fmt.Sprintf("%s, bits %s size %s (%d bits), %s", tlvText, p.OffsetText, p.SizeText, p.Size, p.Type)
			if p.ValidBit != "" {
				bits += ", valid bit " + p.ValidBit
			}
			hint := "cxray config show-params --internal --filter " + p.TLV.Name + "." + p.Name
			if p.MlxName != "" {
				hint = "cxray config query " + p.MlxName + " -d DEV"
			}
			switch {
			case s > 0:
				add(Hit{Kind: KindNVParam, Path: t.Name, Name: name, Text: bits, Hint: hint, score: s})
			default:
				if txt, ok := m.text(p.Descr); ok && p.MlxName != "" {
					add(Hit{Kind: KindDescription, Path: t.Name, Name: name, Text: txt, Hint: hint, score: scoreDescr})
				}
			}
			for _, e := range p.Enum {
				if s := m.name(e.Name); (s >= scoreSub || s == scoreTokens) && p.MlxName != "" {
					add(Hit{Kind: KindEnum, Path: t.Name, Name: e.Name, Text: fmt.Sprintf("%s = %s(%d)", name, e.Name, e.Value), Hint: hint, score: s})
				}
			}
		}
	}
}

// searchHistory finds the query as a register or field name of other PRM
// revisions, and what became of it: added in a later revision, renamed,
// removed.
func searchHistory(cur *prm.DB, revs []*prm.DB, query string, add func(Hit)) {
	if len(revs) == 0 {
		return
	}
	present := make([][]occ, len(revs))
	for i, db := range revs {
		present[i] = find(db, query)
	}
	reported := map[string]bool{}
	for i, db := range revs {
		for _, s := range present[i] {
			key := s.reg + " " + s.path
			if reported[key] {
				continue
			}
			// The first revision after i that lacks it.
			j := i + 1
			for j < len(revs) && has(present[j], s.reg, s.path) {
				j++
			}
			first := i
			for first > 0 && has(present[first-1], s.reg, s.path) {
				first--
			}
			reported[key] = true
			h := Hit{Kind: KindHistory, Register: s.reg, Path: s.path, Name: leafName(orName(s.path, s.reg)), Revision: db.Revision, score: scoreHistory}
			span := revs[first].Revision
			if last := revs[j-1].Revision; last != span {
				span += " to " + last
			}
			switch {
			case j == len(revs):
				h.Text = fmt.Sprintf("in %s", span)
				if first > 0 {
					h.Text = fmt.Sprintf("added in %s (not in %s)", revs[first].Revision, revs[first-1].Revision)
				}
				if cur != nil && cur.Revision != revs[len(revs)-1].Revision {
					h.Text += fmt.Sprintf("; this database is %s: use --adb FILE with a newer one", cur.Revision)
				}
				if first > 0 {
					h.Hint = fmt.Sprintf("cxray prm diff %s %s %s", revs[first-1].Source, revs[first].Source, s.reg)
				}
			default:
				what, to := fate(revs, j, s.reg, s.path)
				h.Text = fmt.Sprintf("in %s; %s", span, what)
				h.Hint = fmt.Sprintf("cxray prm diff %s %s %s", revs[j-1].Source, to.Source, s.reg)
			}
			add(h)
		}
	}
}

func orName(path, reg string) string {
	if path != "" {
		return path
	}
	return reg
}

// occ is where a name occurs: a register, or a field (path) of one.
type occ struct{ reg, path string }

func has(list []occ, reg, path string) bool {
	for _, s := range list {
		if s.reg == reg && s.path == path {
			return true
		}
	}
	return false
}

// find lists where a name is a register or a field's leaf in db.
func find(db *prm.DB, name string) []occ {
	var out []occ
	low := strings.ToLower(name)
	for _, r := range db.Registers {
		if strings.ToLower(r.Name) == low {
			out = append(out, occ{r.Name, ""})
		}
		p, err := db.RegisterPlan(r)
		if err != nil {
			continue
		}
		for _, l := range p.Leaves() {
			if strings.ToLower(leafName(l.Path)) == low && !l.Joined {
				out = append(out, occ{r.Name, l.Path})
			}
		}
	}
	return out
}

// fate says what became of a name whose last revision is revs[j-1], and
// the revision that shows it. A field that a revision drops and a later
// one brings back under another name at the same place is a rename across
// them (PDDR's last_ber_mantissa: gone from Rev 0.59, last_raw_ber_coef
// from Rev 0.61), so the later revisions are compared with the last one
// that had it too.
func fate(revs []*prm.DB, j int, reg, path string) (string, *prm.DB) {
	old, next := revs[j-1], revs[j]
	if path == "" {
		return fmt.Sprintf("removed in %s", next.Revision), next
	}
	if what, ok := fieldFate(old, next, reg, path); ok {
		return what, next
	}
	for _, later := range revs[j+1:] {
		if what, ok := fieldFate(old, later, reg, path); ok && !strings.HasPrefix(what, "removed") {
			return fmt.Sprintf("removed in %s; %s", next.Revision, what), later
		}
	}
	return fmt.Sprintf("removed in %s", next.Revision), next
}

// fieldFate is what next did to the field path of reg that old has:
// renamed, merged, split, or removed with its register.
func fieldFate(old, next *prm.DB, reg, path string) (string, bool) {
	rep, err := revdiff.Diff(old, next, revdiff.Options{Names: []string{reg}})
	if err != nil {
		return "", false
	}
	for _, c := range rep.Changed {
		for _, f := range c.Fields {
			from := f.OldPath
			if from == "" {
				from = f.Path
			}
			if from != path && !strings.HasPrefix(path, from+".") {
				continue
			}
			switch f.Kind {
			case revdiff.Renamed:
				return fmt.Sprintf("renamed in %s to %s", next.Revision, f.Path+strings.TrimPrefix(path, from)), true
			case revdiff.Merged:
				return fmt.Sprintf("merged in %s into %s", next.Revision, f.Path), true
			case revdiff.Split:
				var parts []string
				for _, p := range f.Parts {
					parts = append(parts, p.Path)
				}
				return fmt.Sprintf("split in %s into %s", next.Revision, strings.Join(parts, ", ")), true
			}
		}
	}
	for _, rr := range rep.RemovedRegisters {
		if rr.Name == reg {
			return fmt.Sprintf("removed in %s with register %s", next.Revision, reg), true
		}
	}
	return "", false
}

// suggest lists names close to the query: registers, field leaves, enum
// values, NV parameters.
func suggest(src Sources, query string) []string {
	seen := map[string]bool{}
	var names []string
	addName := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, r := range src.DB.Registers {
		addName(r.Name)
		if p, err := src.DB.RegisterPlan(r); err == nil {
			for _, l := range p.Leaves() {
				addName(leafName(l.Path))
			}
		}
	}
	if src.NV != nil {
		for _, n := range src.NV.MlxNames() {
			addName(n)
		}
	}
	// Names much shorter than the query are only its prefixes ("r" of
	// "reset_level"): no suggestion.
	long := names[:0]
	for _, n := range names {
		if 2*len(n) >= len(query) {
			long = append(long, n)
		}
	}
	out := []string{}
	for _, c := range prm.Closest(query, long, 5) {
		if !strings.EqualFold(c, query) {
			out = append(out, c)
		}
	}
	return out
}

// Explain is a short sentence for a name that is not a register: what it
// is instead (a field of PGUID, an NV parameter), or the closest
// registers. Commands that take a register name add it to their error.
func Explain(src Sources, name string) string {
	res := Search(src, name)
	var parts []string
	for _, h := range res.Hits {
		if h.score != scoreExact || len(parts) >= 3 || h.Kind == KindRegister {
			continue
		}
		switch h.Kind {
		case KindField:
			parts = append(parts, fmt.Sprintf("%s is a field of %s (%s)", h.Name, h.Register, h.Hint))
		case KindNVParam:
			parts = append(parts, fmt.Sprintf("%s is an NV configuration parameter in %s (%s)", h.Name, h.Path, h.Hint))
		case KindEnum:
			where := h.Register
			if where == "" {
				where = "NV parameter"
			}
			parts = append(parts, fmt.Sprintf("%s is a value of %s %s (%s)", h.Name, where, h.Text, h.Hint))
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, "; ")
	}
	return holders(res, name)
}

// holders points a name that is nothing by itself (SENSOR_TEMP) at the
// registers whose fields carry its words, best first: a field whose name
// starts with a word (temperature for TEMP) at the top of its register
// (MTMP's temperature before MTBR's temperature_record[0].temperature),
// and at the search that lists every match.
func holders(res *Result, name string) string {
	m := newMatcher(name)
	type cand struct {
		h    Hit
		rank int
	}
	var cs []cand
	for i, h := range res.Hits {
		if h.Register == "" || (h.Kind != KindField && h.Kind != KindDescription) {
			continue
		}
		// A name hit (the words in the field's path) before a description
		// hit; then fields named by a word, that hold every word in name
		// or text, at the top of their register.
		rank := h.score
		leaf := strings.ToLower(h.Name)
		all := strings.ToLower(h.Name + " " + h.Text)
		for _, t := range m.tokens {
			if strings.HasPrefix(leaf, t) {
				rank += 2
			}
			if strings.Contains(all, t) {
				rank++
			}
		}
		if h.Path == h.Name {
			rank++
		}
		cs = append(cs, cand{h, rank*1000 - i})
	}
	if len(cs) == 0 {
		return ""
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].rank > cs[j].rank })
	var parts []string
	seen := map[string]bool{}
	for _, c := range cs {
		if seen[c.h.Register] || len(parts) == 3 {
			continue
		}
		seen[c.h.Register] = true
		parts = append(parts, fmt.Sprintf("%s %s (%s)", c.h.Register, c.h.Name, c.h.Hint))
	}
	return fmt.Sprintf("its words are in %s; 'cxray prm search %s' lists all %d matches", strings.Join(parts, ", "), name, len(res.Hits))
}

// fieldHit says a register already has a field hit.
func fieldHit(hits []Hit, reg string) bool {
	for _, h := range hits {
		if h.Register == reg && h.Kind == KindField {
			return true
		}
	}
	return false
}

package nvconf

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/cxray/cxray/nvconf/expr"
)

// errDepUnsupported marks a dependency on a TLV the firmware does not have:
// the parameter is then not available (mstconfig hides it).
var errDepUnsupported = errors.New("the TLV it depends on is not supported by this firmware")

// env evaluates expressions for one TLV instance: `$name` reads the
// instance's own (working) data, `$tlv.name` another TLV (Next Boot), `$_t`
// a temporary.
type env struct {
	s     *Session
	ctx   context.Context
	inst  Instance
	data  []byte
	temps map[string]float64
	// other holds working copies of other TLVs being changed in the same
	// set, so rules see the values about to be written.
	other map[uint32][]byte
}

func (e *env) lookup(name string) (float64, error) {
	if strings.HasPrefix(name, "_") {
		if v, ok := e.temps[name]; ok {
			return v, nil
		}
		return 0, fmt.Errorf("temporary $%s is not defined", name)
	}
	tn, pn, cross := strings.Cut(name, ".")
	if !cross {
		p := e.inst.TLV.Param(name)
		if p == nil {
			return 0, fmt.Errorf("$%s is not a field of %s", name, e.inst.TLV.Name)
		}
		v, err := p.Get(e.data, 0)
		return float64(v), err
	}
	t := e.s.DB.TLV(tn)
	if t == nil {
		return 0, fmt.Errorf("$%s: no TLV %s in the parameter database", name, tn)
	}
	p := t.Param(pn)
	if p == nil {
		return 0, fmt.Errorf("$%s: TLV %s has no field %s", name, tn, pn)
	}
	in := e.s.instanceFor(t, e.inst)
	if in.TLV == e.inst.TLV && in.Type() == e.inst.Type() {
		v, err := p.Get(e.data, 0)
		return float64(v), err
	}
	if d, ok := e.other[in.Type()]; ok {
		v, err := p.Get(d, 0)
		return float64(v), err
	}
	if e.s == nil || e.s.Dev == nil {
		return 0, fmt.Errorf("$%s needs the device", name)
	}
	sp, err := e.s.Support(e.ctx, in)
	if err != nil {
		return 0, err
	}
	if !sp.Read {
		return 0, errDepUnsupported
	}
	it, err := e.s.Read(e.ctx, in, ModeNext)
	if err != nil {
		return 0, err
	}
	v, err := p.Get(it.Data, 0)
	return float64(v), err
}

// instanceFor picks the instance of t an expression of instance from means:
// the same port or module when both are per port or per module, otherwise
// the device's first (mstconfig's cross-class rule).
func (s *Session) instanceFor(t *TLV, from Instance) Instance {
	if t.Class == from.TLV.Class {
		in := from
		in.TLV = t
		return in
	}
	ins := s.Layout.Instances(t)
	if len(ins) == 0 {
		return Instance{TLV: t}
	}
	return ins[0]
}

// eval parses and evaluates an expression in env e; temporaries of p are
// computed first.
func (e *env) eval(src string) (float64, error) {
	x, err := expr.Parse(src)
	if err != nil {
		return 0, err
	}
	return x.Eval(e.lookup)
}

func (e *env) temporaries(p *Param) error {
	if strings.TrimSpace(p.TempVars) == "" {
		return nil
	}
	tv, err := expr.ParseTempVars(p.TempVars)
	if err != nil {
		return err
	}
	if e.temps == nil {
		e.temps = map[string]float64{}
	}
	for _, t := range tv {
		v, err := t.Expr.Eval(e.lookup)
		if err != nil {
			return fmt.Errorf("temporary $%s: %w", t.Name, err)
		}
		e.temps[t.Name] = v
	}
	return nil
}

// reasonNoDependency is why a parameter without a dependency is not
// listed; set still accepts such parameters (the reason is mstconfig's
// listing rule, not the device).
const reasonNoDependency = "the database gives no dependency, so mstconfig does not list it on adapters"

// Visibility says whether mstconfig lists a parameter, and why not. A
// parameter is listed when its TLV version is new enough and its dependency
// holds; "ignore_dependency" always holds. A parameter with no dependency
// is listed only when it has a rule, a minimum TLV version or is an array:
// that is what mstconfig does on adapters (it lists every parameter only on
// switches), and query follows it so both tools show the same list.
func (s *Session) visibility(ctx context.Context, p *Param, in Instance, next []byte, fwVersion int) (bool, string) {
	if p.MlxName == "" {
		return false, "internal field"
	}
	if p.FromVersion > fwVersion {
		return false, fmt.Sprintf("needs TLV version %d; the firmware supports %d", p.FromVersion, fwVersion)
	}
	dep := strings.TrimSpace(p.Dependency)
	switch {
	case strings.EqualFold(dep, "ignore_dependency"):
		return true, ""
	case dep == "":
		if p.Rule != "" || p.FromVersion > 0 || p.IsArray() {
			return true, ""
		}
		return false, reasonNoDependency
	}
	e := &env{s: s, ctx: ctx, inst: in, data: next}
	v, err := e.eval(dep)
	if err != nil {
		if errors.Is(err, errDepUnsupported) {
			return false, "depends on a TLV this firmware lacks (" + dep + ")"
		}
		return false, fmt.Sprintf("dependency %s cannot be evaluated: %v", dep, err)
	}
	if v == 0 {
		return false, "not supported by this device: " + dep + " is false"
	}
	return true, ""
}

// QueryOptions select what Query reads.
type QueryOptions struct {
	// Names limits the query to these parameters (NAME, NAME_P1, NAME[2];
	// a per-port base name selects every port). Empty: every listed one.
	Names []string
	// Filter keeps parameters whose name or TLV matches.
	Filter *regexp.Regexp
	// Extended also reads Default and Current.
	Extended bool
	// All includes parameters mstconfig would not list, with the reason.
	All bool
}

// Value is one read value of a parameter element.
type Value struct {
	Text string
	Raw  uint64
	// Numeric is false for STRING and BYTES (Raw is then 0).
	Numeric bool
	// Defaulted is set when the stored field is not valid (its valid bit is
	// clear) and the value shown is the default.
	Defaulted bool
}

// Setting is one parameter element on a device.
type Setting struct {
	Ref      Ref
	Name     string
	TLV      string
	Instance string
	Next     *Value
	Default  *Value
	Current  *Value
	// Modified: Next Boot differs from Default. Pending: Next Boot differs
	// from Current (it takes effect at the next firmware reset).
	Modified, Pending bool
	// Hidden says why mstconfig would not list it (with QueryOptions.All or
	// when asked for by name).
	Hidden string
}

// QueryResult is the configuration of a device.
type QueryResult struct {
	Settings []Setting
	// Unsupported lists TLV instances the firmware does not support, that
	// a query by name asked for.
	Unsupported []string
	// Extended says Default/Current were read.
	Extended    bool
	ReadDefault bool
	ReadCurrent bool
}

// PendingCount counts settings whose Next Boot differs from Current.
func (r *QueryResult) PendingCount() int {
	n := 0
	for _, s := range r.Settings {
		if s.Pending {
			n++
		}
	}
	return n
}

// valueOf reads element i of p from an item, taking the default when the
// stored field's valid bit is clear.
func (s *Session) valueOf(ctx context.Context, it *Item, p *Param, i int) *Value {
	data := it.Data
	v := &Value{}
	if !p.ValidBitSet(data) && s.ReadDefault && it.Mode != ModeFactory {
		if def, err := s.Read(ctx, it.Inst, ModeFactory); err == nil {
			data = def.Data
			v.Defaulted = true
		}
	}
	v.Text = p.FormatData(data, i)
	if p.Type != TypeString && p.Type != TypeBytes {
		if u, err := p.Get(data, i); err == nil {
			v.Raw, v.Numeric = u, true
		}
	}
	return v
}

// Query reads the configuration: for every TLV with user-visible parameters
// the firmware supports, its Next Boot value (and with Extended, Default
// and Current).
func (s *Session) Query(ctx context.Context, o QueryOptions) (*QueryResult, error) {
	res := &QueryResult{Extended: o.Extended, ReadDefault: s.ReadDefault, ReadCurrent: s.ReadCurrent}
	want, err := s.wanted(o.Names)
	if err != nil {
		return nil, err
	}
	for _, t := range s.DB.TLVs {
		// Capability TLVs and internal fields are listed only when asked
		// for by name (nv_global_pci_cap.max_vfs_per_pf).
		if want != nil && !want.tlv[t] {
			continue
		}
		if want == nil && (t.Cap || !t.HasUserParams()) {
			continue
		}
		for _, in := range s.Layout.Instances(t) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			sp, err := s.Support(ctx, in)
			if err != nil {
				return nil, err
			}
			if !sp.Read || (!sp.Write && !t.Cap && t.Target != "EXP_ROM") {
				if want != nil {
					res.Unsupported = append(res.Unsupported, in.String())
				}
				continue
			}
			next, err := s.Read(ctx, in, ModeNext)
			if err != nil {
				return nil, err
			}
			var def, cur *Item
			if o.Extended && s.ReadDefault {
				if def, err = s.Read(ctx, in, ModeFactory); err != nil {
					return nil, err
				}
			}
			if o.Extended && s.ReadCurrent {
				if cur, err = s.Read(ctx, in, ModeCurrent); err != nil {
					return nil, err
				}
			}
			for _, p := range t.Params {
				if p.MlxName == "" && (want == nil || !want.named(p)) {
					continue
				}
				ok, why := s.visibility(ctx, p, in, next.Data, sp.Version)
				if p.MlxName == "" {
					ok, why = true, "" // a field asked for by its tlv.field name
				}
				for _, ref := range refsOf(p, in) {
					name := ref.Name()
					if want != nil && !want.match(ref) {
						continue
					}
					if o.Filter != nil && !o.Filter.MatchString(name) && !o.Filter.MatchString(t.Name) {
						continue
					}
					if !ok && !o.All && want == nil {
						continue
					}
					i := max(ref.Index, 0)
					st := Setting{Ref: ref, Name: name, TLV: t.Name, Instance: in.String(), Next: s.valueOf(ctx, next, p, i)}
					if !ok {
						st.Hidden = why
					}
					if def != nil {
						st.Default = s.valueOf(ctx, def, p, i)
						st.Modified = st.Default.Text != st.Next.Text
					}
					if cur != nil {
						st.Current = s.valueOf(ctx, cur, p, i)
						st.Pending = st.Current.Text != st.Next.Text
					}
					res.Settings = append(res.Settings, st)
				}
			}
		}
	}
	if want != nil {
		if missing := want.unmatched(res); len(missing) > 0 && len(res.Unsupported) == 0 {
			return nil, fmt.Errorf("nvconf: the device does not offer %s", strings.Join(missing, ", "))
		}
	}
	return res, nil
}

// refsOf lists a parameter's references in one instance.
func refsOf(p *Param, in Instance) []Ref {
	if !p.IsArray() {
		return []Ref{{Param: p, Inst: in, Index: -1}}
	}
	out := make([]Ref, p.ArrayLen)
	for i := range out {
		out[i] = Ref{Param: p, Inst: in, Index: i}
	}
	return out
}

// selection is what a query by name asked for.
type selection struct {
	tlv  map[*TLV]bool
	refs []Ref
	// whole marks a parameter asked for by its base name: every instance
	// and element.
	whole map[*Param]bool
	asked []string
}

// named says whether a parameter was asked for at all.
func (w *selection) named(p *Param) bool {
	if w.whole[p] {
		return true
	}
	for _, x := range w.refs {
		if x.Param == p {
			return true
		}
	}
	return false
}

func (w *selection) match(r Ref) bool {
	if w.whole[r.Param] {
		return true
	}
	for _, x := range w.refs {
		if x.Param == r.Param && x.Inst.Type() == r.Inst.Type() && (x.Index < 0 || x.Index == r.Index) {
			return true
		}
	}
	return false
}

func (w *selection) unmatched(res *QueryResult) []string {
	var out []string
	for i, n := range w.asked {
		found := false
		for _, st := range res.Settings {
			if w.matchesAsked(i, st.Ref) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, n)
		}
	}
	return out
}

func (w *selection) matchesAsked(i int, r Ref) bool {
	n := strings.ToUpper(w.asked[i])
	base := strings.ToUpper(r.Param.DisplayName())
	name := strings.ToUpper(r.Name())
	return n == base || n == name || strings.HasPrefix(name, n+"[") || n == strings.ToUpper(r.Param.DisplayName()+r.Inst.Suffix())
}

func (s *Session) wanted(names []string) (*selection, error) {
	if len(names) == 0 {
		return nil, nil
	}
	w := &selection{tlv: map[*TLV]bool{}, whole: map[*Param]bool{}, asked: names}
	for _, n := range names {
		if p := s.DB.ParamByMlxName(strings.TrimSpace(n)); p != nil {
			w.whole[p] = true
			w.tlv[p.TLV] = true
			continue
		}
		r, err := s.DB.Resolve(n, s.Layout)
		if err != nil {
			return nil, err
		}
		w.refs = append(w.refs, r)
		w.tlv[r.Param.TLV] = true
	}
	return w, nil
}

// ---- limits

// Limit is an evaluated bound of a parameter on this device.
type Limit struct {
	Min, Max       uint64
	HasMin, HasMax bool
	MinExpr        string
	MaxExpr        string
}

// limits evaluates min_val and max_val in env e.
func (e *env) limits(p *Param) (Limit, error) {
	var l Limit
	for _, b := range []struct {
		expr string
		v    *uint64
		has  *bool
		text *string
	}{{p.MinVal, &l.Min, &l.HasMin, &l.MinExpr}, {p.MaxVal, &l.Max, &l.HasMax, &l.MaxExpr}} {
		x := strings.TrimSpace(b.expr)
		if x == "" {
			continue
		}
		f, err := e.eval(x)
		if err != nil {
			return l, err
		}
		if math.IsNaN(f) || f < 0 {
			f = 0
		}
		if f > float64(uint64(1)<<62) || math.IsInf(f, 1) {
			f = float64(uint64(1) << 62) // beyond any field: no limit in practice
		}
		*b.v, *b.has, *b.text = uint64(f), true, x
	}
	return l, nil
}

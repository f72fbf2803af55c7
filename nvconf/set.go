package nvconf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cxray/cxray/prm"
)

// Assignment is NAME=VALUE as a user gives it.
type Assignment struct {
	Name  string
	Value string
}

// ParseAssignments splits NAME=VALUE arguments.
func ParseAssignments(args []string) ([]Assignment, error) {
	out := make([]Assignment, 0, len(args))
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, &NameError{fmt.Sprintf("%q is not NAME=VALUE (for example SRIOV_EN=True or LINK_TYPE_P1=ETH)", a)}
		}
		out = append(out, Assignment{Name: k, Value: strings.TrimSpace(v)})
	}
	return out, nil
}

// ParamChange is one parameter element a set changes.
type ParamChange struct {
	Ref    Ref
	Name   string
	Before string // the Next Boot value before (the default when not set)
	After  string
	// Current is the running value, when the firmware can read it.
	Current string
}

// TLVWrite is one TLV instance a set writes, whole (read-modify-write).
type TLVWrite struct {
	Inst    Instance
	Version int
	Before  []byte
	After   []byte
	Changes []ParamChange
}

// SetPlan is a validated set: what would be written.
type SetPlan struct {
	Writes []*TLVWrite
	// Unchanged lists parameters that already hold the value asked for.
	Unchanged []string
	// as are the assignments it was planned from: Commit plans them again
	// under the lock.
	as []Assignment
}

// ValidationError lists every refused assignment. Nothing is written when
// a set has one.
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0] + "; nothing was written"
	}
	return fmt.Sprintf("%d values refused, nothing was written:\n  %s", len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// Is makes a refused assignment an input error (prm.ErrInput).
func (e *ValidationError) Is(target error) bool { return target == prm.ErrInput }

type assigned struct {
	ref   Ref
	name  string
	value string
	num   uint64
}

type group struct {
	in    Instance
	sp    Support
	next  *Item
	work  []byte
	items []assigned
}

// PlanSet validates assignments against the parameter database and the
// device (type, enum, width, the limits and rules the database states, the
// device's capability TLVs) and works out the whole-TLV writes, reading
// each TLV first. Fields whose valid bit is clear take their default, so
// setting one parameter does not pin its neighbours to stale values.
// Nothing is written.
func (s *Session) PlanSet(ctx context.Context, as []Assignment) (*SetPlan, error) {
	var problems []string
	var groups []*group
	byType := map[uint32]*group{}
	for _, a := range as {
		ref, err := s.DB.Resolve(a.Name, s.Layout)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		p := ref.Param
		name := ref.Name()
		switch {
		case p.TLV.Cap:
			problems = append(problems, fmt.Sprintf("%s is a capability the firmware reports; it cannot be set", name))
			continue
		case p.MlxName == "":
			problems = append(problems, fmt.Sprintf("%s is an internal field (a valid bit or reserved); cxray sets valid bits itself — set the parameter it belongs to", name))
			continue
		case p.IsArray() && ref.Index < 0:
			problems = append(problems, fmt.Sprintf("%s is an array; set its elements: %s[0] .. %s[%d]", name, name, name, p.ArrayLen-1))
			continue
		}
		g := byType[ref.Inst.Type()]
		if g == nil {
			g, err = s.openGroup(ctx, ref.Inst)
			if err != nil {
				var nv *NVError
				if errors.As(err, &nv) || ctx.Err() != nil {
					return nil, err
				}
				problems = append(problems, fmt.Sprintf("%s: %v", name, err))
				continue
			}
			byType[ref.Inst.Type()] = g
			groups = append(groups, g)
		}
		if ok, why := s.visibility(ctx, p, ref.Inst, g.work, g.sp.Version); !ok && why != reasonNoDependency {
			problems = append(problems, fmt.Sprintf("%s cannot be set on this device: %s", name, why))
			continue
		}
		idx := max(ref.Index, 0)
		if p.Type == TypeString || p.Type == TypeBytes {
			b, err := p.ParseBytes(name, a.Value)
			if err == nil {
				err = p.SetBytes(g.work, b)
			}
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
		} else {
			v, err := p.Parse(name, a.Value)
			if err == nil {
				err = p.Set(g.work, idx, v)
			}
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			g.items = append(g.items, assigned{ref: ref, name: name, value: a.Value, num: v})
		}
		if p.ValidBit != "" {
			if vb := p.TLV.Param(p.ValidBit); vb != nil {
				_ = vb.Set(g.work, 0, 1)
			}
		}
		if p.Type == TypeString || p.Type == TypeBytes {
			g.items = append(g.items, assigned{ref: ref, name: name, value: a.Value})
		}
	}
	// Limits and rules, now that every new value is in place: they may
	// refer to each other and to other TLVs being changed.
	others := map[uint32][]byte{}
	for _, g := range groups {
		others[g.in.Type()] = g.work
	}
	for _, g := range groups {
		e := &env{s: s, ctx: ctx, inst: g.in, data: g.work, other: others}
		for _, it := range g.items {
			p := it.ref.Param
			if p.Type == TypeString || p.Type == TypeBytes {
				continue
			}
			lim, err := e.limits(p)
			if err != nil {
				if errors.Is(err, errDepUnsupported) {
					problems = append(problems, fmt.Sprintf("%s=%s: its limit depends on a TLV this firmware lacks", it.name, it.value))
					continue
				}
				problems = append(problems, fmt.Sprintf("%s=%s: the limits cannot be evaluated (%v)", it.name, it.value, err))
				continue
			}
			if lim.HasMax && it.num > lim.Max {
				problems = append(problems, fmt.Sprintf("%s=%s: above the maximum %s on this device (%s); allowed: %s", it.name, it.value, p.Format(lim.Max), limitSource(lim.MaxExpr), rangeText(p, lim)))
				continue
			}
			if lim.HasMin && it.num < lim.Min {
				problems = append(problems, fmt.Sprintf("%s=%s: below the minimum %s on this device (%s); allowed: %s", it.name, it.value, p.Format(lim.Min), limitSource(lim.MinExpr), rangeText(p, lim)))
				continue
			}
			if strings.TrimSpace(p.Rule) == "" {
				continue
			}
			if err := e.temporaries(p); err != nil {
				problems = append(problems, fmt.Sprintf("%s=%s: the rule cannot be evaluated (%v)", it.name, it.value, err))
				continue
			}
			ok, err := e.eval(p.Rule)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s=%s: the rule cannot be evaluated (%v)", it.name, it.value, err))
				continue
			}
			if ok == 0 {
				problems = append(problems, fmt.Sprintf("%s=%s: the device's rule for %s does not hold with the new values: %s", it.name, it.value, p.MlxName, p.Rule))
			}
		}
	}
	if len(problems) > 0 {
		return nil, &ValidationError{Problems: problems}
	}
	plan := &SetPlan{as: as}
	for _, g := range groups {
		w := &TLVWrite{Inst: g.in, Version: min(g.in.TLV.Version, g.sp.Version), Before: g.next.Data, After: g.work}
		var cur *Item
		if s.ReadCurrent {
			cur, _ = s.Read(ctx, g.in, ModeCurrent)
		}
		for _, it := range g.items {
			i := max(it.ref.Index, 0)
			before := s.valueOf(ctx, g.next, it.ref.Param, i).Text
			after := it.ref.Param.FormatData(g.work, i)
			c := ParamChange{Ref: it.ref, Name: it.name, Before: before, After: after}
			if cur != nil {
				c.Current = s.valueOf(ctx, cur, it.ref.Param, i).Text
			}
			if before == after {
				plan.Unchanged = append(plan.Unchanged, it.name)
				continue
			}
			w.Changes = append(w.Changes, c)
		}
		if len(w.Changes) > 0 && !bytes.Equal(w.Before, w.After) {
			plan.Writes = append(plan.Writes, w)
		}
	}
	return plan, nil
}

// openGroup reads a TLV instance for a set, checking the firmware supports
// writing it.
func (s *Session) openGroup(ctx context.Context, in Instance) (*group, error) {
	sp, err := s.Support(ctx, in)
	if err != nil {
		return nil, err
	}
	switch {
	case !sp.Read:
		return nil, fmt.Errorf("the firmware does not support %s (MNVQC)", in)
	case !sp.Write:
		return nil, fmt.Errorf("the firmware does not allow writing %s (MNVQC)", in)
	}
	next, err := s.Read(ctx, in, ModeNext)
	if err != nil {
		return nil, err
	}
	work := append([]byte(nil), next.Data...)
	if s.ReadDefault {
		if def, err := s.Read(ctx, in, ModeFactory); err == nil {
			for _, p := range in.TLV.Params {
				if p.ValidBitSet(work) {
					continue
				}
				copyParam(p, work, def.Data)
			}
		}
	}
	return &group{in: in, sp: sp, next: next, work: work}, nil
}

// copyParam copies one parameter's bits from src to dst.
func copyParam(p *Param, dst, src []byte) {
	if p.Type == TypeString || p.Type == TypeBytes {
		if d, s := p.RawBytes(dst), p.RawBytes(src); d != nil && s != nil {
			copy(d, s)
		}
		return
	}
	for i := 0; i < p.Elems(); i++ {
		if v, err := p.Get(src, i); err == nil {
			_ = p.Set(dst, i, v)
		}
	}
}

func limitSource(expr string) string {
	if strings.Contains(expr, "$") {
		return "from " + expr
	}
	return "the database's limit"
}

func rangeText(p *Param, l Limit) string {
	lo := uint64(0)
	if l.HasMin {
		lo = l.Min
	}
	hi := maxFor(p.ElemBits())
	if l.HasMax {
		hi = l.Max
	}
	if p.Type == TypeEnum {
		var ok []string
		for _, e := range p.Enum {
			if e.Value >= lo && e.Value <= hi {
				ok = append(ok, fmt.Sprintf("%s(%d)", e.Name, e.Value))
			}
		}
		return strings.Join(ok, ", ")
	}
	if hi < lo {
		return "nothing (the device's maximum is below its minimum: the feature is not available)"
	}
	return fmt.Sprintf("%d..%d", lo, hi)
}

// VerifyError says the read-back after a write differs from what was
// written.
type VerifyError struct {
	Inst       Instance
	Mismatches []string
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("nvconf: %s was written but reads back differently (%s); the firmware may have adjusted or refused a value — check 'cxray config query'",
		e.Inst, strings.Join(e.Mismatches, "; "))
}

// ApplySet writes a plan's TLVs (Next Boot) and reads each back to verify.
// On a failure it says which TLVs were already written.
func (s *Session) ApplySet(ctx context.Context, plan *SetPlan) error {
	var done []string
	for _, w := range plan.Writes {
		if err := s.WriteTLV(ctx, w.Inst, w.After, w.Version); err != nil {
			if len(done) > 0 {
				return fmt.Errorf("%w (already written: %s)", err, strings.Join(done, ", "))
			}
			return err
		}
		back, err := s.Read(ctx, w.Inst, ModeNext)
		if err != nil {
			return fmt.Errorf("the write of %s was sent, but reading it back failed: %w", w.Inst, err)
		}
		if !bytes.Equal(back.Data, w.After) {
			ve := &VerifyError{Inst: w.Inst}
			for _, p := range w.Inst.TLV.Params {
				for i := 0; i < p.Elems(); i++ {
					a, b := p.FormatData(w.After, i), p.FormatData(back.Data, i)
					if a != b {
						ve.Mismatches = append(ve.Mismatches, fmt.Sprintf("%s wrote %s, reads %s", p.DisplayName()+w.Inst.Suffix(), a, b))
					}
				}
			}
			if len(ve.Mismatches) == 0 {
				ve.Mismatches = append(ve.Mismatches, "reserved bits differ")
			}
			return ve
		}
		done = append(done, w.Inst.String())
	}
	return nil
}

// DefaultSettle is how long config set waits after its write is verified
// before it reads the TLVs again (Settled). cxray's NV lock orders cxray's
// writers only: mstconfig and mlxconfig take no lock, and one that read a
// TLV before cxray wrote it writes its read-modify-write after, undoing
// cxray's change with both tools saying they succeeded. A second in real
// time covers mstconfig's own read-to-write gap on an adapter.
const DefaultSettle = time.Second

// Drift is a parameter another writer changed after a write of ours was
// verified: Wrote is what we wrote, Now what the TLV holds.
type Drift struct {
	TLV, Param string
	Wrote, Now string
	// Ours says the parameter was one this write changed: our change is
	// lost. Otherwise another writer changed a neighbour in the same TLV.
	Ours bool
}

// Settled reads each TLV a verified plan wrote again (Next Boot, not from
// the session's cache) and lists the parameters that no longer hold what
// was written.
func (s *Session) Settled(ctx context.Context, plan *SetPlan) ([]Drift, error) {
	s.ForgetAll()
	var out []Drift
	for _, w := range plan.Writes {
		back, err := s.Read(ctx, w.Inst, ModeNext)
		if err != nil {
			return out, err
		}
		if bytes.Equal(back.Data, w.After) {
			continue
		}
		ours := func(p *Param, i int) bool {
			for _, c := range w.Changes {
				if c.Ref.Param == p && (c.Ref.Index < 0 || c.Ref.Index == i) {
					return true
				}
			}
			return false
		}
		for _, p := range w.Inst.TLV.Params {
			for i := 0; i < p.Elems(); i++ {
				a, b := p.FormatData(w.After, i), p.FormatData(back.Data, i)
				if a == b {
					continue
				}
				idx := -1
				if p.IsArray() {
					idx = i
				}
				name := Ref{Param: p, Inst: w.Inst, Index: idx}.Name()
				out = append(out, Drift{TLV: w.Inst.String(), Param: name, Wrote: a, Now: b, Ours: ours(p, i)})
			}
		}
	}
	return out, nil
}

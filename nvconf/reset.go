package nvconf

import (
	"context"
	"fmt"
	"strings"
)

// ResetPlan is a validated reset: which TLV instances return to their
// defaults, and what that changes.
type ResetPlan struct {
	All     bool
	Targets []Instance
	// Changes are the parameters whose Next Boot value changes (known
	// only when the firmware reads defaults: KnownDefaults).
	Changes       []ParamChange
	KnownDefaults bool
	// names are what the user named (Commit plans them again under the
	// lock).
	names []string
}

// Names lists the targets.
func (p *ResetPlan) Names() []string {
	out := []string{}
	for _, in := range p.Targets {
		out = append(out, in.String())
	}
	return out
}

// Subject names what the plan resets, for questions and messages.
func (p *ResetPlan) Subject() string {
	if p.All {
		return "the whole NV configuration"
	}
	return strings.Join(p.Names(), ", ")
}

// PlanReset works out a reset of the named TLVs or parameters (a parameter
// stands for its whole TLV; a per-port or per-module parameter for every
// instance), or with all of every TLV with user parameters. Nothing is
// written.
func (s *Session) PlanReset(ctx context.Context, names []string, all bool) (*ResetPlan, error) {
	var ins []Instance
	if all {
		for _, tl := range s.DB.TLVs {
			if tl.Cap || !tl.HasUserParams() {
				continue
			}
			ins = append(ins, s.Layout.Instances(tl)...)
		}
	} else {
		var err error
		if ins, err = s.resetTargets(names); err != nil {
			return nil, err
		}
	}
	p := &ResetPlan{All: all, KnownDefaults: s.ReadDefault, names: names}
	for _, in := range ins {
		sp, err := s.Support(ctx, in)
		if err != nil {
			return nil, err
		}
		if !sp.Read {
			if !all {
				return nil, &ValidationError{Problems: []string{fmt.Sprintf("the firmware does not support %s; nothing to reset", in)}}
			}
			continue
		}
		p.Targets = append(p.Targets, in)
		if !s.ReadDefault {
			continue
		}
		next, err := s.Read(ctx, in, ModeNext)
		if err != nil {
			return nil, err
		}
		def, err := s.Read(ctx, in, ModeFactory)
		if err != nil {
			return nil, err
		}
		for _, pr := range in.TLV.Params {
			if pr.MlxName == "" {
				continue
			}
			for i := 0; i < pr.Elems(); i++ {
				b, d := ShownValue(pr, next.Data, def.Data, i), pr.FormatData(def.Data, i)
				if b != d {
					p.Changes = append(p.Changes, ParamChange{Name: ElementName(pr, in, i), Before: b, After: d})
				}
			}
		}
	}
	return p, nil
}

// ElementName is how a parameter element is named to users:
// NAME_P1[2].
func ElementName(p *Param, in Instance, i int) string {
	name := p.MlxName + in.Suffix()
	if p.IsArray() {
		name += fmt.Sprintf("[%d]", i)
	}
	return name
}

// ShownValue is what query shows for element i: the stored value, or the
// default when the field's valid bit is clear.
func ShownValue(p *Param, data, def []byte, i int) string {
	if !p.ValidBitSet(data) && def != nil {
		return p.FormatData(def, i)
	}
	return p.FormatData(data, i)
}

// resetTargets resolves TLV or parameter names to instances.
func (s *Session) resetTargets(names []string) ([]Instance, error) {
	var out []Instance
	seen := map[uint32]bool{}
	add := func(in Instance) {
		if !seen[in.Type()] {
			seen[in.Type()] = true
			out = append(out, in)
		}
	}
	for _, n := range names {
		if tl := s.DB.TLV(n); tl != nil {
			for _, in := range s.Layout.Instances(tl) {
				add(in)
			}
			continue
		}
		if p := s.DB.ParamByMlxName(n); p != nil && (p.TLV.Class == ClassPort || p.TLV.Class == ClassModule) {
			for _, in := range s.Layout.Instances(p.TLV) {
				add(in)
			}
			continue
		}
		r, err := s.DB.Resolve(n, s.Layout)
		if err != nil {
			return nil, err
		}
		add(r.Inst)
	}
	return out, nil
}

// Reset performs a planned reset and checks that nothing of the reset
// TLVs is stored any more.
func (s *Session) Reset(ctx context.Context, p *ResetPlan) error {
	if p.All {
		if err := s.InvalidateAll(ctx); err != nil {
			return err
		}
	} else {
		for _, in := range p.Targets {
			if err := s.Invalidate(ctx, in); err != nil {
				return err
			}
		}
	}
	stored, err := s.Walk(ctx)
	if err != nil {
		return nil // the firmware cannot list its NV area: nothing to check against
	}
	reset := map[uint32]bool{}
	for _, in := range p.Targets {
		reset[in.Type()] = true
	}
	for _, r := range stored {
		if p.All || reset[r.Header.Type] {
			return fmt.Errorf("the reset was sent but %s is still stored; the firmware may refuse to erase it", s.DB.DescribeType(r.Header.Type))
		}
	}
	return nil
}

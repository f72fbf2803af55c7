package nvconf

import (
	"context"
	"fmt"
)

// Plan is an NV change a write verb built and shows, for Commit to
// perform. Its four kinds are *SetPlan, *ResetPlan, *RestorePlan and
// Recovery; the methods Commit needs are unexported, so a Plan is always
// one of them, built and checked by this package.
//
// 'config apply' is no Plan: it writes no TLV (it sends MFRL), so it has
// nothing to back up, journal or read back (apply.go).
type Plan interface {
	// Op names the change in the journal: set, reset, restore, recover.
	Op() string
	// Describe is the change in words, one line each, as the user
	// confirms it. Commit refuses a confirmed plan whose replan under the
	// lock describes something else.
	Describe() []string
	// replan works the change out again from what the adapter holds now.
	replan(ctx context.Context, s *Session) (Plan, error)
	// touches are the TLV instances the backup takes.
	touches(s *Session) []Instance
	// entry is the journal entry (writes, resets) before Commit names it.
	entry(s *Session) *JournalEntry
	// apply performs the change and reads it back.
	apply(ctx context.Context, s *Session) error
}

// Op is "set".
func (p *SetPlan) Op() string { return "set" }

// Describe lists each parameter change: "TLV NAME: before -> after".
func (p *SetPlan) Describe() []string {
	var out []string
	for _, w := range p.Writes {
		for _, c := range w.Changes {
			out = append(out, fmt.Sprintf("%s %s: %s -> %s", w.Inst, c.Name, c.Before, c.After))
		}
	}
	return out
}

func (p *SetPlan) replan(ctx context.Context, s *Session) (Plan, error) {
	return s.PlanSet(ctx, p.as)
}

func (p *SetPlan) touches(*Session) []Instance {
	var out []Instance
	for _, w := range p.Writes {
		out = append(out, w.Inst)
	}
	return out
}

func (p *SetPlan) entry(s *Session) *JournalEntry {
	e := &JournalEntry{}
	for _, w := range p.Writes {
		e.Writes = append(e.Writes, RawTLV{Header: Header{Type: w.Inst.Type(), Version: w.Version, WriterID: s.Writer, Length: len(w.After)}, Data: w.After})
	}
	return e
}

func (p *SetPlan) apply(ctx context.Context, s *Session) error { return s.ApplySet(ctx, p) }

// Op is "reset".
func (p *ResetPlan) Op() string { return "reset" }

// Describe lists the TLVs reset, then each parameter change.
func (p *ResetPlan) Describe() []string {
	out := p.Names()
	for _, c := range p.Changes {
		out = append(out, fmt.Sprintf("%s: %s -> %s", c.Name, c.Before, c.After))
	}
	return out
}

func (p *ResetPlan) replan(ctx context.Context, s *Session) (Plan, error) {
	return s.PlanReset(ctx, p.names, p.All)
}

func (p *ResetPlan) touches(*Session) []Instance { return p.Targets }

func (p *ResetPlan) entry(*Session) *JournalEntry {
	e := &JournalEntry{All: p.All}
	for _, in := range p.Targets {
		e.Resets = append(e.Resets, in.Type())
	}
	return e
}

func (p *ResetPlan) apply(ctx context.Context, s *Session) error { return s.Reset(ctx, p) }

// Op is "restore".
func (p *RestorePlan) Op() string { return "restore" }

// Describe lists the resets, then each write with its parameter changes.
func (p *RestorePlan) Describe() []string {
	var out []string
	for _, r := range p.Resets {
		out = append(out, "reset "+p.db.DescribeType(r.Header.Type))
	}
	for _, r := range p.Writes {
		out = append(out, "write "+p.db.DescribeType(r.Header.Type))
		out = append(out, p.Deltas[r.Header.Type]...)
	}
	return out
}

func (p *RestorePlan) replan(ctx context.Context, s *Session) (Plan, error) {
	return s.PlanRestore(ctx, p.want, p.opts)
}

func (p *RestorePlan) touches(s *Session) []Instance {
	var out []Instance
	for _, r := range append(append([]RawTLV{}, p.Resets...), p.Writes...) {
		if in, ok := s.DB.InstanceOf(r.Header.Type); ok {
			out = append(out, in)
		}
	}
	return out
}

func (p *RestorePlan) entry(*Session) *JournalEntry {
	e := &JournalEntry{Writes: p.Writes}
	for _, r := range p.Resets {
		e.Resets = append(e.Resets, r.Header.Type)
	}
	return e
}

func (p *RestorePlan) apply(ctx context.Context, s *Session) error { return s.Restore(ctx, p) }

// Op is "recover".
func (r Recovery) Op() string { return "recover" }

// Describe says nothing: a recovery is the journal entry it resolves,
// shown before it is asked (Interrupted), and it is not planned again.
func (r Recovery) Describe() []string { return nil }

// replan keeps the recovery: it was worked out from the journal entry,
// which the lock Commit takes keeps.
func (r Recovery) replan(context.Context, *Session) (Plan, error) { return r, nil }

// touches are the TLVs the recovery writes (the backup takes those).
func (r Recovery) touches(s *Session) []Instance {
	var out []Instance
	for _, w := range r.Writes {
		if in, ok := s.DB.InstanceOf(w.Header.Type); ok {
			out = append(out, in)
		}
	}
	return out
}

func (r Recovery) entry(*Session) *JournalEntry {
	return &JournalEntry{Writes: r.Writes, Resets: r.Resets, All: r.All}
}

func (r Recovery) apply(ctx context.Context, s *Session) error { return s.Recover(ctx, r) }

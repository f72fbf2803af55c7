package nvconf

import "context"

// AfterApply wraps a plan so that f runs after its writes, before Commit
// reads the adapter back: a test changes the emulator's faults there (the
// firmware then refuses the roll-back too). Test builds only.
func AfterApply(p Plan, f func()) Plan { return afterApply{p, f} }

type afterApply struct {
	Plan
	f func()
}

func (a afterApply) replan(ctx context.Context, s *Session) (Plan, error) {
	p, err := a.Plan.replan(ctx, s)
	if err != nil {
		return nil, err
	}
	return afterApply{p, a.f}, nil
}

func (a afterApply) apply(ctx context.Context, s *Session) error {
	err := a.Plan.apply(ctx, s)
	a.f()
	return err
}

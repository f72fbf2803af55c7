package nvconf

import (
	"context"
	"fmt"
	"sort"

	"github.com/cxray/cxray/dev/fwreset"
)

// TriggerNames name the MFRL reset triggers (as dev/fwreset does).
var TriggerNames = map[uint8]string{
	TriggerLivePatch: fwreset.LevelName(TriggerLivePatch), TriggerImmediate: fwreset.LevelName(TriggerImmediate),
	TriggerLinkToggle: fwreset.LevelName(TriggerLinkToggle), TriggerPERST: fwreset.LevelName(TriggerPERST),
}

// ApplyPlan is what `config apply` would do: the pending parameters and
// the firmware reset that makes them current.
type ApplyPlan struct {
	// Pending lists "NAME current -> next" for every pending parameter
	// (empty when the firmware cannot read Current: ReadCurrent false).
	Pending     []string
	ReadCurrent bool
	Trigger     uint8
	AtReboot    bool
	before      map[string]bool
}

// Nothing says there is nothing to apply.
func (p *ApplyPlan) Nothing() bool { return p.ReadCurrent && len(p.Pending) == 0 && !p.AtReboot }

// TriggerName names the reset.
func (p *ApplyPlan) TriggerName() string { return TriggerNames[p.Trigger] }

// ResetUnsupportedError says the firmware does not offer the reset a plan
// needs.
type ResetUnsupportedError struct {
	Trigger  uint8
	Triggers uint8
}

func (e *ResetUnsupportedError) Error() string {
	return fmt.Sprintf("the firmware does not offer the %s reset (MFRL triggers 0x%02x); reboot or power-cycle the host to apply Next Boot", TriggerNames[e.Trigger], e.Triggers)
}

// PlanApply works out the firmware reset that applies Next Boot: the PCIe
// link-toggle trigger where offered (the reset happens when the link
// toggles: at once on the emulator, mstfwreset toggles it on hardware),
// or the next reboot (PERST) with atReboot. The immediate trigger of newer
// firmware must be chosen by a person (the PRM says so), so it is never
// picked. Nothing is sent.
func (s *Session) PlanApply(ctx context.Context, atReboot bool) (*ApplyPlan, error) {
	before, err := s.Query(ctx, QueryOptions{Extended: true})
	if err != nil {
		return nil, err
	}
	p := &ApplyPlan{ReadCurrent: before.ReadCurrent, AtReboot: atReboot, before: map[string]bool{}}
	for _, st := range before.Settings {
		if st.Pending {
			p.before[st.Name] = true
			if before.ReadCurrent {
				p.Pending = append(p.Pending, fmt.Sprintf("%s %s -> %s", st.Name, valueText(st.Current), valueText(st.Next)))
			}
		}
	}
	caps, err := s.FirmwareResetCaps(ctx)
	if err != nil {
		return nil, err
	}
	p.Trigger = TriggerPERST
	if !atReboot && caps.Triggers&TriggerLinkToggle != 0 {
		p.Trigger = TriggerLinkToggle
	}
	if caps.Triggers != 0 && caps.Triggers&p.Trigger == 0 {
		return nil, &ResetUnsupportedError{Trigger: p.Trigger, Triggers: caps.Triggers}
	}
	return p, nil
}

func valueText(v *Value) string {
	if v == nil {
		return "-"
	}
	return v.Text
}

// ApplyResult is what a firmware reset changed.
type ApplyResult struct {
	Applied, StillPending []string
	ArmedAtReboot         bool
	// ReadCurrent false: the firmware cannot say whether it happened.
	ReadCurrent bool
}

// Apply sends the planned reset and reads the configuration back to say
// what took effect.
func (s *Session) Apply(ctx context.Context, p *ApplyPlan) (*ApplyResult, error) {
	if err := s.FirmwareReset(ctx, p.Trigger); err != nil {
		return nil, err
	}
	s.ForgetAll()
	after, err := s.Query(ctx, QueryOptions{Extended: true})
	if err != nil {
		return nil, fmt.Errorf("the reset was requested, but reading the configuration back failed: %w", err)
	}
	r := &ApplyResult{Applied: []string{}, StillPending: []string{}, ArmedAtReboot: p.Trigger == TriggerPERST, ReadCurrent: after.ReadCurrent}
	still := map[string]bool{}
	for _, st := range after.Settings {
		if st.Pending {
			still[st.Name] = true
			r.StillPending = append(r.StillPending, st.Name)
		}
	}
	for name := range p.before {
		if !still[name] {
			r.Applied = append(r.Applied, name)
		}
	}
	sort.Strings(r.Applied)
	return r, nil
}

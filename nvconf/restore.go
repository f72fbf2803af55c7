package nvconf

import (
	"context"
	"fmt"

	"github.com/cxray/cxray/nvconf/rawfile"
	"github.com/cxray/cxray/nvconf/tlv"
)

// RestoreOptions tune PlanRestore.
type RestoreOptions struct {
	// ResetMissing also returns to their defaults the TLVs stored on the
	// device but not in the file. Without it they are left as they are:
	// a file that does not hold a TLV says nothing about it, and a file
	// cut short must not reset what it lost.
	ResetMissing bool
}

// RestorePlan is a validated restore: the TLVs to write, the TLVs to
// reset, and the stored TLVs left alone.
type RestorePlan struct {
	// Resets are stored TLVs the file does not hold, to be reset (only
	// with ResetMissing); Kept the same TLVs when they are left alone.
	Resets, Kept []RawTLV
	Writes       []RawTLV
	Unchanged    int
	// Deltas are the parameter changes of each write ("NAME: a -> b").
	Deltas map[uint32][]string
	want   []RawTLV
	opts   RestoreOptions
	db     *DB
}

// Empty says the device already holds what the file says.
func (p *RestorePlan) Empty() bool { return len(p.Writes) == 0 && len(p.Resets) == 0 }

// PlanRestore checks every TLV of want against the parameter database and
// the firmware, and compares it with what is stored. Nothing is written.
func (s *Session) PlanRestore(ctx context.Context, want []RawTLV, o RestoreOptions) (*RestorePlan, error) {
	var problems []string
	seen := map[uint32]bool{}
	for _, r := range want {
		name := s.DB.DescribeType(r.Header.Type)
		if seen[r.Header.Type] {
			problems = append(problems, fmt.Sprintf("%s appears twice in the file", name))
		}
		seen[r.Header.Type] = true
		in, ok := s.DB.InstanceOf(r.Header.Type)
		if !ok {
			problems = append(problems, fmt.Sprintf("type 0x%08x is not in the parameter database (%s); use a newer one with --nvdb", r.Header.Type, s.DB.Source))
			continue
		}
		if len(r.Data) != in.TLV.Size {
			problems = append(problems, fmt.Sprintf("%s holds %d bytes; the file has %d", name, in.TLV.Size, len(r.Data)))
			continue
		}
		if tlv.SplitType(r.Header.Type).Class == in.TLV.Class {
			sp, err := s.Support(ctx, in)
			if err != nil {
				return nil, err
			}
			if !sp.Write {
				problems = append(problems, fmt.Sprintf("the firmware does not allow writing %s", name))
			}
		}
	}
	if len(problems) > 0 {
		return nil, &ValidationError{Problems: problems}
	}
	have, err := s.Walk(ctx)
	if err != nil {
		return nil, err
	}
	d := rawfile.Compare(have, want)
	p := &RestorePlan{Unchanged: d.Same, Deltas: map[uint32][]string{}, want: want, opts: o, db: s.DB}
	changed := map[uint32]bool{}
	for _, c := range d.Changed {
		changed[c[1].Header.Type] = true
	}
	for _, o := range d.OnlyB {
		changed[o.Header.Type] = true
	}
	stored := map[uint32][]byte{}
	for _, h := range have {
		stored[h.Header.Type] = h.Data
	}
	for _, r := range want {
		if !changed[r.Header.Type] {
			continue
		}
		p.Writes = append(p.Writes, r)
		if in, ok := s.DB.InstanceOf(r.Header.Type); ok {
			p.Deltas[r.Header.Type] = ParamDelta(in, stored[r.Header.Type], r.Data)
		}
	}
	if o.ResetMissing {
		p.Resets = d.OnlyA
	} else {
		p.Kept = d.OnlyA
	}
	return p, nil
}

// Restore performs a planned restore (resets first, then writes) and
// reads the result back to compare it with the file.
func (s *Session) Restore(ctx context.Context, p *RestorePlan) error {
	for _, r := range p.Resets {
		if err := s.InvalidateType(ctx, r.Header.Type); err != nil {
			return err
		}
	}
	for _, r := range p.Writes {
		if err := s.WriteRaw(ctx, r); err != nil {
			return err
		}
	}
	now, err := s.Walk(ctx)
	if err != nil {
		return fmt.Errorf("restored, but reading the configuration back failed: %w", err)
	}
	check := rawfile.Compare(now, p.want)
	if len(check.Changed) > 0 || len(check.OnlyB) > 0 || len(check.OnlyA) > len(p.Kept) {
		return fmt.Errorf("restored, but the stored configuration differs from the file (%d changed, %d missing, %d extra); the firmware may have adjusted values",
			len(check.Changed), len(check.OnlyB), len(check.OnlyA)-len(p.Kept))
	}
	return nil
}

// ParamDelta lists "NAME: a -> b" for the user-visible parameters that
// differ between two images of a TLV (a or b nil: not stored).
func ParamDelta(in Instance, a, b []byte) []string {
	var out []string
	for _, p := range in.TLV.Params {
		if p.MlxName == "" {
			continue
		}
		for i := 0; i < p.Elems(); i++ {
			x := "(not stored)"
			if a != nil && len(a) >= in.TLV.Size {
				x = p.FormatData(a, i)
			}
			y := "(not stored)"
			if b != nil && len(b) >= in.TLV.Size {
				y = p.FormatData(b, i)
			}
			if x != y {
				out = append(out, fmt.Sprintf("%s: %s -> %s", ElementName(p, in, i), x, y))
			}
		}
	}
	return out
}

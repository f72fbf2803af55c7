package adapter

import (
	"context"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/prm"
)

// Register reading for features that decode registers the adapter has no
// typed view of (link diagnostics: PDDR pages, PPCNT groups, PPLM, SLRG).
// They read through the same path as the adapter's own reads, and find
// fields by their built-in (Rev 0.57) paths in any revision (fields.go).

// ReadRegister reads one register at an index (nil for a register
// without one). Index fields not given are filled in by dev (0, or the
// function's own local port), which covers the plane_ind and lp_gl fields
// Rev 0.59 and later add. A transport failure drops the register path, so
// the next read reopens it. On the kernel backend the error matches
// errors.ErrUnsupported.
func (a *Adapter) ReadRegister(ctx context.Context, reg string, index Index) (*dev.Reading, error) {
	return a.get(ctx, reg, index)
}

// FieldOf reads a number (or joined 64-bit counter) of a decoded register
// by its built-in path, in whatever revision decoded it.
func FieldOf(d *prm.Decoded, reg, path string) (uint64, bool) { return fieldOf(d, reg, path) }

// EnumTextOf is a field's enum name (from the built-in database when the
// decoding one names none), or its number; "" when the field is missing.
func EnumTextOf(d *prm.Decoded, reg, path string) string { return enumText(d, reg, path) }

// ValueOf finds a field by its built-in path (for arrays: the raw words).
func ValueOf(d *prm.Decoded, reg, path string) (prm.Value, bool) { return valueOf(d, reg, path) }

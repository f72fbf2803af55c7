package dev

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cxray/cxray/prm"
)

// capGroups are the capability registers and the ID ranges their masks
// cover: bit n of group g is register base + 128*g + n.
var capGroups = []struct {
	reg    string
	base   uint32
	groups int
}{
	{"MCAM", 0x9000, 3},
	{"PCAM", 0x5000, 1},
	{"QCAM", 0x4000, 1},
}

// Capabilities says which registers the firmware advertises: the masks of
// MCAM, PCAM and QCAM. A register outside every mask is not covered.
type Capabilities struct {
	supported, covered map[uint32]bool
}

// Supports says whether the firmware advertises register id, and whether
// the masks cover it at all.
func (c Capabilities) Supports(id uint32) (supported, covered bool) {
	return c.supported[id], c.covered[id]
}

// Capabilities reads the capability masks. A capability register the
// firmware lacks leaves its range uncovered.
func (d *Device) Capabilities(ctx context.Context) (Capabilities, error) {
	c := Capabilities{supported: map[uint32]bool{}, covered: map[uint32]bool{}}
	supported, covered := c.supported, c.covered
	for _, cg := range capGroups {
		for g := 0; g < cg.groups; g++ {
			r, err := d.Get(ctx, cg.reg, []prm.Assignment{{Path: "access_reg_group", Value: fmt.Sprint(g)}, {Path: "feature_group", Value: "0"}}, nil, 0)
			if err != nil {
				// A group the firmware does not have answers bad parameter
				// (no such instance): its registers stay uncovered.
				if IsNotSupported(err) || errors.Is(err, ErrNoSuchInstance) {
					continue
				}
				var fe *prm.FieldError
				if errors.As(err, &fe) {
					continue // this database's layout of the register differs
				}
				return c, err
			}
			var mask prm.Value
			found := false
			for i := 0; i < r.Decoded.Root().Len(); i++ {
				k := r.Decoded.Root().Kid(i)
				if strings.HasSuffix(k.Step().Name, "access_reg_cap_mask") {
					mask, found = k, true
					break
				}
			}
			if !found {
				continue
			}
			// The mask is big-endian: its last bit is register base+0.
			bits := mask.Raw()
			if mask.Kind() == prm.KindArray && !mask.IsText() {
				bits = nil
				for j := 0; j < mask.Len(); j++ {
					u := mask.Kid(j).Uint()
					bits = append(bits, byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
				}
			}
			nbits := len(bits) * 8
			for n := 0; n < nbits; n++ {
				id := cg.base + uint32(128*g+n)
				covered[id] = true
				byteIdx := len(bits) - 1 - n/8
				supported[id] = bits[byteIdx]>>(n%8)&1 == 1
			}
		}
	}
	return c, nil
}

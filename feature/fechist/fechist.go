// Package fechist reads a port's RS-FEC histogram the way mlxlink's
// --rx_fec_histogram --show_histogram does: PPHCR says which FEC it counts
// (active_hist_type) and what each bin holds (bin_range low..high symbol
// errors per codeword); PPCNT group RS_FEC_Histogram_group (0x23) counts
// the codewords of each bin since the group was cleared. Codewords in bins
// past the FEC's correction limit were not corrected.
package fechist

import (
	"context"
	"errors"
	"fmt"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/regpath"
)

// group is the PPCNT group of the histogram counters; Group is how the
// command line prints it.
const group uint64 = 0x23

var Group = fmt.Sprintf("%#x", group)

// Bin is one bin: codewords with Low..High symbol errors.
type Bin struct {
	Low   uint64  `json:"low_symbol_errors"`
	High  uint64  `json:"high_symbol_errors"`
	Count *uint64 `json:"codewords"`
}

// Histogram is one port's.
type Histogram struct {
	Port int `json:"port"`
	// Type is PPHCR active_hist_type, by its enum name where the database
	// names it; "" with Active false when the link runs no RS-FEC (or is
	// down): there is nothing to count.
	Type   string `json:"type,omitempty"`
	TypeID uint64 `json:"type_id"`
	Active bool   `json:"active"`
	Bins   []Bin  `json:"bins,omitempty"`
	// Codewords is the sum of the bins; Worst the highest bin that holds
	// any (its Low), nil when none does.
	Codewords uint64  `json:"codewords"`
	Worst     *uint64 `json:"worst_bin_low,omitempty"`
}

// typeNames are PPHCR active_hist_type's values (the database gives them
// as description text only).
var typeNames = map[uint64]string{1: "KP4 RS-FEC (544,514)", 2: "LL RS-FEC (272,257+1)", 3: "KR4 RS-FEC (528,514)"}

// Read reads the histogram of port local. A register the firmware or the
// database does not have is an error the caller classifies (the kernel
// backend has neither).
func Read(ctx context.Context, ad *adapter.Adapter, local int) (*Histogram, error) {
	if !ad.HasRegisters() {
		return nil, fmt.Errorf("the FEC histogram is read from PPHCR and PPCNT, registers the kernel backend does not reach; use -d with a PCI address: %w", prm.ErrInput)
	}
	lp := adapter.LocalPort(local)
	x, err := ad.ReadRegister(ctx, "PPHCR", lp.With("hist_type", 0).Join(link.OptionalIndex(ad.DB(), "PPHCR", lp)))
	var nf *prm.NotFoundError
	if errors.As(err, &nf) {
		return nil, fmt.Errorf("database finding: %s has no PPHCR (the histogram's configuration; Rev 0.56 and later have it), so the histogram cannot be read with it; give a newer database (--adb): %w", ad.DB().Revision, prm.ErrInput)
	}
	if err != nil {
		return nil, fmt.Errorf("port %d PPHCR: %w", local, err)
	}
	d := x.Decoded
	h := &Histogram{Port: local}
	h.TypeID, _ = adapter.FieldOf(d, "PPHCR", regpath.PPHCRActiveHistType)
	h.Type, h.Active = typeNames[h.TypeID], h.TypeID != 0
	if !h.Active {
		return h, nil
	}
	nbins, _ := adapter.FieldOf(d, "PPHCR", regpath.PPHCRNumOfBins)
	y, err := ad.ReadRegister(ctx, "PPCNT", lp.Group(group).Join(link.OptionalIndex(ad.DB(), "PPCNT", lp)))
	if err != nil {
		return nil, fmt.Errorf("port %d PPCNT group %s: %w", local, Group, err)
	}
	for i := 0; i < int(nbins) && i < len(regpath.PPHCRBinLow); i++ {
		lo, ok1 := adapter.FieldOf(d, "PPHCR", regpath.PPHCRBinLow[i])
		hi, ok2 := adapter.FieldOf(d, "PPHCR", regpath.PPHCRBinHigh[i])
		if !ok1 || !ok2 {
			break // the database describes fewer bins than the firmware counts
		}
		b := Bin{Low: lo, High: hi}
		if n, ok := adapter.FieldOf(y.Decoded, "PPCNT", regpath.PPCNTRSFECHist[i]); ok {
			b.Count = &n
			h.Codewords += n
			if n > 0 {
				l := lo
				h.Worst = &l
			}
		}
		h.Bins = append(h.Bins, b)
	}
	return h, nil
}

package optics

import "fmt"

// FromEthtool lays out the flat bytes of an `ethtool -m DEV raw on` (or
// `hex on`) dump as the module's pages, the way ethtool orders them
// (ethtool's sfpid.c, qsfp.c, cmis.c; Linux's ETH_MODULE_SFF_* lengths):
//
//   - SFF-8472 (SFP): bytes 0..255 are A0h, 256..511 A2h.
//   - SFF-8636 (QSFP): 0..127 the lower page, 128..255 upper page 00h, and
//     in a 640-byte dump upper pages 01h, 02h and 03h.
//   - CMIS: 0..127 the lower page, 128..255 upper page 00h. A longer CMIS
//     dump's later pages depend on the ethtool version, so they are left
//     out with a note rather than guessed.
//
// Notes say what was left out or short.
func FromEthtool(b []byte) (*Image, []string, error) {
	if len(b) < HalfSize {
		return nil, nil, fmt.Errorf("the dump is %d bytes; a module dump starts with the %d-byte lower page (ethtool -m DEV raw on, or hex on)", len(b), HalfSize)
	}
	im := &Image{}
	var notes []string
	add := func(a PageAddr, off int) bool {
		if off >= len(b) {
			return false
		}
		end := min(off+HalfSize, len(b))
		if end-off < HalfSize {
			notes = append(notes, fmt.Sprintf("%s: the dump ends after %d of its %d bytes", a, end-off, HalfSize))
		}
		im.Add(a, b[off:end])
		return true
	}
	std := StandardOf(b[0])
	switch std {
	case SFF8472:
		add(PageAddr{I2C: AddrA0}, 0)
		add(PageAddr{I2C: AddrA0, Offset: HalfSize}, 128)
		add(PageAddr{I2C: AddrA2}, 256)
		add(PageAddr{I2C: AddrA2, Offset: HalfSize}, 384)
		if len(b) > 512 {
			notes = append(notes, fmt.Sprintf("bytes past 512 (%d more) are not part of an SFF-8472 dump and were left out", len(b)-512))
		}
	case SFF8636:
		add(PageAddr{I2C: AddrA0}, 0)
		for i, page := range []uint8{0, 1, 2, 3} {
			add(PageAddr{I2C: AddrA0, Page: page, Offset: HalfSize}, 128*(i+1))
		}
		if len(b) > 640 {
			notes = append(notes, fmt.Sprintf("bytes past 640 (%d more) are not part of an SFF-8636 dump and were left out", len(b)-640))
		}
	case CMIS:
		add(PageAddr{I2C: AddrA0}, 0)
		add(PageAddr{I2C: AddrA0, Offset: HalfSize}, 128)
		if len(b) > 256 {
			notes = append(notes, fmt.Sprintf("the %d bytes past upper page 00h were left out: a CMIS dump's later pages are ordered differently by ethtool versions; lane monitors and thresholds need them (read the module with cxray module -d DEV)", len(b)-256))
		}
	default:
		im.Add(PageAddr{I2C: AddrA0}, b)
		notes = append(notes, fmt.Sprintf("identifier 0x%02x is not a module type whose dump layout cxray knows; only the lower page was used", b[0]))
	}
	return im, notes, nil
}

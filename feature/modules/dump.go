package modules

import (
	"fmt"
	"strings"

	"github.com/cxray/cxray/feature/hexdump"
	"github.com/cxray/cxray/optics"
)

// Input is the verdict category of a dump that cannot support a verdict on
// the module: cut short, starting past the identifier, another kind of
// bytes. What is wrong is the input, never the hardware.
const Input = "input"

// Verdict codes of dumps.
const (
	VerdictPartialDump = "partial_dump"
	VerdictNotAModule  = "not_a_module"
)

// identityFields are the bytes a module dump must hold before the module
// can be judged, per layout as ethtool -m lays them out (optics.FromEthtool):
// the identifier, and the vendor name, part number and serial number
// (SFF-8472 A0h 20..67; SFF-8636 upper page 00h 148..195; CMIS upper page
// 00h 129..199).
func identityFields(std string) []struct {
	name     string
	from, to int
} {
	type f = struct {
		name     string
		from, to int
	}
	switch std {
	case optics.SFF8472:
		return []f{{"identifier", 0, 1}, {"vendor fields", 20, 68}}
	case optics.SFF8636:
		return []f{{"identifier", 0, 1}, {"vendor fields", 148, 196}}
	case optics.CMIS:
		return []f{{"identifier", 0, 1}, {"vendor fields", 129, 200}}
	}
	return []f{{"identifier", 0, 1}}
}

// CheckDump says whether a dump read from a file or a paste can be judged
// as a module's memory. It returns an input verdict when it cannot — the
// dump misses the identifier or the vendor fields (a partial hexdump, one
// cut short), its identifier is no module type (random bytes, a register
// dump), or it holds register fields — and then no hardware verdict may be
// given on it. nil means the dump is a module's memory to decode.
func CheckDump(d *hexdump.Dump) *optics.Verdict {
	if d.Bytes == nil {
		return &optics.Verdict{Code: VerdictNotAModule, Category: Input,
			Summary:  fmt.Sprintf("the input holds register fields (%s), not module memory", d.Format),
			NextStep: "decode it with cxray prm decode REGISTER; for a module give ethtool -m DEV raw on (or hex on) output"}
	}
	if len(d.Bytes) == 0 || d.Missing(0, 1) {
		return &optics.Verdict{Code: VerdictPartialDump, Category: Input,
			Summary:  "the dump " + coverage(d) + ": identifier and vendor fields missing",
			Evidence: d.Notes,
			NextStep: "paste the whole dump from offset 0 (ethtool -m DEV hex on, or raw on > FILE); hexdump -C prints '*' for repeated lines, which is fine when its offsets are kept"}
	}
	std := optics.StandardOf(d.Bytes[0])
	if std == "" {
		return &optics.Verdict{Code: VerdictNotAModule, Category: Input,
			Summary:  fmt.Sprintf("byte 0 is 0x%02x, which is no module identifier cxray reads (SFF-8024: 0x03 SFP, 0x0c/0x0d/0x11 QSFP, 0x18/0x19/0x1e CMIS): this does not look like a module's memory", d.Bytes[0]),
			NextStep: "check what the file holds (a register dump, another device's bytes?); a module dump comes from ethtool -m DEV raw on (or hex on)"}
	}
	var missing []string
	for _, f := range identityFields(std) {
		if d.Missing(f.from, f.to) {
			missing = append(missing, fmt.Sprintf("%s (bytes 0x%x–0x%x)", f.name, f.from, f.to-1))
		}
	}
	if len(missing) > 0 {
		return &optics.Verdict{Code: VerdictPartialDump, Category: Input,
			Summary:  fmt.Sprintf("the %s dump %s: %s missing", std, coverage(d), strings.Join(missing, " and ")),
			Evidence: d.Notes,
			NextStep: "paste the whole dump (ethtool -m DEV hex on, or raw on > FILE)"}
	}
	return nil
}

// coverage says which bytes a dump holds: "covers bytes 0xb0–0xff only".
func coverage(d *hexdump.Dump) string {
	if len(d.Bytes) == 0 {
		return "holds no bytes"
	}
	var have []string
	at := 0
	for _, g := range append(append([]hexdump.Range{}, d.Gaps...), hexdump.Range{From: len(d.Bytes), To: len(d.Bytes)}) {
		if g.From > at {
			have = append(have, fmt.Sprintf("0x%x–0x%x", at, g.From-1))
		}
		at = g.To
	}
	if len(have) == 0 {
		return "holds no bytes"
	}
	return "covers bytes " + strings.Join(have, ", ") + " only"
}

// FromDump is the module report of a dump: the decode and verdicts of
// FromImage, or, when CheckDump finds the input cannot be judged, that
// input verdict alone (no hardware verdict on a partial input). notes are
// the reader's and the layout's.
func FromDump(d *hexdump.Dump, source string, raw bool) (r *Report, notes []string, err error) {
	notes = append([]string{}, d.Notes...)
	if v := CheckDump(d); v != nil {
		return &Report{Port: 0, Module: -1, EEPROMAccess: source, Marks: []optics.Mark{}, Verdicts: []optics.Verdict{*v}}, notes, nil
	}
	im, more, err := optics.FromEthtool(d.Bytes)
	if err != nil {
		return nil, nil, err
	}
	return FromImage(im, source, raw), append(notes, more...), nil
}

// InputOnly says the report's only verdicts are about its input.
func (r *Report) InputOnly() bool {
	for _, v := range r.Verdicts {
		if v.Category != Input {
			return false
		}
	}
	return len(r.Verdicts) > 0
}

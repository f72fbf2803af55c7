package ifc

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cxray/cxray/internal/lazyre"
	"github.com/cxray/cxray/prm"
)

// The cross-check lays NVIDIA's ADB and the kernel's mlx5_ifc.h side by side.
// Both are compiled with prm's plan compiler and flattened into leaves with
// absolute MSB-first positions. Leaves are paired by name first (with a few
// justified name rules and small explicit tables), and what is left is
// classified by position: renamed, split/merged, overlapping, or present in
// one source only.

// Reading is one source's account of a field.
type Reading struct {
	Path     string // as the source names it, e.g. "lane_module_mapping[0].module"
	Bit      int    // absolute MSB-first offset of the (first) element
	Width    int    // bits of one element
	Count    int    // elements of a fixed scalar array, 0 for a scalar
	Variable bool   // runs to the end of the buffer
}

// End is the bit after the reading (after its first element if variable).
func (r Reading) End() int {
	if r.Count > 0 && !r.Variable {
		return r.Bit + r.Width*r.Count
	}
	return r.Bit + r.Width
}

// String gives the path with the MSB-first position and the ADB-style
// dword offset: "status @0x18/8 (0x0.0)".
func (r Reading) String() string {
	return fmt.Sprintf("%s @0x%x/%s (%s)", r.Path, r.Bit, shapeText(r), r.ADBOffset())
}

// ADBOffset is the offset as the ADB writes it: "0xB.b" (dword-aligned byte,
// LSB-based bit of the first element) below 32 bits, the byte offset
// "0xB.0" otherwise (with ".b" if the field does not start on a byte).
func (r Reading) ADBOffset() string {
	if r.Width < 32 && r.Bit%32+r.Width <= 32 {
		return fmt.Sprintf("0x%x.%d", (r.Bit/32)*4, 32-r.Bit%32-r.Width)
	}
	return fmt.Sprintf("0x%x.%d", r.Bit/8, r.Bit%8)
}

// Pair is a field both sources have.
type Pair struct {
	Kernel, ADB Reading
	Note        string // how the names were paired, when not identical
}

// Split is a set of fields of one source that cover exactly the bits of a
// set of fields of the other: a 64-bit value against _high/_low halves, a
// dword against the bit fields inside it, a byte array against a dword
// array.
type Split struct {
	Kernel, ADB []Reading
	Note        string
}

// Mismatch is a real disagreement: the same field (by name) at a different
// place or width ("position"), or fields of different names whose bit ranges
// cross, or one inside a field of another size ("overlap").
type Mismatch struct {
	Kind        string // "position" (same name) or "overlap" (different names)
	Kernel, ADB Reading
	// Reason is set when the allow-list explains the difference.
	Reason string
}

// Only is a field one source has and the other treats as reserved (or, with
// Overlaps set, covers with fields that were paired otherwise).
type Only struct {
	Reading
	Overlaps []string // fields of the other source over the same bits
}

// Layout is the comparison of one ADB node with one kernel struct.
type Layout struct {
	Register   string // ADB register name ("PMAOS"), "" for a plain layout
	ID         uint32
	KernelID   uint32 // the kernel's MLX5_REG_* ID for it, 0 if none
	ADBNode    string
	KernelNode string
	KernelAt   string // file:line of the kernel definition
	ADBBytes   int
	KernelBits int
	Via        string // how the names were paired

	Matched    []Pair
	Renamed    []Pair
	Splits     []Split
	Mismatches []Mismatch
	OnlyADB    []Only
	OnlyKernel []Only
	Errors     []string
}

// Unexplained returns the mismatches the allow-list does not explain.
func (l *Layout) Unexplained() []Mismatch {
	var out []Mismatch
	for _, m := range l.Mismatches {
		if m.Reason == "" {
			out = append(out, m)
		}
	}
	return out
}

// Report is the whole cross-check.
type Report struct {
	ADBSource, ADBRevision string
	KernelSource           string

	Registers []*Layout // registers both sources describe
	Layouts   []*Layout // other layouts both describe (not reached from a register)

	OnlyADB    []string // ADB registers with no kernel struct ("MGIR (0x9020, mgir_ext)")
	OnlyKernel []string // kernel registers (MLX5_REG_* IDs or *_reg structs) not in the ADB
	IDErrors   []string // a register whose ID differs between the sources
	// Stale lists allow-list entries that matched nothing in this header:
	// an entry for another kernel's header (6.1 declares PPCNT prio_tc in
	// 3 bits, 6.12 in 5), or one whose sources changed. The test over every
	// installed header (TestCrossCheckInstalled) fails on an entry no
	// header needs; one header's report only lists them.
	Stale  []string
	Errors []string
}

// Counts sums the categories over every compared layout.
type Counts struct {
	Layouts, Matched, Renamed, Splits, OnlyADB, OnlyKernel, Mismatches, Explained int
}

// Counts sums the registers (regs true) or the other layouts.
func (r *Report) Counts(regs bool) Counts {
	ls := r.Layouts
	if regs {
		ls = r.Registers
	}
	var c Counts
	for _, l := range ls {
		c.Layouts++
		c.Matched += len(l.Matched)
		c.Renamed += len(l.Renamed)
		c.Splits += len(l.Splits)
		c.OnlyADB += len(l.OnlyADB)
		c.OnlyKernel += len(l.OnlyKernel)
		for _, m := range l.Mismatches {
			if m.Reason != "" {
				c.Explained++
			} else {
				c.Mismatches++
			}
		}
	}
	return c
}

// Failed says whether anything needs a person: an unexplained mismatch, a
// register ID difference or an error.
func (r *Report) Failed() bool {
	if len(r.IDErrors)+len(r.Errors) > 0 {
		return true
	}
	for _, l := range append(append([]*Layout{}, r.Registers...), r.Layouts...) {
		if len(l.Unexplained()) > 0 || len(l.Errors) > 0 {
			return true
		}
	}
	return false
}

// Summary is a short text report: counts, then every mismatch with both
// readings, then the registers only one source has.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ADB %s (%s) vs kernel %s\n", r.ADBSource, r.ADBRevision, r.KernelSource)
	for _, regs := range []bool{true, false} {
		c := r.Counts(regs)
		what := "registers"
		if !regs {
			what = "other layouts"
		}
		fmt.Fprintf(&b, "%d %s in both: %d fields match, %d renamed, %d split/merged, %d only in ADB, %d only in kernel, %d mismatches (+%d explained)\n",
			c.Layouts, what, c.Matched, c.Renamed, c.Splits, c.OnlyADB, c.OnlyKernel, c.Mismatches, c.Explained)
	}
	for _, l := range append(append([]*Layout{}, r.Registers...), r.Layouts...) {
		for _, m := range l.Mismatches {
			tag := "MISMATCH"
			if m.Reason != "" {
				tag = "explained"
			}
			fmt.Fprintf(&b, "  %s %s %s: kernel %s, ADB %s", tag, l.title(), m.Kind, m.Kernel, m.ADB)
			if m.Reason != "" {
				fmt.Fprintf(&b, " -- %s", m.Reason)
			}
			b.WriteByte('\n')
		}
		for _, e := range l.Errors {
			fmt.Fprintf(&b, "  ERROR %s: %s\n", l.title(), e)
		}
	}
	for _, e := range r.IDErrors {
		fmt.Fprintf(&b, "  ID MISMATCH %s\n", e)
	}
	for _, s := range r.Stale {
		fmt.Fprintf(&b, "  unused allow-list entry %s (this header does not need it; another kernel's may)\n", s)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "  ERROR %s\n", e)
	}
	fmt.Fprintf(&b, "%d registers only in the ADB: %s\n", len(r.OnlyADB), strings.Join(r.OnlyADB, ", "))
	fmt.Fprintf(&b, "%d registers only in the kernel: %s\n", len(r.OnlyKernel), strings.Join(r.OnlyKernel, ", "))
	return b.String()
}

// Detail is the full field-by-field text of one layout.
func (l *Layout) Detail() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ADB %s (%d bytes) vs kernel %s (%d bits, %s)", l.title(), l.ADBNode, l.ADBBytes, l.KernelNode, l.KernelBits, l.KernelAt)
	if l.Via != "" {
		fmt.Fprintf(&b, " [%s]", l.Via)
	}
	b.WriteByte('\n')
	for _, m := range l.Mismatches {
		fmt.Fprintf(&b, "  mismatch (%s): kernel %s | ADB %s", m.Kind, m.Kernel, m.ADB)
		if m.Reason != "" {
			fmt.Fprintf(&b, " -- explained: %s", m.Reason)
		}
		b.WriteByte('\n')
	}
	for _, p := range l.Matched {
		if p.Kernel == p.ADB {
			fmt.Fprintf(&b, "  match    %s%s\n", p.Kernel, note(p.Note))
		} else {
			fmt.Fprintf(&b, "  match    kernel %s | ADB %s%s\n", p.Kernel, p.ADB, note(p.Note))
		}
	}
	for _, p := range l.Renamed {
		fmt.Fprintf(&b, "  renamed  kernel %s | ADB %s%s\n", p.Kernel, p.ADB, note(p.Note))
	}
	for _, s := range l.Splits {
		fmt.Fprintf(&b, "  split    kernel %s | ADB %s%s\n", readings(s.Kernel), readings(s.ADB), note(s.Note))
	}
	for _, o := range l.OnlyADB {
		fmt.Fprintf(&b, "  ADB only %s%s\n", o.Reading, overlaps(o.Overlaps))
	}
	for _, o := range l.OnlyKernel {
		fmt.Fprintf(&b, "  kernel only %s%s\n", o.Reading, overlaps(o.Overlaps))
	}
	for _, e := range l.Errors {
		fmt.Fprintf(&b, "  error: %s\n", e)
	}
	return b.String()
}

func (l *Layout) title() string {
	if l.Register != "" {
		return l.Register
	}
	return l.ADBNode
}

func note(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func overlaps(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return " (same bits as " + strings.Join(s, ", ") + ")"
}

func readings(rs []Reading) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, " + ")
}

// ---- which kernel struct is which ADB register ----

// registerNames pairs ADB register nodes with kernel structs whose names the
// general rule (drop _ext, then try as is, with _reg, without _reg) misses.
var registerNames = map[string]string{
	// QETCR (0x4005): the kernel calls its layout qetc_reg and reads it with
	// MLX5_REG_QETCR.
	"qetcr_ext": "qetc_reg",
}

// kernelRegisterNames gives the struct for a kernel MLX5_REG_* name that
// is not <name>_reg, so that the list of registers only the kernel has can
// name the layout.
var kernelRegisterNames = map[string]string{
	"FPGA_CAP":        "fpga_cap",
	"FPGA_CTRL":       "fpga_ctrl",
	"FPGA_ACCESS_REG": "fpga_access_reg",
	"RESOURCE_DUMP":   "resource_dump",
}

// kernelStruct finds the kernel struct for an ADB register node.
func kernelStruct(h *Header, adbNode string) (string, string) {
	if k, ok := registerNames[adbNode]; ok {
		if _, ok := h.Nodes[k]; ok {
			return k, "explicit name table"
		}
	}
	base := strings.TrimSuffix(adbNode, "_ext")
	for _, c := range []struct{ name, via string }{
		{base, ""},
		{base + "_reg", "kernel adds _reg"},
		{strings.TrimSuffix(base, "_reg"), "kernel drops _reg"},
		{strings.TrimPrefix(base, "register_"), "kernel drops register_"},
	} {
		if _, ok := h.Nodes[c.name]; ok && !strings.Contains(c.name, ".") {
			return c.name, c.via
		}
	}
	return "", ""
}

// ---- flattening ----

// choice is one union along a leaf's path and the member it goes through.
type choice struct{ union, member string }

type leaf struct {
	r       Reading
	untyped bool   // a kernel "u8 x[]": no element width to compare
	key     string // canonical path, the same spelling on both sides
	flat    string // key without union and member segments
	ctx     []choice
	used    bool
}

// unionInfo lists an ADB union's members (canonical name → layout type
// without _ext), so that kernel members can be paired with them.
type unionInfo map[string]string

type side struct {
	leaves     []*leaf
	containers map[string]*leaf // structs and arrays by canonical path
	unions     map[string]unionInfo
}

// unionMembers pairs kernel union members with ADB members whose names and
// layout types both differ, keyed "kernel union node.member". The pairing
// is by the selector value each source uses for the member.
var unionMembers = map[string]string{
	// PPCNT counter groups: the kernel's group constants (device.h) and the
	// ADB's grp enum give the same values.
	"eth_cntrs_grp_data_layout_auto.eth_per_tc_prio_grp_data_layout":         "eth_per_traffic_class_layout",      // grp 0x11, Per_Traffic_Class_Counters
	"eth_cntrs_grp_data_layout_auto.eth_per_tc_congest_prio_grp_data_layout": "eth_per_traffic_class_cong_layout", // grp 0x13, Per_Traffic_Class_Congestion_Counters
	"eth_cntrs_grp_data_layout_auto.phys_layer_statistical_cntrs":            "phys_layer_stat_cntrs",             // grp 0x16, Physical_Layer_Statistical_Counters
	"eth_cntrs_grp_data_layout_auto.ib_port_cntrs_grp_data_layout":           "IB_portcntrs_attribute_grp_data",   // grp 0x20, InfiniBand_Port_Counters
	// MPCNT: MLX5_PCIE_PERFORMANCE_COUNTERS_GROUP is 0x0, the ADB's
	// PCIE_performance_counters.
	"pcie_cntrs_grp_data_layout_auto.pcie_perf_cntrs_grp_data_layout": "pcie_perf_counters",
}

type flattener struct {
	adb bool
	ref *side   // the ADB side, when flattening the kernel
	h   *Header // the kernel header, when flattening the kernel
	out *side
}

func flatten(p *prm.Plan, h *Header, ref *side) *side {
	f := &flattener{adb: h == nil, ref: ref, h: h, out: &side{containers: map[string]*leaf{}, unions: map[string]unionInfo{}}}
	if p.Root.Kind == prm.KindUint || p.Root.Kind == prm.KindBytes {
		// A layout that compiles to one value (the ADB's uint64) is named
		// after itself.
		f.walk(p.Root, p.Node.Name, p.Node.Name, stripExt(p.Node.Name), stripExt(p.Node.Name), 0, nil)
	} else {
		f.walk(p.Root, p.Node.Name, "", "", "", 0, nil)
	}
	return f.out
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

func stripExt(s string) string { return strings.TrimSuffix(s, "_ext") }

// walk visits step s; node is the layout name s's children are fields of.
func (f *flattener) walk(s *prm.Step, node, disp, key, flat string, base int, ctx []choice) {
	at := base + s.Bit
	switch s.Kind {
	case prm.KindStruct, prm.KindUnion:
		if disp != "" {
			f.out.containers[key] = &leaf{r: Reading{Path: disp, Bit: at, Width: s.Width}, key: key, flat: flat, ctx: ctx}
		}
		var info unionInfo
		if s.Kind == prm.KindUnion && f.adb {
			info = unionInfo{}
			f.out.unions[key] = info
		}
		for _, c := range s.Children {
			if c.Kind == prm.KindJoined {
				continue // derived from two fields that are compared themselves
			}
			sub := ""
			if c.Field != nil {
				sub = c.Field.Subnode
			}
			name := c.Name
			if s.Kind == prm.KindUnion {
				member := f.member(node, key, c.Name, sub)
				if info != nil {
					info[member] = stripExt(sub)
				}
				cctx := append(append([]choice{}, ctx...), choice{key, member})
				f.walk(c, sub, join(disp, c.Name), join(key, member), flatUnion(flat), at, cctx)
				continue
			}
			f.walk(c, sub, join(disp, c.Name), join(key, name), join(flat, name), at, ctx)
		}
	case prm.KindArray:
		if s.Elem.Kind == prm.KindUint || s.Elem.Kind == prm.KindBytes {
			lf := &leaf{r: Reading{Path: disp, Bit: at, Width: s.Elem.Width, Count: s.Count, Variable: s.Variable}, key: key, flat: flat, ctx: ctx}
			lf.untyped = f.h != nil && s.Field != nil && f.h.untyped[s.Field]
			f.out.leaves = append(f.out.leaves, lf)
			return
		}
		f.out.containers[key] = &leaf{r: Reading{Path: disp, Bit: at, Width: s.Width, Variable: s.Variable}, key: key, flat: flat, ctx: ctx}
		sub := ""
		if s.Field != nil {
			sub = s.Field.Subnode
		}
		if s.Variable {
			// Compared by its first element, named without an index on both
			// sides: the kernel declares "data[]" where the ADB may declare
			// one instance.
			f.walk(s.Elem, sub, disp+"[0]", key, flat, at, ctx)
			return
		}
		for i := 0; i < s.Count; i++ {
			idx := fmt.Sprintf("[%d]", s.Low+i)
			f.walk(s.Elem, sub, disp+idx, key+idx, flat+idx, at+i*s.Elem.Width, ctx)
		}
	case prm.KindUint, prm.KindBytes:
		f.out.leaves = append(f.out.leaves, &leaf{r: Reading{Path: disp, Bit: at, Width: s.Width}, key: key, flat: flat, ctx: ctx})
	}
}

// flatUnion drops the union field's own name from a flat path: flat paths
// say where a field is without the unions on the way.
func flatUnion(flat string) string {
	if i := strings.LastIndexByte(flat, '.'); i >= 0 {
		return flat[:i]
	}
	return ""
}

// member is the canonical name of a union member. The ADB names its members
// after their layout ("mcqi_cap_ext"), so _ext is dropped; kernel members
// take the name of the ADB member with the same name or, failing that, the
// same layout type (kernel mcqi_caps of type mcqi_cap is ADB mcqi_cap_ext).
func (f *flattener) member(node, unionKey, name, sub string) string {
	if f.adb {
		if name == sub {
			return stripExt(name)
		}
		return name
	}
	if n, ok := unionMembers[node+"."+name]; ok {
		return n
	}
	info := f.ref.unions[unionKey]
	if info == nil {
		return name
	}
	if _, ok := info[name]; ok {
		return name
	}
	if sub != "" {
		var hits []string
		for m, typ := range info {
			if typ == sub {
				hits = append(hits, m)
			}
		}
		if len(hits) == 1 {
			return hits[0]
		}
	}
	return name
}

// compatible says whether two leaves can describe the same bits: unions both
// sides have must be entered through the same member.
func compatible(a, b []choice) bool {
	for _, x := range a {
		for _, y := range b {
			if x.union == y.union && x.member != y.member {
				return false
			}
		}
	}
	return true
}

// numbered rewrites kernel names that number array elements into ADB array
// syntax: lane0_module_mapping → lane_module_mapping[0].
var numberedRE = lazyre.New(`^([a-z_]*?[a-z])(\d+)(_[a-z0-9_]+)?$`)

func numbered(key string) string {
	i := strings.LastIndexByte(key, '.')
	head, last := key[:i+1], key[i+1:]
	m := numberedRE.FindStringSubmatch(last)
	if m == nil {
		return ""
	}
	return head + m[1] + m[3] + "[" + m[2] + "]"
}

// ---- comparing ----

type shape int

const (
	shapeSame    shape = iota // identical
	shapeBits                 // same bits, different element shape
	shapeUntyped              // same start of a variable array; kernel gives no element width
	shapeOpen                 // same start and element width; one side leaves the count open
	shapeDiffers              // different bits
)

func compareShape(k *leaf, a Reading) shape {
	switch r := k.r; {
	case r == Reading{Path: r.Path, Bit: a.Bit, Width: a.Width, Count: a.Count, Variable: a.Variable}:
		return shapeSame
	case k.untyped && a.Variable && r.Bit == a.Bit:
		return shapeUntyped
	case !r.Variable && !a.Variable && r.Bit == a.Bit && r.End() == a.End():
		return shapeBits
	case r.Variable != a.Variable && r.Bit == a.Bit && r.Width == a.Width:
		return shapeOpen
	}
	return shapeDiffers
}

func contains(outer, inner Reading) bool { return outer.Bit <= inner.Bit && inner.End() <= outer.End() }
func overlap(a, b Reading) bool          { return a.Bit < b.End() && b.Bit < a.End() }

// pairLayouts compares one ADB node with one kernel node.
func pairLayouts(adb *prm.DB, h *Header, kdb *prm.DB, l *Layout, allow *allowList) {
	ap, err := adb.Plan(l.ADBNode)
	if err != nil {
		l.Errors = append(l.Errors, "ADB plan: "+err.Error())
		return
	}
	kp, err := kdb.Plan(l.KernelNode)
	if err != nil {
		l.Errors = append(l.Errors, "kernel plan: "+err.Error())
		return
	}
	l.ADBBytes, l.KernelBits = ap.Bytes, kp.Node.Size
	A := flatten(ap, nil, nil)
	K := flatten(kp, h, A)
	byKey := map[string]*leaf{}
	byFlat := map[string][]*leaf{}
	for _, a := range A.leaves {
		byKey[a.key] = a
		byFlat[a.flat] = append(byFlat[a.flat], a)
	}
	mismatch := func(kind string, k, a Reading) {
		m := Mismatch{Kind: kind, Kernel: k, ADB: a}
		m.Reason = allow.explain(l.title(), m)
		l.Mismatches = append(l.Mismatches, m)
	}
	// pairByName records k against a found by name.
	pairByName := func(k, a *leaf, how string) {
		k.used, a.used = true, true
		switch compareShape(k, a.r) {
		case shapeSame:
			l.Matched = append(l.Matched, Pair{Kernel: k.r, ADB: a.r, Note: how})
		case shapeUntyped:
			l.Matched = append(l.Matched, Pair{Kernel: k.r, ADB: a.r, Note: join2(how, "the kernel gives no element width")})
		case shapeOpen:
			what := "the kernel leaves the element count open"
			if a.r.Variable {
				what = "the ADB leaves the element count open"
			}
			l.Matched = append(l.Matched, Pair{Kernel: k.r, ADB: a.r, Note: join2(how, what)})
		case shapeBits:
			l.Splits = append(l.Splits, Split{Kernel: []Reading{k.r}, ADB: []Reading{a.r}, Note: join2(how, "same bits, different element shape")})
		default:
			mismatch("position", k.r, a.r)
		}
	}
	// inside lists the leaves of side s under container c; a field named
	// like a container of the other side covers those leaves when the
	// extents agree.
	inside := func(s *side, c *leaf) []*leaf {
		var out []*leaf
		for _, x := range s.leaves {
			if (strings.HasPrefix(x.key, c.key+".") || strings.HasPrefix(x.key, c.key+"[")) && compatible(x.ctx, c.ctx) {
				out = append(out, x)
			}
		}
		return out
	}

	// 1. By name: the same canonical path, or the kernel's numbered spelling
	// of an ADB array element, or a field of a union member that the other
	// source lays out without the union.
	for _, k := range K.leaves {
		if a := byKey[k.key]; a != nil && !a.used {
			pairByName(k, a, "")
			continue
		}
		if nk := numbered(k.key); nk != "" {
			if a := byKey[nk]; a != nil && !a.used {
				pairByName(k, a, "kernel numbers the element in its name")
				continue
			}
			if c := A.containers[nk]; c != nil {
				k.used = true
				if k.r.Bit == c.r.Bit && k.r.End() == c.r.End() {
					var as []Reading
					for _, a := range inside(A, c) {
						a.used = true
						as = append(as, a.r)
					}
					l.Splits = append(l.Splits, Split{Kernel: []Reading{k.r}, ADB: as, Note: "kernel " + k.r.Path + " is ADB " + c.r.Path + " as one field"})
				} else {
					mismatch("position", k.r, c.r)
				}
				continue
			}
		}
		if c := A.containers[k.key]; c != nil {
			k.used = true
			if k.r.Bit == c.r.Bit && k.r.End() == c.r.End() {
				var as []Reading
				for _, a := range inside(A, c) {
					a.used = true
					as = append(as, a.r)
				}
				l.Splits = append(l.Splits, Split{Kernel: []Reading{k.r}, ADB: as, Note: "the ADB breaks it into fields"})
			} else {
				mismatch("position", k.r, c.r)
			}
			continue
		}
		var cands []*leaf
		for _, a := range byFlat[k.flat] {
			if !a.used && compatible(k.ctx, a.ctx) && (len(a.ctx) > 0 || len(k.ctx) > 0) {
				cands = append(cands, a)
			}
		}
		if len(cands) > 0 {
			// Several union members may hold a field of this name; prefer the
			// one at the same place.
			best := cands[0]
			for _, a := range cands {
				if compareShape(k, a.r) != shapeDiffers {
					best = a
					break
				}
			}
			// Other members with the same field at the same place agree too;
			// they are named in the note rather than counted again.
			var also []string
			for _, a := range cands {
				if a != best && compareShape(k, a.r) == shapeSame {
					a.used = true
					also = append(also, a.r.Path)
				}
			}
			how := "only one source has the union"
			if len(also) > 0 {
				how += "; also " + strings.Join(also, ", ")
			}
			pairByName(k, best, how)
		}
	}
	// An ADB field whose name is a kernel container.
	for _, a := range A.leaves {
		if a.used {
			continue
		}
		if c := K.containers[a.key]; c != nil {
			a.used = true
			if a.r.Bit == c.r.Bit && a.r.End() == c.r.End() {
				var ks []Reading
				for _, k := range inside(K, c) {
					k.used = true
					ks = append(ks, k.r)
				}
				l.Splits = append(l.Splits, Split{Kernel: ks, ADB: []Reading{a.r}, Note: "the kernel breaks it into fields"})
			} else {
				mismatch("position", c.r, a.r)
			}
		}
	}

	// 2. By position, among what is left. A union only one source has is a
	// set of alternative views of the same bits; the other source's fields
	// are compared with the member its names matched (if any matched).
	// ADB leaves may serve several kernel leaves here (kernel union members
	// give several views of the same bits).
	bound, kbound := bindUnions(K.leaves, A.leaves)
	eligible := func(k, a *leaf) bool {
		if !compatible(k.ctx, a.ctx) || !overlap(k.r, a.r) {
			return false
		}
		for _, c := range a.ctx {
			if !hasUnion(k.ctx, c.union) && bound[c.union] != c.member {
				return false // an ADB-only union: only the member the kernel follows
			}
		}
		for _, c := range k.ctx {
			if m, ok := kbound[c.union]; ok && !hasUnion(a.ctx, c.union) && m != c.member {
				return false
			}
		}
		return true
	}
	type group struct {
		a  *leaf
		ks []*leaf
	}
	var covered []*group
	coveredBy := map[*leaf]*group{}
	reused := map[*leaf]bool{}
	for _, k := range K.leaves {
		if k.used {
			continue
		}
		var as []*leaf
		for _, a := range A.leaves {
			if (!a.used || reused[a]) && eligible(k, a) {
				as = append(as, a)
			}
		}
		if len(as) == 0 {
			continue
		}
		k.used = true
		within := true
		for _, a := range as {
			within = within && contains(k.r, a.r)
		}
		switch {
		case len(as) == 1 && compareShape(k, as[0].r) == shapeSame:
			l.Renamed = append(l.Renamed, Pair{Kernel: k.r, ADB: as[0].r})
		case len(as) == 1 && compareShape(k, as[0].r) == shapeBits:
			l.Splits = append(l.Splits, Split{Kernel: []Reading{k.r}, ADB: []Reading{as[0].r}, Note: "same bits, different names and element shape"})
		case within && len(as) > 1:
			var rs []Reading
			for _, a := range as {
				rs = append(rs, a.r)
			}
			l.Splits = append(l.Splits, Split{Kernel: []Reading{k.r}, ADB: rs})
		case len(as) == 1 && contains(as[0].r, k.r):
			// Possibly one ADB field over several kernel fields; decided below
			// once every kernel field has been seen.
			g := coveredBy[as[0]]
			if g == nil {
				g = &group{a: as[0]}
				coveredBy[as[0]] = g
				covered = append(covered, g)
			}
			g.ks = append(g.ks, k)
		default:
			// Bit ranges that cross, or one field inside another of a
			// different size under a different name: the sources disagree.
			for _, a := range as {
				mismatch("overlap", k.r, a.r)
			}
		}
		for _, a := range as {
			a.used, reused[a] = true, true
		}
	}
	for _, g := range covered {
		if len(g.ks) == 1 {
			mismatch("overlap", g.ks[0].r, g.a.r)
			continue
		}
		var rs []Reading
		for _, k := range g.ks {
			rs = append(rs, k.r)
		}
		l.Splits = append(l.Splits, Split{Kernel: rs, ADB: []Reading{g.a.r}})
	}

	// 3. What is left is in one source only. Say when the other source has
	// fields over the same bits (paired with something else).
	for _, a := range A.leaves {
		if !a.used {
			l.OnlyADB = append(l.OnlyADB, Only{Reading: a.r, Overlaps: overlapping(a, K.leaves)})
		}
	}
	for _, k := range K.leaves {
		if !k.used {
			l.OnlyKernel = append(l.OnlyKernel, Only{Reading: k.r, Overlaps: overlapping(k, A.leaves)})
		}
	}
}

// bindUnions works out, for each union only one source has, which member
// the other source follows: the member holding most of the fields paired by
// name. bound is for ADB unions, kbound for kernel unions.
func bindUnions(ks []*leaf, as []*leaf) (bound, kbound map[string]string) {
	count := func(votes map[string]map[string]int, own, other []choice) {
		for _, c := range own {
			if hasUnion(other, c.union) {
				continue
			}
			if votes[c.union] == nil {
				votes[c.union] = map[string]int{}
			}
			votes[c.union][c.member]++
		}
	}
	av, kv := map[string]map[string]int{}, map[string]map[string]int{}
	for _, p := range namePairs(ks, as) {
		count(av, p[1].ctx, p[0].ctx)
		count(kv, p[0].ctx, p[1].ctx)
	}
	pick := func(votes map[string]map[string]int) map[string]string {
		out := map[string]string{}
		for u, ms := range votes {
			best, n := "", 0
			for m, c := range ms {
				if c > n || c == n && m < best {
					best, n = m, c
				}
			}
			out[u] = best
		}
		return out
	}
	return pick(av), pick(kv)
}

// namePairs lists the (kernel, ADB) leaves paired by name in step 1: both
// used, with equal flat paths.
func namePairs(ks []*leaf, as []*leaf) [][2]*leaf {
	byFlat := map[string][]*leaf{}
	for _, a := range as {
		if a.used {
			byFlat[a.flat] = append(byFlat[a.flat], a)
		}
	}
	var out [][2]*leaf
	for _, k := range ks {
		if !k.used {
			continue
		}
		for _, a := range byFlat[k.flat] {
			if compatible(k.ctx, a.ctx) {
				out = append(out, [2]*leaf{k, a})
				break
			}
		}
	}
	return out
}

func hasUnion(ctx []choice, union string) bool {
	for _, c := range ctx {
		if c.union == union {
			return true
		}
	}
	return false
}

func join2(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func overlapping(x *leaf, others []*leaf) []string {
	var out []string
	for _, o := range others {
		if compatible(x.ctx, o.ctx) && overlap(x.r, o.r) {
			out = append(out, o.r.Path)
		}
	}
	return out
}

// ---- the whole comparison ----

// Compare cross-checks every register the ADB and the kernel header both
// describe, field by field, and then the other layouts of the ADB that the
// kernel also has and no register reached.
func Compare(adb *prm.DB, h *Header) *Report {
	r := &Report{ADBSource: adb.Source, ADBRevision: adb.Revision, KernelSource: h.Source}
	kdb, err := h.DB()
	if err != nil {
		r.Errors = append(r.Errors, "kernel layouts: "+err.Error())
		return r
	}
	allow := newAllowList()
	kernelIDs := map[uint32]string{}
	for name, id := range h.RegisterIDs {
		kernelIDs[id] = name
	}
	adbIDs := map[uint32]bool{}
	usedKernel := map[string]bool{}
	for _, reg := range adb.Registers {
		adbIDs[reg.ID] = true
		k, via := kernelStruct(h, reg.Node)
		if k == "" {
			s := fmt.Sprintf("%s (0x%x", reg.Name, reg.ID)
			if name, ok := kernelIDs[reg.ID]; ok {
				s += ", kernel MLX5_REG_" + name + " without a layout"
			}
			r.OnlyADB = append(r.OnlyADB, s+")")
			continue
		}
		usedKernel[k] = true
		l := &Layout{Register: reg.Name, ID: reg.ID, ADBNode: reg.Node, KernelNode: k, KernelAt: h.Where(k), Via: via}
		if id, ok := h.RegisterIDs[reg.Name]; ok {
			l.KernelID = id
			if id != reg.ID {
				r.IDErrors = append(r.IDErrors, fmt.Sprintf("%s: ADB 0x%x, kernel MLX5_REG_%s 0x%x", reg.Name, reg.ID, reg.Name, id))
			}
		} else if name, ok := kernelIDs[reg.ID]; ok {
			l.KernelID = reg.ID
			l.Via = join2(l.Via, "kernel calls ID 0x"+fmt.Sprintf("%x", reg.ID)+" MLX5_REG_"+name)
		}
		pairLayouts(adb, h, kdb, l, allow)
		r.Registers = append(r.Registers, l)
		markReached(kdb, k, usedKernel)
	}
	// Other layouts: ADB nodes with a kernel struct of the same name that no
	// compared kernel register contains (commands, contexts, or a kernel
	// struct its register layout does not use).
	var names []string
	for name := range adb.Nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		k := stripExt(name)
		if _, ok := h.Nodes[k]; !ok || usedKernel[k] || strings.Contains(k, ".") {
			continue
		}
		l := &Layout{ADBNode: name, KernelNode: k, KernelAt: h.Where(k)}
		pairLayouts(adb, h, kdb, l, allow)
		r.Layouts = append(r.Layouts, l)
	}
	// Kernel registers the ADB lacks: IDs the kernel uses, and *_reg structs
	// no ADB register was paired with.
	for name, id := range h.RegisterIDs {
		if _, err := adb.Register(name); adbIDs[id] || err == nil {
			continue // in the ADB (a differing ID is reported above)
		}
		s := fmt.Sprintf("%s (0x%x", name, id)
		st, ok := kernelRegisterNames[name]
		if !ok {
			st = strings.ToLower(name) + "_reg"
		}
		if _, def := h.Nodes[st]; def && st != "" {
			s += ", " + st
			markReached(kdb, st, usedKernel) // its parts are not registers
		}
		r.OnlyKernel = append(r.OnlyKernel, s+")")
	}
	for _, t := range h.Types {
		if strings.HasSuffix(t, "_reg") && !usedKernel[t] {
			r.OnlyKernel = append(r.OnlyKernel, t+" (struct only)")
		}
	}
	sort.Strings(r.OnlyKernel)
	r.Stale = allow.stale()
	return r
}

// markReached records every node reachable from node (and node itself).
func markReached(db *prm.DB, node string, seen map[string]bool) {
	seen[node] = true
	n := db.Nodes[node]
	if n == nil {
		return
	}
	for _, f := range n.Fields {
		if f.Subnode != "" && !seen[f.Subnode] {
			markReached(db, f.Subnode, seen)
		}
	}
}

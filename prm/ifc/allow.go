package ifc

import "fmt"

// Allowance explains one known difference between the PRM revision in the
// ADB and the kernel header. It applies only while both readings are exactly
// as recorded, so a change in either source shows up again.
type Allowance struct {
	Register string // ADB register name, or ADB node for other layouts
	Kind     string // "position" or "overlap"
	Kernel   string // kernel reading: "path @0xBIT/WIDTH"
	ADB      string // ADB reading, same form
	Reason   string // facts only: what differs and why it is understood
}

// Allowed is the allow-list. Every entry was checked by hand against both
// files; keep it short, and never add an entry without a reason.
var Allowed = []Allowance{
	// MCQI ACTIVATION_METHOD page (info_type 5): the two sources number the
	// flag bits from opposite ends of the dword. The kernel declares
	// pending_server_ac_power_cycle first (MSB-first bit 0, ADB 0x18.31) down
	// to all_hosts_sync (bit 5); PRM Rev 0.57 puts all_hosts_sync at 0x18.0
	// and pending_server_ac_power_cycle at 0x18.5, with self_activation at
	// 0x18.6. mstflint's generated layout of 2018
	// (tools_layouts/reg_access_hca_layouts.c, from the internal ADB) had the
	// kernel's order; its later _ext layouts have the ADB's, so the PRM
	// changed after the kernel copied it. Decode with the ADB.
	mcqiActivation("pending_server_ac_power_cycle", 0xc0, 0xda),
	mcqiActivation("pending_server_dc_power_cycle", 0xc1, 0xdb),
	mcqiActivation("pending_server_reboot", 0xc2, 0xdc),
	mcqiActivation("pending_fw_reset", 0xc3, 0xdd),
	mcqiActivation("auto_activate", 0xc4, 0xde),
	mcqiActivation("all_hosts_sync", 0xc5, 0xdf),

	// Fields the PRM widened into bits the kernel still calls reserved. The
	// LSB is the same in both, so the kernel's field is the low part of the
	// ADB's and small values read the same.
	{Register: "PPCNT", Kind: "position", Kernel: "prio_tc @0x3d/3", ADB: "prio_tc @0x3b/5",
		Reason: "PRM Rev 0.57 prio_tc is 5 bits (0x4.0, size 5); the kernel declares the low 3 and reserves the rest"},
	{Register: "PPLR", Kind: "position", Kernel: "lb_cap @0x28/8", ADB: "lb_cap @0x24/12",
		Reason: "PRM Rev 0.57 lb_cap is 12 bits (0x4.16); the kernel declares the low 8 and reserves the top 4"},
	{Register: "PPLR", Kind: "position", Kernel: "lb_en @0x38/8", ADB: "lb_en @0x34/12",
		Reason: "PRM Rev 0.57 lb_en is 12 bits (0x4.0); the kernel declares the low 8 and reserves the top 4"},
	{Register: "QTCT", Kind: "position", Kernel: "tclass @0x3d/3", ADB: "tclass @0x3c/4",
		Reason: "PRM Rev 0.57 tclass is 4 bits (0x4.0); the kernel declares the low 3"},
	{Register: "QTCT", Kind: "overlap", Kernel: "prio @0x1d/3", ADB: "switch_prio @0x1c/4",
		Reason: "the same index field: PRM Rev 0.57 calls it switch_prio and gives it 4 bits (0x0.0); the kernel calls it prio and declares the low 3"},
	{Register: "MCQS", Kind: "overlap", Kernel: "fw_device @0x8/8", ADB: "device_index @0x4/12",
		Reason: "the same index field: PRM Rev 0.57 calls it device_index and gives it 12 bits (0x0.16); the kernel calls it fw_device and declares the low 8"},

	// A field the PRM narrowed.
	{Register: "SLTP", Kind: "position", Kernel: "status @0x0/4", ADB: "status @0x2/2",
		Reason: "PRM Rev 0.57 takes the top 2 bits of the kernel's 4-bit status for lp_msb (0x0.30, the local port's MSBs) and keeps 2 bits of status (0x0.28)"},
}

func mcqiActivation(field string, kernelBit, adbBit int) Allowance {
	return Allowance{
		Register: "MCQI", Kind: "position",
		Kernel: fmt.Sprintf("data[0].mcqi_activation_mathod.%s @0x%x/1", field, kernelBit),
		ADB:    fmt.Sprintf("data.mcqi_activation_method_ext.%s @0x%x/1", field, adbBit),
		Reason: "the ACTIVATION_METHOD flags are in reverse order in the kernel header (the order of an older PRM); PRM Rev 0.57 has all_hosts_sync at bit 0",
	}
}

// key is the compact form readings are matched on.
func key(r Reading) string {
	return fmt.Sprintf("%s @0x%x/%s", r.Path, r.Bit, shapeText(r))
}

func shapeText(r Reading) string {
	switch {
	case r.Variable:
		return fmt.Sprintf("%dx[]", r.Width)
	case r.Count > 0:
		return fmt.Sprintf("%dx%d", r.Count, r.Width)
	}
	return fmt.Sprintf("%d", r.Width)
}

type allowList struct {
	entries []Allowance
	hit     []bool
}

func newAllowList() *allowList {
	return &allowList{entries: Allowed, hit: make([]bool, len(Allowed))}
}

// explain returns the reason for a mismatch, or "" if none applies.
func (a *allowList) explain(register string, m Mismatch) string {
	for i, e := range a.entries {
		if e.Register == register && e.Kind == m.Kind && e.Kernel == key(m.Kernel) && e.ADB == key(m.ADB) {
			a.hit[i] = true
			return e.Reason
		}
	}
	return ""
}

// stale lists the entries that explained nothing.
func (a *allowList) stale() []string {
	var out []string
	for i, e := range a.entries {
		if !a.hit[i] {
			out = append(out, fmt.Sprintf("%s %s: kernel %s, ADB %s", e.Register, e.Kind, e.Kernel, e.ADB))
		}
	}
	return out
}

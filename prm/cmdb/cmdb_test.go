package cmdb

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/ifc"
)

func mustLoad(t *testing.T) *DB {
	t.Helper()
	db, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func installed(t *testing.T) (string, *ifc.Header) {
	t.Helper()
	path, err := ifc.Find()
	if err != nil {
		t.Skipf("SKIPPED, no kernel header to compare the built-in layouts with: %v", err)
	}
	h, err := ifc.LoadFile(path)
	if err != nil {
		t.Fatalf("the installed header does not parse: %v", err)
	}
	return path, h
}

// leafTable flattens a layout the way `prm show` lists it.
func leafTable(t *testing.T, db *prm.DB, node string) []string {
	t.Helper()
	p, err := db.Plan(node)
	if err != nil {
		t.Fatalf("plan %s: %v", node, err)
	}
	var out []string
	for _, l := range p.Leaves() {
		out = append(out, fmt.Sprintf("%s @0x%x/%d x%d var=%v when=%q", l.Path, l.Bit, l.Width, l.Count, l.Variable, l.When))
	}
	return out
}

// The built-in layouts are the installed header's, field by field: every
// struct and union (and inline member) with the same fields at the same
// offsets and widths, compiling to the same leaves. Fields cxray adds from
// the NVMe-oF facts (extend in nvmf.facts) are the only extra ones.
func TestLayoutsMatchInstalledHeader(t *testing.T) {
	_, h := installed(t)
	db := mustLoad(t)
	kdb, err := prm.NewDB("header", "header", h.Nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	extended := map[string]map[string]bool{"xrqc": {"nvme_offload_context": true}, "cmd_hca_cap": {"nvmf_target_offload": true}, "hca_cap_union": {"nvmf_cap": true}}
	if len(h.Nodes) == 0 {
		t.Fatal("the header has no layouts")
	}
	for name, kn := range h.Nodes {
		bn, ok := db.Layouts.Nodes[name]
		if !ok {
			t.Errorf("%s: in the header, not in the built-in layouts", name)
			continue
		}
		if bn.Size != kn.Size || bn.Union != kn.Union {
			t.Errorf("%s: built-in %d bits (union %v), header %d bits (union %v)", name, bn.Size, bn.Union, kn.Size, kn.Union)
		}
		type fact struct {
			Name, Sub    string
			Offset, Size int
			Array, Var   bool
			Low, High    int
		}
		var kf, bf []fact
		for _, f := range kn.Fields {
			kf = append(kf, fact{f.Name, f.Subnode, f.Offset, f.Size, f.IsArray, f.Variable, f.LowBound, f.HighBound})
		}
		for _, f := range bn.Fields {
			if extended[name][f.Name] {
				continue
			}
			bf = append(bf, fact{f.Name, f.Subnode, f.Offset, f.Size, f.IsArray, f.Variable, f.LowBound, f.HighBound})
		}
		if d := cmp.Diff(kf, bf); d != "" {
			t.Errorf("%s fields (-header +built-in):\n%s", name, d)
			continue
		}
		// Leaves inside the added fields (checked by
		// TestExtensionsUseReservedBits) are the only ones allowed to differ.
		var built []string
		for _, l := range leafTable(t, db.Layouts, name) {
			if !strings.Contains(l, "nvme_offload_context.") && !strings.Contains(l, "nvmf_target_offload ") && !strings.HasPrefix(l, "nvmf_cap.") && !strings.Contains(l, ".nvmf_cap.") {
				built = append(built, l)
			}
		}
		if d := cmp.Diff(leafTable(t, kdb, name), built); d != "" {
			t.Errorf("%s leaves (-header +built-in):\n%s", name, d)
		}
	}
	ofed := map[string]bool{}
	for _, l := range strings.Split(nvmfFacts, "\n") {
		if rest, ok := strings.CutPrefix(l, "layout\t"); ok {
			name, _, _ := strings.Cut(rest, "\t")
			ofed[name] = true
		}
	}
	for name := range db.Layouts.Nodes {
		if _, ok := h.Nodes[name]; !ok && !ofed[name] {
			t.Errorf("%s: built in, but neither in the header nor in nvmf.facts", name)
		}
	}
}

// Regenerating from the same header gives the committed facts byte for
// byte; on a machine with another kernel's header the comparison is skipped
// (the sha256 in the facts says which one they came from).
func TestGeneratedFactsReproducible(t *testing.T) {
	path, h := installed(t)
	var sums []string
	for _, f := range append(append([]string{}, h.Files...), filepath.Join(filepath.Dir(path), "device.h")) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, fmt.Sprintf("%s (sha256 %x)", filepath.Base(f), sha256.Sum256(b)))
	}
	for _, s := range sums {
		if !strings.Contains(Facts(), s) {
			t.Skipf("SKIPPED: the installed headers are not the ones the built-in facts came from (%s is not in ifc.facts); run go generate ./prm/cmdb to rebuild them", s)
		}
	}
	b, err := Generate(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != Facts() {
		t.Fatal("go generate ./prm/cmdb would change ifc.facts: the generator changed since it was run; regenerate and commit")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "/*") || strings.Contains(l, "*/") {
			t.Fatalf("the facts carry comment text from the header: %q", l)
		}
	}
}

// outHeaderExceptions are out layouts the kernel header declares with the
// in header by mistake: mlx5_ifc.h (6.1) gives query_scheduling_element_out
// opcode and op_mod where every other out mailbox has status and syndrome.
var outHeaderExceptions = map[string]bool{"query_scheduling_element_out": true}

// Every command's mailboxes start with the command header the transport
// reads by position (mailbox.go): opcode in the first 16 bits of the in
// mailbox, status in byte 0 and the syndrome in bytes 4..7 of the out one.
func TestCommandHeaders(t *testing.T) {
	db := mustLoad(t)
	n := 0
	for _, c := range db.Commands {
		if c.In != "" {
			p, err := db.Plan(c.In)
			if err != nil {
				t.Fatalf("%s in: %v", c.Name, err)
			}
			tg, err := p.Resolve("opcode", p.NewBuffer())
			if err != nil || tg.Bit != 0 || tg.Width != 16 {
				t.Errorf("%s: %s has no opcode at bits 0..15 (%v)", c.Name, c.In, err)
			}
			if tg, err := p.Resolve("op_mod", p.NewBuffer()); err == nil && (tg.Bit != 48 || tg.Width != 16) {
				t.Errorf("%s: %s op_mod at bit %d/%d, want 48/16", c.Name, c.In, tg.Bit, tg.Width)
			}
			if p.Bytes < HeaderBytes {
				t.Errorf("%s: %s is %d bytes, shorter than the header", c.Name, c.In, p.Bytes)
			}
			n++
		}
		if c.Out != "" && !outHeaderExceptions[c.Out] {
			p, err := db.Plan(c.Out)
			if err != nil {
				t.Fatalf("%s out: %v", c.Name, err)
			}
			st, err1 := p.Resolve("status", p.NewBuffer())
			sy, err2 := p.Resolve("syndrome", p.NewBuffer())
			if err1 != nil || err2 != nil || st.Bit != 0 || st.Width != 8 || sy.Bit != 32 || sy.Width != 32 {
				t.Errorf("%s: %s lacks status at byte 0 or syndrome at bytes 4..7 (%v %v)", c.Name, c.Out, err1, err2)
			}
		}
	}
	if n < 150 {
		t.Errorf("only %d commands have an in layout; the pairing of opcodes and layouts broke", n)
	}
}

// The facts the feature packages stand on, as the kernel's mlx5_ifc.h,
// device.h and OFED's mlx5_ifc.h give them.
func TestKnownFacts(t *testing.T) {
	db := mustLoad(t)
	for name, want := range map[string]struct {
		op      uint16
		in, out string
	}{
		"QUERY_HCA_CAP":                 {0x100, "query_hca_cap_in", "query_hca_cap_out"},
		"QUERY_ADAPTER":                 {0x101, "query_adapter_in", "query_adapter_out"},
		"ACCESS_REG":                    {0x805, "access_register_in", "access_register_out"},
		"QUERY_QP":                      {0x50b, "query_qp_in", "query_qp_out"},
		"QUERY_MKEY":                    {0x201, "query_mkey_in", "query_mkey_out"},
		"QUERY_ESW_FUNCTIONS":           {0x740, "query_esw_functions_in", "query_esw_functions_out"},
		"QUERY_VPORT_STATE":             {0x750, "query_vport_state_in", "query_vport_state_out"},
		"QUERY_Q_COUNTER":               {0x773, "query_q_counter_in", "query_q_counter_out"},
		"QUERY_NVMF_NAMESPACE_CONTEXT":  {0x728, "query_nvmf_namespace_in", "query_nvmf_namespace_out"},
		"QUERY_NVMF_BACKEND_CONTROLLER": {0x722, "", ""},
		"QUERY_OTHER_HCA_CAP":           {0x10e, "", ""},
		"QUERY_MTT":                     {0x8001, "", ""},
		// Newer than 6.1: known since the database comes from the newest
		// header (6.12).
		"ALLOW_OTHER_VHCA_ACCESS": {0xb16, "allow_other_vhca_access_in", "allow_other_vhca_access_out"},
		"SYNC_CRYPTO":             {0xb12, "sync_crypto_in", "sync_crypto_out"},
	} {
		c, err := db.Command(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if c.Opcode != want.op || c.In != want.in || c.Out != want.out {
			t.Errorf("%s = 0x%x %s/%s, want 0x%x %s/%s", name, c.Opcode, c.In, c.Out, want.op, want.in, want.out)
		}
		if byOp, _ := db.CommandByOpcode(want.op); byOp != c {
			t.Errorf("opcode 0x%x finds %v", want.op, byOp)
		}
	}
	if c, err := db.Command("0x728"); err != nil || c.Name != "QUERY_NVMF_NAMESPACE_CONTEXT" {
		t.Errorf("by number: %v %v", c, err)
	}
	if c, err := db.Command("mlx5_cmd_op_query_qp"); err != nil || c.Opcode != 0x50b {
		t.Errorf("with the kernel prefix: %v %v", c, err)
	}
	if _, err := db.Command("QUERY_HCA_CAPP"); err == nil || !strings.Contains(err.Error(), "QUERY_HCA_CAP") {
		t.Errorf("a typo is not pointed at the command: %v", err)
	}

	for name, want := range map[string]CapType{
		"general": {"GENERAL", 0, "cmd_hca_cap"}, "eswitch": {"ESWITCH", 9, "e_switch_cap"},
		"e_switch_cap": {"ESWITCH", 9, "e_switch_cap"}, "roce": {"ROCE", 4, "roce_cap"},
		"nvmf": {"NVMF", 0xe, "nvmf_cap"}, "general_2": {"GENERAL_2", 0x20, "cmd_hca_cap_2"}, "0x9": {"ESWITCH", 9, "e_switch_cap"},
	} {
		got, err := db.CapType(name)
		if err != nil || got != want {
			t.Errorf("CapType(%q) = %+v, %v; want %+v", name, got, err, want)
		}
	}
	if _, err := db.CapType("warp_drive"); err == nil || !strings.Contains(err.Error(), "eswitch") {
		t.Errorf("unknown type: %v", err)
	}
	if db.ConstName("MLX5_MKC_ACCESS_MODE_", 1) != "MTT" || db.ConstName("MLX5_EVENT_TYPE_", 0xe) != "ESW_FUNCTIONS_CHANGED" || db.ConstName("MLX5_VPORT_ADMIN_STATE_", 2) != "AUTO" {
		t.Errorf("constants: %q %q %q", db.ConstName("MLX5_MKC_ACCESS_MODE_", 1), db.ConstName("MLX5_EVENT_TYPE_", 0xe), db.ConstName("MLX5_VPORT_ADMIN_STATE_", 2))
	}
	if db.StatusName(3) != "BAD_PARAM_ERR" || db.StatusName(0x51) != "BAD_OUTP_LEN_ERR" || db.StatusName(0x77) != "" {
		t.Errorf("status names: %q %q %q", db.StatusName(3), db.StatusName(0x51), db.StatusName(0x77))
	}

	// Positions from mlx5_ifc.h (OFED's for the NVMe-oF layouts), through the codec.
	for _, c := range []struct {
		node, path string
		bit, width int
	}{
		{"query_nvmf_namespace_in", "xrqn", 0x48, 24},
		{"query_nvmf_namespace_in", "frontend_namespace", 0x60, 32},
		{"query_nvmf_namespace_out", "ns_ctx.num_read_cmd_low", 0x80 + 0x20, 32},
		{"query_nvmf_namespace_out", "ns_ctx.num_backend_error_cmd", 0x80 + 0x1c0, 64},
		{"query_nvmf_namespace_out", "ns_ctx.current_q_depth", 0x80 + 0x210, 16},
		{"nvmf_cap", "frontend_namespace_context", 0x3a, 1},
		{"nvmf_cap", "log_max_namespace_per_xrq", 0x1b, 5},
		{"cmd_hca_cap", "nvmf_target_offload", 0x502, 1},
		{"cmd_hca_cap", "eswitch_manager", 0x1a7, 1},
		{"cmd_hca_cap", "vport_group_manager", 0x1a0, 1},
		{"e_switch_cap", "esw_functions_changed", 0x19, 1},
		{"e_switch_cap", "ecpf_vport_exists", 0x1b, 1},
		{"xrqc", "nvme_offload_context.log_max_namespace", 0x180 + 11, 5},
		{"qpc", "offload_type", 0x18, 4},
	} {
		p, err := db.Plan(c.node)
		if err != nil {
			t.Fatal(err)
		}
		tg, err := p.Resolve(c.path, p.NewBuffer())
		if err != nil || tg.Bit != c.bit || tg.Width != c.width {
			t.Errorf("%s.%s at %v, want bit 0x%x width %d (%v)", c.node, c.path, tg, c.bit, c.width, err)
		}
	}
	if st, ok := db.Layouts.Nodes["qpc"]; !ok || st.Field("state") == nil {
		t.Fatal("qpc.state missing")
	} else if n, ok := st.Field("state").EnumName(3); !ok || n != "RTS" {
		t.Errorf("qpc.state 3 = %q, want RTS (the header's MLX5_QPC_STATE_RTS)", n)
	}
}

// What cxray adds to kernel structs lies in bits the kernel reserves (a
// union member overlays the others by nature: the NVMe-oF page in
// hca_cap_union).
func TestExtensionsUseReservedBits(t *testing.T) {
	_, h := installed(t)
	db := mustLoad(t)
	for node, added := range map[string]string{"xrqc": "nvme_offload_context", "cmd_hca_cap": "nvmf_target_offload"} {
		f := db.Layouts.Nodes[node].Field(added)
		start := prm.MSBOffset(f.Offset, f.Size)
		end := start + f.Size
		for _, kf := range h.Nodes[node].Fields {
			kb, _ := h.Bit(kf)
			ke := kb + kf.Size
			if kb < end && start < ke {
				t.Errorf("%s.%s (bits %d..%d) overlaps the kernel's %s (bits %d..%d)", node, added, start, end, kf.Name, kb, ke)
			}
		}
	}
}

// The fwctl driver's policy, as drivers/fwctl/mlx5/main.c has it.
func TestFwctlPolicy(t *testing.T) {
	db := mustLoad(t)
	for _, c := range []struct {
		cmd    string
		opMod  uint16
		scope  Scope
		modify bool
		ok     bool
	}{
		{"QUERY_HCA_CAP", 0x13, ScopeConfiguration, false, true},
		{"QUERY_ESW_FUNCTIONS", 0, ScopeConfiguration, false, true},
		{"QUERY_QP", 0, ScopeDebugReadOnly, false, true},
		{"QUERY_NVMF_NAMESPACE_CONTEXT", 0, ScopeDebugReadOnly, false, true},
		{"ACCESS_REG", 1, ScopeDebugReadOnly, false, true},
		{"ACCESS_REG", 0, ScopeConfiguration, true, true},
		{"SET_HCA_CAP", 0, ScopeConfiguration, true, true},
		{"SET_DIAGNOSTIC_PARAMS", 0, ScopeDebugWrite, true, true},
		{"CREATE_MKEY", 0, 0, false, false},
		{"MODIFY_NIC_VPORT_CONTEXT", 0, 0, false, false},
	} {
		cmd, err := db.Command(c.cmd)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := cmd.Policy(c.opMod)
		if ok != c.ok || (ok && (r.Scope != c.scope || r.Modifies != c.modify)) {
			t.Errorf("%s op_mod %d: %+v %v, want scope %s modify %v allowed %v", c.cmd, c.opMod, r, ok, c.scope, c.modify, c.ok)
		}
	}
	for name, want := range map[string]bool{"QUERY_QP": true, "QUERY_HCA_CAP": true, "ACCESS_REG": false, "CREATE_QP": false} {
		c, _ := db.Command(name)
		if c.ReadOnly() != want {
			t.Errorf("%s read-only = %v, want %v", name, c.ReadOnly(), want)
		}
	}
	allowed := 0
	for _, c := range db.Commands {
		if len(c.Fwctl) > 0 {
			allowed++
		}
	}
	if allowed < 90 {
		t.Errorf("%d commands have a fwctl policy; the driver allows about 100", allowed)
	}
}

func TestRequestReply(t *testing.T) {
	db := mustLoad(t)
	c, _ := db.Command("QUERY_HCA_CAP")
	in, err := db.Request(c, []prm.Assignment{{Path: "op_mod", Value: "0x13"}, {Path: "other_function", Value: "1"}, {Path: "function_id", Value: "7"}})
	if err != nil {
		t.Fatal(err)
	}
	if Opcode(in) != 0x100 || OpMod(in) != 0x13 || len(in) != 16 {
		t.Errorf("in mailbox %x: opcode 0x%x op_mod 0x%x", in, Opcode(in), OpMod(in))
	}
	if _, err := db.Request(c, []prm.Assignment{{Path: "opcode", Value: "5"}}); err == nil {
		t.Error("opcode given by hand was accepted")
	}
	if _, err := db.Request(c, []prm.Assignment{{Path: "no_such", Value: "1"}}); err == nil || !strings.Contains(err.Error(), "op_mod") {
		t.Errorf("unknown field: %v (want the valid names listed)", err)
	}
	out := make([]byte, db.OutBytes(c))
	out[0], out[7] = 3, 0x2a
	if st, syn := StatusOf(out); st != 3 || syn != 0x2a {
		t.Errorf("status %d syndrome 0x%x", st, syn)
	}
	d, err := db.Reply(c, out)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := d.Get("syndrome"); err != nil || v.Uint() != 0x2a {
		t.Errorf("decoded syndrome %v %v", v, err)
	}
	nop, _ := db.Command("QUERY_MTT")
	if _, err := db.Request(nop, nil); err == nil {
		t.Error("a command without an in layout was built")
	}
}

func TestHandwrittenErrors(t *testing.T) {
	for text, want := range map[string]string{
		"layout\tx\t33\n":                                     "positive number of dwords",
		"f\ta\tdw0[1]\n":                                      "layout above it",
		"layout\tx\t32\nf\ta\tdw0[40]\n":                      "31 >= msb",
		"layout\tx\t32\nf\ta\tdw1[3]\n":                       "past the layout",
		"layout\tx\t64\nf\ta\t0x3/16\n":                       "cross a dword",
		"layout\tx\t32\nf\ta\tbyte\n":                         "is not dwN",
		"layout\tx\t32\nf\ta\tdw0[1]\tq=1\n":                  "unknown key",
		"layout\tx\t32\nf\ta\tdw0[1]\nf\ta\tdw0[2]\n":         "defined twice",
		"extend\tnope\n":                                      "no such layout",
		"scope\tNOPE\tany\tconfiguration\tquery\n":            "no such command",
		"op\tQUERY_HCA_CAP\t0x999\t-\t-\n":                    "is 0x999 here",
		"cap\tESWITCH\t0x30\t-\n":                             "clashes",
		"layout\tx\t64\nf\tq\t0x0/32\tsub=query_hca_cap_in\n": "but layout query_hca_cap_in is 128",
		"wat\n": "unknown record",
	} {
		_, err := Build("t", ifcFacts, text, "")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

// Fields the header leaves untyped get the values of their separate enum:
// QUERY_VPORT_STATE's admin_state decodes as esw shows it.
func TestUntypedEnums(t *testing.T) {
	db, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for path := range untypedEnums {
		node, field, _ := strings.Cut(path, ".")
		n, ok := db.Layout(node)
		if !ok {
			t.Fatalf("no layout %s", node)
		}
		f := n.Field(field)
		want := []prm.EnumValue{{Name: "DOWN", Value: 0}, {Name: "UP", Value: 1}, {Name: "AUTO", Value: 2}}
		if f == nil {
			t.Fatalf("%s: no field", path)
		}
		if d := cmp.Diff(want, f.Enum); d != "" {
			t.Errorf("%s enum (-want +got):\n%s", path, d)
		}
	}
}

// olderFieldChanges are the fields an older installed header (Debian's 6.1,
// kept as the cross-check of the database generated from the newest) places
// otherwise than the built-in layouts, each with why. Found by
// TestOlderHeadersAgree; an entry no header needs any more fails it.
var olderFieldChanges = map[string]string{
	"encryption_key_obj.key_type":                    "6.12 reworks the DEK object: key_type replaced, key widened to 1024 bits",
	"encryption_key_obj.key":                         "6.12 reworks the DEK object: key widened to 1024 bits",
	"create_encryption_key_in.encryption_key_object": "follows encryption_key_obj's new size",
	"flow_context.destination":                       "6.12 renames the destination union's layout (dest_format_flow_counter_list_auto); same bits",
	"page_fault_resume_in.error":                     "6.12 rewrites PAGE_FAULT_RESUME's input for the newer ODP scheme",
	"page_fault_resume_in.page_fault_type":           "6.12 rewrites PAGE_FAULT_RESUME's input",
	"page_fault_resume_in.wq_number":                 "6.12 rewrites PAGE_FAULT_RESUME's input",
	"page_fault_resume_in.token":                     "6.12 rewrites PAGE_FAULT_RESUME's input",
	"mcam_access_reg.regs_95_to_87":                  "6.12 names more MCAM register bits, splitting the old ranges",
	"mcam_access_reg.regs_44_to_32":                  "6.12 names more MCAM register bits, splitting the old ranges",
	"mcam_access_reg.regs_31_to_0":                   "6.12 names more MCAM register bits, splitting the old ranges",
	"mcam_access_reg_bits2.regs_95_to_64":            "6.12 names more MCAM register bits, splitting the old ranges",
	"modify_ipsec_obj_in.ipsec_object":               "6.12 shrinks ipsec_obj to 1024 bits",
	"query_ipsec_obj_out.ipsec_object":               "6.12 shrinks ipsec_obj to 1024 bits",
	"create_ipsec_obj_in.ipsec_object":               "6.12 shrinks ipsec_obj to 1024 bits",
	"hca_cap_union.vector_calc_cap":                  "6.12 drops the vector-calc capability page",
	"hca_cap_union.shampo_cap":                       "6.12 drops the SHAMPO capability page from the union",
	"ppcnt_reg.prio_tc":                              "6.12 widens prio_tc to 5 bits, as the ADB has it",
	"cmd_hca_cap.shampo":                             "6.12 declares shampo at another bit of cmd_hca_cap",
	"cmd_hca_cap.relaxed_ordering_read":              "6.12 declares relaxed_ordering_read at another bit; the old bit is relaxed_ordering_read_pci_enabled",
	"flow_table_context.sw_owner_icm_root_1":         "6.12 nests the SW-owner roots in an inline struct of a union",
	"flow_table_context.sw_owner_icm_root_0":         "6.12 nests the SW-owner roots in an inline struct of a union",
	"query_qp_out.pas":                               "6.12 puts QUERY_QP's PAS list behind a union with the QPC extension",
	"general_obj_in_cmd_hdr.log_obj_range":           "6.12 moves log_obj_range under the op_param union",
	"mkc.log_page_size":                              "6.12 widens log_page_size to 6 bits",
	"odp_cap.sig":                                    "6.12 restructures the ODP capability page (transport caps per scheme)",
	"odp_cap.rc_odp_caps":                            "6.12 restructures the ODP capability page",
	"odp_cap.uc_odp_caps":                            "6.12 restructures the ODP capability page",
	"odp_cap.ud_odp_caps":                            "6.12 restructures the ODP capability page",
	"odp_cap.xrc_odp_caps":                           "6.12 restructures the ODP capability page",
	"odp_cap.dc_odp_caps":                            "6.12 restructures the ODP capability page",
}

// The built-in layouts come from the newest installed header; every older
// one still installed must agree with them on every named field they share
// (same offset and width), apart from olderFieldChanges, the reworks
// between them, each named.
func TestOlderHeadersAgree(t *testing.T) {
	paths, err := ifc.FindAll()
	if err != nil || len(paths) < 2 {
		t.Skipf("SKIPPED: the cross-check needs an older mlx5_ifc.h beside the newest (scripts/setup.sh installs 6.1 and the newest); have %v %v", paths, err)
	}
	db := mustLoad(t)
	used := map[string]bool{}
	for _, path := range paths[1:] {
		h, err := ifc.LoadFile(path)
		if err != nil {
			t.Fatalf("%s does not parse: %v", path, err)
		}
		shared := 0
		for name, on := range h.Nodes {
			bn, ok := db.Layouts.Nodes[name]
			if !ok {
				continue
			}
			byName := map[string]*prm.Field{}
			for _, f := range bn.Fields {
				byName[f.Name] = f
			}
			for _, of := range on.Fields {
				if ifc.IsReserved(of.Name) {
					continue
				}
				shared++
				key := name + "." + of.Name
				nf := byName[of.Name]
				var got string
				switch {
				case nf == nil:
					got = "gone"
				case nf.Offset != of.Offset || nf.Size != of.Size || nf.Subnode != of.Subnode:
					got = fmt.Sprintf("moved: older %#x/%d %s, built-in %#x/%d %s", of.Offset, of.Size, of.Subnode, nf.Offset, nf.Size, nf.Subnode)
				default:
					continue
				}
				if _, ok := olderFieldChanges[key]; ok {
					used[key] = true
					continue
				}
				t.Errorf("%s: %s (%s)", key, got, filepath.Base(path))
			}
		}
		if shared < 4000 {
			t.Errorf("%s: only %d named fields shared with the built-in layouts; the comparison has broken", path, shared)
		}
	}
	for k := range olderFieldChanges {
		if !used[k] {
			t.Errorf("olderFieldChanges entry %s matches nothing any more; remove it", k)
		}
	}
}

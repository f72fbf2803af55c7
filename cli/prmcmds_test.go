package cli

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/feature/prmsearch"
	"github.com/cxray/cxray/prm/cmdb"
	"github.com/cxray/cxray/prm/ifc"
)

// prm show works on the command layouts by the kernel's names, with the
// register JSON contract, and every field is where the command database's
// plan puts it.
func TestShowCommandLayouts(t *testing.T) {
	cdb, err := cmdb.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mkc", "qpc", "e_switch_cap", "cmd_hca_cap", "initial_seg", "health_buffer", "cmd_queue_entry", "nvmf_frontend_namespace_context", "nic_vport_context"} {
		out, errs, code := cli(t, "", "--adb", "builtin", "prm", "show", name, "-o", "json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		var got showOut
		mustJSON(t, out, &got)
		p, err := cdb.Plan(name)
		if err != nil {
			t.Fatal(err)
		}
		type pos struct {
			Path       string
			Bit, Width int
		}
		var want, have []pos
		for _, l := range p.Leaves() {
			if !l.Joined {
				want = append(want, pos{l.Path, l.Bit, l.Width})
			}
		}
		for _, f := range got.Fields {
			have = append(have, pos{f.Path, f.BitOffset, f.BitWidth})
			if f.Access != "-" {
				t.Errorf("%s.%s: access %q; the kernel layouts have none, want -", name, f.Path, f.Access)
			}
		}
		if d := cmp.Diff(want, have); d != "" {
			t.Errorf("%s fields (-plan +show):\n%s", name, d)
		}
		if got.Name != name || got.SizeBytes != p.Bytes || !strings.HasPrefix(got.SourceRevision, "mlx5_ifc.h") {
			t.Errorf("%s: name %q size %d revision %q", name, got.Name, got.SizeBytes, got.SourceRevision)
		}
	}
	out, _, code := cli(t, "", "--adb", "builtin", "prm", "show", "e_switch_cap", "--no-diagram")
	if code != 0 || !strings.Contains(out, "esw_functions_changed") || !strings.Contains(out, "0x00  [6:6]") {
		t.Errorf("e_switch_cap table: exit %d\n%.600s", code, out)
	}
}

// A command shows both mailboxes and the fwctl policy, in both modes.
func TestShowCommand(t *testing.T) {
	out, errs, code := cli(t, "", "--adb", "builtin", "prm", "show", "QUERY_HCA_CAP", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got struct {
		Name   string `json:"name"`
		Kind   string `json:"kind"`
		Opcode uint16 `json:"opcode"`
		Fwctl  []struct {
			Scope    string `json:"scope"`
			Modifies bool   `json:"modifies"`
		} `json:"fwctl"`
		In     *showOut `json:"in"`
		OutBox *showOut `json:"out"`
	}
	mustJSON(t, out, &got)
	if got.Name != "QUERY_HCA_CAP" || got.Kind != "command" || got.Opcode != 0x100 || len(got.Fwctl) != 1 || got.Fwctl[0].Scope != "configuration" || got.Fwctl[0].Modifies {
		t.Errorf("command facts: %+v", got)
	}
	if got.In == nil || got.In.Name != "query_hca_cap_in" || got.In.SizeBytes != 16 || got.OutBox == nil || got.OutBox.Name != "query_hca_cap_out" {
		t.Fatalf("mailboxes: in %v, out %v", got.In != nil, got.OutBox != nil)
	}
	found := false
	for _, f := range got.OutBox.Fields {
		if f.Path == "capability.e_switch_cap.esw_functions_changed" && f.BitOffset == 0x80+0x19 {
			found = true
		}
	}
	if !found {
		t.Error("the out mailbox does not list the e-switch page through its capability union")
	}
	out, _, code = cli(t, "", "--adb", "builtin", "prm", "show", "QUERY_NVMF_BACKEND_CONTROLLER", "--no-diagram")
	if code != 0 || !strings.Contains(out, "in mailbox: no source") || !strings.Contains(out, "from scope debug_read_only") {
		t.Errorf("a command without layouts: exit %d\n%s", code, out)
	}
	out, _, code = cli(t, "", "--adb", "builtin", "prm", "show", "CREATE_MKEY", "--no-diagram", "--path", "memory_key_mkey_entry.pd")
	if code != 0 || !strings.Contains(out, "refused at every scope") || !strings.Contains(out, "memory_key_mkey_entry.pd") {
		t.Errorf("CREATE_MKEY: exit %d\n%s", code, out)
	}
	_, errs, code = cli(t, "", "--adb", "builtin", "prm", "show", "QUERY_HCA_CAP", "--path", "nothing_here")
	if code != 2 || !strings.Contains(errs, "no field under") {
		t.Errorf("bad --path: exit %d %s", code, errs)
	}
	_, errs, code = cli(t, "", "--adb", "builtin", "prm", "show", "QUERY_HCA_CPA")
	if code != 2 || !strings.Contains(errs, "QUERY_HCA_CAP") {
		t.Errorf("typo: exit %d %s", code, errs)
	}
}

// encode builds a command's in mailbox with its opcode; decode reads a
// context dump and a command's out (or, with --in, in) mailbox.
func TestEncodeDecodeCommands(t *testing.T) {
	out, errs, code := cli(t, "", "--adb", "builtin", "prm", "encode", "QUERY_HCA_CAP", "op_mod=0x13", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	var enc struct {
		Hex    string `json:"hex"`
		Opcode uint16 `json:"opcode"`
		Layout string `json:"layout"`
	}
	mustJSON(t, out, &enc)
	if enc.Hex != "01000000000000130000000000000000" || enc.Opcode != 0x100 || enc.Layout != "query_hca_cap_in" {
		t.Errorf("encode: %+v", enc)
	}
	out, _, code = cli(t, "", "--adb", "builtin", "prm", "decode", "QUERY_HCA_CAP", "--in", enc.Hex)
	if code != 0 || !strings.Contains(out, "op_mod          0x0013 (19)") {
		t.Errorf("decode --in: exit %d\n%s", code, out)
	}

	// A QP context as a dump file, in the table and JSON modes.
	out, _, code = cli(t, "", "--adb", "builtin", "prm", "encode", "qpc", "state=RTS", "next_send_psn=0x123", "retry_count=7", "-o", "json")
	if code != 0 {
		t.Fatal(out)
	}
	mustJSON(t, out, &enc)
	dump := filepath.Join(t.TempDir(), "dump.txt")
	if err := os.WriteFile(dump, []byte(enc.Hex), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code = cli(t, "", "--adb", "builtin", "prm", "decode", "qpc", "--file", dump)
	if code != 0 || !strings.Contains(out, "RTS (3)") || !strings.Contains(out, "0x000123 (291)") {
		t.Errorf("decode qpc: exit %d\n%.500s", code, out)
	}
	out, _, code = cli(t, "", "--adb", "builtin", "prm", "decode", "qpc", "--file", dump, "-o", "json")
	var dec struct {
		Fields map[string]any `json:"fields"`
	}
	mustJSON(t, out, &dec)
	if code != 0 || dec.Fields["state"] != "RTS" || dec.Fields["retry_count"] != 7.0 || dec.Fields["next_send_psn"] != 291.0 {
		t.Errorf("decode qpc JSON: %v", dec.Fields)
	}
	// An out mailbox by command name: status and syndrome come first.
	out, _, code = cli(t, "", "--adb", "builtin", "prm", "decode", "QUERY_VPORT_STATE", "0x03000000", "0x0000beef", "0", "0x00000011")
	if code != 0 || !strings.Contains(out, "0x0000beef") || !strings.Contains(out, "UP (1)") {
		t.Errorf("decode out mailbox: exit %d\n%s", code, out)
	}
	_, errs, code = cli(t, "", "--adb", "builtin", "prm", "decode", "mkc", "--in", "0")
	if code != 2 || !strings.Contains(errs, "--in is for commands") {
		t.Errorf("--in on a layout: exit %d %s", code, errs)
	}
	_, errs, code = cli(t, "", "--adb", "builtin", "prm", "encode", "QUERY_MTT", "x=1")
	if code != 2 || !strings.Contains(errs, "no source cxray has describes its in mailbox") {
		t.Errorf("encode without a layout: exit %d %s", code, errs)
	}
}

func TestSearchSpansCommands(t *testing.T) {
	out, _, code := cli(t, "", "--adb", "builtin", "prm", "search", "eswitch_manager|^QUERY_NVMF|^temperature$", "-o", "json")
	var res struct {
		Hits []prmsearch.Hit `json:"hits"`
	}
	mustJSON(t, out, &res)
	want := map[string]bool{"field MTMP temperature": false, "field cmd_hca_cap eswitch_manager": false, "command QUERY_NVMF_NAMESPACE_CONTEXT ": false}
	for _, h := range res.Hits {
		k := fmt.Sprintf("%s %s %s", h.Kind, h.Register, h.Path)
		if h.Kind == "command" {
			k = "command " + h.Name + " "
		}
		if _, ok := want[k]; ok {
			want[k] = true
		}
	}
	for k, ok := range want {
		if !ok {
			t.Errorf("search did not find %q: %.800s", k, out)
		}
	}
	if code != 0 {
		t.Errorf("exit %d", code)
	}
}

// diff compares command layouts with a kernel header: the built-in ones
// with the header they came from show no change.
func TestDiffKernelLayouts(t *testing.T) {
	path, err := ifc.Find()
	if err != nil {
		t.Skipf("SKIPPED, no kernel header: %v", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cmdb.Facts(), fmt.Sprintf("%x", sha256.Sum256(b))) {
		t.Skipf("SKIPPED: %s is not the header the built-in layouts came from", path)
	}
	out, errs, code := cli(t, "", "prm", "diff", "builtin-ifc", path, "-o", "json")
	var rep struct {
		Changed   []any `json:"changed"`
		Unchanged int   `json:"unchanged"`
	}
	mustJSON(t, out, &rep)
	if code != 0 || len(rep.Changed) != 0 || rep.Unchanged < 600 {
		t.Errorf("built-in vs its header: exit %d, %d changed, %d unchanged: %s", code, len(rep.Changed), rep.Unchanged, errs)
	}
	out, _, code = cli(t, "", "prm", "diff", "builtin-ifc", path, "QUERY_HCA_CAP", "mkc")
	if code != 0 || !strings.Contains(out, "unchanged: mkc, query_hca_cap_in, query_hca_cap_out") {
		t.Errorf("named: exit %d\n%s", code, out)
	}
	_, errs, code = cli(t, "", "prm", "diff", "builtin", path)
	if code != 2 || !strings.Contains(errs, "not the same kind") {
		t.Errorf("ADB against a header: exit %d %s", code, errs)
	}
}

package caps

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/emu/cmdif/cmdiftest"
)

func ctx() context.Context { return context.Background() }

func value(t *testing.T, r *Report, typ, path string) Field {
	t.Helper()
	p := r.Page(typ)
	if p == nil || p.Error != "" {
		t.Fatalf("page %s: %+v", typ, p)
	}
	f, ok := p.Field(path)
	if !ok {
		t.Fatalf("%s.%s not in the report", typ, path)
	}
	return f
}

func TestReadEmulatedPages(t *testing.T) {
	r := cmdiftest.YAML(t, "devices:\n  - profile: cx7-2p400g\n    functions: 2\n  - profile: cx6dx-2p100g\n")
	pf0, err := Read(ctx(), r.Devices[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Types                  []string
		Manager, ESWChanged    uint64
		QPCur, QPMax           uint64
		PortType, PortTypeText string
		NVMFNamespaceContext   uint64
	}
	var types []string
	for _, p := range pf0.Pages {
		types = append(types, p.Type)
	}
	g := got{Types: types, Manager: value(t, pf0, "general", "eswitch_manager").Current,
		ESWChanged: value(t, pf0, "eswitch", "esw_functions_changed").Current,
		QPCur:      value(t, pf0, "general", "log_max_qp").Current, QPMax: value(t, pf0, "general", "log_max_qp").Max,
		PortType: value(t, pf0, "general", "port_type").Text, NVMFNamespaceContext: value(t, pf0, "nvmf", "frontend_namespace_context").Current}
	want := got{Types: []string{"GENERAL", "ESWITCH", "ROCE", "NVMF"}, Manager: 1, ESWChanged: 1, QPCur: 18, QPMax: 24,
		PortType: "ETHERNET (1)", NVMFNamespaceContext: 1}
	if d := cmp.Diff(want, g); d != "" {
		t.Errorf("first PF (-want +got):\n%s", d)
	}
	// Zeros are left out unless asked for.
	if _, ok := pf0.Page("general").Field("fpga"); ok {
		t.Error("a zero capability is listed without All")
	}
	all, _ := Read(ctx(), r.Devices[0], Options{Types: []string{"general"}, All: true})
	if _, ok := all.Page("general").Field("fpga"); !ok || len(all.Pages) != 1 {
		t.Error("All does not list zero capabilities")
	}
	// The second PF manages its own e-switch too; the ConnectX-6 Dx has no
	// NVMe-oF offload, which the report says from the general page
	// instead of failing.
	pf1, _ := Read(ctx(), r.Devices[1], Options{})
	if f, ok := pf1.Page("general").Field("eswitch_manager"); !ok || f.Current != 1 {
		t.Errorf("the second PF is not an e-switch manager: %+v", f)
	}
	cx6, err := Read(ctx(), r.Devices[2], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p := cx6.Page("nvmf"); p == nil || !strings.Contains(p.Error, "no NVMe-oF target offload") || len(p.Fields) != 0 {
		t.Errorf("cx6dx NVMe-oF page: %+v", p)
	}
	// A type the firmware does not offer is a page error, not a failure.
	q, err := Read(ctx(), r.Devices[0], Options{Types: []string{"qos", "general"}})
	if err != nil || !strings.Contains(q.Page("qos").Error, "status 0x3") || q.Page("general").Error != "" {
		t.Errorf("qos page: %v %+v", err, q.Pages)
	}
	if _, err := Read(ctx(), r.Devices[0], Options{Types: []string{"warp"}}); err == nil {
		t.Error("an unknown type was accepted")
	}
	rows := pf0.Rows()
	if rows[0][0] != "TYPE" || len(rows) < 40 {
		t.Errorf("%d rows", len(rows))
	}
}

func TestDiffDevicesAndSavedReport(t *testing.T) {
	r := cmdiftest.YAML(t, "devices:\n  - profile: cx7-2p400g\n    functions: 2\n")
	a, _ := Read(ctx(), r.Devices[0], Options{})
	b, _ := Read(ctx(), r.Devices[1], Options{})
	if cs := Diff(a, a); len(cs) != 0 {
		t.Errorf("a report differs from itself: %+v", cs)
	}
	got := map[string]Change{}
	for _, c := range Diff(a, b) {
		got[strings.ToLower(c.Type)+"."+c.Path] = c
	}
	// The PFs differ in their vhca_id only: each manages its own e-switch.
	var paths []string
	for p := range got {
		paths = append(paths, p)
	}
	if d := cmp.Diff([]string{"general.vhca_id"}, paths); d != "" {
		t.Errorf("differences between the PFs (-want +got):\n%s", d)
	}
	if c := got["general.vhca_id"]; c.Old != "0" || c.New != "1" {
		t.Errorf("vhca_id change %+v", c)
	}
	if _, ok := got["general.log_max_qp"]; ok {
		t.Error("an equal capability is reported")
	}
	// Saved and loaded, the report compares the same as the live one.
	var buf bytes.Buffer
	if err := a.Save(&buf); err != nil {
		t.Fatal(err)
	}
	saved, err := Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(Diff(a, b), Diff(saved, b)); d != "" {
		t.Errorf("saved report diffs differently (-live +saved):\n%s", d)
	}
	for _, bad := range []string{"", "{}", `{"pages":[{"fields":[]}]}`, "[1,2]"} {
		if _, err := Load(strings.NewReader(bad)); err == nil {
			t.Errorf("%q loaded", bad)
		}
	}
}

// Without a command interface the read fails as a whole, saying so.
func TestNoCommander(t *testing.T) {
	r := cmdiftest.Profile(t, "cx7-2p400g")
	d := r.Devices[0]
	d.AttachCommander(nil)
	if _, err := Read(ctx(), d, Options{}); !errors.Is(err, dev.ErrNoCommands) {
		t.Errorf("no commander: %v", err)
	}
}

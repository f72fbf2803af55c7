package scenario_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
)

// FuzzParse feeds the scenario parser arbitrary bytes: it must never panic,
// and what it accepts must be buildable into devices with unique, valid
// PCI addresses.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"devices: [{}]",
		"devices: [{functions: 8, bdf: '00:1f.0'}]",
		"devices:\n  - ports: [{port: 2, traffic: {priority_share: [1,1,1,1,1,1,1,1]}}]",
		"devices:\n  - modules: [{module: 1, plugged: false}]\n    faults: {link_down: [1, 2], busy: 1}",
		"clock: {start: 2024-01-01, mode: manual}\ndevices: [{profile: cx6dx-2p100g, seed: 0x10}]",
		"x: &a {profile: cx7-2p400g}\ndevices: [*a]",
		"devices: [{faults: {register_status: {0x5006: 7}}}]",
		"devices:\n- {functions: [{bdf: 0:0.0}, {bdf: ffff:ff:1f.7}]}",
		"devices:\n  - {profile: cx7-1p-ndr, numa_node: 1, ports: [{port: 1, ib: {width: 2x, lid: 0x24, state: init}}]}",
		"devices:\n  - {profile: cx7-2p400g, functions: 2, nv: {configured: {LINK_TYPE_P2: IB}}, ports: [{port: 2, ib: {partner_speeds: [HDR], sm_lid: 3}}]}",
		"devices:\n  - {profile: cx7-1p-ndr, bdf: 18:00.0}\n  - {profile: cx7-1p-ndr, bdf: 19:00.0, ports: [{port: 1, ib: {lid: 2}}]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := scenario.Parse(data, "fuzz.yaml")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			// The shape check (yamlx.go) accepts exactly what yaml.v3's
			// strict decoding into schema.go accepts.
			if strings.Contains(err.Error(), "schema is inconsistent") {
				t.Fatal(err)
			}
			return
		}
		seen := map[string]bool{}
		lids := map[uint16]bool{}
		for _, d := range sc.Devices {
			// Every InfiniBand port has a LID of its own.
			for i, p := range d.Spec.Ports {
				switch {
				case p.LinkType == fw.LinkInfiniBand && (p.IB.LID == 0 || lids[p.IB.LID]):
					t.Fatalf("%s port %d: LID 0x%x (given twice: %v)", d.Name, i+1, p.IB.LID, lids[p.IB.LID])
				case p.LinkType == fw.LinkInfiniBand:
					lids[p.IB.LID] = true
				case p.LinkType != fw.LinkEthernet:
					t.Fatalf("%s port %d: link type %q", d.Name, i+1, p.LinkType)
				}
			}
			if len(d.Functions) == 0 || len(d.Functions) > scenario.MaxFunctions {
				t.Fatalf("device %s has %d functions", d.Name, len(d.Functions))
			}
			if err := d.Spec.Validate(); err != nil {
				t.Fatalf("accepted an invalid spec: %v", err)
			}
			for _, fn := range d.Functions {
				b, err := scenario.ParseBDF(fn.BDF)
				if err != nil || b.String() != fn.BDF || seen[fn.BDF] {
					t.Fatalf("function BDF %q (dup %v): %v", fn.BDF, seen[fn.BDF], err)
				}
				seen[fn.BDF] = true
				if fn.Port < 1 || fn.Port > len(d.Spec.Ports) {
					t.Fatalf("function on port %d of %d", fn.Port, len(d.Spec.Ports))
				}
			}
		}
		// Building may still refuse (RoCE names are checked against the
		// database), but must not panic.
		scenario.Build(sc, scenario.Options{Clock: clock.NewManual(scenario.DefaultStart)})
	})
}

package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/nvconf"
)

func val(text string, raw uint64) *nvconf.Value {
	return &nvconf.Value{Text: text, Raw: raw, Numeric: true}
}

func setting(name string, def, cur, next *nvconf.Value) nvconf.Setting {
	return nvconf.Setting{Name: name, Default: def, Current: cur, Next: next}
}

func ptr[T any](v T) *T { return &v }

// facts is a ConnectX-7 function with SR-IOV on (8 VFs) and one port.
func facts() Facts {
	return Facts{
		BDF:      "0000:03:00.0",
		Identity: &adapter.Identity{DeviceID: 0x1021, PSID: "MT_0000000838", Firmware: "28.39.1010", PartNumber: "MCX75310AAS-NEAT"},
		Links:    []adapter.Link{{Port: 1, OperUp: ptr(true), SpeedGbps: ptr(400.0)}},
		NV: []nvconf.Setting{
			setting("SRIOV_EN", val("False(0)", 0), val("True(1)", 1), val("True(1)", 1)),
			setting("NUM_OF_VFS", val("0", 0), val("8", 8), val("8", 8)),
			setting("LINK_TYPE_P1", val("ETH(2)", 2), val("ETH(2)", 2), val("ETH(2)", 2)),
			setting("LOG_TX_PSN_WINDOW", val("7", 7), val("7", 7), val("10", 10)),
			setting("ATS_ENABLED", val("False(0)", 0), val("False(0)", 0), val("False(0)", 0)),
			setting("ROCE_CC_PRIO_MASK_P1", val("255", 255), val("255", 255), val("255", 255)),
			setting("CNP_DSCP_P1", val("48", 48), val("48", 48), val("48", 48)),
			setting("CNP_802P_PRIO_P1", val("6", 6), val("6", 6), val("6", 6)),
		},
	}
}

// violations lists "check item" of each violation.
func violations(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		if f.Violation {
			out = append(out, f.Check+" "+f.Item)
		}
	}
	return out
}

func mustParse(t *testing.T, text string) *Set {
	t.Helper()
	s, err := Parse("p.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// cxray's own policy: each check finds what departs and nothing else; a
// value set for the next boot but not running yet is a violation that
// says so.
func TestOwnPolicy(t *testing.T) {
	s := mustParse(t, `
kind: CxrayPolicy
firmware: {minimum: 28.39.1010, psid: [MT_0000000838, MT_0000000839]}
nv:
  SRIOV_EN: True
  NUM_OF_VFS: 8
  LINK_TYPE_P1: ETH
  LOG_TX_PSN_WINDOW: 10
link: {up: true, minSpeedGbps: 400}
pcie: {minWidth: 16}
`)
	fs, applied := s.Check(facts())
	if !applied {
		t.Fatal("the policy does not apply to a device it selects")
	}
	if diff := cmp.Diff([]string{"nv LOG_TX_PSN_WINDOW"}, violations(fs)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	for _, f := range fs {
		if f.Item == "LOG_TX_PSN_WINDOW" && !strings.Contains(f.Note, "next firmware reset") {
			t.Errorf("a pending value is not said to wait for a reset: %+v", f)
		}
		if f.Check == "pcie" && !f.Unchecked {
			t.Errorf("PCIe with no reading is not unchecked: %+v", f)
		}
	}

	f := facts()
	f.Identity.Firmware = "28.38.9999"
	f.Identity.PSID = "MT_0000000999"
	f.Links[0].SpeedGbps = ptr(200.0)
	f.Links[0].OperUp = ptr(false)
	f.NV[1] = setting("NUM_OF_VFS", val("0", 0), val("4", 4), val("4", 4))
	f.PCIe = &PCIe{Width: 8, SpeedGTs: 32}
	fs, _ = s.Check(f)
	want := []string{"firmware version", "firmware psid", "nv LOG_TX_PSN_WINDOW", "nv NUM_OF_VFS", "link port 1 state", "link port 1 speed", "pcie width"}
	if diff := cmp.Diff(want, violations(fs)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	if got := Violations(fs); got["nv"] != 2 || got["link"] != 2 || got["firmware"] != 2 || got["pcie"] != 1 {
		t.Errorf("counts %v", got)
	}

	// NV that cannot be read is unchecked, never a violation.
	f = facts()
	f.NV, f.NVErr = nil, errors.New("not available on this backend")
	fs, _ = s.Check(f)
	for _, fd := range fs {
		if fd.Check == "nv" && (!fd.Unchecked || fd.Violation) {
			t.Errorf("unreadable NV gave %+v", fd)
		}
	}
}

// Versions compare part by part, numerically.
func TestFirmwareMinimum(t *testing.T) {
	for _, c := range []struct {
		running, min string
		bad          bool
	}{{"28.39.1010", "28.39.1002", false}, {"28.39.1002", "28.39.1010", true}, {"28.100.1", "28.99.9000", false}, {"22.41.1000", "28.0.0", true}, {"28.39.1002", "28.39.1002", false}} {
		s := mustParse(t, "firmware: {minimum: "+c.min+"}\n")
		f := facts()
		f.Identity.Firmware = c.running
		fs, _ := s.Check(f)
		if got := len(violations(fs)) > 0; got != c.bad {
			t.Errorf("%s against minimum %s: violation %v, want %v", c.running, c.min, got, c.bad)
		}
	}
}

// NVIDIA's NicConfigurationTemplate: numVfs, linkType, roceOptimized,
// gpuDirectOptimized and rawNvConfig become NV rules; the selector picks
// devices by PCI device ID; runtime fields are named as not checked.
func TestNicConfigurationTemplate(t *testing.T) {
	s := mustParse(t, `apiVersion: configuration.net.nvidia.com/v1alpha1
kind: NicConfigurationTemplate
metadata: {name: cx7-roce, namespace: nic-configuration-operator}
spec:
  nodeSelector: {feature.node.kubernetes.io/network-sriov.capable: "true"}
  nicSelector: {nicType: "1021"}
  resetToDefault: false
  template:
    numVfs: 8
    linkType: Ethernet
    pciPerformanceOptimized: {enabled: true, maxReadRequest: 4096}
    roceOptimized: {enabled: true, qos: {trust: dscp, pfc: "0,0,0,1,0,0,0,0"}}
    gpuDirectOptimized: {enabled: true, env: Baremetal}
    rawNvConfig:
      - {name: LOG_TX_PSN_WINDOW, value: "7"}
      - {name: MAX_ACC_OUT_READ_P2, value: "0"}
---
apiVersion: configuration.net.nvidia.com/v1alpha1
kind: NicConfigurationTemplate
metadata: {name: cx6}
spec:
  nicSelector: {nicType: "101d"}
  template: {numVfs: 0}
`)
	if len(s.Policies) != 2 {
		t.Fatalf("%d policies, want 2", len(s.Policies))
	}
	var names []string
	for _, r := range s.Policies[0].NV {
		names = append(names, r.Name+"="+r.Want)
	}
	want := []string{"SRIOV_EN=1", "NUM_OF_VFS=8", "LINK_TYPE_P1=2", "LINK_TYPE_P2=2",
		"ROCE_CC_PRIO_MASK_P1=255", "CNP_DSCP_P1=4", "CNP_802P_PRIO_P1=6", "ROCE_CC_PRIO_MASK_P2=255", "CNP_DSCP_P2=4", "CNP_802P_PRIO_P2=6",
		"ATS_ENABLED=0", "LOG_TX_PSN_WINDOW=7", "MAX_ACC_OUT_READ_P2=0"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("NV rules (-want +got):\n%s", diff)
	}
	if len(s.Policies[0].Notes) != 2 {
		t.Errorf("notes %q: want the runtime QoS and Max Read Request named", s.Policies[0].Notes)
	}
	fs, applied := s.Check(facts())
	if !applied {
		t.Fatal("nicType 1021 does not select a ConnectX-7")
	}
	// _P2 parameters a one-port function lacks are no violation; the
	// others compare with what the device holds.
	if diff := cmp.Diff([]string{"nv CNP_DSCP_P1", "nv LOG_TX_PSN_WINDOW"}, violations(fs)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	f := facts()
	f.Identity.DeviceID = 0x101d
	fs, _ = s.Check(f)
	if diff := cmp.Diff([]string{"nv SRIOV_EN", "nv NUM_OF_VFS"}, violations(fs)); diff != "" {
		t.Errorf("ConnectX-6 Dx against numVfs 0 (-want +got):\n%s", diff)
	}
	f.Identity.DeviceID = 0x1023
	if _, applied := s.Check(f); applied {
		t.Error("a ConnectX-8 is selected by templates for 1021 and 101d")
	}
}

// A switched-off feature expects the firmware defaults.
func TestTemplateDisabledFeatureIsDefault(t *testing.T) {
	s := mustParse(t, "kind: NicConfigurationTemplate\nspec:\n  template:\n    numVfs: 8\n    roceOptimized: {enabled: false}\n")
	fs, _ := s.Check(facts())
	if diff := cmp.Diff([]string(nil), violations(fs)); diff != "" {
		t.Errorf("defaults held: (-want +got):\n%s", diff)
	}
	f := facts()
	f.NV[6] = setting("CNP_DSCP_P1", val("48", 48), val("4", 4), val("4", 4))
	fs, _ = s.Check(f)
	if diff := cmp.Diff([]string{"nv CNP_DSCP_P1"}, violations(fs)); diff != "" {
		t.Errorf("a value off its default (-want +got):\n%s", diff)
	}
}

// Bad files are refused with what to fix, never read as a policy that
// checks less than it says.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ text, words string }{
		{"", "no policy in the file"},
		{"vm\n", "not a mapping of keys"},
		{"- a\n- b\n", "not a mapping of keys"},
		{"firmware: {minimun: 28.1.1}\n", "minimun"},
		{"nv: {SRIOV_EN: [1, 2]}\n", "give a number or a name"},
		{"firmware: {minimum: latest}\n", "not a firmware version"},
		{"kind: Deployment\n", "give a CxrayPolicy or a NicConfigurationTemplate"},
		{"kind: CxrayPolicy\n", "expects nothing"},
		{"kind: NicConfigurationTemplate\nspec: {template: {linkType: Ethernet}}\n", "numVfs is required"},
		{"kind: NicConfigurationTemplate\nspec: {nicSelector: {nicType: cx7}, template: {numVfs: 1}}\n", "nicType \"cx7\""},
		{"kind: NicConfigurationTemplate\nspec: {template: {numVfs: 1, linkType: Fibre}}\n", "give Ethernet or Infiniband"},
		{"nv: {SRIOV_EN: 1}\n\tbad: [\n", "not YAML"},
	} {
		_, err := Parse("p.yaml", []byte(c.text))
		var pe *Error
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%q: %v; want a policy error saying %q", c.text, err, c.words)
		}
	}
}

// Matches reads numbers, booleans and enum names as mlxconfig prints them.
func TestMatches(t *testing.T) {
	for _, c := range []struct {
		want string
		v    *nvconf.Value
		ok   bool
	}{
		{"True", val("True(1)", 1), true}, {"1", val("True(1)", 1), true}, {"true", val("True(1)", 1), true},
		{"false", val("True(1)", 1), false}, {"ETH", val("ETH(2)", 2), true}, {"IB", val("ETH(2)", 2), false},
		{"0x10", val("16", 16), true}, {"ETH(2)", val("ETH(2)", 2), true},
		{"abc", &nvconf.Value{Text: "abc"}, true}, {"1", &nvconf.Value{Text: "abc"}, false}, {"1", nil, false},
	} {
		if got := Matches(c.want, c.v); got != c.ok {
			t.Errorf("Matches(%q, %+v) = %v, want %v", c.want, c.v, got, c.ok)
		}
	}
}

// Any input either parses into rules that name a parameter and a value,
// or is refused with a policy error; the same bytes always read the same.
func FuzzParse(f *testing.F) {
	f.Add([]byte("nv: {SRIOV_EN: 1}\nfirmware: {minimum: 28.39.1}\n"))
	f.Add([]byte("kind: NicConfigurationTemplate\nspec: {template: {numVfs: 2, rawNvConfig: [{name: X, value: '1'}]}}\n---\nlink: {up: true}\n"))
	f.Add([]byte("pcie: {minWidth: 16, minSpeedGTs: 32}\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("f", data)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a policy error", err)
			}
			return
		}
		if len(s.Policies) == 0 {
			t.Fatal("a set with no policy")
		}
		for _, p := range s.Policies {
			for _, r := range p.NV {
				if strings.TrimSpace(r.Name) == "" || (r.Want == "" && !r.Default) {
					t.Fatalf("rule %+v names no parameter or value", r)
				}
			}
		}
		again, err := Parse("f", data)
		if err != nil || !cmp.Equal(s, again) {
			t.Fatalf("a second parse differs: %v", err)
		}
	})
}

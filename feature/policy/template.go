package policy

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// template is the part of NVIDIA's NicConfigurationTemplate
// (configuration.net.nvidia.com/v1alpha1) that maps to what cxray checks.
// The NIC Configuration Operator's documentation gives each field's NV
// parameters; fields that set runtime state (ethtool, PCIe Max Read
// Request) are named in Notes and not checked.
type template struct {
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		NicSelector struct {
			NicType       stringList `yaml:"nicType"`
			PCIAddresses  []string   `yaml:"pciAddresses"`
			SerialNumbers []string   `yaml:"serialNumbers"`
			PartNumbers   []string   `yaml:"partNumbers"`
		} `yaml:"nicSelector"`
		Template struct {
			NumVfs                  *int    `yaml:"numVfs"`
			LinkType                string  `yaml:"linkType"`
			PCIPerformanceOptimized *toggle `yaml:"pciPerformanceOptimized"`
			RoceOptimized           *toggle `yaml:"roceOptimized"`
			GPUDirectOptimized      *struct {
				Enabled bool   `yaml:"enabled"`
				Env     string `yaml:"env"`
			} `yaml:"gpuDirectOptimized"`
			RuntimePerformanceOptimized yaml.Node `yaml:"runtimePerformanceOptimized"`
			SpectrumXOptimized          yaml.Node `yaml:"spectrumXOptimized"`
			NetworkBay                  yaml.Node `yaml:"networkBay"`
			RawNvConfig                 []struct {
				Name  string `yaml:"name"`
				Value string `yaml:"value"`
			} `yaml:"rawNvConfig"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type toggle struct {
	Enabled bool `yaml:"enabled"`
}

// ports are the per-port parameter suffixes a template's per-port fields
// set "for every port whose parameter exists" (two-port adapters).
var ports = []string{"_P1", "_P2"}

// roceParams are what roceOptimized sets per port (ROCE_CC_PRIO_MASK,
// CNP_DSCP, CNP_802P_PRIO), per the operator's documentation.
var roceParams = []struct{ name, value string }{
	{"ROCE_CC_PRIO_MASK", "255"}, {"CNP_DSCP", "4"}, {"CNP_802P_PRIO", "6"},
}

func parseTemplate(node *yaml.Node, where string) (*Policy, error) {
	var t template
	if err := node.Decode(&t); err != nil {
		return nil, fmt.Errorf("NicConfigurationTemplate: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	p := &Policy{Name: where + " (NicConfigurationTemplate", PCIAddresses: t.Spec.NicSelector.PCIAddresses, PartNumbers: t.Spec.NicSelector.PartNumbers}
	if t.Metadata.Name != "" {
		p.Name += " " + t.Metadata.Name
	}
	p.Name += ")"
	var err error
	if p.DeviceIDs, err = nicTypes(t.Spec.NicSelector.NicType); err != nil {
		return nil, fmt.Errorf("spec.nicSelector.%v", err)
	}
	if len(t.Spec.NicSelector.SerialNumbers) > 0 {
		p.Notes = append(p.Notes, "spec.nicSelector.serialNumbers is not used to select devices (serial numbers repeat on some boards)")
	}
	tp := t.Spec.Template
	set := map[string]NVRule{}
	order := []string{}
	put := func(r NVRule) {
		if _, ok := set[r.Name]; !ok {
			order = append(order, r.Name)
		}
		set[r.Name] = r
	}
	if tp.NumVfs == nil {
		return nil, fmt.Errorf("NicConfigurationTemplate: spec.template.numVfs is required")
	}
	if *tp.NumVfs < 0 {
		return nil, fmt.Errorf("spec.template.numVfs %d: give 0 or more", *tp.NumVfs)
	}
	sriov := "1"
	if *tp.NumVfs == 0 {
		sriov = "0"
	}
	put(NVRule{Name: "SRIOV_EN", Want: sriov, From: "spec.template.numVfs"})
	put(NVRule{Name: "NUM_OF_VFS", Want: fmt.Sprint(*tp.NumVfs), From: "spec.template.numVfs"})
	switch strings.ToLower(tp.LinkType) {
	case "":
	case "ethernet", "infiniband":
		v := "2"
		if strings.EqualFold(tp.LinkType, "infiniband") {
			v = "1"
		}
		for _, s := range ports {
			put(NVRule{Name: "LINK_TYPE" + s, Want: v, IfPresent: true, From: "spec.template.linkType"})
		}
	default:
		return nil, fmt.Errorf("spec.template.linkType %q: give Ethernet or Infiniband", tp.LinkType)
	}
	if r := tp.RoceOptimized; r != nil {
		for _, s := range ports {
			for _, rp := range roceParams {
				rule := NVRule{Name: rp.name + s, Want: rp.value, IfPresent: true, From: "spec.template.roceOptimized"}
				if !r.Enabled {
					// A feature switched off has its parameters reset to
					// the firmware's defaults.
					rule.Want, rule.Default = "", true
				}
				put(rule)
			}
		}
		if r.Enabled {
			p.Notes = append(p.Notes, "spec.template.roceOptimized.qos (trust, PFC, ToS) is runtime state: not checked")
		}
	}
	if g := tp.GPUDirectOptimized; g != nil {
		if g.Enabled {
			if g.Env != "" && !strings.EqualFold(g.Env, "Baremetal") {
				return nil, fmt.Errorf("spec.template.gpuDirectOptimized.env %q: only Baremetal is defined", g.Env)
			}
			put(NVRule{Name: "ATS_ENABLED", Want: "0", From: "spec.template.gpuDirectOptimized"})
		} else {
			put(NVRule{Name: "ATS_ENABLED", Default: true, From: "spec.template.gpuDirectOptimized"})
		}
	}
	if tp.PCIPerformanceOptimized != nil {
		p.Notes = append(p.Notes, "spec.template.pciPerformanceOptimized sets the runtime PCIe Max Read Request: not checked")
	}
	for _, x := range []struct {
		n    yaml.Node
		name string
	}{{tp.RuntimePerformanceOptimized, "runtimePerformanceOptimized (ethtool ring sizes, channels, LRO)"}, {tp.SpectrumXOptimized, "spectrumXOptimized"}, {tp.NetworkBay, "networkBay"}} {
		if x.n.Kind != 0 {
			p.Notes = append(p.Notes, "spec.template."+x.name+" is not checked")
		}
	}
	// rawNvConfig wins over everything else.
	for i, r := range tp.RawNvConfig {
		name := strings.TrimSpace(r.Name)
		if name == "" || len(name) > 64 || strings.TrimSpace(r.Value) == "" || len(r.Value) > 128 {
			return nil, fmt.Errorf("spec.template.rawNvConfig[%d]: give a name (up to 64 characters) and a value (up to 128)", i)
		}
		rule := NVRule{Name: name, Want: strings.TrimSpace(r.Value), From: "spec.template.rawNvConfig"}
		if strings.HasSuffix(name, "_P2") {
			// The operator ignores _P2 names on one-port devices.
			rule.IfPresent = true
		}
		put(rule)
	}
	for _, n := range order {
		p.NV = append(p.NV, set[n])
	}
	return p, nil
}

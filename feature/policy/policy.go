// Package policy checks adapters against what a fleet expects of them:
// NV configuration values, a firmware minimum and PSIDs, link speed and
// PCIe. A policy file is cxray's own (kind CxrayPolicy) or NVIDIA's
// NicConfigurationTemplate (configuration.net.nvidia.com/v1alpha1), whose
// template fields are read where they map to NV parameters
// (docs/config.md, "Policy"). `cxray config check --policy` and the
// exporter's cxray_policy_violations both use Check.
package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/pcie"
)

// Checks are the kinds of expectation, in the order results list them.
var Checks = []string{"firmware", "nv", "link", "pcie"}

// Policy is one document of a policy file.
type Policy struct {
	// Name says where it came from: "FILE", "FILE#2 (NicConfigurationTemplate x)".
	Name string
	// Selector: the devices it applies to (empty: every device).
	DeviceIDs    []uint16
	PCIAddresses []string
	PartNumbers  []string
	PSIDs        []string // firmware.psid: the allowed PSIDs (a check, not a selector)

	FirmwareMin string
	NV          []NVRule
	Link        *LinkRule
	PCIe        *PCIeRule
	// Notes name what the file asks for that cxray does not check (runtime
	// settings of a NicConfigurationTemplate).
	Notes []string
}

// NVRule is one expected NV parameter value.
type NVRule struct {
	Name string
	// Want is a number (1, 0x10) or an enum name (True, ETH); with Default
	// set the value expected is the parameter's firmware default.
	Want    string
	Default bool
	// IfPresent: a parameter the device does not have is no violation
	// (LINK_TYPE_P2 on a one-port adapter).
	IfPresent bool
	// From names the file's field the rule comes from (numVfs).
	From string
}

// LinkRule is what the ports' links must show.
type LinkRule struct {
	Up           bool
	MinSpeedGbps float64
}

// PCIeRule is the PCIe link the adapter must have trained to.
type PCIeRule struct {
	MinWidth    int
	MinSpeedGTs float64
}

// Set is a whole policy file.
type Set struct {
	Policies []*Policy
}

// Error is a policy file that cannot be used: the file is bad input.
type Error struct {
	File string
	Msg  string
}

func (e *Error) Error() string { return e.File + ": " + e.Msg }

// Parse reads a policy file: one or more YAML documents (--- between),
// each a CxrayPolicy or a NicConfigurationTemplate. A key cxray does not
// know in a CxrayPolicy is an error (a typo must not pass as a policy that
// checks nothing).
func Parse(name string, data []byte) (*Set, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	set := &Set{}
	for i := 1; ; i++ {
		var node yaml.Node
		err := dec.Decode(&node)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &Error{name, "not YAML: " + err.Error()}
		}
		if len(node.Content) == 0 {
			continue
		}
		if node.Content[0].Kind != yaml.MappingNode {
			return nil, &Error{name, fmt.Sprintf("document %d is not a mapping of keys: give a policy (kind: CxrayPolicy, see docs/config.md, \"Policy\") or a NicConfigurationTemplate", i)}
		}
		var head struct {
			Kind       string `yaml:"kind"`
			APIVersion string `yaml:"apiVersion"`
		}
		if err := node.Decode(&head); err != nil {
			return nil, &Error{name, fmt.Sprintf("document %d: %v", i, err)}
		}
		where := name
		if i > 1 {
			where = fmt.Sprintf("%s#%d", name, i)
		}
		var p *Policy
		switch head.Kind {
		case "", "CxrayPolicy":
			p, err = parseOwn(&node, where)
		case "NicConfigurationTemplate":
			p, err = parseTemplate(&node, where)
		case "List":
			return nil, &Error{name, "a List: give the templates as YAML documents separated by ---"}
		default:
			return nil, &Error{name, fmt.Sprintf("document %d is a %s; give a CxrayPolicy or a NicConfigurationTemplate", i, head.Kind)}
		}
		if err != nil {
			return nil, &Error{where, err.Error()}
		}
		set.Policies = append(set.Policies, p)
	}
	if len(set.Policies) == 0 {
		return nil, &Error{name, "no policy in the file (see docs/config.md, \"Policy\")"}
	}
	return set, nil
}

// own is cxray's policy document.
type own struct {
	Kind       string `yaml:"kind"`
	APIVersion string `yaml:"apiVersion"`
	Name       string `yaml:"name"`
	Selector   struct {
		NicType      stringList `yaml:"nicType"`
		PCIAddresses []string   `yaml:"pciAddresses"`
		PartNumbers  []string   `yaml:"partNumbers"`
	} `yaml:"selector"`
	Firmware struct {
		Minimum string     `yaml:"minimum"`
		PSID    stringList `yaml:"psid"`
	} `yaml:"firmware"`
	NV   map[string]scalar `yaml:"nv"`
	Link *struct {
		Up           bool    `yaml:"up"`
		MinSpeedGbps float64 `yaml:"minSpeedGbps"`
	} `yaml:"link"`
	PCIe *struct {
		MinWidth    int     `yaml:"minWidth"`
		MinSpeedGTs float64 `yaml:"minSpeedGTs"`
	} `yaml:"pcie"`
}

// scalar is a YAML scalar kept as its text (8, 0x10, True, ETH).
type scalar string

func (s *scalar) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: give a number or a name, not a %s", n.Line, kindName(n.Kind))
	}
	*s = scalar(n.Value)
	return nil
}

// stringList is one string or a list of them.
type stringList []string

func (l *stringList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = []string{n.Value}
		return nil
	case yaml.SequenceNode:
		var out []string
		if err := n.Decode(&out); err != nil {
			return err
		}
		*l = out
		return nil
	}
	return fmt.Errorf("line %d: give a string or a list of strings", n.Line)
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

func parseOwn(node *yaml.Node, where string) (*Policy, error) {
	var o own
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(node); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(&buf)
	dec.KnownFields(true)
	if err := dec.Decode(&o); err != nil {
		return nil, fmt.Errorf("%s (see docs/config.md, \"Policy\", for the keys)", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	p := &Policy{Name: where, PCIAddresses: o.Selector.PCIAddresses, PartNumbers: o.Selector.PartNumbers, PSIDs: o.Firmware.PSID}
	if o.Name != "" {
		p.Name = where + " (" + o.Name + ")"
	}
	var err error
	if p.DeviceIDs, err = nicTypes(o.Selector.NicType); err != nil {
		return nil, err
	}
	if o.Firmware.Minimum != "" {
		if _, err := parseVersion(o.Firmware.Minimum); err != nil {
			return nil, fmt.Errorf("firmware.minimum: %v", err)
		}
		p.FirmwareMin = o.Firmware.Minimum
	}
	names := make([]string, 0, len(o.NV))
	for n := range o.NV {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.TrimSpace(n) == "" || strings.ContainsAny(n, " =") {
			return nil, fmt.Errorf("nv: %q is not a parameter name (SRIOV_EN, NUM_OF_VFS ...)", n)
		}
		if o.NV[n] == "" {
			return nil, fmt.Errorf("nv.%s: no value given", n)
		}
		p.NV = append(p.NV, NVRule{Name: n, Want: string(o.NV[n]), From: "nv." + n})
	}
	if l := o.Link; l != nil {
		if l.MinSpeedGbps < 0 {
			return nil, fmt.Errorf("link.minSpeedGbps %v: give a speed in Gb/s (400)", l.MinSpeedGbps)
		}
		p.Link = &LinkRule{Up: l.Up, MinSpeedGbps: l.MinSpeedGbps}
	}
	if c := o.PCIe; c != nil {
		if c.MinWidth < 0 || c.MinWidth > 32 || c.MinSpeedGTs < 0 {
			return nil, fmt.Errorf("pcie: minWidth %d, minSpeedGTs %v: give a width of 1 to 32 lanes and a rate in GT/s (32 for Gen5)", c.MinWidth, c.MinSpeedGTs)
		}
		p.PCIe = &PCIeRule{MinWidth: c.MinWidth, MinSpeedGTs: c.MinSpeedGTs}
	}
	if p.FirmwareMin == "" && len(p.PSIDs) == 0 && len(p.NV) == 0 && p.Link == nil && p.PCIe == nil {
		return nil, errors.New("the policy expects nothing: give firmware, nv, link or pcie")
	}
	return p, nil
}

// nicTypes reads NicConfigurationTemplate's nicType: the PCI device ID in
// bare hex ("1021" is a ConnectX-7).
func nicTypes(l []string) ([]uint16, error) {
	var out []uint16
	for _, s := range l {
		v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "0x"), 16, 16)
		if err != nil {
			return nil, fmt.Errorf("nicType %q: give the PCI device ID in hex (1021 for a ConnectX-7)", s)
		}
		out = append(out, uint16(v))
	}
	return out, nil
}

// parseVersion reads a firmware version "28.39.1002".
func parseVersion(s string) ([]int, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	out := make([]int, len(parts))
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%q is not a firmware version (28.39.1002)", s)
		}
		out[i] = v
	}
	return out, nil
}

// compareVersions orders two versions part by part (a missing part is 0).
func compareVersions(a, b []int) int {
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Facts are what a device shows, read by the caller.
type Facts struct {
	BDF      string
	Identity *adapter.Identity
	Links    []adapter.Link
	LinksErr error
	// NV is the configuration with Default, Current and Next Boot
	// (nvconf.QueryOptions{Extended: true}); NVErr why it is missing.
	NV    []nvconf.Setting
	NVErr error
	// PCIe is the trained link, nil when the backend does not report it.
	PCIe *PCIe
}

// PCIe is a PCIe link: lanes and rate.
type PCIe struct {
	Width    int
	SpeedGTs float64
}

// PCIeOf is the link a function trained, from what the adapter read of it:
// sysfs's current link, else the firmware's (MPEIN active), else the
// config space's Link Status; nil when none is known.
func PCIeOf(p *adapter.PCIe) *PCIe {
	if p == nil {
		return nil
	}
	var links []pcie.Link
	if p.Host != nil {
		links = append(links, p.Host.Current)
	}
	if p.Firmware != nil {
		links = append(links, p.Firmware.Active)
	}
	if p.Config != nil && p.Config.Express != nil {
		links = append(links, p.Config.Express.Current)
	}
	for _, l := range links {
		if l.Known() {
			return &PCIe{Width: l.Width, SpeedGTs: l.Speed.GTs()}
		}
	}
	return nil
}

// Finding is one expectation checked on one device.
type Finding struct {
	Policy string `json:"policy"`
	Check  string `json:"check"` // firmware, nv, link, pcie
	Item   string `json:"item"`  // the parameter, port or field
	Want   string `json:"want,omitempty"`
	Got    string `json:"got,omitempty"`
	// Violation: the device departs from the policy. A finding that is
	// not one is a pass or, with Unchecked, what could not be read.
	Violation bool   `json:"violation"`
	Unchecked bool   `json:"unchecked,omitempty"`
	Note      string `json:"note,omitempty"`
}

// Applies says whether p selects the device.
func (p *Policy) Applies(f Facts) bool {
	id := f.Identity
	if len(p.DeviceIDs) > 0 {
		if id == nil || !containsID(p.DeviceIDs, id.DeviceID) {
			return false
		}
	}
	if len(p.PCIAddresses) > 0 && !containsFold(p.PCIAddresses, f.BDF) {
		return false
	}
	if len(p.PartNumbers) > 0 && (id == nil || !containsFold(p.PartNumbers, id.PartNumber)) {
		return false
	}
	return true
}

// Check checks the device against every policy of the set that applies.
// applied is false when none does.
func (s *Set) Check(f Facts) (findings []Finding, applied bool) {
	for _, p := range s.Policies {
		if !p.Applies(f) {
			continue
		}
		applied = true
		findings = append(findings, p.check(f)...)
	}
	return findings, applied
}

func (p *Policy) check(f Facts) []Finding {
	var out []Finding
	add := func(fd Finding) {
		fd.Policy = p.Name
		out = append(out, fd)
	}
	id := f.Identity
	if p.FirmwareMin != "" {
		fd := Finding{Check: "firmware", Item: "version", Want: ">= " + p.FirmwareMin}
		min, _ := parseVersion(p.FirmwareMin)
		switch got, err := versionOf(id); {
		case err != nil:
			fd.Unchecked, fd.Note = true, err.Error()
		default:
			fd.Got = id.Firmware
			fd.Violation = compareVersions(got, min) < 0
		}
		add(fd)
	}
	if len(p.PSIDs) > 0 {
		fd := Finding{Check: "firmware", Item: "psid", Want: strings.Join(p.PSIDs, " or ")}
		if id == nil || id.PSID == "" {
			fd.Unchecked, fd.Note = true, "the backend reports no PSID"
		} else {
			fd.Got = id.PSID
			fd.Violation = !containsFold(p.PSIDs, id.PSID)
		}
		add(fd)
	}
	for _, r := range p.NV {
		for _, fd := range r.check(f) {
			add(fd)
		}
	}
	if r := p.Link; r != nil {
		if f.LinksErr != nil || len(f.Links) == 0 {
			why := "the backend reports no link"
			if f.LinksErr != nil {
				why = f.LinksErr.Error()
			}
			add(Finding{Check: "link", Item: "ports", Unchecked: true, Note: why})
		}
		for _, l := range f.Links {
			item := fmt.Sprintf("port %d", l.Port)
			if r.Up {
				fd := Finding{Check: "link", Item: item + " state", Want: "up"}
				if l.OperUp == nil {
					fd.Unchecked, fd.Note = true, "link state unknown"
				} else {
					fd.Got = map[bool]string{true: "up", false: "down"}[*l.OperUp]
					fd.Violation = !*l.OperUp
				}
				add(fd)
			}
			if r.MinSpeedGbps > 0 {
				fd := Finding{Check: "link", Item: item + " speed", Want: fmt.Sprintf(">= %g Gb/s", r.MinSpeedGbps)}
				if l.SpeedGbps == nil {
					fd.Unchecked, fd.Note = true, "link speed unknown"
				} else {
					fd.Got = fmt.Sprintf("%g Gb/s", *l.SpeedGbps)
					fd.Violation = *l.SpeedGbps < r.MinSpeedGbps
				}
				add(fd)
			}
		}
	}
	if r := p.PCIe; r != nil {
		if f.PCIe == nil {
			add(Finding{Check: "pcie", Item: "link", Unchecked: true, Note: "this backend reports no PCIe link"})
		} else {
			if r.MinWidth > 0 {
				add(Finding{Check: "pcie", Item: "width", Want: fmt.Sprintf(">= x%d", r.MinWidth), Got: fmt.Sprintf("x%d", f.PCIe.Width), Violation: f.PCIe.Width < r.MinWidth})
			}
			if r.MinSpeedGTs > 0 {
				add(Finding{Check: "pcie", Item: "speed", Want: fmt.Sprintf(">= %g GT/s", r.MinSpeedGTs), Got: fmt.Sprintf("%g GT/s", f.PCIe.SpeedGTs), Violation: f.PCIe.SpeedGTs < r.MinSpeedGTs})
			}
		}
	}
	return out
}

func versionOf(id *adapter.Identity) ([]int, error) {
	if id == nil || id.Firmware == "" {
		return nil, errors.New("the backend reports no firmware version")
	}
	return parseVersion(id.Firmware)
}

// check compares one parameter on the device: Next Boot is what is
// configured, Current what runs; a device departs when either differs
// (a Next Boot that complies while Current does not waits for a reset).
func (r NVRule) check(f Facts) []Finding {
	fd := Finding{Check: "nv", Item: r.Name, Want: r.Want}
	if r.Default {
		fd.Want = "the firmware default"
	}
	if f.NVErr != nil {
		fd.Unchecked, fd.Note = true, f.NVErr.Error()
		return []Finding{fd}
	}
	var st *nvconf.Setting
	for i := range f.NV {
		if strings.EqualFold(f.NV[i].Name, r.Name) {
			st = &f.NV[i]
			break
		}
	}
	if st == nil {
		if r.IfPresent {
			return nil
		}
		fd.Violation, fd.Note = true, "the device has no such parameter"
		return []Finding{fd}
	}
	want := r.Want
	if r.Default {
		if st.Default == nil {
			fd.Unchecked, fd.Note = true, "the device does not report its defaults"
			return []Finding{fd}
		}
		want = st.Default.Text
		fd.Want = "default " + want
	}
	if st.Next == nil {
		fd.Unchecked, fd.Note = true, "no Next Boot value"
		return []Finding{fd}
	}
	fd.Got = st.Next.Text
	switch {
	case !Matches(want, st.Next):
		fd.Violation = true
	case st.Current != nil && !Matches(want, st.Current):
		fd.Violation = true
		fd.Got = st.Current.Text + " (Next Boot " + st.Next.Text + ")"
		fd.Note = "configured; runs after the next firmware reset"
	}
	if r.From != "" && r.From != "nv."+r.Name {
		fd.Note = strings.TrimPrefix(strings.TrimSpace(fd.Note+"; from "+r.From), "; ")
	}
	return []Finding{fd}
}

// Matches says whether a read value is want: a number compares with the
// value, a name with the enum name (True for "True(1)"), case aside.
func Matches(want string, v *nvconf.Value) bool {
	if v == nil {
		return false
	}
	want = strings.TrimSpace(want)
	if v.Numeric {
		if n, err := strconv.ParseUint(want, 0, 64); err == nil {
			return n == v.Raw
		}
		switch strings.ToLower(want) {
		case "true":
			return v.Raw == 1
		case "false":
			return v.Raw == 0
		}
	}
	text := strings.TrimSpace(v.Text)
	if strings.EqualFold(text, want) {
		return true
	}
	name, _, _ := strings.Cut(text, "(")
	return strings.EqualFold(strings.TrimSpace(name), want)
}

func containsID(l []uint16, v uint16) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

func containsFold(l []string, v string) bool {
	for _, x := range l {
		if strings.EqualFold(strings.TrimSpace(x), v) {
			return true
		}
	}
	return false
}

// Violations counts the findings that are violations, per check.
func Violations(fs []Finding) map[string]int {
	out := map[string]int{}
	for _, f := range fs {
		if f.Violation {
			out[f.Check]++
		}
	}
	return out
}

// Has says which checks the policies that apply hold, so a check without
// violations can be reported as 0 rather than absent.
func (s *Set) Has(f Facts) map[string]bool {
	out := map[string]bool{}
	for _, p := range s.Policies {
		if !p.Applies(f) {
			continue
		}
		out["firmware"] = out["firmware"] || p.FirmwareMin != "" || len(p.PSIDs) > 0
		out["nv"] = out["nv"] || len(p.NV) > 0
		out["link"] = out["link"] || p.Link != nil
		out["pcie"] = out["pcie"] || p.PCIe != nil
	}
	return out
}

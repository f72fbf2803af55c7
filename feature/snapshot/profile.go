// Package snapshot records a baseline of an adapter's registers — every
// field with its class (static, dynamic, counter) — into a versioned,
// self-describing JSON file, and diffs two baselines: a static value that
// changed is a problem, moving values are context, a value that should move
// but did not is a stale reading.
package snapshot

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

//go:embed profiles/*.yaml rules.yaml
var data embed.FS

// Profile says which registers a snapshot reads.
type Profile struct {
	Name      string       `yaml:"name" json:"name"`
	Registers []ProfileReg `yaml:"registers" json:"registers"`
	// Record lists what a snapshot takes besides the registers and the
	// identity: "nv" (the NV configuration), "os" (the OS's MACs), "caps"
	// (the capability pages), "pcie" (the PCIe link), "driver" (the kernel
	// driver's health). A profile reads what it names and no more: the
	// built-in ones name them all; a user's names what it wants.
	Record []string `yaml:"record,omitempty" json:"record,omitempty"`
}

// Record kinds.
const (
	RecordNV     = "nv"
	RecordOS     = "os"
	RecordCaps   = "caps"
	RecordPCIe   = "pcie"
	RecordDriver = "driver"
)

// Records says whether the profile asks for kind.
func (p *Profile) Records(kind string) bool {
	for _, r := range p.Record {
		if r == kind {
			return true
		}
	}
	return false
}

// ProfileReg is one register of a profile.
type ProfileReg struct {
	Register string `yaml:"register" json:"register"`
	// Per repeats the register per port, module or sensor.
	Per string `yaml:"per,omitempty" json:"per,omitempty"`
	// Index fixes index fields (numbers or enum names).
	Index map[string]string `yaml:"index,omitempty" json:"index,omitempty"`
	// LinkLayer keeps a per-port register to the ports that run this
	// protocol (Ethernet or InfiniBand): PTYS is asked for the fields of
	// the protocol a port runs, and PPCNT for its counter groups.
	LinkLayer string `yaml:"link_layer,omitempty" json:"link_layer,omitempty"`
}

// Profiles lists the built-in profile names.
func Profiles() []string {
	ents, _ := data.ReadDir("profiles")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// LoadProfile returns a built-in profile by name, or reads a YAML file.
func LoadProfile(nameOrFile string) (*Profile, error) {
	if b, err := data.ReadFile("profiles/" + nameOrFile + ".yaml"); err == nil {
		return ParseProfile(b, nameOrFile)
	}
	b, err := os.ReadFile(nameOrFile)
	if err != nil {
		return nil, fmt.Errorf("snapshot profile %q: not one of %s, and not a readable file: %v", nameOrFile, strings.Join(Profiles(), ", "), err)
	}
	return ParseProfile(b, nameOrFile)
}

// ParseProfile reads a profile; unknown keys and bad values are errors.
func ParseProfile(b []byte, source string) (*Profile, error) {
	var p Profile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("snapshot profile %s: %v", source, err)
	}
	if len(p.Registers) == 0 {
		return nil, fmt.Errorf("snapshot profile %s: no registers listed", source)
	}
	if p.Name == "" {
		p.Name = source
	}
	for _, r := range p.Record {
		switch r {
		case RecordNV, RecordOS, RecordCaps, RecordPCIe, RecordDriver:
		default:
			return nil, fmt.Errorf("snapshot profile %s: record: %q is not one of nv, os, caps, pcie, driver", source, r)
		}
	}
	for i, r := range p.Registers {
		if r.Register == "" {
			return nil, fmt.Errorf("snapshot profile %s: entry %d has no register", source, i+1)
		}
		switch r.Per {
		case "", "port", "module", "sensor":
		default:
			return nil, fmt.Errorf("snapshot profile %s: %s: per is port, module or sensor, not %q", source, r.Register, r.Per)
		}
		switch {
		case r.LinkLayer != "" && r.Per != "port":
			return nil, fmt.Errorf("snapshot profile %s: %s: link_layer applies to per: port registers only", source, r.Register)
		case r.LinkLayer != "" && r.LinkLayer != "Ethernet" && r.LinkLayer != "InfiniBand":
			return nil, fmt.Errorf("snapshot profile %s: %s: link_layer is Ethernet or InfiniBand, not %q", source, r.Register, r.LinkLayer)
		}
		// "index: {}" fixes nothing; one spelling keeps profiles comparable.
		if len(r.Index) == 0 {
			p.Registers[i].Index = nil
		}
	}
	return &p, nil
}

// Classes of fields.
const (
	Static  = "static"
	Dynamic = "dynamic"
	Counter = "counter"
)

// Rule classes fields whose "REGISTER.path" matches a pattern.
type Rule struct {
	Match        string        `yaml:"match"`
	Class        string        `yaml:"class"`
	ExpectMotion bool          `yaml:"expect_motion"`
	MinSpan      time.Duration `yaml:"min_span"`
	// Group judges the motion of the fields of one register instance
	// whose rules name the same group together: stale only when none of
	// them moved (a module's monitors: one lane's power may hold still,
	// all of them together do not), and not at all when they all read
	// zero (a module without diagnostics).
	Group string `yaml:"group"`
}

// Rules are the classification rules, first match wins.
type Rules []Rule

// DefaultRules are the curated rules shipped with cxray (rules.yaml).
func DefaultRules() Rules {
	b, err := data.ReadFile("rules.yaml")
	if err != nil {
		panic(err) // embedded at build time
	}
	r, err := ParseRules(b)
	if err != nil {
		panic(err) // a test checks the shipped file parses
	}
	return r
}

// ParseRules reads a rules file.
func ParseRules(b []byte) (Rules, error) {
	var r Rules
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("snapshot rules: %v", err)
	}
	for _, x := range r {
		switch x.Class {
		case Static, Dynamic, Counter:
		default:
			return nil, fmt.Errorf("snapshot rules: %s: class is static, dynamic or counter, not %q", x.Match, x.Class)
		}
		if _, err := path.Match(x.Match, ""); err != nil {
			return nil, fmt.Errorf("snapshot rules: bad pattern %q", x.Match)
		}
		if x.Group != "" && !x.ExpectMotion {
			return nil, fmt.Errorf("snapshot rules: %s: group %q judges motion; it needs expect_motion: true", x.Match, x.Group)
		}
	}
	return r, nil
}

// Lookup returns the first rule matching a register field.
func (rs Rules) Lookup(register, fieldPath string) (Rule, bool) {
	key := register + "." + fieldPath
	for _, r := range rs {
		if ok, _ := path.Match(r.Match, key); ok {
			return r, true
		}
	}
	return Rule{}, false
}

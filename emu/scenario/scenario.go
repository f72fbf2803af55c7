package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/hostlink"
	"github.com/cxray/cxray/emu/nvstore"
	emuoptics "github.com/cxray/cxray/emu/optics"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

// Limits on what a scenario may ask for.
const (
	MaxFileSize  = 1 << 20
	MaxDevices   = 16
	MaxFunctions = 8 // PCI functions per device
)

// DefaultStart is the clock start of a manual clock when the file gives none,
// so manual-clock runs are reproducible.
var DefaultStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// Scenario is a parsed scenario: the devices to build and the clock they share.
type Scenario struct {
	// Source names where it came from (a file, or "profile cx7-2p400g").
	Source  string
	Seed    uint64
	Clock   Clock
	Devices []*DeviceSpec
	// PRM is the register database file the emulated firmware answers
	// from (the scenario's `prm:` key, made absolute); "" is the built-in
	// one. A newer database gives the emulator the registers it adds
	// (MROQ from Rev 0.61).
	PRM string
	// DB is PRM loaded (nil for the built-in database).
	DB *prm.DB
}

// Clock says how emulated time runs.
type Clock struct {
	// Start is the emulated time at power-on. Zero: the wall time when the
	// devices are built (real clock) or DefaultStart (manual clock).
	Start time.Time
	// Manual stops time: it moves only when a test or a control socket
	// advances it. Otherwise it runs with the wall clock from Start.
	Manual bool
}

// DeviceSpec is one adapter of a scenario, with everything resolved: the
// profile's identity and firmware spec with the file's overrides applied.
type DeviceSpec struct {
	Name     string
	Profile  string
	Identity emu.Identity
	Spec     fw.Spec
	// Functions are the adapter's PCI functions (one per port on a
	// dual-port card, or just one).
	Functions []FunctionSpec
	// ModuleErrors are module errors present at power-on (module index ->
	// PMAOS error_type name).
	ModuleErrors map[int]string
	// Optics says which catalog module each cage holds and its faults (one
	// entry per Spec.Modules entry; see emu/optics).
	Optics []emuoptics.Config
	// DeviceFaults are the device-level faults of every function
	// (RegisterStatus is filled from RegisterStatus when the device is built).
	DeviceFaults emu.Faults
	// RegisterStatus makes registers (by name) answer a status at the
	// device level, before the firmware sees them.
	RegisterStatus map[string]uint8
	// RDMA is the path of the adapter's RoCE traffic, PortRDMA per-port
	// overrides (by local port): what the emulated RDMA counters follow.
	RDMA     RDMASpec
	PortRDMA map[int]RDMASpec
	// NV is the NV configuration over the profile's defaults; NVFaults
	// its faults.
	NV       nvstore.Defaults
	NVFaults nvstore.Faults
	// FirmwareFaults are switched on at power-on.
	FirmwareFaults fw.Faults
	// NVMF is the NVMe-oF target offload (nvmf.go), over the profile's.
	NVMF NVMFSpec
	// Lockdown says the host kernel is in lockdown: its functions' config
	// spaces refuse writes with EPERM (Function.Config).
	Lockdown bool
	// NUMANode is the host NUMA node the adapter's slot hangs off (nil:
	// not given; the views then say what they said before the key existed).
	NUMANode *int
	// PCIe is the card's link to the host (pcie.go): capable, slot and
	// trained speed and width, steady AER errors.
	PCIe hostlink.Spec
	// Line is where the device is defined in the file (0 when built in).
	Line int
}

// RDMASpec is a RoCE path: packet loss probability, round trip, the log2
// PSN window (0: the NV setting in effect), the RoCE share of the port's
// frames and its priority (0: defaults). emu/rdma documents the model.
type RDMASpec struct {
	Loss      float64
	RTT       time.Duration
	LogWindow int
	Share     float64
	Priority  int
}

// FunctionSpec is one PCI function of an adapter.
type FunctionSpec struct {
	BDF    string // canonical, 0000:03:00.0
	Port   int    // the local port (1-based) this function's netdev drives
	Netdev string // network interface name, for the sysfs view
	RDMA   string // RDMA device name, for the sysfs view
	// MAC is the address the OS gives the netdev when it is not the
	// permanent one (an administrator's override: MAC drift); 0: permanent.
	MAC uint64
}

// Load reads and parses a scenario file.
func Load(path string) (*Scenario, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	if fi.Size() > MaxFileSize {
		return nil, fmt.Errorf("scenario: %s is %d bytes; a scenario file is at most %d", path, fi.Size(), MaxFileSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	return Parse(data, path)
}

// Parse reads a scenario from YAML: its shape is the types of schema.go.
// Unknown keys, bad values and facts a device cannot have are errors (an
// Errors list, each with its line).
func Parse(data []byte, file string) (*Scenario, error) {
	if file == "" {
		file = "scenario"
	}
	if len(data) > MaxFileSize {
		return nil, Errors{{File: file, Msg: fmt.Sprintf("%d bytes; a scenario file is at most %d", len(data), MaxFileSize)}}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, Errors{{File: file, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, Errors{{File: file, Line: extra.Line, Column: extra.Column, Msg: "a second YAML document (---); put everything in one"}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, Errors{{File: file, Msg: "empty file; a scenario needs at least `devices: [{profile: cx7-2p400g}]`"}}
	}
	db, err := builtin.Load()
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	p := &parser{walker: walker{file: file}, db: db, sc: &Scenario{Source: file, Seed: 1}}
	top := doc.Content[0]
	// The shape first: unknown keys, kinds, lengths, aliases, all with
	// their places. Values are read only from a file of the right shape.
	if p.shape(top, reflect.TypeOf(fileScenario{}), topWhat); len(p.errs) > 0 {
		return nil, p.errs
	}
	var f fileScenario
	strict := yaml.NewDecoder(bytes.NewReader(data))
	strict.KnownFields(true)
	if err := strict.Decode(&f); err != nil {
		// shape accepted what yaml.v3 refuses: schema.go and yamlx.go disagree.
		return nil, Errors{{File: file, Msg: "cxray's scenario schema is inconsistent (please report this): " + err.Error()}}
	}
	p.top(top, &f)
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return p.sc, nil
}

type parser struct {
	walker
	db *prm.DB
	sc *Scenario
	// ibKeys are the ports of the device being read that have an ib: key
	// (port index -> the key's value), checked against their link type.
	ibKeys map[int]*yaml.Node
}

// checkUnique numbers RDMA devices and rejects BDFs and names used twice.
func (p *parser) checkUnique() {
	bdfs, names, devs := map[string]string{}, map[string]string{}, map[string]bool{}
	rdma := 0
	for _, d := range p.sc.Devices {
		at := &yaml.Node{Line: d.Line, Column: 1}
		if devs[d.Name] {
			p.fail(at, "device name %q is used twice; give each device its own name", d.Name)
		}
		devs[d.Name] = true
		for k := range d.Functions {
			f := &d.Functions[k]
			if f.RDMA == "" {
				f.RDMA = fmt.Sprintf("mlx5_%d", rdma)
			}
			rdma++
			if other, dup := bdfs[f.BDF]; dup {
				p.fail(at, "BDF %s is used by %s and %s; give each function its own bus:device.function", f.BDF, other, d.Name)
			}
			bdfs[f.BDF] = d.Name
			for _, nm := range []string{"netdev " + f.Netdev, "rdma " + f.RDMA} {
				if other, dup := names[nm]; dup {
					p.fail(at, "%s is used by %s and %s; names must be unique", nm, other, d.Name)
				}
				names[nm] = d.Name
			}
		}
	}
}

// FromProfile is the scenario of one device of a profile with one PCI
// function at 0000:03:00.0 (what "emu" and "emu:PROFILE" build).
func FromProfile(name string) (*Scenario, error) {
	if _, err := LookupProfile(name); err != nil {
		return nil, err
	}
	p, err := Parse([]byte(fmt.Sprintf("devices:\n  - profile: %q\n", name)), "profile "+name)
	if err != nil {
		var es Errors
		if errors.As(err, &es) && len(es) == 1 {
			return nil, errors.New(strings.TrimPrefix(es[0].Msg, "devices[0]: "))
		}
		return nil, err
	}
	return p, nil
}

// mix is splitmix64 of seed and k, for defaults drawn from the seed.
func mix(seed, k uint64) uint64 {
	z := seed + 0x9E3779B97F4A7C15*(k+1)
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

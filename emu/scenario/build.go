package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/hostlink"
	"github.com/cxray/cxray/emu/nvstore"
	emuoptics "github.com/cxray/cxray/emu/optics"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

// Options tune Build and Resolve.
type Options struct {
	// DB is the register database the firmware answers from; nil: the
	// built-in one.
	DB *prm.DB
	// Clock replaces the scenario's clock (tests pass a *clock.Manual).
	Clock emu.Clock
	// Strict makes the firmware treat fields missing from DB as internal
	// errors (see fw.Config.Strict).
	Strict bool
	// Firmware, when set, gets each PCI function's view of its adapter's
	// firmware and returns what the function's emu.Device talks to: the
	// one place every register access of a function passes (emu/state
	// wraps it to keep the device's state between processes).
	Firmware func(bdf string, view *fw.View) emu.Firmware
}

// ManualClock is a Clock that runs on a manual clock underneath (emu/state's
// clock): Build then sets Emulation.Manual to it, so sleeps and control
// sockets advance it.
type ManualClock interface {
	emu.Clock
	Manual() *clock.Manual
}

// Emulation is a built scenario: adapters, their PCI functions, one clock.
type Emulation struct {
	Scenario *Scenario
	Clock    emu.Clock
	// Manual is the clock when it is manual (nil when it runs in real time):
	// advance it to move temperatures, counters and uptime.
	Manual   *clock.Manual
	Adapters []*Adapter
}

// Adapter is one emulated card: its firmware, shared by its functions.
type Adapter struct {
	Name      string
	Profile   string
	Spec      *DeviceSpec
	Firmware  *fw.Firmware
	Functions []*Function
	// Optics is the modules in the adapter's cages (switch their faults,
	// plug and unplug them at run time).
	Optics *emuoptics.Model
	// Link is the card's PCI Express link (retrain it, inject AER errors
	// at run time).
	Link *hostlink.Model
}

// Function is one PCI function: the config space a client opens.
type Function struct {
	BDF string
	// Port is the adapter port (1-based) the function owns: its local port 1.
	Port    int
	Netdev  string
	RDMA    string
	Device  *emu.Device
	Adapter *Adapter
	// View is the firmware as this function sees it.
	View *fw.View
	// MAC is the netdev's OS address when the scenario overrides it (0:
	// the permanent one).
	MAC uint64
	// Config is the config space a client opens: Device itself, or, on a
	// device whose scenario says lockdown: true, Device behind
	// emu.Lockdown, which refuses writes as a locked-down kernel does.
	Config ConfigSpace
	// Firmware is what the function's gateway hands register payloads to:
	// View, or the Options.Firmware wrapper around it. Other paths into
	// the same registers (the command interface's ACCESS_REG, emu/cmdif)
	// go through it too.
	Firmware emu.Firmware
}

// ConfigSpace is a PCI function's config space as clients use it (the
// shape of pci.ConfigSpace).
type ConfigSpace interface {
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
}

// Build powers on every device of a scenario.
func Build(sc *Scenario, opt Options) (*Emulation, error) {
	if sc == nil || len(sc.Devices) == 0 {
		return nil, errors.New("scenario: nothing to build; the scenario has no devices")
	}
	db := opt.DB
	if db == nil {
		db = sc.DB
	}
	if db == nil {
		var err error
		if db, err = builtin.Load(); err != nil {
			return nil, fmt.Errorf("scenario: %w", err)
		}
	}
	e := &Emulation{Scenario: sc, Clock: opt.Clock}
	if e.Clock == nil {
		start := sc.Clock.Start
		if sc.Clock.Manual {
			if start.IsZero() {
				start = DefaultStart
			}
			e.Manual = clock.NewManual(start)
			e.Clock = e.Manual
		} else {
			e.Clock = newOffsetClock(start)
		}
	} else if m, ok := opt.Clock.(*clock.Manual); ok {
		e.Manual = m
	} else if m, ok := opt.Clock.(ManualClock); ok {
		e.Manual = m.Manual()
	}
	for _, d := range sc.Devices {
		a, err := buildDevice(d, db, e.Clock, opt.Strict, opt.Firmware)
		if err != nil {
			return nil, err
		}
		e.Adapters = append(e.Adapters, a)
	}
	return e, nil
}

func buildDevice(d *DeviceSpec, db *prm.DB, clk emu.Clock, strict bool, wrap func(string, *fw.View) emu.Firmware) (*Adapter, error) {
	if d == nil {
		return nil, errors.New("scenario: no device spec")
	}
	if len(d.Functions) == 0 {
		return nil, fmt.Errorf("scenario: device %s has no PCI functions", d.Name)
	}
	spec := d.Spec
	spec.Name = d.Name
	if spec.Boot.IsZero() && clk != nil {
		spec.Boot = clk.Now()
	}
	f, err := fw.New(fw.Config{DB: db, Spec: spec, Clock: clk, Strict: strict})
	if err != nil {
		return nil, fmt.Errorf("scenario: device %s: %w", d.Name, err)
	}
	for m, name := range d.ModuleErrors {
		if err := f.SetModuleStatus(m, fw.ModuleStatus{Plugged: true, Error: name}); err != nil {
			return nil, fmt.Errorf("scenario: device %s: %w", d.Name, err)
		}
	}
	oclk := clk
	if oclk == nil {
		oclk = clock.Real{}
	}
	opt, err := emuoptics.Install(f, oclk, d.Optics)
	if err != nil {
		return nil, fmt.Errorf("scenario: device %s: %w", d.Name, err)
	}
	if err := f.SetFaults(d.FirmwareFaults); err != nil {
		return nil, fmt.Errorf("scenario: device %s: %w", d.Name, err)
	}
	nvd, _ := nvstore.ProfileDefaults(d.Profile)
	nvs, err := nvstore.Install(f, nvd.Merge(d.NV))
	if err != nil {
		return nil, fmt.Errorf("scenario: device %s: nv: %w", d.Name, err)
	}
	if err := nvs.SetFaults(d.NVFaults); err != nil {
		return nil, fmt.Errorf("scenario: device %s: nv faults: %w", d.Name, err)
	}
	df := d.DeviceFaults
	df.RegisterStatus = map[uint16]uint8{}
	for name, st := range d.RegisterStatus {
		r, err := db.Register(name)
		if err != nil || r.ID > 0xFFFF {
			return nil, fmt.Errorf("scenario: device %s: register_status: %v", d.Name, err)
		}
		df.RegisterStatus[uint16(r.ID)] = st
	}
	link, err := hostlink.New(d.PCIe, oclk, len(d.Functions))
	if err != nil {
		return nil, fmt.Errorf("scenario: device %s: pcie: %w", d.Name, err)
	}
	if b, err := ParseBDF(d.Functions[0].BDF); err == nil {
		link.SetBDF0(b.Bus, b.Device, b.Function)
	}
	if err := hostlink.Install(f, link); err != nil {
		return nil, fmt.Errorf("scenario: device %s: %w", d.Name, err)
	}
	id := identity(d)
	a := &Adapter{Name: d.Name, Profile: d.Profile, Spec: d, Firmware: f, Optics: opt, Link: link}
	for i, fs := range d.Functions {
		view, err := f.View(functionPorts(d, i))
		if err != nil {
			return nil, fmt.Errorf("scenario: device %s function %s: %w", d.Name, fs.BDF, err)
		}
		var fwi emu.Firmware = view
		if wrap != nil {
			fwi = wrap(fs.BDF, view)
		}
		dev := emu.New(emu.Config{Identity: id, Firmware: fwi, Clock: clk, Express: link.Express(i)})
		dev.SetFaults(df)
		var cs ConfigSpace = dev
		if d.Lockdown {
			cs = emu.NewLockdown(dev)
		}
		a.Functions = append(a.Functions, &Function{BDF: fs.BDF, Port: fs.Port, Netdev: fs.Netdev, RDMA: fs.RDMA,
			MAC: fs.MAC, Device: dev, Adapter: a, View: view, Config: cs, Firmware: fwi})
	}
	return a, nil
}

// functionPorts lists the adapter ports function i reaches as local ports
// 1, 2, ...: its own port first; the first function also reaches the ports
// no function owns (with one function, that is every port).
func functionPorts(d *DeviceSpec, i int) []int {
	ports := []int{d.Functions[i].Port}
	if i != 0 {
		return ports
	}
	owned := map[int]bool{}
	for _, fs := range d.Functions {
		owned[fs.Port] = true
	}
	for p := 1; p <= len(d.Spec.Ports); p++ {
		if !owned[p] {
			ports = append(ports, p)
		}
	}
	return ports
}

// identity is the profile's PCI identity with the firmware facts of the
// spec, so ICMD GET_FW_INFO and MGIR agree.
func identity(d *DeviceSpec) emu.Identity {
	id := d.Identity
	s := d.Spec
	id.DeviceID, id.HardwareID, id.HardwareRevision = s.PCIDeviceID, s.HWDevID, uint8(s.HWRevision)
	id.FWMajor, id.FWMinor, id.FWSubMinor = s.FW.Major, s.FW.Minor, s.FW.SubMinor
	id.FWBuildTime = s.FWBuildTime
	id.PSID = s.PSID
	return id
}

// NewDevice builds one function of a profile at 0000:03:00.0: the quickest
// way to a working emulated adapter in a test.
func NewDevice(profile string, opt Options) (*emu.Device, *fw.Firmware, error) {
	sc, err := FromProfile(profile)
	if err != nil {
		return nil, nil, fmt.Errorf("scenario: %w", err)
	}
	e, err := Build(sc, opt)
	if err != nil {
		return nil, nil, err
	}
	a := e.Adapters[0]
	return a.Functions[0].Device, a.Firmware, nil
}

// Functions lists every PCI function, in scenario order.
func (e *Emulation) Functions() []*Function {
	var out []*Function
	for _, a := range e.Adapters {
		out = append(out, a.Functions...)
	}
	return out
}

// Function finds a function by PCI address (any form ParseBDF reads), by
// netdev or by RDMA name.
func (e *Emulation) Function(name string) (*Function, error) {
	want := name
	if b, err := ParseBDF(name); err == nil {
		want = b.String()
	}
	var have []string
	for _, f := range e.Functions() {
		if f.BDF == want || f.Netdev == name || f.RDMA == name {
			return f, nil
		}
		have = append(have, f.BDF)
	}
	return nil, fmt.Errorf("scenario: no emulated function %q; the scenario has %s", name, strings.Join(have, ", "))
}

// IsEmulatorName says whether a device name asks for the emulator.
func IsEmulatorName(name string) bool { return name == "emu" || strings.HasPrefix(name, "emu:") }

// Resolve turns a device name into a built emulation: "emu" is the default
// profile, "emu:PROFILE" a named profile (one function at 0000:03:00.0
// each), "emu:FILE.yaml" a scenario file.
func Resolve(name string, opt Options) (*Emulation, error) {
	sc, err := ResolveScenario(name)
	if err != nil {
		return nil, err
	}
	return Build(sc, opt)
}

// ResolveScenario is Resolve without building.
func ResolveScenario(name string) (*Scenario, error) {
	profile, file, err := Locate(name)
	if err != nil {
		return nil, err
	}
	if file != "" {
		return Load(file)
	}
	return FromProfile(profile)
}

// Locate says what an emulator name names: a profile (its canonical name)
// or a scenario file (the path as given), without reading the file.
func Locate(name string) (profile, file string, err error) {
	if name == "emu" {
		return DefaultProfile, "", nil
	}
	arg, ok := strings.CutPrefix(name, "emu:")
	if !ok {
		return "", "", fmt.Errorf("scenario: %q is not an emulator name; use emu, emu:PROFILE (%s) or emu:FILE.yaml", name, strings.Join(Profiles(), ", "))
	}
	if arg == "" {
		return "", "", fmt.Errorf("scenario: %q names nothing after emu:; use emu:PROFILE (%s) or emu:FILE.yaml", name, strings.Join(Profiles(), ", "))
	}
	ext := strings.ToLower(filepath.Ext(arg))
	if ext == ".yaml" || ext == ".yml" || strings.ContainsRune(arg, os.PathSeparator) {
		return "", arg, nil
	}
	if p, err := LookupProfile(arg); err == nil {
		return p.Name, "", nil
	}
	if _, err := os.Stat(arg); err == nil {
		return "", arg, nil
	}
	return "", "", fmt.Errorf("scenario: unknown emulator profile %q; profiles: %s; or give a scenario file ending in .yaml", arg, strings.Join(Profiles(), ", "))
}

// offsetClock runs with the wall clock from a chosen start (monotonic, so
// wall-clock steps on the host do not move emulated time backwards).
type offsetClock struct {
	start time.Time
	base  time.Time
}

func newOffsetClock(start time.Time) *offsetClock {
	c := &offsetClock{start: start, base: time.Now()}
	if c.start.IsZero() {
		c.start = c.base.Round(0).UTC()
	}
	return c
}

func (c *offsetClock) Now() time.Time { return c.start.Add(time.Since(c.base)) }

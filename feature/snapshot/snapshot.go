package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/internal/atomicfile"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/prm"
)

// Format and Version identify a snapshot file.
const (
	Format  = "cxray-snapshot"
	Version = 1
)

// File is a snapshot: one or more devices read with one profile.
type File struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Created time.Time `json:"created"`
	Host    string    `json:"host"`
	Tool    string    `json:"cxray_version"`
	// PRMRevision and PRMSource say which register database decoded it.
	PRMRevision string   `json:"prm_revision"`
	PRMSource   string   `json:"prm_source"`
	Profile     Profile  `json:"profile"`
	Samples     int      `json:"samples"`
	Interval    Duration `json:"interval,omitempty"`
	Devices     []Device `json:"devices"`
}

// Device is one adapter function in a snapshot.
type Device struct {
	Name     string           `json:"device"`
	BDF      string           `json:"bdf"`
	Backend  dev.Backend      `json:"backend"`
	Identity adapter.Identity `json:"identity"`
	Driver   string           `json:"driver,omitempty"`
	// Registers in profile order; failures are recorded, not fatal.
	Registers []Register `json:"registers"`
	// NV, OS and Caps are recorded around the registers (state.go); older
	// files have none of them.
	NV   *NVConfig     `json:"nv,omitempty"`
	OS   *OSView       `json:"os,omitempty"`
	Caps *Capabilities `json:"caps,omitempty"`
	// PCIe and DriverHealth are recorded after them (pcie.go).
	PCIe         *PCIeView   `json:"pcie,omitempty"`
	DriverHealth *DriverView `json:"driver_health,omitempty"`
	Error        string      `json:"error,omitempty"`
}

// Register is one instance of a register.
type Register struct {
	Register string            `json:"register"`
	ID       uint32            `json:"id"`
	Key      string            `json:"key"` // PAOS[local_port=1]
	Index    map[string]string `json:"index,omitempty"`
	Times    []time.Time       `json:"times,omitempty"` // one per sample
	Error    string            `json:"error,omitempty"`
	Fields   []Field           `json:"fields,omitempty"`
}

// Field is one decoded field.
type Field struct {
	Path  string `json:"path"`
	Bit   int    `json:"bit"`
	Width int    `json:"width"`
	Class string `json:"class"`
	// Learned says the class came from watching the value move.
	Learned      bool `json:"learned,omitempty"`
	ExpectMotion bool `json:"expect_motion,omitempty"`
	// MotionGroup names the fields of this register instance whose
	// motion is judged together (Rule.Group).
	MotionGroup string `json:"motion_group,omitempty"`
	// Half marks one half of a value also recorded joined (x_high of x);
	// diffs report the joined value only.
	Half bool `json:"half,omitempty"`
	// Value is the last sample; Values every sample when there were several.
	Value  Val   `json:"value"`
	Values []Val `json:"values,omitempty"`
	// Text is the value as people read it (enum name, text, MAC).
	Text string `json:"text,omitempty"`
}

// Val is a field value: a number, or text/hex for fields that are not.
// Numbers above 2^53 are written as strings of digits, so JSON tools that
// use doubles do not lose them.
type Val struct {
	N     uint64
	S     string
	IsNum bool
}

// Num makes a number value.
func Num(n uint64) Val { return Val{N: n, IsNum: true} }

// Str makes a text value.
func Str(s string) Val { return Val{S: s} }

func (v Val) String() string {
	if v.IsNum {
		return strconv.FormatUint(v.N, 10)
	}
	return v.S
}

// Equal compares two values.
func (v Val) Equal(o Val) bool { return v.IsNum == o.IsNum && v.N == o.N && v.S == o.S }

// MarshalJSON writes a number, a string of digits above 2^53, or text
// prefixed by "s:" so the two kinds stay apart.
func (v Val) MarshalJSON() ([]byte, error) {
	if v.IsNum {
		if v.N < 1<<53 {
			return []byte(strconv.FormatUint(v.N, 10)), nil
		}
		return json.Marshal(strconv.FormatUint(v.N, 10))
	}
	return json.Marshal("s:" + v.S)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (v *Val) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] != '"' {
		n, err := strconv.ParseUint(string(b), 10, 64)
		if err != nil {
			return fmt.Errorf("snapshot value %s: %v", b, err)
		}
		*v = Num(n)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if t, ok := strings.CutPrefix(s, "s:"); ok {
		*v = Str(t)
		return nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("snapshot value %q: neither a number nor s:text", s)
	}
	*v = Num(n)
	return nil
}

// Duration marshals as "10s".
type Duration time.Duration

// MarshalJSON writes the duration as text.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "10s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	x, err := time.ParseDuration(s)
	*d = Duration(x)
	return err
}

// Options tune Take.
type Options struct {
	Samples  int           // readings per register (1 when 0)
	Interval time.Duration // between samples
	Rules    Rules         // nil: DefaultRules
	// Sleep waits between samples; nil sleeps on the wall clock. The
	// emulator with a manual clock passes one that advances it instead.
	Sleep func(ctx context.Context, d time.Duration) error
	// Progress, when set, is called after each register instance.
	Progress func(done, total int)
	// Now is the clock for sample times; nil: time.Now.
	Now func() time.Time
	// NV is the parameter database the NV configuration is recorded
	// with; nil records none.
	NV *nvconf.DB
}

// instance is one register instance to read: its index for the adapter,
// and as the profile wrote it (numbers or enum names), for the record.
type instance struct {
	reg   string
	index adapter.Index
	given [][2]string
	key   string
}

// indexField is a profile's index value as the adapter takes it: a
// number (0x.. and 0b.. too), or else an enum name the decoding database
// resolves.
func indexField(path, v string) adapter.IndexField {
	if n, err := strconv.ParseUint(v, 0, 64); err == nil {
		return adapter.IndexField{Path: path, Value: n}
	}
	return adapter.IndexField{Path: path, Enum: v}
}

// expand lists a profile's register instances for the ports a function
// owns: per port its local ports, per module their modules, per sensor
// the ASIC (sensor 0) and each module's sensor (64 + module).
func expand(p *Profile, ports []adapter.Port) []instance {
	var out []instance
	var modules []int
	seen := map[int]bool{}
	for _, pt := range ports {
		if pt.Module >= 0 && !seen[pt.Module] {
			seen[pt.Module] = true
			modules = append(modules, pt.Module)
		}
	}
	for _, r := range p.Registers {
		keys := make([]string, 0, len(r.Index))
		for k := range r.Index {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		add := func(extra adapter.Index) {
			in := instance{reg: r.Register}
			for _, k := range keys {
				in.index = append(in.index, indexField(k, r.Index[k]))
				in.given = append(in.given, [2]string{k, r.Index[k]})
			}
			for _, f := range extra {
				in.index = append(in.index, f)
				in.given = append(in.given, [2]string{f.Path, strconv.FormatUint(f.Value, 10)})
			}
			parts := make([]string, len(in.given))
			for i, g := range in.given {
				parts[i] = g[0] + "=" + g[1]
			}
			in.key = r.Register
			if len(parts) > 0 {
				in.key += "[" + strings.Join(parts, ",") + "]"
			}
			out = append(out, in)
		}
		switch r.Per {
		case "port":
			for _, pt := range ports {
				if r.LinkLayer == "" || r.LinkLayer == pt.LinkLayer {
					add(adapter.LocalPort(pt.Local))
				}
			}
		case "module":
			for _, m := range modules {
				add(adapter.At("module", uint64(m)))
			}
		case "sensor":
			add(adapter.At("sensor_index", 0))
			for _, m := range modules {
				add(adapter.At("sensor_index", uint64(64+m)))
			}
		default:
			add(nil)
		}
	}
	return out
}

// Take reads the profile's registers from a. Registers that fail are
// recorded with their error; only a device that cannot be identified, or
// a backend without registers, fails.
func Take(ctx context.Context, a *adapter.Adapter, p *Profile, o Options) (*Device, error) {
	if o.Samples <= 0 {
		o.Samples = 1
	}
	if o.Rules == nil {
		o.Rules = DefaultRules()
	}
	if o.Now == nil {
		o.Now = a.Clock().Now
	}
	if o.Sleep == nil {
		o.Sleep = a.Sleep
	}
	out := &Device{Name: a.Name(), BDF: a.BDF(), Backend: a.Backend()}
	d, err := a.Registers(ctx)
	if err != nil {
		return nil, err
	}
	id, err := a.Identity(ctx)
	if id == nil {
		return nil, err
	}
	out.Identity = *id
	out.Driver = driverVersion(ctx, a)
	ports, err := a.Ports(ctx)
	if err != nil {
		return nil, err
	}
	insts := expand(p, ports)
	regs := make([]Register, len(insts))
	// A register the firmware answers with a status (not supported, no
	// such instance), or that this database cannot decode, is recorded
	// and the snapshot goes on. A read that did not reach the firmware
	// (the device removed or gone mid-run, the path lost) means this is
	// no baseline of the device: Take fails (issue 26.9: a snapshot of a
	// device that vanished was written, exit 0).
	var lost error
	nlost := 0
	for s := 0; s < o.Samples; s++ {
		if s > 0 {
			if err := o.Sleep(ctx, o.Interval); err != nil {
				return nil, err
			}
		}
		for i, in := range insts {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if err := sample(ctx, a, in, &regs[i], o, s); err != nil && !answered(err) {
				nlost++
				if lost == nil {
					lost = fmt.Errorf("%s: %w", regs[i].Key, err)
				}
			}
			if o.Progress != nil {
				o.Progress(s*len(insts)+i+1, o.Samples*len(insts))
			}
		}
	}
	if lost != nil {
		return nil, &UnreadError{Failed: nlost, Reads: o.Samples * len(insts), Err: lost}
	}
	for i := range regs {
		finish(&regs[i], o)
	}
	out.Registers = regs
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Only what the profile names: mstlink -m's registers as a profile
	// read those and the identity, not NV, capabilities and OS MACs too.
	if p.Records(RecordNV) {
		out.NV = recordNV(ctx, d, o.NV)
	}
	if p.Records(RecordOS) {
		out.OS = recordOS(ctx, a)
	}
	if p.Records(RecordCaps) {
		out.Caps = recordCaps(ctx, d)
	}
	if p.Records(RecordPCIe) {
		out.PCIe = recordPCIe(ctx, a)
	}
	if p.Records(RecordDriver) {
		out.DriverHealth = recordDriver(ctx, a)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// sample reads one instance and appends its values.
// UnreadError is a snapshot whose reads did not all reach the device: it
// was removed, or the path to it failed, during the run.
type UnreadError struct {
	Failed, Reads int
	Err           error // the first
}

func (e *UnreadError) Error() string {
	return fmt.Sprintf("the device could not be read during the snapshot (%d of %d register reads failed; the first, %v); no baseline was taken: check the device with 'cxray status' and take it again",
		e.Failed, e.Reads, e.Err)
}

func (e *UnreadError) Unwrap() error { return e.Err }

// answered says err is the firmware's answer (a status), a register this
// database cannot decode, or a part the backend cannot serve: something
// the snapshot records, not a device that could not be read.
func answered(err error) bool {
	_, status := dev.StatusOf(err)
	return status || prm.IsDatabaseProblem(err) || errors.Is(err, errors.ErrUnsupported) || errors.Is(err, prm.ErrInput)
}

// sample reads one instance once into r; the error is the read's.
func sample(ctx context.Context, a *adapter.Adapter, in instance, r *Register, o Options, n int) error {
	r.Register, r.Key = in.reg, in.key
	if len(in.given) > 0 && r.Index == nil {
		r.Index = map[string]string{}
		for _, g := range in.given {
			r.Index[g[0]] = g[1]
		}
	}
	rd, err := a.ReadRegister(ctx, in.reg, in.index)
	if err != nil {
		if r.Error == "" {
			r.Error = err.Error()
		}
		return err
	}
	r.ID = rd.Register.ID
	r.Times = append(r.Times, o.Now().UTC())
	byPath := map[string]int{}
	for i, f := range r.Fields {
		byPath[f.Path] = i
	}
	rows := rd.Decoded.Rows()
	halves := map[*prm.Step]bool{}
	for _, row := range rows {
		if s := row.Value.Step(); s.Kind == prm.KindJoined {
			halves[s.Parts[0]], halves[s.Parts[1]] = true, true
		}
	}
	for _, row := range rows {
		v := row.Value
		acc := v.Step().Access
		if acc == prm.AccessWO || acc == prm.AccessOP {
			continue // they hold no state
		}
		var val Val
		switch v.Kind() {
		case prm.KindUint:
			val = Num(v.Uint())
		case prm.KindJoined:
			if v.IsText() {
				val = Str(v.TextString())
			} else {
				val = Num(v.Uint())
			}
		case prm.KindArray:
			val = Str(v.TextString())
		default:
			val = Str(fmt.Sprintf("%x", v.Raw()))
		}
		i, ok := byPath[row.Path]
		if !ok {
			f := Field{Path: row.Path, Bit: v.Bit(), Width: v.Step().Width, Class: classify(o.Rules, in.reg, row.Path, acc), Half: halves[v.Step()]}
			if rule, ok := o.Rules.Lookup(in.reg, row.Path); ok {
				f.ExpectMotion, f.MotionGroup = rule.ExpectMotion, rule.Group
			}
			r.Fields = append(r.Fields, f)
			i = len(r.Fields) - 1
			byPath[row.Path] = i
		}
		f := &r.Fields[i]
		f.Values = append(f.Values, val)
		f.Value, f.Text = val, row.Text
	}
	return nil
}

func classify(rs Rules, reg, path string, acc prm.Access) string {
	if acc == prm.AccessIndex {
		return Static
	}
	if r, ok := rs.Lookup(reg, path); ok {
		return r.Class
	}
	return Static
}

// finish learns classes from the samples and drops single-sample lists.
func finish(r *Register, o Options) {
	for i := range r.Fields {
		f := &r.Fields[i]
		moved := false
		for _, v := range f.Values[1:] {
			if !v.Equal(f.Values[0]) {
				moved = true
				break
			}
		}
		if moved && f.Class == Static {
			f.Class, f.Learned = Dynamic, true
		}
		if len(f.Values) <= 1 {
			f.Values = nil
		}
	}
}

// driverVersion is the bound driver with its module version, as the OS
// view names it (sysfs on a host).
func driverVersion(ctx context.Context, a *adapter.Adapter) string {
	o, err := a.OS(ctx)
	if err != nil || o.Driver == "" {
		return ""
	}
	if a.Backend() == dev.BackendEmulator {
		return o.Driver
	}
	b, err := os.ReadFile(filepath.Join("/sys/module", o.Driver, "version"))
	if err != nil {
		return o.Driver
	}
	return o.Driver + " " + strings.TrimSpace(string(b))
}

// Write writes the file atomically: a temporary file in the same directory,
// fsync, rename. A crash leaves the old file or the new one, never half.
func Write(path string, f *File) error {
	b, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.Put(path, append(b, '\n'))
}

// Read reads and checks a snapshot file (Parse says what it refuses).
func Read(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b, path)
}

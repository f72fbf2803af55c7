// Package state keeps an emulated device's state between processes, so
// that `-d emu` behaves like a device across commands: what one command
// writes (registers, NV configuration, resets, module plugs) the next one
// reads, and concurrent commands, `emu run` and `emu serve` on the same
// scenario see one device.
//
// The device's memory is a write log, one per profile or scenario file
// (Dir()/KEY.log). The emulator is deterministic given its scenario and
// the times its clock reads (emu/fw), so the state is the scenario plus
// every change made to it, with its emulated time:
//
//   - every register access that changed the device (a SET, a GET with an
//     operation such as PPCNT clr: fw.Firmware's recorder) and succeeded,
//     with the function it came through, the register, the method and the
//     request bytes;
//   - every module plugged or pulled at run time (`emu ctl plug`);
//   - the times a manual clock moved to.
//
// Every register access of a function passes its firmware wrapper (the
// scenario.Options.Firmware hook): it takes the log's lock, replays what
// other processes appended since it last looked (on the right function's
// view, its clock reading each record's time), performs the access,
// appends it if it changed the device, and releases the lock. So accesses
// of all processes are ordered by the lock, and each process's copy of
// the device has the same history.
//
// The clock is part of the state (see Clock). Faults are not: they are the
// switches of the process that sets them (a scenario's faults apply to
// every process afresh; `emu ctl fault` to the served emulator only), and
// replayed records ignore them.
package state

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/lazyre"
	"github.com/cxray/cxray/prm"
)

// EnvDir names the directory states are kept in; "off" keeps none (every
// command gets a freshly powered-on emulator).
const EnvDir = "CXRAY_EMU_STATE"

// Off is the EnvDir value that keeps no state.
const Off = "off"

// Dir is where states are kept: $CXRAY_EMU_STATE, else
// $XDG_STATE_HOME/cxray/emu, else ~/.local/state/cxray/emu. It is ""
// (with no error) when CXRAY_EMU_STATE is "off".
func Dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		if d == Off {
			return "", nil
		}
		return filepath.Abs(d)
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Abs(filepath.Join(d, "cxray", "emu"))
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("emulator state: no directory for it (%v); set XDG_STATE_HOME, or %s=off to keep none", err, EnvDir)
	}
	return filepath.Join(home, ".local", "state", "cxray", "emu"), nil
}

// Error is a problem with a kept state itself (its directory, a log that
// is damaged, locked or of another scenario), as opposed to the scenario
// named: the message says what to do.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Identity is which state an emulator name uses.
type Identity struct {
	// Name is the canonical emulator name: emu:PROFILE, or emu:ABSPATH.
	Name string
	// Key names the log (KEY.log): the profile's name, or the file's base
	// name with hashes of its absolute path and of its content (an edited
	// scenario starts a new state).
	Key string
	// Source is "profile NAME", or the absolute path of the file.
	Source string
	// File is the absolute path of a scenario file ("" for a profile).
	File string
	// SHA256 is the hash of the scenario.
	SHA256 string
	// Scenario is the parsed scenario.
	Scenario *scenario.Scenario
}

var unsafeKey = lazyre.New(`[^A-Za-z0-9._-]+`)

// Identify resolves an emulator name (emu, emu:PROFILE, emu:FILE.yaml)
// to its scenario and the identity of its state.
func Identify(name string) (*Identity, error) {
	profile, file, err := scenario.Locate(name)
	if err != nil {
		return nil, err
	}
	if file == "" {
		sc, err := scenario.FromProfile(profile)
		if err != nil {
			return nil, err
		}
		// A profile is described by the code: hash what it builds, so a
		// cxray whose profile changed does not replay onto another device.
		b, err := json.Marshal(sc)
		if err != nil {
			return nil, fmt.Errorf("emulator state: describe profile %s: %w", profile, err)
		}
		sum := sha256.Sum256(b)
		return &Identity{Name: "emu:" + profile, Key: "profile-" + profile, Source: "profile " + profile,
			SHA256: hex.EncodeToString(sum[:]), Scenario: sc}, nil
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	} else if fi.Size() > scenario.MaxFileSize {
		return nil, fmt.Errorf("scenario: %s is %d bytes; a scenario file is at most %d", file, fi.Size(), scenario.MaxFileSize)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	sc, err := scenario.Parse(data, file)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	return &Identity{Name: "emu:" + abs, Key: fileKey(abs, sum[:]), Source: abs, File: abs,
		SHA256: hex.EncodeToString(sum[:]), Scenario: sc}, nil
}

func fileKey(abs string, content []byte) string {
	base := strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
	base = strings.Trim(unsafeKey.ReplaceAllString(base, "_"), "_.")
	if len(base) > 40 {
		base = base[:40]
	}
	p := sha256.Sum256([]byte(abs))
	return fmt.Sprintf("file-%s-%.12s-%.12s", base, hex.EncodeToString(p[:]), hex.EncodeToString(content))
}

// Options tune Open.
type Options struct {
	// Dir is where the log is kept; "" is Dir().
	Dir string
	// Path, when set, is the log file itself (Dir is then unused).
	Path string
	// DB and Strict are as in scenario.Options.
	DB     *prm.DB
	Strict bool
}

// State is an emulation with its kept state. Safe for concurrent use.
type State struct {
	mu  sync.Mutex
	log *Log
	clk *Clock
	id  *Identity
	e   *scenario.Emulation

	funcs    map[string]*scenario.Function
	adapters map[string]*scenario.Adapter
	last     time.Time // the latest time of a record seen or written

	// The access in progress (set under mu, read by the recorders) and
	// the changes it made.
	pmu     sync.Mutex
	active  string
	ports   []int
	pending []Record

	err    error // the first failure of the state (a lock that timed out)
	closed bool
}

// Open builds the emulation an emulator name names, in the state its log
// holds: power-on, then every record replayed in order.
func Open(name string, o Options) (*State, error) {
	id, err := Identify(name)
	if err != nil {
		return nil, err
	}
	return OpenIdentity(id, o)
}

// OpenIdentity is Open for a name Identify has resolved. Problems of the
// state (not of the scenario) are *Error.
func OpenIdentity(id *Identity, o Options) (*State, error) {
	s, err := openIdentity(id, o)
	var be *buildError
	if errors.As(err, &be) {
		return nil, be.err // the scenario's own error
	}
	if err != nil {
		return nil, &Error{err}
	}
	return s, nil
}

type buildError struct{ err error }

func (e *buildError) Error() string { return e.err.Error() }

func openIdentity(id *Identity, o Options) (*State, error) {
	path := o.Path
	if path == "" {
		dir := o.Dir
		if dir == "" {
			d, err := Dir()
			if err != nil {
				return nil, err
			}
			if d == "" {
				return nil, fmt.Errorf("emulator state: %s=%s keeps none; unset it to keep state", EnvDir, Off)
			}
			dir = d
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("emulator state: %w", err)
		}
		path = filepath.Join(dir, id.Key+".log")
	}
	now := time.Now().Round(0).UTC()
	sc := id.Scenario
	want := Header{Key: id.Key, Name: id.Name, Source: id.Source, SHA256: id.SHA256, Created: now,
		Origin: sc.Clock.Start, WallBase: now, Manual: sc.Clock.Manual}
	if want.Origin.IsZero() {
		want.Origin = now
		if want.Manual {
			want.Origin = scenario.DefaultStart
		}
	}
	lg, err := OpenLog(path, want)
	if err != nil {
		return nil, err
	}
	hdr := lg.Header()
	s := &State{log: lg, clk: newClock(hdr), id: id, funcs: map[string]*scenario.Function{},
		adapters: map[string]*scenario.Adapter{}, last: hdr.Origin}
	// Power on at the state's origin, whenever this process starts.
	s.clk.setPin(hdr.Origin)
	e, err := scenario.Build(sc, scenario.Options{DB: o.DB, Strict: o.Strict, Clock: s.clk, Firmware: s.wrap})
	if err != nil {
		lg.Close()
		return nil, &buildError{err}
	}
	s.e = e
	for _, a := range e.Adapters {
		s.adapters[a.Name] = a
		a.Firmware.SetRecorder(s.recorded)
		for _, f := range a.Functions {
			s.funcs[f.BDF] = f
		}
	}
	s.mu.Lock()
	err = s.lock()
	if err == nil {
		err = s.unlock()
	}
	s.mu.Unlock()
	if err != nil {
		s.detach()
		lg.Close()
		return nil, err
	}
	return s, nil
}

// Emulation is the emulated devices.
func (s *State) Emulation() *scenario.Emulation { return s.e }

// Clock is the state's clock (also the emulation's).
func (s *State) Clock() *Clock { return s.clk }

// Identity is which state this is.
func (s *State) Identity() *Identity { return s.id }

// Path is the log file.
func (s *State) Path() string { return s.log.Path() }

// Records is the number of records of the log this process has seen.
func (s *State) Records() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.Count()
}

// Err is the first failure of the state in this process (register
// accesses then answered "internal error"), or nil.
func (s *State) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// lock takes the log's lock and replays what other processes appended.
// s.mu is held.
func (s *State) lock() error {
	if s.closed {
		return errors.New("emulator state: used after Close")
	}
	recs, err := s.log.Lock()
	if err != nil {
		return err
	}
	defer s.clk.unpin()
	for _, r := range recs {
		if err := s.replay(r); err != nil {
			s.log.Unlock()
			return fmt.Errorf("emulator state %s: %w; the state does not fit this emulator: `cxray emu reset %s` starts it over", s.log.Path(), err, resetArg(s.id.Name))
		}
		if r.Time.After(s.last) {
			s.last = r.Time
		}
	}
	s.clk.unpin()
	s.clk.raise(s.last)
	return nil
}

func (s *State) replay(r Record) error {
	s.clk.setPin(r.Time)
	switch r.Kind {
	case KindRegister:
		f := s.funcs[r.BDF]
		if f == nil {
			return fmt.Errorf("a record names function %s, which the scenario lacks", r.BDF)
		}
		if st, why := f.View.Replay(r.ID, emu.Method(r.Method), r.Data); st != fw.StatusOK {
			return fmt.Errorf("replaying %s of register 0x%04x on %s (at %s) answers %s: %s",
				emu.Method(r.Method), r.ID, r.BDF, r.Time.UTC().Format(time.RFC3339Nano), fw.StatusName(st), why)
		}
	case KindPlug:
		a := s.adapters[r.Adapter]
		if a == nil || a.Optics == nil {
			return fmt.Errorf("a record plugs a module into adapter %q, which the scenario lacks", r.Adapter)
		}
		if err := a.Optics.Plug(r.Cage, r.Module); err != nil {
			return err
		}
	case KindClock:
	default:
		return fmt.Errorf("a record of unknown kind %q", r.Kind)
	}
	return nil
}

// unlock appends the changes made under the lock (and the time a manual
// clock moved to) and releases it. s.mu is held.
func (s *State) unlock() error {
	s.pmu.Lock()
	recs := s.pending
	s.pending = nil
	s.pmu.Unlock()
	for _, r := range recs {
		if r.Time.After(s.last) {
			s.last = r.Time
		}
	}
	// A manual clock that moved (a sleep, emu ctl advance) is recorded, so
	// other processes read no earlier time: one clock for one device.
	if s.clk.manual != nil {
		if now := s.clk.Now(); now.After(s.last) {
			recs = append(recs, Record{Kind: KindClock, Time: now})
			s.last = now
		}
	}
	err := s.log.Append(recs...)
	if uerr := s.log.Unlock(); err == nil {
		err = uerr
	}
	return err
}

// fail remembers the first failure. s.mu is held.
func (s *State) fail(err error) {
	if s.err == nil {
		s.err = err
		fmt.Fprintf(os.Stderr, "cxray: emulator: %v\n", err)
	}
}

// Do runs fn with the state locked and up to date: reads outside the
// register path (the OS view, sysfs attributes) see every process's
// changes, and changes fn makes through the model are ordered with
// everyone's register accesses. Register accesses must not be made from
// fn (they lock the state themselves).
func (s *State) Do(fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.lock(); err != nil {
		return err
	}
	var err error
	if fn != nil {
		err = fn()
	}
	if uerr := s.unlock(); err == nil {
		err = uerr
	}
	return err
}

// Sync brings this process's copy of the device up to date.
func (s *State) Sync() error { return s.Do(nil) }

// Plug puts a catalog module into a cage of an adapter (emu/optics names;
// emuoptics.Empty pulls it) and records it.
func (s *State) Plug(adapter string, cage int, module string) error {
	return s.Do(func() error {
		a := s.adapters[adapter]
		if a == nil || a.Optics == nil {
			return fmt.Errorf("no emulated adapter %q with modules", adapter)
		}
		if err := a.Optics.Plug(cage, module); err != nil {
			return err
		}
		s.pmu.Lock()
		s.pending = append(s.pending, Record{Kind: KindPlug, Time: s.clk.Now(), Adapter: adapter, Cage: cage, Module: module})
		s.pmu.Unlock()
		return nil
	})
}

// Advance moves a manual clock forward and records it.
func (s *State) Advance(d time.Duration) error {
	if s.clk.manual == nil {
		return errors.New("the clock runs in real time; start the emulator with a scenario whose clock has mode: manual to advance it")
	}
	return s.Do(func() error {
		s.clk.manual.Advance(d)
		return nil
	})
}

// Close records the clock and releases the log. Calling it again does
// nothing.
func (s *State) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	err := s.lock()
	if err == nil {
		err = s.unlock()
	}
	s.closed = true
	s.detach()
	if cerr := s.log.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *State) detach() {
	for _, a := range s.adapters {
		a.Firmware.SetRecorder(nil)
	}
}

// wrap is the scenario.Options.Firmware hook.
func (s *State) wrap(bdf string, view *fw.View) emu.Firmware {
	return &funcFirmware{s: s, bdf: bdf, view: view}
}

// recorded is the recorder of every adapter's firmware: it keeps the
// changes of the access in progress through a function's wrapper (an
// access made some other way, such as a test calling the firmware
// directly, is not the device's history and is not kept).
func (s *State) recorded(ch fw.Change) {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	if s.active == "" || !slices.Equal(ch.Ports, s.ports) {
		return
	}
	s.pending = append(s.pending, Record{Kind: KindRegister, Time: ch.Time, BDF: s.active, ID: ch.ID, Method: uint8(ch.Method), Data: ch.Data})
}

// funcFirmware is what a function's emu.Device talks to.
type funcFirmware struct {
	s    *State
	bdf  string
	view *fw.View
}

// AccessRegister implements emu.Firmware: sync, access, record, under the
// state's lock.
func (w *funcFirmware) AccessRegister(id uint16, method emu.Method, data []byte) ([]byte, uint8) {
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return w.view.AccessRegister(id, method, data) // after Close: a device nobody keeps
	}
	if err := s.lock(); err != nil {
		s.fail(err)
		return nil, fw.StatusInternalError
	}
	s.pmu.Lock()
	s.active, s.ports = w.bdf, w.view.Ports()
	s.pmu.Unlock()
	out, st := w.view.AccessRegister(id, method, data)
	s.pmu.Lock()
	s.active, s.ports = "", nil
	s.pmu.Unlock()
	if err := s.unlock(); err != nil {
		s.fail(err)
		return nil, fw.StatusInternalError
	}
	return out, st
}

// Info describes a kept state, for listings.
type Info struct {
	Key     string    `json:"key"`
	Name    string    `json:"name"`
	Source  string    `json:"source"`
	Path    string    `json:"path"`
	Created time.Time `json:"created"`
	// Modified is the wall time of the last record.
	Modified time.Time `json:"modified"`
	// Records counts the changes (register writes, plugs); ClockRecords
	// the times a manual clock was recorded at.
	Records      int  `json:"records"`
	ClockRecords int  `json:"clock_records"`
	Manual       bool `json:"manual_clock"`
	// Clock is the emulated time now (a real-time clock) or the latest
	// recorded (a manual one).
	Clock time.Time `json:"clock"`
	InUse bool      `json:"in_use"`
	// Stale says why a scenario file's state will not be used again (the
	// file changed or is gone); "" otherwise.
	Stale string `json:"stale,omitempty"`
	// Problem says why the log could not be read; "" otherwise.
	Problem string `json:"problem,omitempty"`
}

// List describes every state kept in dir (Dir() when "").
func List(dir string) ([]Info, error) {
	if dir == "" {
		d, err := Dir()
		if err != nil || d == "" {
			return nil, err
		}
		dir = d
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return nil, err
	}
	return ListFiles(paths), nil
}

// ListFiles describes the states kept in the given log files (those that
// exist), sorted by key.
func ListFiles(paths []string) []Info {
	var out []Info
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		out = append(out, describe(p))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func describe(p string) Info {
	in := Info{Key: strings.TrimSuffix(filepath.Base(p), ".log"), Path: p}
	if fi, err := os.Stat(p); err == nil {
		in.Modified = fi.ModTime()
	}
	in.InUse, _ = InUse(p)
	hdr, recs, err := ReadLog(p)
	if err != nil {
		in.Problem = err.Error()
		return in
	}
	in.Key, in.Name, in.Source, in.Created, in.Manual = hdr.Key, hdr.Name, hdr.Source, hdr.Created, hdr.Manual
	in.Clock = hdr.Origin
	for _, r := range recs {
		if r.Kind == KindClock {
			in.ClockRecords++
		} else {
			in.Records++
		}
		if r.Time.After(in.Clock) {
			in.Clock = r.Time
		}
	}
	if !hdr.Manual {
		if now := hdr.Origin.Add(time.Now().Round(0).Sub(hdr.WallBase)); now.After(in.Clock) {
			in.Clock = now
		}
	}
	if strings.HasPrefix(hdr.Source, "/") {
		data, err := os.ReadFile(hdr.Source)
		switch {
		case err != nil:
			in.Stale = "the scenario file is gone"
		default:
			sum := sha256.Sum256(data)
			if hex.EncodeToString(sum[:]) != hdr.SHA256 {
				in.Stale = "the scenario file changed since; its new content has a state of its own"
			}
		}
	}
	return in
}

// Remove deletes the states of an emulator name (every state of a
// scenario file, whatever its content was), or with name "" every state
// in dir (Dir() when ""). It returns the logs removed; a state in use is
// left and reported (errors.Is(err, ErrInUse)).
func Remove(dir, name string) ([]string, error) {
	if dir == "" {
		d, err := Dir()
		if err != nil || d == "" {
			return nil, err
		}
		dir = d
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return nil, err
	}
	return RemoveFiles(paths, name)
}

// RemoveFiles is Remove over the given log files.
func RemoveFiles(paths []string, name string) ([]string, error) {
	var match func(Info) bool
	if name != "" {
		profile, file, err := scenario.Locate(name)
		if err != nil {
			return nil, err
		}
		if file != "" {
			abs, err := filepath.Abs(file)
			if err != nil {
				return nil, err
			}
			match = func(in Info) bool { return in.Source == abs }
		} else {
			match = func(in Info) bool { return in.Source == "profile "+profile }
		}
	}
	infos := ListFiles(paths)
	var removed []string
	var errs []error
	for _, in := range infos {
		if match != nil && !match(in) {
			continue
		}
		if err := RemoveLog(in.Path); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, in.Path)
	}
	return removed, errors.Join(errs...)
}

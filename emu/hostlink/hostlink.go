// Package hostlink is an emulated adapter's PCI Express link to the host:
// what the card can train (its Link Capabilities), what the slot's port
// can (the upstream bridge), what the link trained, and the errors the
// link's functions detect. It answers the function's config space (the PCI
// Express capability and AER, through emu.ExpressSource), the firmware's
// MPEIN and MPCNT registers, and the kernel's sysfs view (current and max
// link speed and width, aer_dev_* counters), so every path to the link
// tells the same story.
//
// Errors come from two places: a steady rate of correctable errors per
// second (a scenario's pcie.correctable_per_sec, on every function, as
// Linux counts link errors on each function of the device) and errors
// injected at run time (`cxray emu ctl fault pcie.aer=BadTLP:5`). Each
// error counts once in the kernel's AER counters and sets its status bit
// in config space, which stays set until cleared (pcie.clear), as on a
// platform where firmware, not the kernel, handles AER. Link-layer errors
// also count in MPCNT (modelled: RxErr a receiver recovery, BadTLP and
// BadDLLP the CRC counters, Rollover and Timeout a transmitter recovery).
package hostlink

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/pcie"
)

// Spec is an adapter's PCI Express link as a scenario gives it. Zero
// fields take defaults (Resolve).
type Spec struct {
	// Card is what the card can train (a ConnectX-7 Gen5 x16).
	Card pcie.Link
	// Slot is what the slot's port can train; zero fields: as the card.
	Slot pcie.Link
	// Trained is what the link trained; zero fields: the lower of card
	// and slot (a healthy link).
	Trained pcie.Link
	// Target is the card's Link Control 2 target speed; zero: the card's.
	Target pcie.Speed
	// CorrectablePerSec are steady correctable errors per second, by AER
	// name (BadTLP: 0.5).
	CorrectablePerSec map[string]float64
}

// Resolve fills the defaults and checks the spec: a link cannot train
// faster or wider than either end.
func (s Spec) Resolve() (Spec, error) {
	if s.Card.Speed == 0 {
		s.Card.Speed = pcie.Gen5
	}
	if s.Card.Width == 0 {
		s.Card.Width = 16
	}
	if s.Slot.Speed == 0 {
		s.Slot.Speed = s.Card.Speed
	}
	if s.Slot.Width == 0 {
		s.Slot.Width = s.Card.Width
	}
	if s.Trained.Speed == 0 {
		s.Trained.Speed = min(s.Card.Speed, s.Slot.Speed)
	}
	if s.Trained.Width == 0 {
		s.Trained.Width = min(s.Card.Width, s.Slot.Width)
	}
	if s.Target == 0 {
		s.Target = s.Card.Speed
	}
	var errs []error
	for _, l := range []struct {
		what string
		l    pcie.Link
	}{{"card", s.Card}, {"slot", s.Slot}, {"trained", s.Trained}} {
		if !l.l.Speed.Known() || !pcie.ValidWidth(l.l.Width) || l.l.Width > 16 {
			errs = append(errs, fmt.Errorf("the %s link %v is no PCI Express link a ConnectX trains (Gen1..Gen6, x1..x16)", l.what, l.l))
		}
	}
	if s.Trained.Speed > min(s.Card.Speed, s.Slot.Speed) || s.Trained.Width > min(s.Card.Width, s.Slot.Width) {
		errs = append(errs, fmt.Errorf("the link cannot train at %v: the card can do %v and the slot %v", s.Trained, s.Card, s.Slot))
	}
	if !s.Target.Known() || s.Target > s.Card.Speed {
		errs = append(errs, fmt.Errorf("target speed %v: give a generation up to the card's %v", s.Target, s.Card.Speed.GenText()))
	}
	for name, r := range s.CorrectablePerSec {
		if pcie.BitOf(name, true) < 0 {
			errs = append(errs, fmt.Errorf("correctable_per_sec: %q is not a correctable AER error; use %s", name, strings.Join(CorrectableNames(), ", ")))
		}
		if !(r >= 0 && r <= 1e6) {
			errs = append(errs, fmt.Errorf("correctable_per_sec: %s %v is not a rate between 0 and 1e6 per second", name, r))
		}
	}
	return s, errors.Join(errs...)
}

// CorrectableNames and UncorrectableNames are the AER error names the
// model takes, as the kernel's sysfs writes them.
func CorrectableNames() []string   { return names(pcie.CorrectableNames) }
func UncorrectableNames() []string { return names(pcie.UncorrectableNames) }

func names(m map[int]string) []string {
	var out []string
	for _, n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Clock is the emulation's time.
type Clock interface{ Now() time.Time }

// Model is one adapter's link. Safe for concurrent use.
type Model struct {
	mu    sync.Mutex
	clk   Clock
	boot  time.Time
	spec  Spec
	funcs []*aer
	// cleared is Perf when MPCNT was last cleared: it reads from there.
	cleared Perf
	// bdf0 is function 0's bus, device and function (MPEIN bdf0).
	bdf0 uint16
}

// SetBDF0 records function 0's address, which MPEIN reports (bdf0: bus
// in bits 15:8, device 7:3, function 2:0, as the PCI routing ID).
func (m *Model) SetBDF0(bus, dev, fn uint8) {
	m.mu.Lock()
	m.bdf0 = uint16(bus)<<8 | uint16(dev&0x1F)<<3 | uint16(fn&7)
	m.mu.Unlock()
}

// aer is one function's errors.
type aer struct {
	// injected counts by status bit.
	cor, uncor [32]uint64
	// status bits set and not cleared; cleared remembers the rate counts
	// at the last clear, so steady errors set their bit again only when
	// one more comes.
	corStatus, uncorStatus uint32
	firstError             uint8
	devStatus              uint16
	rateAtClear            [32]uint64
	uncorSeverity          uint32
	uncorMask, corMask     uint32
}

// New builds the model of an adapter with n functions.
func New(spec Spec, clk Clock, n int) (*Model, error) {
	s, err := spec.Resolve()
	if err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("hostlink: an adapter has at least one function, not %d", n)
	}
	m := &Model{clk: clk, boot: clk.Now(), spec: s}
	for i := 0; i < n; i++ {
		m.funcs = append(m.funcs, &aer{uncorSeverity: emu.DefaultUncorSeverity, uncorMask: emu.DefaultUncorMask, corMask: emu.DefaultCorMask})
	}
	return m, nil
}

// Spec is the link as it is now.
func (m *Model) Spec() Spec {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.spec
	s.CorrectablePerSec = cloneRates(s.CorrectablePerSec)
	return s
}

func cloneRates(r map[string]float64) map[string]float64 {
	if r == nil {
		return nil
	}
	out := make(map[string]float64, len(r))
	for k, v := range r {
		out[k] = v
	}
	return out
}

// Retrain makes the link train at l (zero fields: as capable), as a
// reseat or a retrain would; a link the ends cannot train is refused.
func (m *Model) Retrain(l pcie.Link) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.spec
	s.Trained = l
	r, err := s.Resolve()
	if err != nil {
		return err
	}
	m.spec = r
	return nil
}

// SetRates replaces the steady correctable error rates.
func (m *Model) SetRates(r map[string]float64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.spec
	s.CorrectablePerSec = cloneRates(r)
	if _, err := s.Resolve(); err != nil {
		return err
	}
	// The errors counted so far stay counted (and their status bits
	// set): the new rate starts now.
	for _, f := range m.funcs {
		f.cor, f.corStatus, f.devStatus = m.counts(f)
		f.rateAtClear = [32]uint64{}
	}
	m.spec.CorrectablePerSec = cloneRates(r)
	m.boot = m.clk.Now()
	return nil
}

// steady is how many errors a rate gave since boot.
func (m *Model) steady(rate float64) uint64 {
	secs := m.clk.Now().Sub(m.boot).Seconds()
	if secs <= 0 || rate <= 0 {
		return 0
	}
	return uint64(math.Floor(rate * secs))
}

// Inject records n errors of a kind (an AER name) on function fn (its
// index in the adapter): counted, and its status bit set. An
// uncorrectable error is fatal or not by the severity register.
func (m *Model) Inject(fn int, name string, n uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if fn < 0 || fn >= len(m.funcs) {
		return fmt.Errorf("hostlink: no function %d (the adapter has %d)", fn, len(m.funcs))
	}
	f := m.funcs[fn]
	if b := pcie.BitOf(name, true); b >= 0 {
		f.cor[b] += n
		f.corStatus |= 1 << b
		f.devStatus |= 1 << 0
		return nil
	}
	b := pcie.BitOf(name, false)
	if b < 0 {
		return fmt.Errorf("hostlink: %q is no AER error; correctable: %s; uncorrectable: %s", name,
			strings.Join(CorrectableNames(), ", "), strings.Join(UncorrectableNames(), ", "))
	}
	f.uncor[b] += n
	if f.uncorStatus == 0 {
		f.firstError = uint8(b)
	}
	f.uncorStatus |= 1 << b
	if f.uncorSeverity&(1<<b) != 0 {
		f.devStatus |= 1 << 2
	} else {
		f.devStatus |= 1 << 1
	}
	if name == "UnsupReq" {
		f.devStatus |= 1 << 3
	}
	return nil
}

// Clear clears the status bits of function fn (its counters stay), as
// software writing the status registers back does.
func (m *Model) Clear(fn int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if fn < 0 || fn >= len(m.funcs) {
		return fmt.Errorf("hostlink: no function %d (the adapter has %d)", fn, len(m.funcs))
	}
	f := m.funcs[fn]
	f.corStatus, f.uncorStatus, f.devStatus, f.firstError = 0, 0, 0, 0
	for name, rate := range m.spec.CorrectablePerSec {
		f.rateAtClear[pcie.BitOf(name, true)] = m.steady(rate)
	}
	return nil
}

// Counts is a function's errors by status bit: what the kernel's aer_dev_*
// files count.
type Counts struct {
	Correctable, NonFatal, Fatal map[int]uint64
}

// counts is f's counts with the steady errors; the lock is held.
func (m *Model) counts(f *aer) (cor [32]uint64, corStatus uint32, devStatus uint16) {
	cor = f.cor
	corStatus, devStatus = f.corStatus, f.devStatus
	for name, rate := range m.spec.CorrectablePerSec {
		b := pcie.BitOf(name, true)
		n := m.steady(rate)
		cor[b] += n
		if n > f.rateAtClear[b] {
			corStatus |= 1 << b
			devStatus |= 1 << 0
		}
	}
	return cor, corStatus, devStatus
}

// Counts reads function fn's error counts.
func (m *Model) Counts(fn int) (Counts, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if fn < 0 || fn >= len(m.funcs) {
		return Counts{}, fmt.Errorf("hostlink: no function %d (the adapter has %d)", fn, len(m.funcs))
	}
	f := m.funcs[fn]
	cor, _, _ := m.counts(f)
	c := Counts{Correctable: map[int]uint64{}, NonFatal: map[int]uint64{}, Fatal: map[int]uint64{}}
	for b := 0; b < 32; b++ {
		if cor[b] > 0 {
			c.Correctable[b] = cor[b]
		}
		if f.uncor[b] == 0 {
			continue
		}
		if f.uncorSeverity&(1<<b) != 0 {
			c.Fatal[b] = f.uncor[b]
		} else {
			c.NonFatal[b] = f.uncor[b]
		}
	}
	return c, nil
}

// Express is function fn's view as emu.ExpressSource.
func (m *Model) Express(fn int) emu.ExpressSource { return express{m: m, fn: fn} }

type express struct {
	m  *Model
	fn int
}

func (e express) ExpressState() emu.ExpressState {
	m := e.m
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.spec
	st := emu.ExpressState{MaxSpeed: uint8(s.Card.Speed), Speed: uint8(s.Trained.Speed), TargetSpeed: uint8(s.Target),
		MaxWidth: uint8(s.Card.Width), Width: uint8(s.Trained.Width)}
	if e.fn < 0 || e.fn >= len(m.funcs) {
		return st
	}
	f := m.funcs[e.fn]
	_, corStatus, devStatus := m.counts(f)
	st.DevStatus = devStatus
	st.AER = emu.AERState{UncorStatus: f.uncorStatus, UncorMask: f.uncorMask, UncorSeverity: f.uncorSeverity,
		CorStatus: corStatus, CorMask: f.corMask, FirstError: f.firstError}
	return st
}

// Perf are MPCNT's link counters.
type Perf struct {
	RxErrors, TxErrors, CRCErrorDLLP, CRCErrorTLP uint64
}

// Perf are the MPCNT performance counters (group 0) of the link: the
// steady errors once (they are the link's), the injected ones of every
// function.
func (m *Model) Perf() Perf {
	m.mu.Lock()
	defer m.mu.Unlock()
	var cor [32]uint64
	for name, rate := range m.spec.CorrectablePerSec {
		cor[pcie.BitOf(name, true)] += m.steady(rate)
	}
	var uncor [32]uint64
	for _, f := range m.funcs {
		for b := range cor {
			cor[b] += f.cor[b]
			uncor[b] += f.uncor[b]
		}
	}
	return Perf{
		RxErrors:     cor[0] + uncor[4] + uncor[5], // RxErr takes the link to Recovery; so do DLP and surprise down
		CRCErrorTLP:  cor[6],                       // BadTLP
		CRCErrorDLLP: cor[7],                       // BadDLLP
		TxErrors:     cor[8] + cor[12],             // REPLAY_NUM rollover, replay timer timeout
	}
}

// DeviceStatus is the Device Status of function fn (MPEIN device_status
// mirrors it).
func (m *Model) DeviceStatus(fn int) uint16 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if fn < 0 || fn >= len(m.funcs) {
		return 0
	}
	_, _, ds := m.counts(m.funcs[fn])
	return ds
}

// ParseInjection reads what `pcie.aer=` takes: NAME or NAME:COUNT, several
// separated by commas ("BadTLP:5,CmpltTO").
func ParseInjection(s string) (map[string]uint64, error) {
	out := map[string]uint64{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, cnt, has := strings.Cut(part, ":")
		n := uint64(1)
		if has {
			v, err := strconv.ParseUint(strings.TrimSpace(cnt), 10, 32)
			if err != nil || v == 0 {
				return nil, fmt.Errorf("pcie.aer=%s: the count after %s: is a number from 1", s, name)
			}
			n = v
		}
		name = strings.TrimSpace(name)
		if pcie.BitOf(name, true) < 0 && pcie.BitOf(name, false) < 0 {
			return nil, fmt.Errorf("pcie.aer=%s: %q is no AER error; correctable: %s; uncorrectable: %s", s, name,
				strings.Join(CorrectableNames(), ", "), strings.Join(UncorrectableNames(), ", "))
		}
		out[name] += n
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("pcie.aer=%q names no error; give NAME or NAME:COUNT, e.g. BadTLP:5", s)
	}
	return out, nil
}

// Package devtest is a register-side fake for tests of the layers above
// dev: a map of register images behind the dev.Accessor interface, in the
// spirit of kernel/kerneltest. Tests put the instances a scenario needs
// (PAOS of local port 1 up, PMLP of port 2 absent, MTMP sensor 64 at
// 80 °C) and run a feature's own logic against them, without the
// gateway, ICMD or the emulator.
//
// A GET finds the instance whose index fields match the request (fields an
// instance leaves unset match anything) and answers its image, with the
// request's index fields copied in, as firmware does. A register with no
// instance answers the firmware's "register not supported" (status 4); a
// register with instances but none matching answers "bad parameter"
// (status 7), which is what firmware answers for a port another function
// owns. A SET replaces the matching instance's image.
package devtest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/cxray/cxray/access/regaccess"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/prm"
)

// Fake is a register store. The zero value is not usable; call New.
type Fake struct {
	db *prm.DB

	mu    sync.Mutex
	regs  map[uint16]*register
	calls []Call
	// Hook, when set, runs before every access; a non-nil error is
	// returned instead of the answer (a device that stopped answering).
	Hook func(method dev.Method, register string) error
}

// Call records one access the fake answered.
type Call struct {
	Method   dev.Method
	Register string
	Index    map[string]uint64
}

type register struct {
	reg       *prm.Register
	plan      *prm.Plan
	instances []*instance
}

type instance struct {
	index  map[string]uint64 // index leaf path -> value
	image  []byte
	status uint8 // non-zero: answer this status instead
}

// New makes an empty fake over db.
func New(db *prm.DB) *Fake {
	return &Fake{db: db, regs: map[uint16]*register{}}
}

// Device wraps the fake as a dev.Device with the given backend.
func (f *Fake) Device(name, bdf string, backend dev.Backend) *dev.Device {
	return dev.New(name, bdf, backend, f.db, f, nil)
}

// Put adds (or replaces) an instance of reg. Assignments are "path=value"
// as prm encode takes them; those naming INDEX fields select the instance,
// the others fill its image. It panics on a bad name or value, since that
// is a mistake in the test itself.
func (f *Fake) Put(reg string, assignments ...string) {
	r, in := f.instance(reg, assignments)
	as, err := prm.ParseAssignments(assignments)
	if err != nil {
		panic(err)
	}
	img := r.plan.NewBuffer()
	if len(img) < r.reg.Size {
		img = make([]byte, r.reg.Size)
	}
	if err := r.plan.Encode(img, as); err != nil {
		panic(fmt.Sprintf("devtest: %s: %v", reg, err))
	}
	in.image, in.status = img, 0
}

// PutImage adds an instance of reg with index fields given as "path=value"
// and the image as bytes (shorter images are zero-filled).
func (f *Fake) PutImage(reg string, image []byte, index ...string) {
	r, in := f.instance(reg, index)
	img := r.plan.NewBuffer()
	if len(img) < len(image) {
		img = make([]byte, len(image))
	}
	copy(img, image)
	in.image, in.status = img, 0
}

// Fail makes an instance of reg answer a firmware status instead of data.
func (f *Fake) Fail(reg string, status uint8, index ...string) {
	_, in := f.instance(reg, index)
	in.status = status
}

// Calls returns the accesses answered so far.
func (f *Fake) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

// Count says how many accesses went to reg.
func (f *Fake) Count(reg string) int {
	n := 0
	for _, c := range f.Calls() {
		if c.Register == reg {
			n++
		}
	}
	return n
}

func (f *Fake) register(name string) *register {
	reg, err := f.db.Register(name)
	if err != nil {
		panic(fmt.Sprintf("devtest: %v", err))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id := uint16(reg.ID)
	r := f.regs[id]
	if r == nil {
		p, err := f.db.RegisterPlan(reg)
		if err != nil {
			panic(fmt.Sprintf("devtest: %v", err))
		}
		r = &register{reg: reg, plan: p}
		f.regs[id] = r
	}
	return r
}

// instance finds or makes the instance of reg selected by the index fields
// among assignments.
func (f *Fake) instance(name string, assignments []string) (*register, *instance) {
	r := f.register(name)
	idx := map[string]uint64{}
	probe := r.plan.NewBuffer()
	as, err := prm.ParseAssignments(assignments)
	if err != nil {
		panic(err)
	}
	for _, a := range as {
		t, err := r.plan.Resolve(a.Path, probe)
		if err != nil {
			panic(fmt.Sprintf("devtest: %s: %v", name, err))
		}
		if t.Step.Access != prm.AccessIndex {
			continue
		}
		buf := r.plan.NewBuffer()
		if err := r.plan.Encode(buf, []prm.Assignment{a}); err != nil {
			panic(fmt.Sprintf("devtest: %s: %v", name, err))
		}
		d, _ := r.plan.Decode(buf)
		v, err := d.Get(t.Path)
		if err != nil {
			panic(fmt.Sprintf("devtest: %s: %v", name, err))
		}
		idx[t.Path] = v.Uint()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, in := range r.instances {
		if sameIndex(in.index, idx) {
			return r, in
		}
	}
	in := &instance{index: idx}
	r.instances = append(r.instances, in)
	return r, in
}

func sameIndex(a, b map[string]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Access implements dev.Accessor.
func (f *Fake) Access(ctx context.Context, method dev.Method, id uint16, data []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	r := f.regs[id]
	f.mu.Unlock()
	name := fmt.Sprintf("0x%04x", id)
	if r != nil {
		name = r.reg.Name
	}
	if f.Hook != nil {
		if err := f.Hook(method, name); err != nil {
			return nil, err
		}
	}
	if r == nil {
		f.record(method, name, nil)
		return nil, &regaccess.StatusError{Status: regaccess.StatusRegisterNotSupported, RegisterID: id, Method: method}
	}
	req, err := r.plan.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("devtest: %s: request does not decode: %v", r.reg.Name, err)
	}
	got := map[string]uint64{}
	f.mu.Lock()
	defer f.mu.Unlock()
	var match *instance
	for _, in := range r.instances {
		ok := true
		for k, v := range in.index {
			rv, err := req.Get(k)
			if err != nil || rv.Uint() != v {
				ok = false
				break
			}
			got[k] = v
		}
		if ok {
			match = in
			break
		}
	}
	f.calls = append(f.calls, Call{Method: method, Register: r.reg.Name, Index: requestIndex(r.plan, req)})
	switch {
	case match == nil:
		return nil, &regaccess.StatusError{Status: regaccess.StatusBadParameter, RegisterID: id, Method: method}
	case match.status != 0:
		return nil, &regaccess.StatusError{Status: match.status, RegisterID: id, Method: method}
	case method == dev.Set:
		match.image = append([]byte(nil), data...)
		return append([]byte(nil), data...), nil
	}
	out := make([]byte, max(len(data), len(match.image)))
	copy(out, match.image)
	// Echo the request's index fields, as firmware does.
	var echo []prm.Assignment
	for _, l := range r.plan.Leaves() {
		if l.Access != prm.AccessIndex || l.When != "" || l.Count > 0 {
			continue
		}
		if v, err := req.Get(l.Path); err == nil {
			echo = append(echo, prm.Assignment{Path: l.Path, Value: fmt.Sprint(v.Uint())})
		}
	}
	_ = r.plan.Encode(out, echo)
	return out[:len(data)], nil
}

func (f *Fake) record(method dev.Method, name string, idx map[string]uint64) {
	f.mu.Lock()
	f.calls = append(f.calls, Call{Method: method, Register: name, Index: idx})
	f.mu.Unlock()
}

// requestIndex lists the non-zero index fields of a request, for Calls.
func requestIndex(p *prm.Plan, req *prm.Decoded) map[string]uint64 {
	out := map[string]uint64{}
	for _, l := range p.Leaves() {
		if l.Access != prm.AccessIndex || l.Count > 0 {
			continue
		}
		if v, err := req.Get(l.Path); err == nil && v.Uint() != 0 {
			out[l.Path] = v.Uint()
		}
	}
	return out
}

// String lists the instances, for failure messages.
func (f *Fake) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var lines []string
	for _, r := range f.regs {
		for _, in := range r.instances {
			var idx []string
			for k, v := range in.index {
				idx = append(idx, fmt.Sprintf("%s=%d", k, v))
			}
			sort.Strings(idx)
			lines = append(lines, fmt.Sprintf("%s[%s]", r.reg.Name, strings.Join(idx, ",")))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// Package linkctl changes a port's link the way mlxlink's active side
// does (--port_state, --speeds, --fec): each change is planned as register
// writes (PAOS, PTYS, PPLM), shown before it is made, written through
// dev's guarded writer (read, plan, write, read back), and remembered so
// that it can be undone. The registers and their fields are the PRM's
// (docs/link.md, "Changing a link", lists them); checks against the
// port's and the cable's capabilities happen before anything is written.
package linkctl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/feature/link"
	"github.com/cxray/cxray/prm"
)

// Field is one field=value of a write.
type Field struct {
	Path  string `json:"field"`
	Value string `json:"value"`
}

// Write is one register write.
type Write struct {
	Register string  `json:"register"`
	Index    []Field `json:"index"`
	Fields   []Field `json:"fields"`
	// Settle is how long the port needs after this write before the next
	// one (a toggle's down before its up).
	Settle time.Duration `json:"settle_ns,omitempty"`
	// AnyValue writes values the field's enum does not list (PPLM's 0,
	// no override, in fields whose enum names only the one-hot bits).
	AnyValue bool `json:"any_value,omitempty"`
}

func assignments(fs []Field) []prm.Assignment {
	out := make([]prm.Assignment, len(fs))
	for i, f := range fs {
		out[i] = prm.Assignment{Path: f.Path, Value: f.Value}
	}
	return out
}

func (w Write) String() string {
	var parts []string
	for _, f := range append(append([]Field{}, w.Index...), w.Fields...) {
		parts = append(parts, f.Path+"="+f.Value)
	}
	return w.Register + " " + strings.Join(parts, " ")
}

// Diff is one field a write changes.
type Diff struct {
	Path   string `json:"field"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// Step is a write with what it changes, as planned.
type Step struct {
	Write
	Changes []Diff `json:"changes"`
}

// Change is a planned change to one port's link.
type Change struct {
	Device string `json:"device"`
	Port   int    `json:"port"`
	Netdev string `json:"netdev,omitempty"`
	// What says the change in mlxlink's flags ("port_state DN").
	What  string `json:"what"`
	Steps []Step `json:"writes"`
	// Undo are the writes that restore the fields the change touches.
	Undo []Write `json:"undo"`
	// UndoFlags say the same as cxray link flags, where flags can.
	UndoFlags string   `json:"undo_flags,omitempty"`
	Effects   []string `json:"side_effects"`
	// Before is the link as it was when planned.
	Before link.Operational `json:"before"`
	// Pending marks a saved record whose writes had begun and not all
	// been verified: a command killed between writes leaves it so, and
	// Recover puts the old configuration back.
	Pending bool `json:"pending,omitempty"`
	// expect is the oper state the link should reach after the change:
	// "up", "down" or "" (no expectation).
	expect string
}

// Result is a change made.
type Result struct {
	Change *Change `json:"change"`
	// Verified lists the writes whose read-back holds what was written.
	Verified []string `json:"verified"`
	// After is the link once the change settled.
	After link.Operational `json:"after"`
	// Problem says the link did not reach the state the change asks for
	// (the write itself was verified).
	Problem string `json:"problem,omitempty"`
}

// InputError is a change refused before anything is written: an invalid
// combination, a capability the port or cable lacks.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg + "; nothing was written" }

// Is makes it an input error (exit 2).
func (e *InputError) Is(target error) bool { return target == prm.ErrInput }

func inputErr(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// Options tune Apply.
type Options struct {
	// Wait bounds how long Apply waits for the link to reach the state
	// the change asks for (0: 10 s).
	Wait time.Duration
}

// port is what planning needs of a port.
type port struct {
	ad  *adapter.Adapter
	d   *dev.Device
	p   adapter.Port
	ib  bool
	lnk *link.Report
}

func openPort(ctx context.Context, ad *adapter.Adapter, local int) (*port, error) {
	if !ad.HasRegisters() {
		return nil, fmt.Errorf("%s: changing a link needs the register path (-d with a PCI address, an RDMA device or emu); the kernel backend only reads: %w", ad.Name(), prm.ErrInput)
	}
	p, err := ad.Port(ctx, local)
	if err != nil {
		return nil, err
	}
	d, err := ad.Registers(ctx)
	if err != nil {
		return nil, err
	}
	rs, err := link.Read(ctx, ad, link.Options{Ports: []int{local}, Brief: true})
	if err != nil {
		return nil, err
	}
	if len(rs) != 1 {
		return nil, fmt.Errorf("port %d: no link reading", local)
	}
	return &port{ad: ad, d: d, p: p, ib: p.LinkLayer == adapter.LinkInfiniBand, lnk: rs[0]}, nil
}

func (pt *port) index(reg string, extra ...Field) []Field {
	idx := append([]Field{{"local_port", strconv.Itoa(pt.p.Local)}}, extra...)
	// The later fields depend on page_select only, which no write here
	// gives.
	for _, as := range link.OptionalIndex(pt.ad.DB(), reg, adapter.LocalPort(pt.p.Local)).Assignments() {
		idx = append(idx, Field{as.Path, as.Value})
	}
	return idx
}

func (pt *port) change(what string) *Change {
	return &Change{Device: pt.ad.Name(), Port: pt.p.Local, Netdev: pt.p.Netdev, What: what, Before: pt.lnk.Operational}
}

// read reads a register at a write's index.
func (pt *port) read(ctx context.Context, reg string, idx []Field) (*prm.Decoded, error) {
	r, err := pt.d.Get(ctx, reg, assignments(idx), nil, 0)
	if err != nil {
		return nil, err
	}
	return r.Decoded, nil
}

// plan works out each write's changes: the first write of a register
// against what the device holds, a later one against what the earlier
// left.
func (pt *port) plan(ctx context.Context, c *Change, ws []Write) error {
	last := map[string]*prm.Decoded{}
	for _, w := range ws {
		key := w.Register + fmt.Sprint(w.Index)
		var before *prm.Decoded
		var buf []byte
		if prev, ok := last[key]; ok {
			before, buf = prev, append([]byte(nil), prev.Raw...)
		} else {
			wp, err := pt.d.PrepareSetWith(ctx, w.Register, assignments(w.Index), assignments(w.Fields), dev.SetOptions{AnyValue: w.AnyValue})
			if err != nil {
				return err
			}
			before, buf = wp.Reading.Decoded, wp.Bytes
		}
		p := before.Plan
		if err := p.Encode(buf, assignments(w.Fields)); err != nil {
			return err
		}
		after, err := p.Decode(buf)
		if err != nil {
			return err
		}
		st := Step{Write: w, Changes: []Diff{}}
		old := map[string]string{}
		for _, r := range before.Rows() {
			old[r.Path] = r.Text
		}
		for _, r := range after.Rows() {
			if old[r.Path] != r.Text {
				st.Changes = append(st.Changes, Diff{Path: r.Path, Before: old[r.Path], After: r.Text})
			}
		}
		c.Steps = append(c.Steps, st)
		last[key] = after
	}
	return nil
}

// Apply makes a planned change: each write through dev's guarded writer
// (read, write, read back), then waits (bounded) for the link to reach the
// state the change asks for and reads it again. save, when not nil, is
// called with the undo record before the first write, so that a command
// killed between writes still leaves the way back.
func Apply(ctx context.Context, ad *adapter.Adapter, c *Change, o Options, save func(*Change) error) (*Result, error) {
	d, err := ad.Registers(ctx)
	if err != nil {
		return nil, err
	}
	if save != nil {
		c.Pending = true
		if err := save(c); err != nil {
			return nil, fmt.Errorf("saving the undo record: %w; nothing was written", err)
		}
	}
	// done marks the record complete once the port holds one whole
	// configuration again (the new one, or the old one put back).
	done := func() error {
		if save == nil {
			return nil
		}
		c.Pending = false
		return save(c)
	}
	res := &Result{Change: c, Verified: []string{}}
	for i, st := range c.Steps {
		err := write(ctx, d, st.Write)
		if afterWrite != nil {
			afterWrite(i)
		}
		if err == nil {
			res.Verified = append(res.Verified, st.Write.String())
			if st.Settle > 0 && i < len(c.Steps)-1 {
				err = ad.Sleep(ctx, st.Settle)
			}
		}
		if err == nil {
			continue
		}
		err = fmt.Errorf("write %d of %d (%s): %w", i+1, len(c.Steps), st.Write, err)
		if len(res.Verified) > 0 && len(res.Verified) < len(c.Steps) {
			// Stopped between writes (a signal, a deadline, a refusal):
			// the port is half-way; put the old configuration back, on
			// a context of its own, so that it is the old or the new one.
			rerr := rollback(ctx, d, c.Undo)
			if errors.Is(rerr, errRolledBack) {
				rerr = errors.Join(rerr, done())
			}
			return res, errors.Join(err, rerr)
		}
		return res, errors.Join(err, done())
	}
	if err := done(); err != nil {
		return res, fmt.Errorf("the change was written and verified, but marking its undo record complete failed: %w", err)
	}
	wait := o.Wait
	if wait <= 0 {
		wait = 10 * time.Second
	}
	after, reached, err := settle(ctx, ad, c.Port, c.expect, wait)
	if err != nil {
		return res, err
	}
	res.After = after
	if !reached {
		res.Problem = fmt.Sprintf("the write was verified, but the link is not %s %v later (oper %s, state %s)", c.expect, wait, orNA(after.OperStatus), orNA(after.State))
	}
	return res, nil
}

// write sends one write through dev's guarded writer: read, write, read back.
func write(ctx context.Context, d *dev.Device, w Write) error {
	idx := assignments(w.Index)
	wp, err := d.PrepareSetWith(ctx, w.Register, idx, assignments(w.Fields), dev.SetOptions{AnyValue: w.AnyValue})
	if err != nil {
		return err
	}
	_, err = d.ApplySet(ctx, wp, idx)
	return err
}

// RollbackTimeout bounds the writes that put an interrupted change back.
const RollbackTimeout = 5 * time.Second

// rollback writes a change's undo writes after it was interrupted.
func rollback(ctx context.Context, d *dev.Device, undo []Write) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RollbackTimeout)
	defer cancel()
	for _, w := range undo {
		if err := write(rctx, d, w); err != nil {
			return fmt.Errorf("the change was interrupted between writes and putting the previous configuration back failed (%v); run the undo command", err)
		}
	}
	return fmt.Errorf("%w (%s)", errRolledBack, undo[0])
}

var errRolledBack = errors.New("the change was interrupted between writes; the previous configuration was put back")

// afterWrite, when set (tests), runs after each write of Apply: a test
// stops the goroutine there as a killed process stops.
var afterWrite func(step int)

// Recover finds a record of port's last change that was left pending (the
// command that made it was killed between its writes, so the port may
// hold part of it) and writes the record's undo writes, which put the
// configuration it had before back; the record is then removed, since
// nothing of the change remains. It returns the change recovered, or nil
// when there was none.
func Recover(ctx context.Context, ad *adapter.Adapter, s Store, port int) (*Change, error) {
	c, err := s.Load(ad.Name(), port)
	if errors.Is(err, ErrNothingToUndo) {
		return nil, nil
	}
	if err != nil || !c.Pending {
		return nil, err
	}
	d, err := ad.Registers(ctx)
	if err != nil {
		return nil, err
	}
	for _, w := range c.Undo {
		if err := write(ctx, d, w); err != nil {
			return nil, fmt.Errorf("port %d: the change '%s' was interrupted and putting the previous configuration back failed: %w", port, c.What, err)
		}
	}
	return c, s.Remove(ad.Name(), port)
}

// settle reads the link until its oper state is want (bounded by wait).
func settle(ctx context.Context, ad *adapter.Adapter, local int, want string, wait time.Duration) (link.Operational, bool, error) {
	start := ad.Clock().Now()
	for {
		rs, err := link.Read(ctx, ad, link.Options{Ports: []int{local}, Brief: true})
		if err != nil {
			return link.Operational{}, false, err
		}
		op := rs[0].Operational
		up := op.OperUp != nil && *op.OperUp
		if want == "" || (want == "up") == up {
			return op, true, nil
		}
		if ad.Clock().Now().Sub(start) >= wait {
			return op, false, nil
		}
		if err := ad.Sleep(ctx, 250*time.Millisecond); err != nil {
			return op, false, err
		}
	}
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

// Undo plans the writes of a saved change's undo record, against the
// device as it is now.
func Undo(ctx context.Context, ad *adapter.Adapter, saved *Change) (*Change, error) {
	pt, err := openPort(ctx, ad, saved.Port)
	if err != nil {
		return nil, err
	}
	c := pt.change("undo " + saved.What)
	c.Effects = []string{"the link retrains with the configuration it had before '" + saved.What + "': it drops for a few seconds"}
	if strings.HasPrefix(saved.What, cableWhat) {
		c.Effects = []string{"the module's bytes get the values they had before '" + saved.What + "'"}
	}
	if err := pt.plan(ctx, c, saved.Undo); err != nil {
		return nil, err
	}
	c.Undo = nil
	return c, nil
}

// Empty says a planned change writes nothing new (every step without
// changes other than write-only enable bits).
func (c *Change) Empty() bool {
	for _, s := range c.Steps {
		for _, d := range s.Changes {
			if !writeOnly[d.Path] {
				return false
			}
		}
	}
	return true
}

// writeOnly are the enable bits a write sets and the firmware clears.
var writeOnly = map[string]bool{"ase": true, "ee": true}

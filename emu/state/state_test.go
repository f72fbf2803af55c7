package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cxray/cxray/access/icmd"
	"github.com/cxray/cxray/access/regaccess"
	"github.com/cxray/cxray/access/vsec"
	"github.com/cxray/cxray/emu/fw"
	emuoptics "github.com/cxray/cxray/emu/optics"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

// regs reads and writes registers of one emulated function through the
// same client stack that drives hardware (config space, gateway, ICMD).
type regs struct {
	t  testing.TB
	rc *regaccess.Client
	db *prm.DB
}

func client(t testing.TB, s *State, bdf string) *regs {
	t.Helper()
	f, err := s.Emulation().Function(bdf)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := vsec.Open(f.Device, nil)
	if err != nil {
		t.Fatal(err)
	}
	ic, err := icmd.Open(context.Background(), gw, nil)
	if err != nil {
		t.Fatal(err)
	}
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	return &regs{t: t, rc: regaccess.New(ic), db: db}
}

func (r *regs) do(m regaccess.Method, reg string, fields ...string) (*prm.Decoded, error) {
	r.t.Helper()
	rg, err := r.db.Register(reg)
	if err != nil {
		r.t.Fatal(err)
	}
	p, err := r.db.RegisterPlan(rg)
	if err != nil {
		r.t.Fatal(err)
	}
	as, err := prm.ParseAssignments(fields)
	if err != nil {
		r.t.Fatal(err)
	}
	buf := p.NewBuffer()
	if err := p.Encode(buf, as); err != nil {
		r.t.Fatal(err)
	}
	out, err := r.rc.Access(context.Background(), m, uint16(rg.ID), buf)
	if err != nil {
		return nil, err
	}
	return p.Decode(out)
}

func (r *regs) get(reg, field string, index ...string) uint64 {
	r.t.Helper()
	d, err := r.do(regaccess.Get, reg, index...)
	if err != nil {
		r.t.Fatalf("%s GET: %v", reg, err)
	}
	v, err := d.Get(field)
	if err != nil {
		r.t.Fatal(err)
	}
	return v.Uint()
}

func (r *regs) set(reg string, fields ...string) {
	r.t.Helper()
	if _, err := r.do(regaccess.Set, reg, fields...); err != nil {
		r.t.Fatalf("%s SET %v: %v", reg, fields, err)
	}
}

func (r *regs) enum(reg, field, name string) uint64 {
	r.t.Helper()
	rg, _ := r.db.Register(reg)
	p, _ := r.db.RegisterPlan(rg)
	tg, err := p.Resolve(field, p.NewBuffer())
	if err != nil {
		r.t.Fatal(err)
	}
	v, ok := tg.Step.Field.EnumValueOf(name)
	if !ok {
		r.t.Fatalf("%s.%s has no %s", reg, field, name)
	}
	return v
}

func openT(t testing.TB, name, dir string) *State {
	t.Helper()
	s, err := Open(name, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// manualScenario writes a one-adapter scenario with a manual clock.
func manualScenario(t testing.TB, extra string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "lab.yaml")
	body := "clock: {start: 2024-05-01T08:00:00Z, mode: manual}\ndevices:\n  - profile: cx7-2p400g\n" + extra
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Two copies of one state (two commands) see one device: a write through
// one is read through the other, both ways, and by a copy opened later.
func TestStateOneDevice(t *testing.T) {
	dir := t.TempDir()
	a, b := openT(t, "emu", dir), openT(t, "emu:cx7-2p400g", dir)
	if a.Path() != b.Path() || filepath.Base(a.Path()) != "profile-cx7-2p400g.log" {
		t.Fatalf("emu and emu:cx7-2p400g keep %s and %s", a.Path(), b.Path())
	}
	ra, rb := client(t, a, "03:00.0"), client(t, b, "03:00.0")
	down, up := ra.enum("PAOS", "admin_status", "down_by_configuration"), ra.enum("PAOS", "admin_status", "up")
	if got := rb.get("PAOS", "admin_status", "local_port=1"); got != up {
		t.Fatalf("power-on admin_status %d", got)
	}
	ra.set("PAOS", "local_port=1", "admin_status=down_by_configuration", "ase=1")
	if got := rb.get("PAOS", "admin_status", "local_port=1"); got != down {
		t.Errorf("the other copy reads admin_status %d after the write, want %d", got, down)
	}
	if got := rb.get("PAOS", "oper_status", "local_port=1"); got == ra.enum("PAOS", "oper_status", "up") {
		t.Error("the other copy's link is still up")
	}
	rb.set("PAOS", "local_port=2", "admin_status=down_by_configuration", "ase=1")
	if got := ra.get("PAOS", "admin_status", "local_port=2"); got != down {
		t.Errorf("and back: port 2 admin_status %d", got)
	}
	// Reads are not records; the two writes are.
	if n := a.Records(); n != 2 {
		t.Errorf("%d records, want 2", n)
	}
	a.Close()
	b.Close()
	c := openT(t, "emu", dir)
	rc := client(t, c, "03:00.0")
	for _, port := range []string{"local_port=1", "local_port=2"} {
		if got := rc.get("PAOS", "admin_status", port); got != down {
			t.Errorf("reopened: %s admin_status %d", port, got)
		}
	}
	// Another profile is another device.
	d := openT(t, "emu:cx6dx-2p100g", dir)
	if got := client(t, d, "03:00.0").get("PAOS", "admin_status", "local_port=1"); got != up {
		t.Errorf("cx6dx shares cx7's state: admin_status %d", got)
	}
}

// A GET that carries an operation (PPCNT clr) changes the device and is
// kept: the other copy's counters restart too.
func TestStateClearOnRead(t *testing.T) {
	dir, sc := t.TempDir(), manualScenario(t, "")
	a := openT(t, "emu:"+sc, dir)
	a.Emulation().Manual.Advance(time.Hour)
	ra := client(t, a, "03:00.0")
	const ctr = "counter_set.eth_802_3_cntrs_grp_data_layout.a_frames_transmitted_ok_high"
	idx := []string{"local_port=1", "grp=IEEE_802_3_Counters"}
	if ra.get("PPCNT", ctr, idx...) == 0 && ra.get("PPCNT", strings.Replace(ctr, "_high", "_low", 1), idx...) == 0 {
		t.Fatal("no frames counted after an hour")
	}
	if _, err := ra.do(regaccess.Get, "PPCNT", append(idx, "clr=1")...); err != nil {
		t.Fatal(err)
	}
	b := openT(t, "emu:"+sc, dir)
	rb := client(t, b, "03:00.0")
	low := strings.Replace(ctr, "_high", "_low", 1)
	if hi, lo := rb.get("PPCNT", ctr, idx...), rb.get("PPCNT", low, idx...); hi != 0 || lo != 0 {
		t.Errorf("after clr elsewhere: %d:%d frames", hi, lo)
	}
	if a.Records() != 2 { // the clock's hour, the clr
		t.Errorf("%d records", a.Records())
	}
}

// The manual clock is part of the state: it moves forward across copies
// and across commands, never back.
func TestStateManualClock(t *testing.T) {
	dir, sc := t.TempDir(), manualScenario(t, "")
	start := time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)
	a := openT(t, "emu:"+sc, dir)
	b := openT(t, "emu:"+sc, dir)
	if err := a.Advance(90 * time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := b.Emulation().Clock.Now(); !got.Equal(start.Add(90 * time.Minute)) {
		t.Errorf("the other copy reads %v", got)
	}
	// A sleep (the manual clock moved directly) is kept at Close.
	b.Emulation().Manual.Advance(30 * time.Minute)
	b.Close()
	a.Close()
	c := openT(t, "emu:"+sc, dir)
	if got := c.Emulation().Clock.Now(); !got.Equal(start.Add(2 * time.Hour)) {
		t.Errorf("reopened at %v, want %v", got, start.Add(2*time.Hour))
	}
	// Power-on stays where it was: uptime is two hours.
	if got := c.Emulation().Adapters[0].Firmware.Boot(); !got.Equal(start) {
		t.Errorf("boot %v", got)
	}
	if got := client(t, c, "03:00.0").get("MGIR", "hw_info.uptime"); got != 7200 {
		t.Errorf("uptime %d s, want 7200", got)
	}
	if err := openT(t, "emu", dir).Advance(time.Minute); err == nil || !strings.Contains(err.Error(), "real time") {
		t.Errorf("advancing a real-time clock: %v", err)
	}
}

// A real-time scenario's clock comes from the state's epoch: every copy
// powered on at the same instant.
func TestStateRealTimeEpoch(t *testing.T) {
	dir := t.TempDir()
	a := openT(t, "emu", dir)
	b := openT(t, "emu", dir)
	ba, bb := a.Emulation().Adapters[0].Firmware.Boot(), b.Emulation().Adapters[0].Firmware.Boot()
	hdr, _, err := ReadLog(a.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !ba.Equal(bb) || !ba.Equal(hdr.Origin) {
		t.Errorf("boot times %v and %v, origin %v", ba, bb, hdr.Origin)
	}
	if b.Emulation().Manual != nil {
		t.Error("a real-time scenario got a manual clock")
	}
}

// Module plugs at run time are kept.
func TestStatePlug(t *testing.T) {
	dir, sc := t.TempDir(), manualScenario(t, "")
	a := openT(t, "emu:"+sc, dir)
	b := openT(t, "emu:"+sc, dir)
	name := a.Emulation().Adapters[0].Name
	if err := a.Plug(name, 1, emuoptics.Empty); err != nil {
		t.Fatal(err)
	}
	rb := client(t, b, "03:00.0")
	if got, want := rb.get("PMAOS", "oper_status", "module=1"), rb.enum("PMAOS", "oper_status", "unplugged"); got != want {
		t.Errorf("cage 1 after the pull elsewhere: oper_status %d, want %d", got, want)
	}
	if k, _ := b.Emulation().Adapters[0].Optics.Kind(1); k != emuoptics.Empty {
		t.Errorf("cage 1 holds %q", k)
	}
	if err := a.Plug("nope", 0, emuoptics.Empty); err == nil {
		t.Error("plug into an unknown adapter")
	}
}

// Faults are the switches of the process that sets them: a write that
// succeeded elsewhere replays although this copy's firmware would refuse
// it, and a write refused by a fault is not kept.
func TestStateFaultsNotReplayed(t *testing.T) {
	dir := t.TempDir()
	a, b := openT(t, "emu", dir), openT(t, "emu", dir)
	fb := b.Emulation().Adapters[0].Firmware
	if err := fb.SetFaults(fw.Faults{Status: []fw.StatusFault{{Register: "PAOS", Status: fw.StatusBadParam}}}); err != nil {
		t.Fatal(err)
	}
	ra, rb := client(t, a, "03:00.0"), client(t, b, "03:00.0")
	ra.set("PAOS", "local_port=1", "admin_status=down_by_configuration", "ase=1")
	if _, err := rb.do(regaccess.Set, "PAOS", "local_port=1", "admin_status=up", "ase=1"); err == nil {
		t.Fatal("the fault did not refuse the write")
	}
	fb.SetFaults(fw.Faults{})
	if got, want := rb.get("PAOS", "admin_status", "local_port=1"), rb.enum("PAOS", "admin_status", "down_by_configuration"); got != want {
		t.Errorf("b: admin_status %d, want %d (the replayed write)", got, want)
	}
	if got := ra.get("PAOS", "admin_status", "local_port=1"); got != rb.enum("PAOS", "admin_status", "down_by_configuration") {
		t.Errorf("a: the refused write was kept: admin_status %d", got)
	}
}

// Writers in goroutines and in another process, each on its own copy,
// all land, and every copy ends in the same state.
func TestStateConcurrentWriters(t *testing.T) {
	dir, sc := t.TempDir(), manualScenario(t, "")
	const n = 15
	child := exec.Command(os.Args[0], "-test.run=^$", dir+"|"+sc)
	child.Env = append(os.Environ(), envChild+"=paos-down")
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, port := range []string{"1", "2"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := openT(t, "emu:"+sc, dir)
			r := client(t, s, "03:00.0")
			for i := 0; i < n; i++ {
				st := "up"
				if i%2 == 0 {
					st = "down_by_configuration"
				}
				r.set("PAOS", "local_port="+port, "admin_status="+st, "ase=1")
			}
		}()
	}
	wg.Wait()
	if err := child.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	s := openT(t, "emu:"+sc, dir)
	r := client(t, s, "03:00.0")
	down := r.enum("PAOS", "admin_status", "down_by_configuration")
	for _, port := range []string{"1", "2"} {
		if got := r.get("PAOS", "admin_status", "local_port="+port); got != down {
			t.Errorf("port %s: admin_status %d after the last write down", port, got)
		}
	}
	// The other process set module 0's event generation; it landed too.
	if got := r.get("PMAOS", "e", "module=0"); got != 2 {
		t.Errorf("PMAOS e %d, want the child's 2", got)
	}
	_, recs, err := ReadLog(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	writes := 0
	for i, rec := range recs {
		if rec.Kind == KindRegister {
			writes++
		}
		if i > 0 && rec.Time.Before(recs[i-1].Time) {
			t.Errorf("record %d at %v before its predecessor's %v", i, rec.Time, recs[i-1].Time)
		}
	}
	if writes != 2*n+1 {
		t.Errorf("%d writes kept, want %d", writes, 2*n+1)
	}
}

// childPAOSDown is the other process of TestStateConcurrentWriters.
func childPAOSDown(arg string) error {
	dir, sc, _ := strings.Cut(arg, "|")
	s, err := Open("emu:"+sc, Options{Dir: dir})
	if err != nil {
		return err
	}
	defer s.Close()
	t := &childTB{}
	r := client(t, s, "03:00.0")
	r.set("PMAOS", "module=0", "e=2", "ee=1")
	if t.err != nil {
		return t.err
	}
	return nil
}

type childTB struct {
	testing.TB
	err error
}

func (c *childTB) Helper()                           {}
func (c *childTB) Fatal(args ...any)                 { c.err = errors.New("fatal"); panic(args) }
func (c *childTB) Fatalf(format string, args ...any) { c.err = errors.New(format); panic(args) }

// Edited scenarios get a state of their own; the old one is listed stale
// and reset removes every state of the file. A state in use is kept.
func TestStateListRemove(t *testing.T) {
	dir, sc := t.TempDir(), manualScenario(t, "")
	a := openT(t, "emu:"+sc, dir)
	client(t, a, "03:00.0").set("PAOS", "local_port=1", "admin_status=down_by_configuration", "ase=1")
	a.Close()
	os.WriteFile(sc, []byte("clock: {mode: manual}\ndevices:\n  - profile: cx6dx-2p100g\n"), 0o644)
	b := openT(t, "emu:"+sc, dir)
	if b.Path() == a.Path() {
		t.Fatal("an edited scenario kept its old state")
	}
	openT(t, "emu", dir).Close()
	infos, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]Info{}
	for _, in := range infos {
		byPath[in.Path] = in
	}
	if in := byPath[a.Path()]; in.Records != 1 || !strings.Contains(in.Stale, "changed") || in.InUse || in.Source != sc || !in.Manual {
		t.Errorf("old state: %+v", in)
	}
	if in := byPath[b.Path()]; in.Stale != "" || !in.InUse {
		t.Errorf("current state: %+v", in)
	}
	if len(infos) != 3 {
		t.Errorf("%d states listed", len(infos))
	}
	removed, err := Remove(dir, "emu:"+sc)
	if !errors.Is(err, ErrInUse) || len(removed) != 1 || removed[0] != a.Path() {
		t.Errorf("remove with one in use: %v %v", removed, err)
	}
	b.Close()
	if removed, err := Remove(dir, "emu:"+sc); err != nil || len(removed) != 1 {
		t.Errorf("remove: %v %v", removed, err)
	}
	if removed, err := Remove(dir, ""); err != nil || len(removed) != 1 || !strings.HasSuffix(removed[0], "profile-cx7-2p400g.log") {
		t.Errorf("remove all: %v %v", removed, err)
	}
}

// A state whose log does not fit the emulator is refused, with the way out.
func TestStateRefusesForeignRecords(t *testing.T) {
	dir := t.TempDir()
	a := openT(t, "emu", dir)
	if _, err := a.log.Lock(); err != nil {
		t.Fatal(err)
	}
	a.log.Append(Record{Kind: KindRegister, Time: time.Now().UTC(), BDF: "0000:09:00.0", ID: 0x5006, Method: 2, Data: make([]byte, 16)})
	a.log.Unlock()
	if _, err := Open("emu", Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "0000:09:00.0") || !strings.Contains(err.Error(), "cxray emu reset") {
		t.Errorf("foreign record: %v", err)
	}
}

func TestDir(t *testing.T) {
	t.Setenv(EnvDir, "")
	t.Setenv("XDG_STATE_HOME", "/x/state")
	if d, err := Dir(); err != nil || d != "/x/state/cxray/emu" {
		t.Errorf("XDG: %q %v", d, err)
	}
	t.Setenv(EnvDir, "/y")
	if d, _ := Dir(); d != "/y" {
		t.Errorf("%s: %q", EnvDir, d)
	}
	t.Setenv(EnvDir, Off)
	if d, err := Dir(); d != "" || err != nil {
		t.Errorf("off: %q %v", d, err)
	}
	if _, err := Open("emu", Options{}); err == nil || !strings.Contains(err.Error(), "keeps none") {
		t.Errorf("open with state off: %v", err)
	}
}

var _ = scenario.DefaultStart

// Every example and test scenario, every function of it: a write through
// the function is kept, on the right function, for the next command.
// Faults are this process's switches, so both copies switch theirs off.
func TestStateEveryScenario(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.yaml")
	more, _ := filepath.Glob("../scenario/testdata/*.yaml")
	files = append(files, more...)
	if len(files) < 5 {
		t.Fatalf("found only %v", files)
	}
	noFaults := func(s *State) {
		for _, a := range s.Emulation().Adapters {
			a.Firmware.SetFaults(fw.Faults{})
			for _, f := range a.Functions {
				f.Device.ClearFaults()
			}
		}
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			dir := t.TempDir()
			w := openT(t, "emu:"+file, dir)
			noFaults(w)
			fns := w.Emulation().Functions()
			// Function i takes its port down with admin_status and sets its
			// own event mode, so a write replayed on the wrong function shows.
			for i, f := range fns {
				r := client(t, w, f.BDF)
				r.set("PAOS", "local_port=1", "admin_status=down_by_configuration", "ase=1", fmt.Sprintf("e=%d", 1+i%2), "ee=1")
			}
			w.Close()
			s := openT(t, "emu:"+file, dir)
			noFaults(s)
			for i, f := range s.Emulation().Functions() {
				r := client(t, s, f.BDF)
				if got, want := r.get("PAOS", "admin_status", "local_port=1"), r.enum("PAOS", "admin_status", "down_by_configuration"); got != want {
					t.Errorf("%s: admin_status %d, want %d", f.BDF, got, want)
				}
				if got := r.get("PAOS", "e", "local_port=1"); got != uint64(1+i%2) {
					t.Errorf("%s: e %d, want %d", f.BDF, got, 1+i%2)
				}
			}
			if s.Records() != len(fns) {
				t.Errorf("%d records for %d functions", s.Records(), len(fns))
			}
		})
	}
}

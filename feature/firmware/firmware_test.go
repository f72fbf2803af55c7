package firmware_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/emu/emuadapter/emutest"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/feature/firmware"
	"github.com/cxray/cxray/internal/fwimage"
	"github.com/cxray/cxray/prm"
)

type rig struct {
	ad *adapter.Adapter
	fw *fw.Firmware
	p  scenario.Profile
}

func open(t *testing.T, profile string) *rig {
	t.Helper()
	sc, err := scenario.Parse([]byte("devices:\n  - profile: "+profile+"\n"), emutest.YAMLName)
	if err != nil {
		t.Fatal(err)
	}
	em := emutest.Build(t, sc)
	p, err := scenario.LookupProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{ad: emutest.Open(t, em, "emu:t.yaml", nil)[0], fw: em.Functions()[0].Adapter.Firmware, p: p}
}

func (r *rig) image(t *testing.T, v string, mod ...func(*fwimage.Spec)) *firmware.File {
	t.Helper()
	ver, err := fwimage.ParseVersion(v)
	if err != nil {
		t.Fatal(err)
	}
	s := fwimage.Spec{Version: ver, PSID: r.p.Spec.PSID, HWID: uint32(r.p.Spec.HWDevID), PCIDeviceID: r.p.Spec.PCIDeviceID, Secure: true}
	for _, m := range mod {
		m(&s)
	}
	b, err := fwimage.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	f, err := firmware.ReadFile("img.bin", b)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (r *rig) update(t *testing.T, f *firmware.File, o firmware.Options) error {
	t.Helper()
	ctx := context.Background()
	p, err := firmware.Prepare(ctx, r.ad, f, o)
	if err != nil {
		return err
	}
	return firmware.Update(ctx, r.ad, p, o)
}

type versions struct{ Running, Stored, Pending string }

func (r *rig) query(t *testing.T) versions {
	t.Helper()
	info, err := firmware.Query(context.Background(), r.ad)
	if err != nil {
		t.Fatal(err)
	}
	v := versions{Running: info.Running.Version}
	if info.Stored != nil {
		v.Stored = info.Stored.Version
	}
	if info.Pending != nil {
		v.Pending = info.Pending.Version
	}
	if len(info.Notes) > 0 {
		t.Errorf("query notes: %v", info.Notes)
	}
	return v
}

// On every profile: an update stores the image without touching the
// running firmware; query, the adapter's identity (status) and MCQS show
// it pending; a power cycle runs it.
func TestUpdateEveryProfile(t *testing.T) {
	for _, profile := range scenario.Profiles() {
		t.Run(profile, func(t *testing.T) {
			r := open(t, profile)
			old := r.p.Spec.FW.String()
			v := fmt.Sprintf("%d.99.1234", r.p.Spec.FW.Major)
			var phases []string
			err := r.update(t, r.image(t, v), firmware.Options{Progress: func(phase string, done, total int) {
				if len(phases) == 0 || phases[len(phases)-1] != phase {
					phases = append(phases, phase)
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"erase", "download", "verify", "activate"}, phases); diff != "" {
				t.Errorf("phases (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(versions{old, v, v}, r.query(t)); diff != "" {
				t.Errorf("after update (-want +got):\n%s", diff)
			}
			id, err := r.ad.Identity(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if id.Firmware != old || id.FirmwarePending != v {
				t.Errorf("identity: firmware %q pending %q; want %q pending %q", id.Firmware, id.FirmwarePending, old, v)
			}
			if st := r.fw.Flash(); st.State != 0 || st.Handle != 0 {
				t.Errorf("after update: state %d handle 0x%x; want idle and released", st.State, st.Handle)
			}
			r.fw.PowerCycle()
			if diff := cmp.Diff(versions{Running: v, Stored: v}, r.query(t)); diff != "" {
				t.Errorf("after a power cycle (-want +got):\n%s", diff)
			}
		})
	}
}

// What the adapter refuses is refused before a write (an image for
// another board, an older version) or by the adapter's checks, with a
// message that says which; every failure leaves the handle released and
// the flash as it was.
func TestUpdateRefusals(t *testing.T) {
	cases := []struct {
		name    string
		version string
		mod     func(*fwimage.Spec)
		input   bool // refused before anything is written (exit 2)
		code    int  // MCC error code (exit 3)
	}{
		{"other PSID", "28.99.1", func(s *fwimage.Spec) { s.PSID = "MT_0000000999" }, true, 0},
		{"other hardware", "28.99.1", func(s *fwimage.Spec) { s.HWID = 0x20d }, true, 0},
		{"downgrade", "28.1.1", nil, true, 0},
		{"unsigned", "28.99.1", func(s *fwimage.Spec) { s.Signature = fwimage.SignNone }, false, fw.MCCErrUnsigned},
		{"bad signature", "28.99.1", func(s *fwimage.Spec) { s.Signature = fwimage.SignBadKey }, false, fw.MCCErrAuthFailed},
		{"unknown key", "28.99.1", func(s *fwimage.Spec) { s.Signature = fwimage.SignUnknownKey }, false, fw.MCCErrUnknownKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := open(t, "cx7-2p400g")
			var mods []func(*fwimage.Spec)
			if c.mod != nil {
				mods = append(mods, c.mod)
			}
			err := r.update(t, r.image(t, c.version, mods...), firmware.Options{})
			var me *firmware.MCCError
			switch {
			case err == nil:
				t.Fatal("update accepted")
			case c.input && !errors.Is(err, prm.ErrInput):
				t.Errorf("err %v: want an input error (exit 2)", err)
			case !c.input && (!errors.As(err, &me) || me.Code != c.code):
				t.Errorf("err %v: want MCC error 0x%x", err, c.code)
			}
			if c.input {
				if st := r.fw.Flash(); st.Downloaded != 0 || st.State != 0 {
					t.Errorf("refused input reached the flash: %+v", st)
				}
			}
			if st := r.fw.Flash(); st.State != 0 || st.Handle != 0 || st.Stored != st.Running {
				t.Errorf("after a refusal: %+v; want idle, released, nothing stored", st)
			}
			if diff := cmp.Diff(versions{"28.39.1010", "28.39.1010", ""}, r.query(t)); diff != "" {
				t.Errorf("versions (-want +got):\n%s", diff)
			}
		})
	}
}

// A downgrade goes through with AllowDowngrade.
func TestAllowDowngrade(t *testing.T) {
	r := open(t, "cx7-2p400g")
	if err := r.update(t, r.image(t, "28.1.1"), firmware.Options{AllowDowngrade: true}); err != nil {
		t.Fatal(err)
	}
	if got := r.query(t).Pending; got != "28.1.0001" {
		t.Errorf("pending %q after an allowed downgrade", got)
	}
}

// Cancelling (a signal, a deadline) at each step releases the handle,
// keeps the running image and stores nothing half-written; the next update
// works. A power cut at every step leaves the adapter booting the old
// image or the new one.
func TestCancelAndPowerCutAtEveryStep(t *testing.T) {
	r0 := open(t, "cx7-2p400g")
	f := r0.image(t, "28.99.1")
	steps := 0
	if err := r0.update(t, f, firmware.Options{Progress: func(string, int, int) { steps++ }}); err != nil {
		t.Fatal(err)
	}
	// Every phase boundary and blocks inside the download: the first,
	// one in the middle, the last (a step per block would repeat those).
	for _, step := range []int{1, 2, 3, steps / 2, steps - 2, steps - 1, steps} {
		t.Run(fmt.Sprintf("cancel-%d", step), func(t *testing.T) {
			r := open(t, "cx7-2p400g")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p, err := firmware.Prepare(ctx, r.ad, f, firmware.Options{})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			err = firmware.Update(ctx, r.ad, p, firmware.Options{Progress: func(string, int, int) {
				if n++; n == step {
					cancel()
				}
			}})
			st := r.fw.Flash()
			if st.State != 0 || st.Handle != 0 || st.Running.Version.String() != "28.39.1010" {
				t.Errorf("after cancel at step %d (err %v): %+v; want idle, released, running 28.39.1010", step, err, st)
			}
			if err == nil && st.Stored.Version.String() != "28.99.0001" || err != nil && st.Stored != st.Running {
				t.Errorf("cancel at step %d: err %v, stored %v", step, err, st.Stored.Version)
			}
			if err := r.update(t, f, firmware.Options{}); err != nil {
				t.Errorf("update after a cancelled one: %v", err)
			}
		})
		t.Run(fmt.Sprintf("power-cut-%d", step), func(t *testing.T) {
			r := open(t, "cx7-2p400g")
			n := 0
			err := r.update(t, f, firmware.Options{Progress: func(string, int, int) {
				if n++; n == step {
					r.fw.PowerCycle()
				}
			}})
			st := r.fw.Flash()
			if v := st.Running.Version.String(); v != "28.39.1010" && v != "28.99.0001" {
				t.Errorf("power cut at step %d: running %s, neither old nor new", step, v)
			}
			if st.State != 0 || st.Handle != 0 {
				t.Errorf("power cut at step %d (err %v): %+v; want idle", step, err, st)
			}
			if err := r.update(t, r.image(t, "28.99.2"), firmware.Options{}); err != nil {
				t.Errorf("update after a power cut: %v", err)
			}
		})
	}
}

// A handle another tool holds makes the update a BusyError, until
// ForceRelease takes it over.
func TestBusyHandle(t *testing.T) {
	r := open(t, "cx7-2p400g")
	f := r.image(t, "28.99.1")
	var inner error
	done := false
	err := r.update(t, f, firmware.Options{Progress: func(phase string, _, _ int) {
		if phase == "download" && !done {
			done = true
			inner = r.update(t, f, firmware.Options{})
		}
	}})
	var be *firmware.BusyError
	if !errors.As(inner, &be) {
		t.Errorf("second update while the first holds the handle: %v; want a BusyError", inner)
	}
	if err != nil {
		t.Errorf("the first update: %v", err)
	}
	// A tool that died holding the handle: lock it by hand, then take over.
	done = false
	err = r.update(t, r.image(t, "28.99.2"), firmware.Options{Progress: func(phase string, _, _ int) {
		if phase == "download" && !done {
			done = true
			inner = r.update(t, r.image(t, "28.99.3"), firmware.Options{ForceRelease: true})
		}
	}})
	if inner != nil {
		t.Errorf("forced update: %v", inner)
	}
	if err == nil {
		t.Error("the update whose handle was taken over succeeded")
	}
	if got := r.query(t).Pending; got != "28.99.0003" {
		t.Errorf("pending %q, want the forced update's 28.99.0003", got)
	}
}

// An MFA2 package gives the image for the adapter's PSID; a package
// without it is an input error naming the PSIDs it has.
func TestUpdateFromPackage(t *testing.T) {
	r := open(t, "cx7-2p400g")
	mk := func(psid, v string) []byte {
		ver, _ := fwimage.ParseVersion(v)
		b, err := fwimage.Build(fwimage.Spec{Version: ver, PSID: psid, HWID: 0x218, PCIDeviceID: 0x1021})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pk := buildPackage(t, mk("MT_0000000838", "28.99.5"), mk("MT_0000000834", "28.99.4"), mk("MT_0000000834", "28.99.6"))
	f, err := firmware.ReadFile("p.mfa2", pk)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.update(t, f, firmware.Options{}); err != nil {
		t.Fatal(err)
	}
	if got := r.query(t).Pending; got != "28.99.0006" {
		t.Errorf("pending %q, want the package's newest image for the PSID, 28.99.0006", got)
	}
	other, err := firmware.ReadFile("p.mfa2", buildPackage(t, mk("MT_0000000838", "28.99.5")))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.update(t, other, firmware.Options{}); !errors.Is(err, prm.ErrInput) {
		t.Errorf("package without the PSID: %v; want an input error", err)
	}
}

// A tool that dies holding the handle (no command for the emulated
// firmware's ten minutes) loses it: the update it was running fails, the
// state machine is idle, and the next update needs no --force-release.
func TestAbandonedHandleReleased(t *testing.T) {
	sc, err := scenario.Parse([]byte("devices:\n  - profile: cx7-2p400g\n"), emutest.YAMLName)
	if err != nil {
		t.Fatal(err)
	}
	em := emutest.Build(t, sc)
	p, _ := scenario.LookupProfile("cx7-2p400g")
	r := &rig{ad: emutest.Open(t, em, "emu:t.yaml", nil)[0], fw: em.Functions()[0].Adapter.Firmware, p: p}
	f := r.image(t, "28.99.1")
	stalled := false
	err = r.update(t, f, firmware.Options{Progress: func(phase string, _, _ int) {
		if phase == "download" && !stalled {
			stalled = true
			em.Manual.Advance(11 * time.Minute)
		}
	}})
	if err == nil {
		t.Fatal("an update whose handle timed out succeeded")
	}
	if st := r.fw.Flash(); st.State != 0 || st.Handle != 0 || st.Stored != st.Running {
		t.Errorf("after the timeout: %+v; want idle, released, nothing stored", st)
	}
	if err := r.update(t, f, firmware.Options{}); err != nil {
		t.Errorf("the next update: %v", err)
	}
}

// The update stopped after every MCDA block of a small image (32 KiB: 256
// blocks), three ways: cancelled (a signal, a deadline: the tool releases
// the handle), a power cut, and killed (the tool stops talking at once,
// modelled by the firmware answering it no more, so its own release never
// arrives). After each the running image is intact, the stored image is the
// old one (only ACTIVATE changes it), and the next update works (after a
// kill, with ForceRelease, as `fw update --force-release`). One adapter
// serves every block of a mode, so each stop is followed by the next
// update. The real SIGKILL of the cxray process is TestFwUpdateKilled
// (package cli).
func TestStopAtEveryBlock(t *testing.T) {
	const old = "28.39.1010"
	for _, mode := range []string{"cancel", "power-cut", "kill"} {
		t.Run(mode, func(t *testing.T) {
			r := open(t, "cx7-2p400g")
			f := r.image(t, "28.99.1", func(s *fwimage.Spec) { s.Size = fwimage.MinSize })
			p, err := firmware.Prepare(context.Background(), r.ad, f, firmware.Options{})
			if err != nil {
				t.Fatal(err)
			}
			blocks := 0
			for block := 1; ; block++ {
				ctx, cancel := context.WithCancel(context.Background())
				n, stopped := 0, false
				err := firmware.Update(ctx, r.ad, p, firmware.Options{ForceRelease: mode == "kill", Progress: func(phase string, _, _ int) {
					if phase != "download" || stopped {
						return
					}
					if n++; n < block {
						return
					}
					stopped = true
					switch mode {
					case "cancel":
						cancel()
					case "power-cut":
						r.fw.PowerCycle()
					case "kill":
						if err := r.fw.SetFaults(fw.Faults{Status: []fw.StatusFault{{Register: "MCC", Status: fw.StatusResourceNotAvail}, {Register: "MCDA", Status: fw.StatusResourceNotAvail}}}); err != nil {
							t.Fatal(err)
						}
					}
				}})
				cancel()
				if !stopped {
					// block is past the last one: the update ran to its end.
					blocks = block - 1
					if err != nil {
						t.Fatalf("the full update: %v", err)
					}
					break
				}
				if mode == "kill" {
					if err := r.fw.SetFaults(fw.Faults{}); err != nil {
						t.Fatal(err)
					}
				}
				st := r.fw.Flash()
				if err == nil || st.Running.Version.String() != old || st.Stored.Version.String() != old {
					t.Fatalf("%s after block %d: err %v, running %s, stored %s; want an error and %s for both", mode, block, err, st.Running.Version, st.Stored.Version, old)
				}
				held := st.State != 0 || st.Handle != 0
				if held != (mode == "kill") {
					t.Fatalf("%s after block %d: state %d handle %d; the handle is held only after a kill", mode, block, st.State, st.Handle)
				}
			}
			if want := fwimage.MinSize / 0x80; blocks != want {
				t.Errorf("stopped after %d blocks; the image has %d", blocks, want)
			}
			st := r.fw.Flash()
			if st.Stored.Version.String() != "28.99.0001" || st.Running.Version.String() != old || st.State != 0 || st.Handle != 0 {
				t.Errorf("after the full update: %+v", st)
			}
		})
	}
}

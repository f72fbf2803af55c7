package ctl_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cxray/cxray/access/vsec"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/emu/ctl"
	emuoptics "github.com/cxray/cxray/emu/optics"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/emu/state"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm/builtin"
)

// A client switches a fault on and off over the socket while a device is
// used through the real access path, and advances the manual clock.
func TestControlSocket(t *testing.T) {
	db, _ := builtin.Load()
	sc, err := scenario.FromProfile("cx7-2p400g")
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	e, err := scenario.Build(sc, scenario.Options{DB: db, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "emu.sock")
	srv, err := ctl.Listen(sock, e)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()
	if _, err := ctl.Listen(sock, e); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("second listener on a live socket: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	call := func(req ctl.Request) *ctl.Response {
		t.Helper()
		r, err := ctl.Call(ctx, sock, req)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		return r
	}
	st := call(ctl.Request{Op: "status"})
	if len(st.Functions) != 1 || st.Functions[0].BDF != "0000:03:00.0" || !st.Manual {
		t.Fatalf("status %+v", st)
	}

	f := e.Functions()[0]
	d, _, err := dev.OpenConfigSpace(ctx, "emu", f.BDF, "emulator", db, f.Device, dev.StackOptions{Clock: clk, SemaphoreTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	st = call(ctl.Request{Op: "fault", Set: map[string]string{"gateway_semaphore_held": "true"}})
	if st.Functions[0].Faults["gateway_semaphore_held"] != "true" {
		t.Errorf("fault not reported: %+v", st.Functions[0].Faults)
	}
	if sem := st.Functions[0].Semaphores; sem.Gateway == 0 || sem.ICMD != 0 || sem.ICMDBusy {
		t.Errorf("semaphores with the gateway's held by a foreign agent: %+v", sem)
	}
	if _, err := d.Get(ctx, "MGIR", nil, nil, 0); !errors.Is(err, vsec.ErrSemaphoreBusy) {
		t.Fatalf("with the semaphore held: %v", err)
	}
	if sem := call(ctl.Request{Op: "clear"}).Functions[0].Semaphores; sem != (ctl.Semaphores{}) {
		t.Errorf("semaphores after clear: %+v, want all free", sem)
	}
	r1, err := d.Get(ctx, "MGIR", nil, nil, 0)
	if err != nil {
		t.Fatalf("after clear: %v", err)
	}
	up1, _ := r1.Decoded.Get("hw_info.uptime")
	call(ctl.Request{Op: "advance", Duration: "90s"})
	r2, _ := d.Get(ctx, "MGIR", nil, nil, 0)
	up2, _ := r2.Decoded.Get("hw_info.uptime")
	if up2.Uint() < up1.Uint()+90 {
		t.Errorf("uptime %d -> %d after advancing 90s", up1.Uint(), up2.Uint())
	}

	for _, bad := range []ctl.Request{
		{Op: "fault", Set: map[string]string{"nonsense": "1"}},
		{Op: "fault", Set: map[string]string{"removed": "maybe"}},
		{Op: "advance", Duration: "-1s"},
		{Op: "explode"},
		{Op: "status", BDF: "0000:99:00.0"},
	} {
		if _, err := ctl.Call(ctx, sock, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := ctl.Call(ctx, filepath.Join(t.TempDir(), "none.sock"), ctl.Request{Op: "status"}); err == nil || !strings.Contains(err.Error(), "cxray emu serve") {
		t.Errorf("no emulator: %v", err)
	}
}

func TestControlModulesAndNV(t *testing.T) {
	db, _ := builtin.Load()
	sc, _ := scenario.FromProfile("cx7-2p400g")
	e, err := scenario.Build(sc, scenario.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ctl.Listen(filepath.Join(t.TempDir(), "s.sock"), e)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if r := srv.Do(ctl.Request{Op: "module", Module: 0, ModuleFaults: []string{"i2c_hang"}}); !r.OK {
		t.Fatal(r.Error)
	}
	if f, _ := e.Adapters[0].Optics.Faults(0); !strings.Contains(fmt.Sprintf("%+v", f), "true") {
		t.Errorf("module fault not set: %+v", f)
	}
	if r := srv.Do(ctl.Request{Op: "module", Module: 0, ModuleFaults: []string{"melting"}}); r.OK {
		t.Error("unknown module fault accepted")
	}
	if r := srv.Do(ctl.Request{Op: "nv", NV: map[string]string{"no_access": "true"}}); !r.OK {
		t.Fatal(r.Error)
	}
	if r := srv.Do(ctl.Request{Op: "nv", NV: map[string]string{"gremlins": "true"}}); r.OK {
		t.Error("unknown NV fault accepted")
	}
}

// With a kept state, what is the device's state goes there: a module
// plugged and the clock advanced over the socket are seen by another
// copy of the state (another command). Plugs work without one too.
func TestControlSocketKeptState(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(t.TempDir(), "lab.yaml")
	if err := os.WriteFile(sc, []byte("clock: {start: 2024-05-01T08:00:00Z, mode: manual}\ndevices:\n  - profile: cx7-2p400g\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := state.Open("emu:"+sc, state.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sock := filepath.Join(t.TempDir(), "emu.sock")
	srv, err := ctl.ListenState(sock, st)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := ctl.Call(ctx, sock, ctl.Request{Op: "plug", Module: 1, Kind: "none"}); err != nil {
		t.Fatal(err)
	}
	r, err := ctl.Call(ctx, sock, ctl.Request{Op: "advance", Duration: "1h"})
	if err != nil || r.State != st.Path() || r.Clock != "2024-05-01T09:00:00Z" {
		t.Fatalf("advance: %+v %v", r, err)
	}
	if _, err := ctl.Call(ctx, sock, ctl.Request{Op: "plug", Module: 7, Kind: "none"}); err == nil {
		t.Error("plug into a cage that does not exist")
	}
	if _, err := ctl.Call(ctx, sock, ctl.Request{Op: "plug", Module: 0, Kind: "no-such-module"}); err == nil {
		t.Error("plug of a module the catalog lacks")
	}
	other, err := state.Open("emu:"+sc, state.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if k, _ := other.Emulation().Adapters[0].Optics.Kind(1); k != emuoptics.Empty {
		t.Errorf("cage 1 of the other copy holds %q", k)
	}
	if got := other.Emulation().Clock.Now(); !got.Equal(time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("the other copy's clock: %v", got)
	}
	// Without a kept state the plug changes this emulation only.
	e, _ := scenario.Resolve("emu", scenario.Options{})
	plain := filepath.Join(t.TempDir(), "plain.sock")
	ps, err := ctl.Listen(plain, e)
	if err != nil {
		t.Fatal(err)
	}
	go ps.Serve()
	defer ps.Close()
	if r, err := ctl.Call(ctx, plain, ctl.Request{Op: "plug", Module: 0, Kind: "empty"}); err != nil || r.State != "" {
		t.Fatalf("plug without a state: %+v %v", r, err)
	}
	if k, _ := e.Adapters[0].Optics.Kind(0); k != emuoptics.Empty {
		t.Errorf("cage 0 holds %q", k)
	}
}

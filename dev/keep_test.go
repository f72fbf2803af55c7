package dev_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cxray/cxray/access/icmd"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devtest"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
)

// A stack opened with no options gives the ICMD semaphore back after every
// register access, so a cxray killed between two of them leaves nothing
// held (issue 26.1); CXRAY_ICMD_KEEP opts in to keeping it.
func TestStackKeepsTheICMDSemaphoreOnlyWhenAskedTo(t *testing.T) {
	db := devtest.DB(t)
	for _, tc := range []struct {
		env      string
		wantKept bool
	}{
		{"", false}, {"off", false}, {"0", false}, {"bogus", false},
		{"on", true}, {"1", true}, {"50ms", true},
	} {
		t.Run("CXRAY_ICMD_KEEP="+tc.env, func(t *testing.T) {
			t.Setenv("CXRAY_ICMD_KEEP", tc.env)
			sc, err := scenario.Parse([]byte("devices:\n  - profile: cx7-2p400g\n"), "t")
			if err != nil {
				t.Fatal(err)
			}
			clk := clock.NewManual(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
			em, err := scenario.Build(sc, scenario.Options{DB: db, Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			fn := em.Functions()[0]
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			d, st, err := dev.OpenConfigSpace(ctx, "emu", fn.BDF, dev.BackendEmulator, db, fn.Device, dev.StackOptions{Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if _, err := d.Get(ctx, "MGIR", nil, nil, 0); err != nil {
				t.Fatal(err)
			}
			held := fn.Device.State().ICMDSemaphore != 0
			if held != tc.wantKept || st.ICMD.Held() != tc.wantKept {
				t.Errorf("after a read: ICMD semaphore held %v (client says %v), want %v", held, st.ICMD.Held(), tc.wantKept)
			}
			d.Close()
			if s := fn.Device.State(); s.ICMDSemaphore != 0 || s.GatewaySemaphore != 0 {
				t.Errorf("after Close: %+v", s)
			}
		})
	}
	if icmd.DefaultKeepIdle <= 0 {
		t.Fatal("the opt-in's keep is not positive")
	}
}

// A device closed after a failure of its path (CloseAfter, as the adapter
// drops a path that failed) answers every later access with a GoneError
// naming that failure, never the closed ICMD client's "a bug in the
// caller" (issue 26.10: a device removed during config set said so).
func TestClosedAfterAFailureNamesIt(t *testing.T) {
	db := devtest.DB(t)
	sc, err := scenario.Parse([]byte("devices:\n  - profile: cx7-2p400g\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	em, err := scenario.Build(sc, scenario.Options{DB: db, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	fn := em.Functions()[0]
	ctx := context.Background()
	d, _, err := dev.OpenConfigSpace(ctx, "emu", fn.BDF, dev.BackendEmulator, db, fn.Device, dev.StackOptions{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	held := d.WithDB(db) // an NV session's copy
	removed := errors.New("vsec: read: 0000:03:00.0: the device reads all ones: it was removed")
	d.CloseAfter(removed)
	_, err = held.Get(ctx, "MGIR", nil, nil, 0)
	var ge *dev.GoneError
	if !errors.As(err, &ge) || !errors.Is(err, removed) || strings.Contains(err.Error(), "bug in the caller") || !strings.Contains(err.Error(), "it was removed") {
		t.Errorf("after the path was closed: %v", err)
	}
	// Without a cause, a closed device says what the transport says.
	d2, _, err := dev.OpenConfigSpace(ctx, "emu", fn.BDF, dev.BackendEmulator, db, fn.Device, dev.StackOptions{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	d2.Close()
	if _, err := d2.Get(ctx, "MGIR", nil, nil, 0); errors.As(err, &ge) || err == nil {
		t.Errorf("a plain close: %v", err)
	}
}

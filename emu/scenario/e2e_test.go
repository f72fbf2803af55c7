package scenario_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cxray/cxray/access/icmd"
	"github.com/cxray/cxray/access/regaccess"
	"github.com/cxray/cxray/access/vsec"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/builtin"
)

// TestEndToEndMGIR builds a device from a profile and reads registers through
// the same client stack that drives hardware: config space -> gateway ->
// ICMD mailbox -> access-register TLVs -> firmware.
func TestEndToEndMGIR(t *testing.T) {
	clk := clock.NewManual(time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC))
	e, err := scenario.Resolve("emu:testdata/two-adapters.yaml", scenario.Options{Clock: clk, Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		bdf      string
		devID    uint64
		hwID     uint16
		version  [3]uint64
		psid     string
		numPorts uint64
	}{
		{"0000:03:00.1", 0x1021, 0x218, [3]uint64{28, 39, 1010}, "MT_0000000834", 2},
		{"0000:04:00.0", 0x101d, 0x212, [3]uint64{22, 39, 1002}, "MT_0000000359", 2},
	} {
		f, err := e.Function(tc.bdf)
		if err != nil {
			t.Fatal(err)
		}
		gw, err := vsec.Open(f.Device, &vsec.Options{Clock: clk})
		if err != nil {
			t.Fatalf("%s: vsec: %v", tc.bdf, err)
		}
		ic, err := icmd.Open(ctx, gw, nil)
		if err != nil {
			t.Fatalf("%s: icmd: %v", tc.bdf, err)
		}
		if ic.HardwareID() != tc.hwID {
			t.Errorf("%s: hardware ID 0x%x", tc.bdf, ic.HardwareID())
		}
		rc := regaccess.New(ic)
		r, _ := db.Register("MGIR")
		p, _ := db.RegisterPlan(r)
		clk.Advance(30 * time.Second)
		out, err := rc.Access(ctx, regaccess.Get, uint16(r.ID), p.NewBuffer())
		if err != nil {
			t.Fatalf("%s: MGIR: %v", tc.bdf, err)
		}
		d, err := p.Decode(out)
		if err != nil {
			t.Fatal(err)
		}
		get := func(path string) prm.Value {
			v, err := d.Get(path)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return v
		}
		if get("hw_info.device_id").Uint() != tc.devID || get("hw_info.num_ports").Uint() != tc.numPorts || get("hw_info.hw_dev_id").Uint() != uint64(tc.hwID) {
			t.Errorf("%s: hw_info %v", tc.bdf, d.Assignments()[:6])
		}
		v := [3]uint64{get("fw_info.extended_major").Uint(), get("fw_info.extended_minor").Uint(), get("fw_info.extended_sub_minor").Uint()}
		if v != tc.version || get("fw_info.psid").TextString() != tc.psid {
			t.Errorf("%s: version %v psid %q", tc.bdf, v, get("fw_info.psid").TextString())
		}
		if up := get("hw_info.uptime").Uint(); up < 30 {
			t.Errorf("%s: uptime %d s after 30 s", tc.bdf, up)
		}
		// ICMD GET_FW_INFO and MGIR agree.
		fi, err := ic.FirmwareInfo(ctx)
		if err != nil {
			t.Fatalf("%s: GET_FW_INFO: %v", tc.bdf, err)
		}
		if fi.Version() == "" || fi.PSID != tc.psid {
			t.Errorf("%s: GET_FW_INFO %+v", tc.bdf, fi)
		}
		// A register the firmware lacks comes back as status 4.
		if _, err := rc.Access(ctx, regaccess.Get, 0x9FFE, make([]byte, 16)); !errors.Is(err, regaccess.ErrRegisterNotSupported) {
			t.Errorf("%s: unknown register: %v", tc.bdf, err)
		}
	}
	// The device-level fault on the cx6dx answers before the firmware.
	f, _ := e.Function("04:00.1")
	gw, _ := vsec.Open(f.Device, &vsec.Options{Clock: clk})
	ic, err := icmd.Open(ctx, gw, nil)
	if err != nil {
		t.Fatal(err)
	}
	var se *regaccess.StatusError
	if _, err := regaccess.New(ic).Access(ctx, regaccess.Get, 0x9014, make([]byte, 0x94)); !errors.As(err, &se) || se.Status != fw.StatusResourceNotAvail {
		t.Errorf("MCIA with a register_status fault: %v", err)
	}
}
